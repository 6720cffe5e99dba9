/* The cost-centre stack walk over memory images laid out as GHC 9.0.2's
 * profiled RTS lays out CostCentreStack nodes: chains innermost first,
 * each node read once, and every kind of damage (unreadable node, no cost
 * centre, depths that do not count down, cycles, endless chains) ending in
 * an explicit frame, never a crash or a loop. */
#include <stdint.h>
#include <string.h>

#include "haskell-stack/ccs_walk.h"
#include "sampler/memimg.h"
#include "tests/unit/unit.h"

#define MAIN 0x1000ull

struct image {
    struct memimg img;
    unsigned reads;
};

static int read_img(void *ctx, uint64_t addr, void *out, size_t len)
{
    struct image *m = ctx;
    m->reads++;
    return memimg__read(&m->img, addr, out, len);
}

static const struct rts_layout *L(void)
{
    return rts_layout__find("9.0.2", false, true, false);
}

/* A CostCentreStack at ccs: its cc, prevStack and depth. */
static void put_node(struct image *m, uint64_t ccs, uint64_t cc, uint64_t prev, uint64_t depth)
{
    const struct rts_layout__ccs *C = &L()->ccs;
    uint8_t *p = (uint8_t *)memimg__ptr(&m->img, ccs, (size_t)C->struct_size);
    if (!p)
        p = memimg__add(&m->img, ccs, (size_t)C->struct_size);
    if (!p)
        UNIT_FAIL("image full");
    memset(p, 0, (size_t)C->struct_size);
    memcpy(p + C->cc.off, &cc, 8);
    memcpy(p + C->prevStack.off, &prev, 8);
    memcpy(p + C->depth.off, &depth, 8);
}

static void setup(struct image *m, struct ccs_walk *w)
{
    memset(m, 0, sizeof *m);
    if (memimg__init(&m->img, 1 << 20, 8192) < 0 || !L())
        UNIT_FAIL("setup");
    /* MAIN <- A <- B <- C */
    put_node(m, MAIN, 0xc0, 0, 0);
    put_node(m, 0x2000, 0xa0, MAIN, 1);
    put_node(m, 0x3000, 0xb0, 0x2000, 2);
    put_node(m, 0x4000, 0xcc, 0x3000, 3);
    ccs_walk__init(w, L(), MAIN, read_img, m);
}

static void teardown(struct image *m, struct ccs_walk *w)
{
    ccs_walk__free(w);
    memimg__free(&m->img);
}

TEST(chain_innermost_first)
{
    struct image m;
    struct ccs_walk w;
    struct raw_frame f[16];
    enum walk_error err;
    setup(&m, &w);
    CHECK_EQ_INT(ccs_walk__run(&w, 0x4000, f, 16, &err), 3);
    CHECK_EQ_INT(err, WE_NONE);
    CHECK_EQ_INT(f[0].kind, FK_HS_CCS);
    CHECK_EQ_INT(f[0].addr, 0xcc);
    CHECK_EQ_INT(f[1].addr, 0xb0);
    CHECK_EQ_INT(f[2].addr, 0xa0);
    /* CCS_MAIN is the root, not a frame; NULL is no stack. */
    CHECK_EQ_INT(ccs_walk__run(&w, MAIN, f, 16, &err), 0);
    CHECK_EQ_INT(ccs_walk__run(&w, 0, f, 16, &err), 0);
    CHECK_EQ_INT(ccs_walk__run(&w, 0x2000, f, 16, &err), 1);
    CHECK_EQ_INT(f[0].addr, 0xa0);
    teardown(&m, &w);
}

