/* The RTS's code ranges that decide a sample's tag before its stacks are
 * looked at, read from a real GHC executable (the calib workload, GHC
 * 9.0.2, non-PIE) by rts__attach: the scheduler's, which includes StgRun,
 * the assembly between the scheduler and Haskell code (a thread caught
 * there, entering Haskell or back from it, holds its capability with
 * in_haskell set, but runs the runtime's code: neither Haskell nor a
 * foreign call); the collector's; and not Haskell code. */
#include <unistd.h>

#include "haskell-stack/rts.h"
#include "symbolizer/modset.h"
#include "symbolizer/module.h"
#include "tests/unit/unit.h"

#define CALIB "build/workloads/hs/calib"

static uint64_t sym(struct module *m, const char *name)
{
    GElf_Sym s;
    if (!module__find_symbol(m, name, &s))
        UNIT_FAIL("%s has no symbol %s", CALIB, name);
    return s.st_value + (uint64_t)m->bias;
}

TEST(scheduler_ranges)
{
    if (access(CALIB, R_OK) != 0)
        UNIT_FAIL("%s not built (make workloads)", CALIB);
    struct saved_module sm = {.path = CALIB, .lo = 0x400000, .hi = 0x10000000};
    struct modset ms;
    struct rts r;
    size_t changed;
    CHECK_EQ_INT(modset__init_saved(&ms, &sm, 1, &changed), 0);
    if (!ms.main)
        UNIT_FAIL("cannot open %s", CALIB);
    CHECK_EQ_INT(rts__attach(&r, &ms, 0), 0);
    CHECK(r.ghc);
    uint64_t run = sym(ms.main, "StgRun"), ret = sym(ms.main, "StgReturn");
    CHECK(run < ret);
    CHECK_EQ_INT(r.stg_run, run);
    CHECK(code_ranges__has(&r.sched, run));
    CHECK(code_ranges__has(&r.sched, run + 4)); /* its prologue */
    CHECK(code_ranges__has(&r.sched, ret));
    CHECK(code_ranges__has(&r.sched, sym(ms.main, "schedule")));
    CHECK(!code_ranges__has(&r.sched, sym(ms.main, "Main_main_info")));
    CHECK(!code_ranges__has(&r.sched, sym(ms.main, "GarbageCollect")));
    CHECK(code_ranges__has(&r.gc, sym(ms.main, "GarbageCollect")));
    rts__free(&r);
    modset__free(&ms);
}

UNIT_MAIN()
