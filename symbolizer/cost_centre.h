/* cost_centre.h - a GHC cost centre's name, read from the executable file.
 *
 * A program built with -prof has one static CostCentre per cost centre
 * (an {-# SCC #-}, or one that -fprof-auto* added): in .data, with label,
 * module and srcloc pointing at strings in .rodata. The pointers and the
 * strings never change, so they are read from the file, not from the live
 * process: the naming then works after the process has gone, and in
 * `hsspy report` of a saved recording on another machine. The file's
 * pointers are link-time addresses (GNU ld also writes the value of a
 * relative relocation in place, so a PIE file has them too); the struct is
 * found at its runtime address less the module's load bias.
 *
 *   struct cost_centre cc;
 *   if (cost_centre__read(m, L, cc_addr, &cc) == 0)
 *       // cc.label "fib", cc.module "Main", cc.srcloc "fib.hs:(5,1)-(7,30)"
 *   cost_centre__srcloc(cc.srcloc, file, sizeof file, &line, &span);
 *   // file "fib.hs", line 5, span "(5,1)-(7,30)"
 *
 * Everything read is untrusted: each pointer must land in the file and
 * each string end within its segment, at most COST_CENTRE__MAX_STR long.
 */
#ifndef HSSPY_COST_CENTRE_H
#define HSSPY_COST_CENTRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "haskell-stack/rts_layout.h"
#include "symbolizer/module.h"

#define COST_CENTRE__MAX_STR 1024

struct cost_centre {
    const char *label;  /* "fib", "CAF"; points into the module's file image */
    const char *module; /* "Main", "GHC.IO.Handle.FD" */
    const char *srcloc; /* "fib.hs:5:1-20", "<entire-module>", "<built-in>" */
};

/* Read the CostCentre at runtime address addr of module m, with the
 * CostCentre layout of L (the same in every RTS variant of a version).
 * 0; -ENOENT if addr is not a struct in the file (a cost centre the
 * program made while running); -EINVAL if a field does not point at a
 * string in the file. The strings live as long as m. */
int cost_centre__read(const struct module *m, const struct rts_layout *L, uint64_t addr,
                      struct cost_centre *out);

/* Split a cost centre's srcloc "file:LINE..." into the file, the first
 * line and the span after the file ("5:1-20", "(5,1)-(7,30)"). False,
 * with nothing written, for a srcloc without a line ("<built-in>"). */
bool cost_centre__srcloc(const char *srcloc, char *file, size_t size, int *line,
                         const char **span);

#endif