TEST(each_node_read_once)
{
    struct image m;
    struct ccs_walk w;
    struct raw_frame f[16];
    enum walk_error err;
    setup(&m, &w);
    CHECK_EQ_INT(ccs_walk__run(&w, 0x4000, f, 16, &err), 3);
    CHECK_EQ_INT(m.reads, 3);
    for (int i = 0; i < 100; i++)
        CHECK_EQ_INT(ccs_walk__run(&w, 0x4000, f, 16, &err), 3);
    CHECK_EQ_INT(ccs_walk__run(&w, 0x3000, f, 16, &err), 2);
    CHECK_EQ_INT(m.reads, 3);
    /* Cached nodes need no memory: the process may be gone. */
    memimg__reset(&m.img);
    CHECK_EQ_INT(ccs_walk__run(&w, 0x4000, f, 16, &err), 3);
    CHECK_EQ_INT(err, WE_NONE);
    CHECK_EQ_INT(f[2].addr, 0xa0);
    /* Many nodes: the cache grows and keeps them all. */
    memimg__reset(&m.img);
    put_node(&m, MAIN, 0xc0, 0, 0);
    for (uint64_t i = 0; i < 5000; i++)
        put_node(&m, 0x100000 + i * 96, 0x10 + i, MAIN, 1);
    m.reads = 0;
    for (uint64_t i = 0; i < 5000; i++) {
        CHECK_EQ_INT(ccs_walk__run(&w, 0x100000 + i * 96, f, 16, &err), 1);
        CHECK_EQ_INT(f[0].addr, 0x10 + i);
    }
    for (uint64_t i = 0; i < 5000; i++)
        CHECK_EQ_INT(ccs_walk__run(&w, 0x100000 + i * 96, f, 16, &err), 1);
    CHECK_EQ_INT(m.reads, 5000);
    teardown(&m, &w);
}

TEST(unreadable_node)
{
    struct image m;
    struct ccs_walk w;
    struct raw_frame f[16];
    enum walk_error err;
    setup(&m, &w);
    put_node(&m, 0x5000, 0xdd, 0x9000, 4); /* its parent was not captured */
    CHECK_EQ_INT(ccs_walk__run(&w, 0x5000, f, 16, &err), 2);
    CHECK_EQ_INT(err, WE_CCS);
    CHECK_EQ_INT(f[0].addr, 0xdd);
    CHECK_EQ_INT(f[1].kind, FK_INVALID);
    CHECK_EQ_INT(f[1].addr, WE_CCS);
    CHECK_EQ_INT(ccs_walk__run(&w, UINT64_MAX - 8, f, 16, &err), 1);
    CHECK_EQ_INT(f[0].kind, FK_INVALID);
    /* A node half captured. */
    memimg__add(&m.img, 0x7000, 12);
    CHECK_EQ_INT(ccs_walk__run(&w, 0x7000, f, 16, &err), 1);
    CHECK_EQ_INT(err, WE_CCS);
    teardown(&m, &w);
}

