/* ccs_walk.h - a cost-centre stack (a -prof program's) as frames.
 *
 * The RTS of a profiled program keeps, per capability, the current
 * cost-centre stack (CCCS: cap->r.rCCCS while a thread runs, tso->prof.cccs
 * while it is suspended): a CostCentreStack node whose cc is the innermost
 * cost centre and whose prevStack is the stack it was pushed on, out to
 * CCS_MAIN. The sampler captures only that pointer while the thread is
 * stopped; the chain is read here afterwards, while the target runs. That is
 * safe because a node is never changed or freed once the RTS has made it
 * (rts/Profiling.c, actualPush_: depth = prevStack's depth + 1, arena
 * memory); the static nodes the RTS registers at startup are the exception
 * until then, with depth 0, and are not cached. So each node is read once
 * and kept in a cache keyed by its address; a sample of a known stack costs
 * no read at all.
 *
 *   struct ccs_walk w;
 *   ccs_walk__init(&w, L, ccs_main, read_fn, ctx);
 *   int n = ccs_walk__run(&w, cccs, frames, max, &err);
 *   // frames[0] = {cc of cccs, FK_HS_CCS}, ... out to CCS_MAIN's child
 *   ccs_walk__free(&w);
 *
 * Every node is untrusted: it must be readable, name a cost centre, and
 * have a depth one more than its parent's, CCS_MAIN's children depth 1
 * (which rules out cycles); the walk is capped. A bad node ends the frames with FK_INVALID (WE_CCS).
 */
#ifndef HSSPY_CCS_WALK_H
#define HSSPY_CCS_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "haskell-stack/rts_layout.h"
#include "sampler/sample.h"

/* Deeper stacks end in FK_TRUNCATED (pushing a cost centre already on the
 * stack returns that earlier stack, rts/Profiling.c RECURSION_TRUNCATES:
 * depth is bounded by nesting of distinct cost centres, not recursion). */
#define CCS_WALK__MAX_DEPTH 256
/* Nodes kept; past this the walk reads what it does not hold. */
#define CCS_WALK__MAX_CACHE (1u << 20)

/* Read len bytes of the target at addr: 0, or a negative errno. */
typedef int (*ccs_walk__read_fn)(void *ctx, uint64_t addr, void *out, size_t len);

struct ccs_node {
    uint64_t ccs; /* the node's address (0: empty slot) */
    uint64_t cc, prev, depth;
};

struct ccs_walk {
    const struct rts_layout *L;
    uint64_t ccs_main; /* CCS_MAIN: the root, not a frame */
    ccs_walk__read_fn read;
    void *ctx;
    struct ccs_node *tab; /* open addressing, a power of two */
    size_t size, n;
    unsigned long reads, read_failures, bad_nodes;
};

void ccs_walk__init(struct ccs_walk *w, const struct rts_layout *L, uint64_t ccs_main,
                    ccs_walk__read_fn read, void *ctx);
void ccs_walk__free(struct ccs_walk *w);

/* Write the frames of the stack whose innermost node is at ccs: one
 * FK_HS_CCS per node, addr the node's CostCentre, innermost first, up to
 * and not including CCS_MAIN (nothing for CCS_MAIN or NULL). At most max
 * frames, and CCS_WALK__MAX_DEPTH, the last one FK_TRUNCATED when the
 * stack goes on. Returns the number of frames; *err is WE_NONE, or WE_CCS
 * after a node that could not be read or is not part of a chain (then the
 * last frame is FK_INVALID). */
int ccs_walk__run(struct ccs_walk *w, uint64_t ccs, struct raw_frame *out, int max,
                  enum walk_error *err);

#endif
