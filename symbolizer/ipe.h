/* ipe.h - GHC's info-table provenance (IPE) data, decoded from the file.
 *
 * A module compiled with -finfo-table-map (GHC 9.4+) carries, for every
 * info table it emits (closures, thunks, and the continuations of case
 * expressions, which have no symbol), where in the source it came from:
 * the table's name, closure type, Haskell type, the binding's name (label),
 * module, source file and span. GHC stores it per module in a static
 * IpeBufferListNode, symbol <Module>_ipe_buf, and registers the nodes at
 * startup; the data themselves are in the file, so they are read from the
 * file, never from the live process. The layout of the nodes and entries,
 * which changed between 9.6 and 9.10 (9.10 moved the info pointers and the
 * module name out of the entries and may compress entries and strings with
 * zstd), comes from the version's generated RTS layout table.
 *
 *   struct ipe_map map;
 *   ipe_map__init(&map);
 *   ipe_map__add_node(&map, L, &reader, node_vaddr);   // per *_ipe_buf
 *   ipe_map__finish(&map);
 *   const struct ipe_entry *e = ipe_map__find(&map, info_vaddr);
 *   // e->label "fib", e->module "Main", e->src_file "fibffi.hs",
 *   // e->src_span "14:44-54"
 *   ipe_map__free(&map);
 *
 * Everything read is untrusted: counts and sizes are capped, every string
 * offset must fall inside its table and every string must end inside it.
 */
#ifndef HSSPY_IPE_H
#define HSSPY_IPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "haskell-stack/rts_layout.h"

struct module;

struct ipe_entry {
    uint64_t info; /* ELF virtual address of the info pointer (entry code) */
    const char *table_name;   /* "$wfib_info", "block_c2Lw_info" */
    const char *closure_desc; /* closure type: "14" (as GHC prints it) */
    const char *ty_desc;      /* "Int# -> Int#", "" */
    const char *label;        /* the Haskell binding, "fib"; "" if unknown */
    const char *unit;         /* "main" (9.10), "" when not recorded (9.6) */
    const char *module;       /* "Main" */
    const char *src_file;     /* as given to ghc, "" if unknown */
    const char *src_span;     /* "14:44-54", "(17,1)-(26,8)", "" */
};

struct ipe_map {
    struct ipe_entry *e; /* sorted by info */
    size_t n, cap;
    void **owned; /* decompressed tables the entries point into */
    size_t nowned;
    unsigned bad_nodes; /* nodes skipped as malformed */
};

/* Reads the file's contents by virtual address: a pointer to the bytes at
 * vaddr and, in *avail, how many follow in the same segment; NULL if vaddr
 * is not in the file. */
struct ipe_reader {
    const uint8_t *(*at)(void *ctx, uint64_t vaddr, size_t *avail);
    void *ctx;
};

void ipe_map__init(struct ipe_map *m);

/* Decode the node at node_vaddr with layout L (any variant of the GHC
 * version that made the file). 0, -EINVAL for a malformed node (counted in
 * bad_nodes, nothing added), -ENOTSUP when L has no IPE layout or the data
 * are compressed and hsspy was built without zstd, or -ENOMEM. */
int ipe_map__add_node(struct ipe_map *m, const struct rts_layout *L, const struct ipe_reader *r,
                      uint64_t node_vaddr);

/* Sort, after the last add_node. */
void ipe_map__finish(struct ipe_map *m);

/* The entry whose info pointer is exactly vaddr, or NULL. */
const struct ipe_entry *ipe_map__find(const struct ipe_map *m, uint64_t vaddr);

void ipe_map__free(struct ipe_map *m);

/* A module's IPE entry for a runtime address, loading its map from the
 * file on first use (every *_ipe_buf symbol). NULL if none, or if the
 * module is not GHC code of a version with an IPE layout. */
const struct ipe_entry *ipe__lookup(struct module *mod, uint64_t addr);

/* The first line of a source span: 14 for "14:44-54", 17 for
 * "(17,1)-(26,8)"; 0 if it has none. */
int ipe__span_line(const char *span);

#endif
