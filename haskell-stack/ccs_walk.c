/* ccs_walk.c - reading cost-centre stack chains, once per node. */
#include "haskell-stack/ccs_walk.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void ccs_walk__init(struct ccs_walk *w, const struct rts_layout *L, uint64_t ccs_main,
                    ccs_walk__read_fn read, void *ctx)
{
    memset(w, 0, sizeof *w);
    w->L = L;
    w->ccs_main = ccs_main;
    w->read = read;
    w->ctx = ctx;
}

void ccs_walk__free(struct ccs_walk *w)
{
    free(w->tab);
    w->tab = NULL;
    w->size = w->n = 0;
}

static size_t slot_of(uint64_t ccs, size_t size)
{
    /* Nodes are 8-aligned and come from one arena: mix the bits. */
    uint64_t h = (ccs >> 3) * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 32) & (size - 1);
}

static const struct ccs_node *cached(const struct ccs_walk *w, uint64_t ccs)
{
    if (!w->size)
        return NULL;
    for (size_t i = slot_of(ccs, w->size);; i = (i + 1) & (w->size - 1)) {
        if (w->tab[i].ccs == ccs)
            return &w->tab[i];
        if (!w->tab[i].ccs)
            return NULL;
    }
}

static void insert(struct ccs_node *tab, size_t size, const struct ccs_node *nd)
{
    size_t i = slot_of(nd->ccs, size);
    while (tab[i].ccs && tab[i].ccs != nd->ccs)
        i = (i + 1) & (size - 1);
    tab[i] = *nd;
}

/* Keep a node; a full cache or no memory only costs reads later. */
static void remember(struct ccs_walk *w, const struct ccs_node *nd)
{
    if (w->n >= CCS_WALK__MAX_CACHE)
        return;
    if (2 * (w->n + 1) > w->size) {
        size_t size = w->size ? w->size * 2 : 1024;
        struct ccs_node *tab = calloc(size, sizeof *tab);
        if (!tab)
            return;
        for (size_t i = 0; i < w->size; i++)
            if (w->tab[i].ccs)
                insert(tab, size, &w->tab[i]);
        free(w->tab);
        w->tab = tab;
        w->size = size;
    }
    insert(w->tab, w->size, nd);
    w->n++;
}

/* The word of field f (at most 8 bytes) in bytes read from base lo. */
static bool field(const uint8_t *buf, size_t len, int32_t lo, struct rts_layout__field f,
                  uint64_t *out)
{
    *out = 0;
    if (!rts_layout__has(f) || f.size == 0 || f.size > 8 || f.off < lo ||
        (size_t)(f.off - lo) + f.size > len)
        return false;
    memcpy(out, buf + (f.off - lo), f.size);
    return true;
}

static int node(struct ccs_walk *w, uint64_t ccs, struct ccs_node *out)
{
    const struct rts_layout__ccs *C = &w->L->ccs;
    const struct ccs_node *c = cached(w, ccs);
    uint8_t buf[64];

    if (c) {
        *out = *c;
        return 0;
    }
    /* One read from the first of the three fields to the end of the last. */
    int32_t lo = C->cc.off, hi = C->cc.off + C->cc.size;
    struct rts_layout__field fs[2] = {C->prevStack, C->depth};
    for (int i = 0; i < 2; i++) {
        if (!rts_layout__has(fs[i]))
            return -EINVAL;
        if (fs[i].off < lo)
            lo = fs[i].off;
        if (fs[i].off + fs[i].size > hi)
            hi = fs[i].off + fs[i].size;
    }
    if (!rts_layout__has(C->cc) || lo < 0 || hi - lo > (int32_t)sizeof buf)
        return -EINVAL;
    w->reads++;
    if (ccs + (uint64_t)lo < ccs || w->read(w->ctx, ccs + (uint64_t)lo, buf, (size_t)(hi - lo)) < 0) {
        w->read_failures++;
        return -EFAULT;
    }
    *out = (struct ccs_node){ccs, 0, 0, 0};
    if (!field(buf, (size_t)(hi - lo), lo, C->cc, &out->cc) ||
        !field(buf, (size_t)(hi - lo), lo, C->prevStack, &out->prev) ||
        !field(buf, (size_t)(hi - lo), lo, C->depth, &out->depth))
        return -EINVAL;
    /* Depth 0: a static node not yet registered (its prevStack is then a
     * list link, changed at startup), or CCS_MAIN. Anything deeper is final. */
    if (out->depth > 0 && out->cc)
        remember(w, out);
    return 0;
}

int ccs_walk__run(struct ccs_walk *w, uint64_t ccs, struct raw_frame *out, int max,
                  enum walk_error *err)
{
    int cap = max < CCS_WALK__MAX_DEPTH ? max : CCS_WALK__MAX_DEPTH;
    uint64_t want = 0; /* the depth the next node must have (0: any) */
    int n = 0;

    *err = WE_NONE;
    if (cap <= 0 || !w->L)
        return 0;
    while (ccs && ccs != w->ccs_main) {
        struct ccs_node nd;
        if (n == cap) {
            out[n - 1] = (struct raw_frame){0, FK_TRUNCATED, 0};
            return n;
        }
        if (node(w, ccs, &nd) < 0 || !nd.cc || (want && nd.depth != want) ||
            (nd.depth > 0 && !nd.prev) ||
            (w->ccs_main && (nd.prev == w->ccs_main) != (nd.depth == 1))) {
            out[n++] = (struct raw_frame){WE_CCS, FK_INVALID, 0};
            w->bad_nodes++;
            *err = WE_CCS;
            return n;
        }
        out[n++] = (struct raw_frame){nd.cc, FK_HS_CCS, 0};
        if (nd.depth == 0)
            break; /* a root (the RTS starting up) */
        want = nd.depth - 1;
        ccs = nd.prev;
    }
    return n;
}
