/* zdecode.h - GHC's Z-encoding of symbol names, decoded.
 *
 * GHC names the code of `Main.$wfib` with the linker symbol `Main_zdwfib_info`:
 * every character that is not alphanumeric is Z-encoded ("$" -> "zd",
 * "." -> "zi", "_" -> "zu", ...), and a literal '_' separates the unit, the
 * module, the name and the suffix ("info", "closure", "con_info", ...).
 *
 *   struct zdecoded z;
 *   if (zdecode__symbol("base_GHCziEventziEPoll_new10_info", &z))
 *       // z.unit "base", z.module "GHC.Event.EPoll", z.name "new10",
 *       // z.suffix "info"
 */
#ifndef HSSPY_ZDECODE_H
#define HSSPY_ZDECODE_H

#include <stdbool.h>
#include <stddef.h>

struct zdecoded {
    char unit[128];   /* "base", "ghc-prim", "containers-0.6.5.1"; "" for the main unit */
    char module[256]; /* "GHC.Event.EPoll", "Main", ":Main" */
    char name[256];   /* "new10", "$wfib", ":" */
    char suffix[32];  /* "info", "closure", "con_info", "entry", ... */
};

/* Decode one Z-encoded component of zlen bytes into out (NUL-terminated).
 * Returns the decoded length, or -1 if the input is not valid Z-encoding or
 * does not fit. */
int zdecode__string(const char *z, size_t zlen, char *out, size_t outsz);

/* Split a linker symbol into unit, module, name and suffix and decode each.
 * Returns false (and leaves *out unspecified) when sym does not look like a
 * symbol GHC generated for a Haskell binding (e.g. "malloc", "stg_upd_frame_info"). */
bool zdecode__symbol(const char *sym, struct zdecoded *out);

/* The C function GHC writes for a `foreign import ccall "wrapper"`, which a
 * FunPtr the import made calls to run its Haskell function:
 * "zdmainzdMainzdMainzumkCallback" ("$main$Main$Main_mkCallback": the
 * unit, the module, then the import's own C label, Z-encoded once more)
 * is unit "", module "Main", name "mkCallback", suffix "wrapper". */
bool zdecode__wrapper(const char *sym, struct zdecoded *out);

/* The binding GHC makes for a `foreign export`, whose code a C call of the
 * export runs: its name (z->name, a decoded symbol's) is "$fstable" then,
 * Z-encoded once more, ":N:unit:Module:name" with N a number and Module
 * z->module: "$fstableZC0ZCmainZCMainZCincallWork1" is "incallWork1" (the
 * exported name, with GHC's suffix for code it floated out), written to
 * out. False, writing nothing, for any other name. */
bool zdecode__foreign_export(const struct zdecoded *z, char *out, size_t outsz);

/* "Module.name" for a Haskell symbol (unit dropped), written to out.
 * Returns false, writing nothing, when sym is not a Haskell symbol. */
bool zdecode__display(const char *sym, char *out, size_t outsz);

#endif
