/* Cost centres named from the file: build/workloads/ccfile holds static
 * structs shaped like GHC 9.0.2's CostCentre (a PIE, so its pointers are
 * relocated and it is opened here at a made-up load bias); they are read
 * from the file by their runtime address, as a -prof program's are, and
 * named through the symbolizer as FK_HS_CCS frames. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "symbolizer/cost_centre.h"
#include "symbolizer/modset.h"
#include "symbolizer/symbolize.h"
#include "tests/unit/unit.h"

#define PATH "build/workloads/ccfile"
#define BIAS 0x7f0000000000ll

static const struct rts_layout *layout(void)
{
    return rts_layout__find("9.0.2", false, true, false);
}

static uint64_t runtime_addr(struct module *m, const char *sym)
{
    GElf_Sym s;
    if (!module__find_symbol(m, sym, &s))
        UNIT_FAIL("%s has no symbol %s", PATH, sym);
    return s.st_value + (uint64_t)m->bias;
}

static void open_ccfile(struct module *m)
{
    int r = module__open_file(m, PATH, BIAS, BIAS + 0x100000, BIAS);
    if (r < 0)
        UNIT_FAIL("cannot open %s (run make workloads): %s", PATH, strerror(-r));
}

TEST(read_from_file)
{
    struct module m;
    struct cost_centre cc;
    open_ccfile(&m);
    CHECK_EQ_INT(cost_centre__read(&m, layout(), runtime_addr(&m, "ccfile_fib"), &cc), 0);
    CHECK_EQ_STR(cc.label, "fib");
    CHECK_EQ_STR(cc.module, "Main");
    CHECK_EQ_STR(cc.srcloc, "fib.hs:(5,1)-(7,30)");
    CHECK_EQ_INT(cost_centre__read(&m, layout(), runtime_addr(&m, "ccfile_caf"), &cc), 0);
    CHECK_EQ_STR(cc.label, "CAF");
    CHECK_EQ_STR(cc.module, "GHC.IO.Handle.FD");
    module__close(&m);
}

TEST(refuses_what_is_not_a_cost_centre)
{
    struct module m;
    struct cost_centre cc;
    open_ccfile(&m);
    /* A NULL label; a struct with no bytes in the file (.bss, or memory the
     * program allocated); an address off the end of the file; one without
     * the bias (the file's own vaddr, not where it was mapped). */
    CHECK_EQ_INT(cost_centre__read(&m, layout(), runtime_addr(&m, "ccfile_nolabel"), &cc),
                 -EINVAL);
    CHECK(cc.label == NULL);
    CHECK_EQ_INT(cost_centre__read(&m, layout(), runtime_addr(&m, "ccfile_bss"), &cc), -ENOENT);
    CHECK_EQ_INT(cost_centre__read(&m, layout(), 0x10, &cc), -ENOENT);
    CHECK(cost_centre__read(&m, layout(), runtime_addr(&m, "ccfile_fib") - BIAS, &cc) < 0);
    /* The label's pointer, read as a struct: its fields point nowhere. */
    CHECK(cost_centre__read(&m, layout(), runtime_addr(&m, "ccfile_fib") + 8, &cc) < 0);
    CHECK(cost_centre__read(&m, NULL, runtime_addr(&m, "ccfile_fib"), &cc) < 0);
    module__close(&m);
}