TEST(not_a_chain)
{
    struct image m;
    struct ccs_walk w;
    struct raw_frame f[16];
    enum walk_error err;
    setup(&m, &w);
    /* (Each case at its own address: a node, once read, is cached, as
     * a real one never changes.) No cost centre: */
    put_node(&m, 0x5000, 0, 0x4000, 4);
    CHECK_EQ_INT(ccs_walk__run(&w, 0x5000, f, 16, &err), 1);
    CHECK_EQ_INT(f[0].kind, FK_INVALID);
    /* A depth that does not count down to its parent's. */
    put_node(&m, 0x5100, 0xdd, 0x4000, 7);
    CHECK_EQ_INT(ccs_walk__run(&w, 0x5100, f, 16, &err), 2);
    CHECK_EQ_INT(err, WE_CCS);
    CHECK_EQ_INT(f[1].kind, FK_INVALID);
    /* A child of MAIN deeper than 1; a depth-1 node under something else. */
    put_node(&m, 0x5200, 0xdd, MAIN, 2);
    CHECK_EQ_INT(ccs_walk__run(&w, 0x5200, f, 16, &err), 1);
    CHECK_EQ_INT(err, WE_CCS);
    put_node(&m, 0x5300, 0xdd, 0x6000, 1);
    put_node(&m, 0x6000, 0xee, MAIN, 1);
    CHECK_EQ_INT(ccs_walk__run(&w, 0x5300, f, 16, &err), 1);
    CHECK_EQ_INT(err, WE_CCS);
    /* Deep, but no parent. */
    put_node(&m, 0x5400, 0xdd, 0, 3);
    CHECK_EQ_INT(ccs_walk__run(&w, 0x5400, f, 16, &err), 1);
    CHECK_EQ_INT(err, WE_CCS);
    /* Cycles: onto itself, and two nodes pointing at each other. */
    put_node(&m, 0x5500, 0xdd, 0x5500, 2);
    CHECK_EQ_INT(ccs_walk__run(&w, 0x5500, f, 16, &err), 2);
    CHECK_EQ_INT(err, WE_CCS);
    put_node(&m, 0x5600, 0xdd, 0x6600, 3);
    put_node(&m, 0x6600, 0xee, 0x5600, 2);
    CHECK_EQ_INT(ccs_walk__run(&w, 0x5600, f, 16, &err), 3);
    CHECK_EQ_INT(err, WE_CCS);
    CHECK_EQ_INT(f[2].kind, FK_INVALID);
    teardown(&m, &w);
}

TEST(capped)
{
    struct image m;
    struct ccs_walk w;
    static struct raw_frame f[1024];
    enum walk_error err;
    setup(&m, &w);
    /* 1000 nested cost centres. */
    uint64_t prev = MAIN;
    for (uint64_t d = 1; d <= 1000; d++) {
        put_node(&m, 0x100000 + d * 96, 0x10 + d, prev, d);
        prev = 0x100000 + d * 96;
    }
    CHECK_EQ_INT(ccs_walk__run(&w, prev, f, 1024, &err), CCS_WALK__MAX_DEPTH);
    CHECK_EQ_INT(err, WE_NONE);
    CHECK_EQ_INT(f[0].addr, 0x10 + 1000);
    CHECK_EQ_INT(f[CCS_WALK__MAX_DEPTH - 1].kind, FK_TRUNCATED);
    CHECK_EQ_INT(ccs_walk__run(&w, prev, f, 5, &err), 5);
    CHECK_EQ_INT(f[3].addr, 0x10 + 997);
    CHECK_EQ_INT(f[4].kind, FK_TRUNCATED);
    /* Exactly as many frames as room: nothing truncated. */
    CHECK_EQ_INT(ccs_walk__run(&w, 0x4000, f, 3, &err), 3);
    CHECK_EQ_INT(f[2].kind, FK_HS_CCS);
    CHECK_EQ_INT(ccs_walk__run(&w, 0x4000, f, 0, &err), 0);
    teardown(&m, &w);
}

/* Before the RTS registers its static stacks their depth is 0 and their
 * prevStack a list link; they change then, so they are never cached. */
TEST(startup_nodes_not_cached)
{
    struct image m;
    struct ccs_walk w;
    struct raw_frame f[16];
    enum walk_error err;
    setup(&m, &w);
    put_node(&m, 0x8000, 0x5e, 0x2000, 0); /* CCS_SYSTEM, registered, not yet moved */
    CHECK_EQ_INT(ccs_walk__run(&w, 0x8000, f, 16, &err), 1);
    CHECK_EQ_INT(f[0].addr, 0x5e);
    CHECK_EQ_INT(err, WE_NONE);
    put_node(&m, 0x8000, 0x5e, MAIN, 1); /* refreshProfilingCCSs */
    put_node(&m, 0x8100, 0x5f, 0x8000, 2);
    CHECK_EQ_INT(ccs_walk__run(&w, 0x8100, f, 16, &err), 2);
    CHECK_EQ_INT(err, WE_NONE);
    CHECK_EQ_INT(f[1].addr, 0x5e);
    teardown(&m, &w);
}

UNIT_MAIN()