TEST(srcloc)
{
    char file[64];
    int line = 0;
    const char *span = NULL;
    CHECK(cost_centre__srcloc("fib.hs:18:33-46", file, sizeof file, &line, &span));
    CHECK_EQ_STR(file, "fib.hs");
    CHECK_EQ_INT(line, 18);
    CHECK_EQ_STR(span, "18:33-46");
    CHECK(cost_centre__srcloc("src/A/B.hs:(5,1)-(7,30)", file, sizeof file, &line, &span));
    CHECK_EQ_STR(file, "src/A/B.hs");
    CHECK_EQ_INT(line, 5);
    CHECK_EQ_STR(span, "(5,1)-(7,30)");
    CHECK(cost_centre__srcloc("c:dir/x.hs:9:1", file, sizeof file, &line, &span));
    CHECK_EQ_STR(file, "c:dir/x.hs");
    CHECK_EQ_INT(line, 9);
    CHECK(!cost_centre__srcloc("<entire-module>", file, sizeof file, &line, &span));
    CHECK(!cost_centre__srcloc("<built-in>", file, sizeof file, &line, &span));
    CHECK(!cost_centre__srcloc("x.hs:main", file, sizeof file, &line, &span));
    CHECK(!cost_centre__srcloc("x.hs:", file, sizeof file, &line, &span));
    CHECK(!cost_centre__srcloc("", file, sizeof file, &line, &span));
}

/* Through the symbolizer, as `hsspy report` names a saved recording: the
 * module taken for a GHC 9.0.2 program's executable. */
TEST(frame_names)
{
    struct module probe;
    open_ccfile(&probe);
    uint64_t fib = runtime_addr(&probe, "ccfile_fib"), caf = runtime_addr(&probe, "ccfile_caf");
    uint64_t nolabel = runtime_addr(&probe, "ccfile_nolabel");
    module__close(&probe);

    struct saved_module sm = {.path = PATH, .lo = BIAS, .hi = BIAS + 0x100000, .bias = BIAS};
    struct modset ms;
    size_t changed = 0;
    CHECK_EQ_INT(modset__init_saved(&ms, &sm, 1, &changed), 0);
    CHECK(ms.nmods == 1);
    ms.mods[0]->is_haskell = true;
    snprintf(ms.mods[0]->ghc_version, sizeof ms.mods[0]->ghc_version, "9.0.2");

    struct frame_sym fs;
    CHECK_EQ_INT(symbolize__frame(&ms, &(struct raw_frame){fib, FK_HS_CCS, 0}, &fs), 0);
    CHECK_EQ_STR(fs.name, "Main.fib");
    CHECK_EQ_STR(fs.file, "fib.hs");
    CHECK_EQ_INT(fs.line, 5);
    CHECK_EQ_STR(fs.span, "(5,1)-(7,30)");
    CHECK_EQ_STR(fs.object, "ccfile");
    CHECK_EQ_INT(fs.lang, LANG_HASKELL);
    frame_sym__free(&fs);
    CHECK_EQ_INT(symbolize__frame(&ms, &(struct raw_frame){caf, FK_HS_CCS, 0}, &fs), 0);
    CHECK_EQ_STR(fs.name, "GHC.IO.Handle.FD.CAF");
    CHECK(fs.file == NULL);
    frame_sym__free(&fs);
    /* Not a cost centre in the file: its address, never a wrong name. */
    char want[64];
    snprintf(want, sizeof want, "[cost centre 0x%llx]", (unsigned long long)nolabel);
    CHECK_EQ_INT(symbolize__frame(&ms, &(struct raw_frame){nolabel, FK_HS_CCS, 0}, &fs), 0);
    CHECK_EQ_STR(fs.name, want);
    frame_sym__free(&fs);
    CHECK_EQ_INT(symbolize__frame(&ms, &(struct raw_frame){0x1234, FK_HS_CCS, 0}, &fs), 0);
    CHECK_EQ_STR(fs.name, "[cost centre 0x1234]");
    frame_sym__free(&fs);
    /* A module that is not GHC code has no CostCentre layout. */
    ms.mods[0]->is_haskell = false;
    CHECK_EQ_INT(symbolize__frame(&ms, &(struct raw_frame){fib, FK_HS_CCS, 0}, &fs), 0);
    CHECK(strncmp(fs.name, "[cost centre 0x", 15) == 0);
    frame_sym__free(&fs);
    modset__free(&ms);
}

UNIT_MAIN()
