/* test_zdecode.c - unit tests for symbolizer/zdecode.c.
 *
 * Owns the checks that GHC's Z-encoding is decoded exactly and that linker
 * symbols are split into unit, module, name and flavour the way GHC 9.0.2
 * writes them.  Most symbols below were taken from `nm` of real binaries and
 * libraries built by GHC 9.0.2 (a test program with modules Main and A.B.C,
 * plus the installed base, ghc-prim, containers, Cabal, ...); the expected
 * decodings are the Haskell source names, not the decoder's output.
 */
#include "tests/unit/unit.h"
#include "symbolizer/zdecode.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct want {
    const char *sym;
    const char *unit, *module, *name, *suffix;
};

static void check_symbol(const struct want *w)
{
    struct zdecoded z;

    memset(&z, 'X', sizeof z); /* no stale NULs to hide a missing write */
    if (!zdecode__symbol(w->sym, &z))
        UNIT_FAIL("%s: rejected", w->sym);
#define FIELD(f)                                                            \
    if (memchr(z.f, 0, sizeof z.f) == NULL || strcmp(z.f, w->f) != 0)       \
        UNIT_FAIL("%.100s: " #f " is \"%.100s\", expected \"%.100s\"",    \
                  w->sym, z.f, w->f);
    FIELD(unit)
    FIELD(module)
    FIELD(name)
    FIELD(suffix)
#undef FIELD
}

static void check_symbols(const struct want *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        check_symbol(&w[i]);
}

static void check_rejected(const char *const *syms, size_t n)
{
    struct zdecoded z;

    for (size_t i = 0; i < n; i++)
        if (zdecode__symbol(syms[i], &z))
            UNIT_FAIL("\"%.60s\" accepted as %.40s|%.60s|%.60s|%s",
                      syms[i], z.unit, z.module, z.name, z.suffix);
}

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Decodes a NUL-terminated component; "<-1>" marks rejection so that one
 * CHECK_EQ_STR covers both the return value and the text. */
static const char *dec(const char *z, char *out, size_t outsz)
{
    int n = zdecode__string(z, strlen(z), out, outsz);

    if (n < 0)
        return "<-1>";
    if ((size_t)n != strlen(out))
        return "<length mismatch>";
    return out;
}

/* ---- zdecode__string ---------------------------------------------------- */

TEST(string_plain_alnum_passes_through)
{
    char out[64];

    CHECK_EQ_STR(dec("fib", out, sizeof out), "fib");
    CHECK_EQ_STR(dec("Main", out, sizeof out), "Main");
    CHECK_EQ_STR(dec("new10", out, sizeof out), "new10");
    CHECK_EQ_INT(zdecode__string("toAscList1", 10, out, sizeof out), 10);
}

TEST(string_empty_is_empty)
{
    char out[4] = "abc";

    CHECK_EQ_INT(zdecode__string("", 0, out, sizeof out), 0);
    CHECK_EQ_STR(out, "");
}

TEST(string_every_upper_escape)
{
    char out[64];

    CHECK_EQ_STR(dec("ZL", out, sizeof out), "(");
    CHECK_EQ_STR(dec("ZR", out, sizeof out), ")");
    CHECK_EQ_STR(dec("ZM", out, sizeof out), "[");
    CHECK_EQ_STR(dec("ZN", out, sizeof out), "]");
    CHECK_EQ_STR(dec("ZC", out, sizeof out), ":");
    CHECK_EQ_STR(dec("ZZ", out, sizeof out), "Z");
    CHECK_EQ_STR(dec("ZMZN", out, sizeof out), "[]");
    CHECK_EQ_STR(dec("ZLzmzgZR", out, sizeof out), "(->)");
}

TEST(string_every_lower_escape)
{
    char out[64];

    CHECK_EQ_STR(dec("zz", out, sizeof out), "z");
    CHECK_EQ_STR(dec("za", out, sizeof out), "&");
    CHECK_EQ_STR(dec("zb", out, sizeof out), "|");
    CHECK_EQ_STR(dec("zc", out, sizeof out), "^");
    CHECK_EQ_STR(dec("zd", out, sizeof out), "$");
    CHECK_EQ_STR(dec("ze", out, sizeof out), "=");
    CHECK_EQ_STR(dec("zg", out, sizeof out), ">");
    CHECK_EQ_STR(dec("zh", out, sizeof out), "#");
    CHECK_EQ_STR(dec("zi", out, sizeof out), ".");
    CHECK_EQ_STR(dec("zl", out, sizeof out), "<");
    CHECK_EQ_STR(dec("zm", out, sizeof out), "-");
    CHECK_EQ_STR(dec("zn", out, sizeof out), "!");
    CHECK_EQ_STR(dec("zp", out, sizeof out), "+");
    CHECK_EQ_STR(dec("zq", out, sizeof out), "'");
    CHECK_EQ_STR(dec("zr", out, sizeof out), "\\");
    CHECK_EQ_STR(dec("zs", out, sizeof out), "/");
    CHECK_EQ_STR(dec("zt", out, sizeof out), "*");
    CHECK_EQ_STR(dec("zu", out, sizeof out), "_");
    CHECK_EQ_STR(dec("zv", out, sizeof out), "%");
    /* The encoder's own examples (Encoding.hs). */
    CHECK_EQ_STR(dec("foozuwib", out, sizeof out), "foo_wib");
    CHECK_EQ_STR(dec("zg1", out, sizeof out), ">1");
    CHECK_EQ_STR(dec("foozhzh1", out, sizeof out), "foo##1");
    CHECK_EQ_STR(dec("fooZZ", out, sizeof out), "fooZ");
    CHECK_EQ_STR(dec("ZCzp", out, sizeof out), ":+");
}

TEST(string_hex_escapes)
{
    char out[64];

    CHECK_EQ_STR(dec("z7eU", out, sizeof out), "~");
    CHECK_EQ_STR(dec("z2cU", out, sizeof out), ",");
    CHECK_EQ_STR(dec("z3fUz7eU", out, sizeof out), "?~");
    /* hex starting with a letter gets a '0' so it cannot be read as "ze". */
    CHECK_EQ_STR(dec("z0fcUber", out, sizeof out), "\xc3\xbc" "ber");
    CHECK_EQ_STR(dec("z3bbU", out, sizeof out), "\xce\xbb");
    CHECK_EQ_STR(dec("z2200U", out, sizeof out), "\xe2\x88\x80");
    CHECK_EQ_STR(dec("z1f600U", out, sizeof out), "\xf0\x9f\x98\x80");
    CHECK_EQ_STR(dec("z10ffffU", out, sizeof out), "\xf4\x8f\xbf\xbf");
    CHECK_EQ_STR(dec("z0041U", out, sizeof out), "A");
    /* A leading digit is always escaped: unit "9pH-0.1". */
    CHECK_EQ_STR(dec("z39UpHzm0zi1", out, sizeof out), "9pH-0.1");
}

TEST(string_tuples)
{
    char out[128];
    char want[128];

    CHECK_EQ_STR(dec("Z0T", out, sizeof out), "()");
    CHECK_EQ_STR(dec("Z2T", out, sizeof out), "(,)");
    CHECK_EQ_STR(dec("Z3T", out, sizeof out), "(,,)");
    CHECK_EQ_STR(dec("Z5T", out, sizeof out), "(,,,,)");
    CHECK_EQ_STR(dec("Z1H", out, sizeof out), "(# #)");
    CHECK_EQ_STR(dec("Z2H", out, sizeof out), "(#,#)");
    CHECK_EQ_STR(dec("Z5H", out, sizeof out), "(#,,,,#)");
    /* GHC's decoder resumes after a tuple, so one may lead a longer name. */
    CHECK_EQ_STR(dec("Z2Tzi1", out, sizeof out), "(,).1");

    want[0] = '(';
    memset(want + 1, ',', 61);
    strcpy(want + 62, ")");
    CHECK_EQ_STR(dec("Z62T", out, sizeof out), want);
    CHECK_EQ_INT(strlen(out), 63);
}

TEST(string_rejects_malformed)
{
    static const char *const bad[] = {
        "z",          /* truncated escape */
        "Z",          /* truncated escape */
        "fibz",       /* truncated at the end */
        "zx", "zf", "zj", "zk", "zo", "zw", "zy", "zA", "zU",
        "ZA", "Zz", "ZT", "ZU",
        "z7e",        /* no closing U */
        "z7EU",       /* the encoder writes lower-case hex */
        "z7gU",       /* not hex */
        "z0U",        /* NUL */
        "z0d800U",    /* surrogate */
        "z110000U",   /* beyond Unicode */
        "z7fffffffffffffffffffU",
        "Z1T",        /* no boxed 1-tuple */
        "Z0H",        /* no unboxed 0-tuple */
        "Z02T",       /* the encoder writes no leading zeros */
        "Z2", "Z2X", "Z99999999999999999999T",
        "1abc",       /* raw leading digit */
        "9pH",
        "a_b", "a.b", "a$b", "a b", "a-b", "a'b",
        "\xc3\xbc",   /* raw non-ASCII */
    };
    char out[64];

    for (size_t i = 0; i < NELEM(bad); i++) {
        int n = zdecode__string(bad[i], strlen(bad[i]), out, sizeof out);
        if (n != -1)
            UNIT_FAIL("\"%s\" decoded to %d \"%s\"", bad[i], n, out);
    }
}

TEST(string_respects_zlen_without_nul)
{
    /* Heap copies without a terminator so ASan flags any read past zlen. */
    char out[16];
    char *a = malloc(3), *b = malloc(2), *c = malloc(4);

    CHECK(a && b && c);
    memcpy(a, "zdw", 3);
    memcpy(b, "az", 2);
    memcpy(c, "z7eU", 4);
    CHECK_EQ_INT(zdecode__string(a, 3, out, sizeof out), 2);
    CHECK_EQ_STR(out, "$w");
    CHECK_EQ_INT(zdecode__string(b, 2, out, sizeof out), -1);
    CHECK_EQ_INT(zdecode__string(c, 3, out, sizeof out), -1); /* "z7e" */
    CHECK_EQ_INT(zdecode__string(c, 4, out, sizeof out), 1);
    CHECK_EQ_STR(out, "~");
    /* zlen shorter than the string: the rest is not looked at. */
    CHECK_EQ_INT(zdecode__string("zdwfib_info", 6, out, sizeof out), 5);
    CHECK_EQ_STR(out, "$wfib");
    free(a);
    free(b);
    free(c);
}

TEST(string_output_buffer_limits)
{
    char out[8];

    /* "$wfib" needs 6 bytes with its NUL. */
    CHECK_EQ_INT(zdecode__string("zdwfib", 6, out, 6), 5);
    CHECK_EQ_STR(out, "$wfib");
    CHECK_EQ_INT(zdecode__string("zdwfib", 6, out, 5), -1);
    CHECK_EQ_INT(zdecode__string("zdwfib", 6, out, 0), -1);
    CHECK_EQ_INT(zdecode__string("", 0, out, 0), -1);
    CHECK_EQ_INT(zdecode__string("", 0, out, 1), 0);
    /* Multi-byte output must fit as a whole. */
    CHECK_EQ_INT(zdecode__string("z1f600U", 7, out, 5), 4);
    CHECK_EQ_INT(zdecode__string("z1f600U", 7, out, 4), -1);
    CHECK_EQ_INT(zdecode__string("Z5T", 3, out, 7), 6);
    CHECK_EQ_INT(zdecode__string("Z5T", 3, out, 6), -1);
    CHECK_EQ_INT(zdecode__string(NULL, 0, out, sizeof out), 0);
    CHECK_EQ_INT(zdecode__string(NULL, 3, out, sizeof out), -1);
    CHECK_EQ_INT(zdecode__string("a", 1, NULL, 0), -1);
}

/* ---- zdecode__symbol: real symbols -------------------------------------- */

/* From the test program's Main.hs (main unit: no unit part at all). */
TEST(symbol_main_unit)
{
    static const struct want w[] = {
        {"Main_zdwfib_info", "", "Main", "$wfib", "info"},
        {"Main_zdwfib_closure", "", "Main", "$wfib", "closure"},
        {"Main_fib_info", "", "Main", "fib", "info"},
        {"Main_main1_info", "", "Main", "main1", "info"},
        {"ZCMain_main_info", "", ":Main", "main", "info"},
        {"ZCMain_main_closure", "", ":Main", "main", "closure"},
        /* instance Show Wrap where show = ... */
        {"Main_zdfShowWrapzuzdcshow_info", "", "Main", "$fShowWrap_$cshow",
         "info"},
        {"Main_zdfShowWrap3_bytes", "", "Main", "$fShowWrap3", "bytes"},
        {"Main_zdtczqWrap_closure", "", "Main", "$tc'Wrap", "closure"},
        {"Main_zdtrModule_closure", "", "Main", "$trModule", "closure"},
        /* -ticky counters */
        {"Main_zdwfib_ct", "", "Main", "$wfib", "ct"},
        {"ZCMain_main_ct", "", ":Main", "main", "ct"},
    };
    check_symbols(w, NELEM(w));
}

/* From module A.B.C of the test program: operators, primes, underscores,
 * 'z'/'Z' in names, non-ASCII, constructors, instances, specialisations. */
TEST(symbol_hierarchical_module_bindings)
{
    static const struct want w[] = {
        {"AziBziC_zlzpzg_info", "", "A.B.C", "<+>", "info"},
        {"AziBziC_zbzg_closure", "", "A.B.C", "|>", "closure"},
        {"AziBziC_ziZCzi_info", "", "A.B.C", ".:.", "info"},
        {"AziBziC_zdwziZCzi_info", "", "A.B.C", "$w.:.", "info"},
        {"AziBziC_z7eUz7eUzg_info", "", "A.B.C", "~~>", "info"},
        {"AziBziC_gozq_info", "", "A.B.C", "go'", "info"},
        {"AziBziC_zdwgozq_info", "", "A.B.C", "$wgo'", "info"},
        {"AziBziC_gozuunder_info", "", "A.B.C", "go_under", "info"},
        {"AziBziC_zdwgozuunder_closure", "", "A.B.C", "$wgo_under", "closure"},
        {"AziBziC_zzigZZag_info", "", "A.B.C", "zigZag", "info"},
        {"AziBziC_zdwzzigZZag_info", "", "A.B.C", "$wzigZag", "info"},
        {"AziBziC_z0fcUber_info", "", "A.B.C", "\xc3\xbc" "ber", "info"},
        {"AziBziC_tupleMaker_info", "", "A.B.C", "tupleMaker", "info"},
        {"AziBziC_barField_info", "", "A.B.C", "barField", "info"},
        {"AziBziC_zdWBar_info", "", "A.B.C", "$WBar", "info"},
        {"AziBziC_zdfShowFoozuzdcshowsPrec_info", "", "A.B.C",
         "$fShowFoo_$cshowsPrec", "info"},
        {"AziBziC_zdfEqFoozuzdczeze_info", "", "A.B.C", "$fEqFoo_$c==",
         "info"},
        {"AziBziC_zdfOrdZZedzuzdczlze_info", "", "A.B.C", "$fOrdZed_$c<=",
         "info"},
        {"AziBziC_zdfShowZCzpZCzuzdcshowList_info", "", "A.B.C",
         "$fShow:+:_$cshowList", "info"},
        {"AziBziC_zdsfromListzuzdszdwpolyzugo16_slow", "", "A.B.C",
         "$sfromList_$s$wpoly_go16", "slow"},
        {"AziBziC_zdwzdcshowsPrec2_slow", "", "A.B.C", "$w$cshowsPrec2",
         "slow"},
        {"AziBziC_zdtczqFoo_closure", "", "A.B.C", "$tc'Foo", "closure"},
        {"AziBziC_zdtrModule2_bytes", "", "A.B.C", "$trModule2", "bytes"},
    };
    check_symbols(w, NELEM(w));
}

TEST(symbol_data_constructors)
{
    static const struct want w[] = {
        {"AziBziC_Foo_con_info", "", "A.B.C", "Foo", "con_info"},
        {"AziBziC_Bar_info", "", "A.B.C", "Bar", "info"},
        {"AziBziC_ZCzpZC_con_info", "", "A.B.C", ":+:", "con_info"},
        {"AziBziC_ZZed_con_info", "", "A.B.C", "Zed", "con_info"},
        {"AziBziC_ZZZZtop_con_info", "", "A.B.C", "ZZtop", "con_info"},
        {"ghczmprim_GHCziTypes_ZC_con_info", "ghc-prim", "GHC.Types", ":",
         "con_info"},
        {"ghczmprim_GHCziTypes_ZMZN_closure", "ghc-prim", "GHC.Types", "[]",
         "closure"},
        {"ghczmprim_GHCziTypes_Izh_con_info", "ghc-prim", "GHC.Types", "I#",
         "con_info"},
        {"ghczmprim_GHCziTuple_Z0T_closure", "ghc-prim", "GHC.Tuple", "()",
         "closure"},
        {"ghczmprim_GHCziTuple_Z2T_con_info", "ghc-prim", "GHC.Tuple", "(,)",
         "con_info"},
        {"ghczmprim_GHCziTuple_Z3T_con_info", "ghc-prim", "GHC.Tuple", "(,,)",
         "con_info"},
        {"ghczmprim_GHCziTypes_Bool_closure_tbl", "ghc-prim", "GHC.Types",
         "Bool", "closure_tbl"},
        {"ghczmbignum_GHCziNumziBigNat_BNzh_con_info", "ghc-bignum",
         "GHC.Num.BigNat", "BN#", "con_info"},
        {"containerszm0zi6zi4zi1_DataziMapziInternal_Bin_con_info",
         "containers-0.6.4.1", "Data.Map.Internal", "Bin", "con_info"},
        {"templatezmhaskell_LanguageziHaskellziTHziSyntax_NameG_con_info",
         "template-haskell", "Language.Haskell.TH.Syntax", "NameG",
         "con_info"},
        /* Synthetic: the flavour exists (ppIdFlavor) but is not in 9.0.2's
         * native-code binaries. */
        {"AziBziC_Foo_con_entry", "", "A.B.C", "Foo", "con_entry"},
    };
    check_symbols(w, NELEM(w));
}

TEST(symbol_library_units)
{
    static const struct want w[] = {
        {"base_GHCziEventziEPoll_new10_info", "base", "GHC.Event.EPoll",
         "new10", "info"},
        {"base_GHCziBase_zpzp_info", "base", "GHC.Base", "++", "info"},
        {"base_GHCziBase_zd_info", "base", "GHC.Base", "$", "info"},
        {"base_GHCziBase_zi_info", "base", "GHC.Base", ".", "info"},
        {"base_GHCziBase_zgzgze_info", "base", "GHC.Base", ">>=", "info"},
        {"base_GHCziList_zdwspan_info", "base", "GHC.List", "$wspan", "info"},
        {"base_GHCziShow_zdwshowSignedInt_info", "base", "GHC.Show",
         "$wshowSignedInt", "info"},
        {"ghczmprim_GHCziTypes_krepzdztArrzt_closure", "ghc-prim",
         "GHC.Types", "krep$*Arr*", "closure"},
        {"ghc_GHCziCoreziOptziSimplify_simplExpr_info", "ghc",
         "GHC.Core.Opt.Simplify", "simplExpr", "info"},
        {"containerszm0zi6zi4zi1_DataziMapziInternal_balanceL_info",
         "containers-0.6.4.1", "Data.Map.Internal", "balanceL", "info"},
        {"containerszm0zi6zi4zi1_DataziMapziInternal_insertWith_info",
         "containers-0.6.4.1", "Data.Map.Internal", "insertWith", "info"},
        {"containerszm0zi6zi4zi1_DataziMapziInternal_link2zuzdslink1_slow",
         "containers-0.6.4.1", "Data.Map.Internal", "link2_$slink1", "slow"},
        /* Package names may start with an upper-case letter... */
        {"Cabalzm3zi4zi1zi0_DistributionziCompatziLens_z3fUz7eU_info",
         "Cabal-3.4.1.0", "Distribution.Compat.Lens", "?~", "info"},
        {"Cabalzm3zi4zi1zi0_DistributionziBackpackziModSubst_"
         "zdfModSubstZLz2cUZR_info",
         "Cabal-3.4.1.0", "Distribution.Backpack.ModSubst", "$fModSubst(,)",
         "info"},
        /* ...or a digit; from ghc -this-unit-id on module A.B.C. */
        {"z39UpHzm0zi1_AziBziC_gozq_info", "9pH-0.1", "A.B.C", "go'", "info"},
        {"myzmlibzm1zi0zmXy9zzAb_AziBziC_zdwgozq_info", "my-lib-1.0-Xy9zAb",
         "A.B.C", "$wgo'", "info"},
        {"myzmlibzm1zi0zmXy9zzAb_AziBziC_ZCzpZC_con_info",
         "my-lib-1.0-Xy9zAb", "A.B.C", ":+:", "con_info"},
    };
    check_symbols(w, NELEM(w));
}

/* "_con_info" and friends look like "<name>_con" + "_info"; the split has to
 * pick the reading that yields a valid unit/module/name. */
TEST(symbol_flavour_ambiguities)
{
    static const struct want w[] = {
        /* a binding called "con" in a library module */
        {"ghczmprim_GHCziTypes_con_info", "ghc-prim", "GHC.Types", "con",
         "info"},
        {"Main_con_info", "", "Main", "con", "info"},
        {"Main_closure_closure", "", "Main", "closure", "closure"},
        {"Main_info_entry", "", "Main", "info", "entry"},
        {"Main_Foo_con_info", "", "Main", "Foo", "con_info"},
        {"Main_Foo_closure_tbl", "", "Main", "Foo", "closure_tbl"},
        {"Main_zdwfib_entry", "", "Main", "$wfib", "entry"},
        /* a unit with an upper-case name and a binding "con" */
        {"Cabalzm3zi4zi1zi0_Distribution_con_info", "Cabal-3.4.1.0",
         "Distribution", "con", "info"},
    };
    check_symbols(w, NELEM(w));
}

/* ---- zdecode__symbol: what is not a Haskell binding --------------------- */

TEST(symbol_rejects_c_and_rts)
{
    static const char *const syms[] = {
        "malloc", "schedule", "StgRun", "GarbageCollect", "busy_c",
        "outer_leaf", "hs_init", "rts_mkInt", "forkOS_entry",
        "main", "_start", "__libc_csu_init",
        /* RTS Cmm, from libHSrts.a */
        "stg_upd_frame_info", "stg_ap_p_fast", "stg_ap_0_fast",
        "stg_TSO_info", "stg_BLACKHOLE_info", "stg_IND_STATIC_info",
        "stg_MVAR_CLEAN_info", "stg_NO_TREC_closure", "stg_ARR_WORDS_info",
        "stg_STM_AWOKEN_closure", "stg_sel_0_upd_info",
        "stg_END_TSO_QUEUE_closure", "__stg_EAGER_BLACKHOLE_info",
        "rts_X_Y_info", /* unit "rts" holds no Haskell code */
        /* capi wrappers, init and profiling labels from libHSbase */
        "ghczuwrapperZC0ZCbaseZCSystemziPosixziInternalsZCSEEKzuEND",
        "stginit_export_DebugziTrace",
        "base_ForeignziSafe_CAFs_cc",
        "Cabalzm3zi4zi1zi0_DistributionziModuleName_CAFs_cc_ccs",
        "integer_gmp_mpn_and_n",
    };
    check_rejected(syms, NELEM(syms));
}

TEST(symbol_rejects_compiler_local_labels)
{
    static const char *const syms[] = {
        "c7A2_str", "i4RF_str", "iZ0H_str", /* string literals */
        ".Lr4m1_bytes", ".Lc2ab_info", "_u1ab_srt", "u1ab_srt",
        "r1ab_info", "s4xY_info", "sat_s1ab_info",
        "dsp_Main_fib_info_dsp", "_Main_fib_info",
    };
    check_rejected(syms, NELEM(syms));
}

TEST(symbol_rejects_malformed)
{
    static const char *const syms[] = {
        "", "_", "__", "info", "_info", "Main", "Main_", "Main_fib",
        "Main_fib_", "Main__info", "_Main_fib_info", "Main_fib__info",
        "Main_fib_info_", "Main_fib_nope", "Main_fib_con", "Main_fib_tbl",
        "Main_fib_fast", "Main_fib_ret", "Main_fib_srt", "Main_fib_str",
        "Main_fib_static_info", "a_b_c_d_e_f_info", "a_Main_b_c_info",
        /* bad module */
        "main_fib_info", "base_main_fib_info", "base_GHCzi_x_info",
        "base_GHCziziBase_x_info", "base_ziGHC_x_info", "Z2T_fib_info",
        "Mainzm1_fib_info", "ZCFoo_main_info", "ZC_main_info",
        /* bad unit */
        "zm_Main_fib_info", "zi_Main_fib_info", "stg_Main_fib_info",
        "ZL_Main_fib_info",
        "Main_fib_con_info_x", "Main_Z_fib_info",
        /* bad escapes in each part */
        "Main_fzx_info", "Main_fibz_info", "Main_fibZ_info", "Main_zf_info",
        "Main_z7eXU_info", "Main_z7e_info", "Main_z7EU_info", "Main_Z1T_info",
        "Main_Z0H_info", "Main_Z02T_info", "Main_1fib_info", "Main_fib$_info",
        "Main_fib.x_info", "Mainz_fib_info", "MainzX_fib_info",
        "bazse_GHCziBase_x_info", "z_Main_fib_info",
        "Main_f\xc3\xbc_info", "Ma in_fib_info",
    };
    check_rejected(syms, NELEM(syms));
    struct zdecoded z;
    CHECK(!zdecode__symbol(NULL, &z));
    CHECK(!zdecode__symbol("Main_fib_info", NULL));
}

TEST(symbol_con_info_needs_con_name)
{
    struct zdecoded z;

    /* Neither "foo" as a constructor nor unit "Main" + module "foo". */
    CHECK(!zdecode__symbol("Main_foo_con_info", &z));
    CHECK(!zdecode__symbol("Main_zdwfoo_con_entry", &z));
    CHECK(!zdecode__symbol("Main_foo_closure_tbl", &z));
}

/* ---- fixed buffers ------------------------------------------------------ */

static void fill(char *p, char c, size_t n)
{
    memset(p, c, n);
    p[n] = '\0';
}

TEST(symbol_field_limits)
{
    /* Fields hold 127/255/255 bytes plus NUL. */
    char sym[2048], part[1024];
    struct zdecoded z;

    fill(part, 'a', 255);
    snprintf(sym, sizeof sym, "Main_%s_info", part);
    CHECK(zdecode__symbol(sym, &z));
    CHECK_EQ_INT(strlen(z.name), 255);
    fill(part, 'a', 256);
    snprintf(sym, sizeof sym, "Main_%s_info", part);
    CHECK(!zdecode__symbol(sym, &z));

    /* 253 + a 2-byte character fits, 254 + 2 does not. */
    fill(part, 'a', 253);
    snprintf(sym, sizeof sym, "Main_%sz0fcU_info", part);
    CHECK(zdecode__symbol(sym, &z));
    CHECK_EQ_INT(strlen(z.name), 255);
    fill(part, 'a', 254);
    snprintf(sym, sizeof sym, "Main_%sz0fcU_info", part);
    CHECK(!zdecode__symbol(sym, &z));

    /* Z<n>T is n+1 bytes: "(" + 253 commas + ")" fills the field. */
    CHECK(zdecode__symbol("Main_Z254T_con_info", &z));
    CHECK_EQ_INT(strlen(z.name), 255);
    CHECK(!zdecode__symbol("Main_Z255T_con_info", &z));

    fill(part, 'A', 255);
    snprintf(sym, sizeof sym, "%s_fib_info", part);
    CHECK(zdecode__symbol(sym, &z));
    CHECK_EQ_INT(strlen(z.module), 255);
    fill(part, 'A', 256);
    snprintf(sym, sizeof sym, "%s_fib_info", part);
    CHECK(!zdecode__symbol(sym, &z));

    fill(part, 'u', 127);
    snprintf(sym, sizeof sym, "%s_Main_fib_info", part);
    CHECK(zdecode__symbol(sym, &z));
    CHECK_EQ_INT(strlen(z.unit), 127);
    fill(part, 'u', 128);
    snprintf(sym, sizeof sym, "%s_Main_fib_info", part);
    CHECK(!zdecode__symbol(sym, &z));
}

/* ---- zdecode__display --------------------------------------------------- */

TEST(display_module_dot_name)
{
    char out[64];

    CHECK(zdecode__display("Main_zdwfib_info", out, sizeof out));
    CHECK_EQ_STR(out, "Main.$wfib");
    CHECK(zdecode__display("ghczmprim_GHCziTypes_ZC_con_info", out,
                           sizeof out));
    CHECK_EQ_STR(out, "GHC.Types.:");
    CHECK(zdecode__display("ZCMain_main_info", out, sizeof out));
    CHECK_EQ_STR(out, ":Main.main");
    CHECK(zdecode__display("base_GHCziBase_zi_info", out, sizeof out));
    CHECK_EQ_STR(out, "GHC.Base..");
    CHECK(zdecode__display(
        "containerszm0zi6zi4zi1_DataziMapziInternal_balanceL_info", out,
        sizeof out));
    CHECK_EQ_STR(out, "Data.Map.Internal.balanceL");
}

TEST(display_failures_write_nothing)
{
    char out[16];

    strcpy(out, "untouched");
    CHECK(!zdecode__display("malloc", out, sizeof out));
    CHECK_EQ_STR(out, "untouched");
    CHECK(!zdecode__display("stg_upd_frame_info", out, sizeof out));
    CHECK_EQ_STR(out, "untouched");
    CHECK(!zdecode__display("", out, sizeof out));
    CHECK_EQ_STR(out, "untouched");
    CHECK(!zdecode__display(NULL, out, sizeof out));
    CHECK_EQ_STR(out, "untouched");

    /* "Main.$wfib" is 10 bytes: 11 fits, 10 does not. */
    CHECK(!zdecode__display("Main_zdwfib_info", out, 10));
    CHECK_EQ_STR(out, "untouched");
    CHECK(!zdecode__display("Main_zdwfib_info", out, 0));
    CHECK(zdecode__display("Main_zdwfib_info", out, 11));
    CHECK_EQ_STR(out, "Main.$wfib");
    CHECK(!zdecode__display("Main_zdwfib_info", NULL, 0));
}

/* ---- zdecode__wrapper --------------------------------------------------- */

TEST(wrapper_stubs)
{
    struct zdecoded z;

    CHECK(zdecode__wrapper("zdmainzdMainzdMainzumkCallback", &z));
    CHECK_EQ_STR(z.unit, "");
    CHECK_EQ_STR(z.module, "Main");
    CHECK_EQ_STR(z.name, "mkCallback");
    CHECK_EQ_STR(z.suffix, "wrapper");
    /* terminfo-0.4.1.5's, from its library: the unit in the C label too */
    CHECK(zdecode__wrapper("zdterminfozm0zi4zi1zi5zdSystemziConsoleziTerminfoziBasezdterminfozzm0"
                           "zzi4zzi1zzi5zuSystemzziConsolezziTerminfozziBasezumkCallback",
                           &z));
    CHECK_EQ_STR(z.unit, "terminfo-0.4.1.5");
    CHECK_EQ_STR(z.module, "System.Console.Terminfo.Base");
    CHECK_EQ_STR(z.name, "mkCallback");
    /* a name with an underscore and a prime: mk_cb' */
    CHECK(zdecode__wrapper("zdmainzdAziBzdAzziBzumkzzucbzzq", &z));
    CHECK_EQ_STR(z.module, "A.B");
    CHECK_EQ_STR(z.name, "mk_cb'");
}

/* ---- zdecode__foreign_export -------------------------------------------- */

TEST(foreign_export_bindings)
{
    struct zdecoded z;
    char out[64];

    /* GHC 9.0's, and 9.6's with a unit of its own */
    CHECK(zdecode__symbol("Main_zdfstableZZC0ZZCmainZZCMainZZCincallWork1_info", &z));
    CHECK(zdecode__foreign_export(&z, out, sizeof out));
    CHECK_EQ_STR(out, "incallWork1");
    CHECK(zdecode__symbol("Embed_zdfstableZZC12ZZCmainZZCEmbedZZCembedWork1_info", &z));
    CHECK(zdecode__foreign_export(&z, out, sizeof out));
    CHECK_EQ_STR(out, "embedWork1");
    CHECK(zdecode__symbol("mylibzm0zi1zmabc_AziB_zdfstableZZC3ZZCmylibzzm0zzi1zzmabcZZCAzziBZZCwork_info", &z));
    CHECK(zdecode__foreign_export(&z, out, sizeof out));
    CHECK_EQ_STR(out, "work");
    /* a name with a prime: work' (Z-encoded twice: zzq) */
    CHECK(zdecode__symbol("Main_zdfstableZZC0ZZCmainZZCMainZZCworkzzq_info", &z));
    CHECK(zdecode__foreign_export(&z, out, sizeof out));
    CHECK_EQ_STR(out, "work'");
    /* too small a buffer: nothing written */
    strcpy(out, "untouched");
    CHECK(!zdecode__foreign_export(&z, out, 5));
    CHECK_EQ_STR(out, "untouched");
}

TEST(foreign_export_rejects_others)
{
    struct zdecoded z;
    char out[64] = "untouched";

    CHECK(zdecode__symbol("Main_zdwfib_info", &z));
    CHECK(!zdecode__foreign_export(&z, out, sizeof out));
    /* the module in the name is not the symbol's */
    CHECK(zdecode__symbol("Main_zdfstableZZC0ZZCmainZZCOtherZZCwork_info", &z));
    CHECK(!zdecode__foreign_export(&z, out, sizeof out));
    /* no number, no name, a name with a colon, not Z-encoded */
    CHECK(zdecode__symbol("Main_zdfstableZZCmainZZCMainZZCwork_info", &z));
    CHECK(!zdecode__foreign_export(&z, out, sizeof out));
    CHECK(zdecode__symbol("Main_zdfstableZZC0ZZCmainZZCMainZZC_info", &z));
    CHECK(!zdecode__foreign_export(&z, out, sizeof out));
    CHECK(zdecode__symbol("Main_zdfstableZZC0ZZCmainZZCMainZZCaZZCb_info", &z));
    CHECK(!zdecode__foreign_export(&z, out, sizeof out));
    CHECK(zdecode__symbol("Main_zdfstable_info", &z));
    CHECK(!zdecode__foreign_export(&z, out, sizeof out));
    CHECK(zdecode__symbol("Main_zdfstableZZ_info", &z));
    CHECK(!zdecode__foreign_export(&z, out, sizeof out));
    CHECK_EQ_STR(out, "untouched");
    CHECK(!zdecode__foreign_export(NULL, out, sizeof out));
}

TEST(wrapper_rejects_others)
{
    struct zdecoded z;

    CHECK(!zdecode__wrapper("Main_zdwfib_info", &z));
    CHECK(!zdecode__wrapper("malloc", &z));
    CHECK(!zdecode__wrapper("zdmainzdMain", &z));
    CHECK(!zdecode__wrapper("zdmainzdMainzdMainzu", &z));
    /* the C label's module is not the one before it */
    CHECK(!zdecode__wrapper("zdmainzdMainzdOtherzumkCallback", &z));
    CHECK(!zdecode__wrapper("zdmainzdMainzdmkCallback", &z));
    CHECK(!zdecode__wrapper("zdzz", &z));
    CHECK(!zdecode__wrapper("", &z));
    CHECK(!zdecode__wrapper(NULL, &z));
}

/* ---- round trip and fuzzing --------------------------------------------- */

static uint32_t rnd(uint64_t *s)
{
    /* xorshift64*: deterministic, so a failure reproduces. */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (uint32_t)((*s * 0x2545F4914F6CDD1DULL) >> 32);
}

/* GHC's zEncodeString for strings without tuple syntax, ASCII plus the
 * code points given; written from Encoding.hs, independent of the decoder. */
static size_t zencode(const uint32_t *cps, size_t n, char *out)
{
    static const char *const map[128] = {
        ['('] = "ZL", [')'] = "ZR", ['['] = "ZM", [']'] = "ZN",
        [':'] = "ZC", ['Z'] = "ZZ", ['z'] = "zz", ['&'] = "za",
        ['|'] = "zb", ['^'] = "zc", ['$'] = "zd", ['='] = "ze",
        ['>'] = "zg", ['#'] = "zh", ['.'] = "zi", ['<'] = "zl",
        ['-'] = "zm", ['!'] = "zn", ['+'] = "zp", ['\''] = "zq",
        ['\\'] = "zr", ['/'] = "zs", ['*'] = "zt", ['_'] = "zu",
        ['%'] = "zv",
    };
    size_t len = 0;

    for (size_t i = 0; i < n; i++) {
        uint32_t c = cps[i];
        bool digit = c >= '0' && c <= '9';

        if (c < 128 && !(digit && i == 0) &&
            ((c >= 'a' && c < 'z') || (c >= 'A' && c < 'Z') || digit)) {
            out[len++] = (char)c;
        } else if (c < 128 && map[c]) {
            memcpy(out + len, map[c], 2);
            len += 2;
        } else {
            char hex[16];
            int h = snprintf(hex, sizeof hex, "%x", (unsigned)c);

            out[len++] = 'z';
            if (hex[0] >= 'a')
                out[len++] = '0';
            memcpy(out + len, hex, (size_t)h);
            len += (size_t)h;
            out[len++] = 'U';
        }
    }
    out[len] = '\0';
    return len;
}

static size_t utf8(const uint32_t *cps, size_t n, char *out)
{
    size_t len = 0;

    for (size_t i = 0; i < n; i++) {
        uint32_t c = cps[i];

        if (c < 0x80) {
            out[len++] = (char)c;
        } else if (c < 0x800) {
            out[len++] = (char)(0xC0 | (c >> 6));
            out[len++] = (char)(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            out[len++] = (char)(0xE0 | (c >> 12));
            out[len++] = (char)(0x80 | ((c >> 6) & 0x3F));
            out[len++] = (char)(0x80 | (c & 0x3F));
        } else {
            out[len++] = (char)(0xF0 | (c >> 18));
            out[len++] = (char)(0x80 | ((c >> 12) & 0x3F));
            out[len++] = (char)(0x80 | ((c >> 6) & 0x3F));
            out[len++] = (char)(0x80 | (c & 0x3F));
        }
    }
    out[len] = '\0';
    return len;
}

TEST(string_round_trips_encoder)
{
    static const uint32_t wide[] = {0xe9, 0xfc, 0x3bb, 0x2200, 0x1f600,
                                    0x10ffff, 0x80, 0x7ff, 0x800, 0xffff};
    uint64_t seed = 0x5eed2024ULL;

    for (int iter = 0; iter < 20000; iter++) {
        uint32_t cps[24];
        size_t n = rnd(&seed) % 24;
        char enc[24 * 12 + 1], want[24 * 4 + 1], got[24 * 4 + 1];

        for (size_t i = 0; i < n; i++) {
            uint32_t r = rnd(&seed) % 100;
            cps[i] = r < 90 ? 0x20 + rnd(&seed) % 95 /* printable ASCII */
                            : wide[rnd(&seed) % NELEM(wide)];
        }
        /* A component starting with '(' and commas would be tuple syntax. */
        if (n > 0 && cps[0] == '(')
            cps[0] = 'x';
        size_t elen = zencode(cps, n, enc);
        size_t wlen = utf8(cps, n, want);
        int r = zdecode__string(enc, elen, got, sizeof got);

        if (r != (int)wlen || strcmp(got, want) != 0)
            UNIT_FAIL("iter %d: \"%.120s\" decoded to %d \"%.100s\", "
                      "expected \"%.100s\"",
                      iter, enc, r, r >= 0 ? got : "", want);
    }
}

static void check_decoded_fields(const char *sym, const struct zdecoded *z)
{
    static const char *const flavours[] = {
        "info", "entry", "closure", "slow", "bytes", "ct",
        "con_info", "con_entry", "closure_tbl",
    };
    bool known = false;

    if (!memchr(z->unit, 0, sizeof z->unit) ||
        !memchr(z->module, 0, sizeof z->module) ||
        !memchr(z->name, 0, sizeof z->name) ||
        !memchr(z->suffix, 0, sizeof z->suffix))
        UNIT_FAIL("%s: unterminated field", sym);
    if (z->module[0] == '\0' || z->name[0] == '\0')
        UNIT_FAIL("%s: empty module or name", sym);
    for (size_t i = 0; i < NELEM(flavours); i++)
        known |= strcmp(z->suffix, flavours[i]) == 0;
    if (!known)
        UNIT_FAIL("%s: unknown suffix \"%s\"", sym, z->suffix);
}

/* Feeds random and mutated byte strings to every entry point.  Inputs live in
 * exactly-sized heap blocks, and outputs in exactly-sized ones, so running
 * under -fsanitize=address turns any stray access into a failure. */
TEST(fuzz_no_crash)
{
    static const char *const seeds[] = {
        "Main_zdwfib_info",
        "ghczmprim_GHCziTypes_ZC_con_info",
        "containerszm0zi6zi4zi1_DataziMapziInternal_link2zuzdslink1_slow",
        "AziBziC_z7eUz7eUzg_info",
        "AziBziC_z0fcUber_closure",
        "ghczmprim_GHCziTuple_Z3T_con_info",
        "ghczmprim_GHCziTypes_Bool_closure_tbl",
        "z39UpHzm0zi1_AziBziC_gozq_info",
        "ZCMain_main_info",
        "stg_upd_frame_info",
    };
    static const char alphabet[] = "zZ_0123456789abcdefghilmnpqrstuvxTHULRMNCA"
                                   "info_closure_con_";
    uint64_t seed = 0xdecafbadULL;
    int accepted = 0;

    for (int iter = 0; iter < 200000; iter++) {
        char buf[160];
        size_t len;

        if (iter % 2 == 0) {
            /* mutate a real symbol */
            const char *s = seeds[rnd(&seed) % NELEM(seeds)];
            int edits = 1 + (int)(rnd(&seed) % 4);

            len = strlen(s);
            memcpy(buf, s, len);
            while (edits-- > 0) {
                size_t at = len ? rnd(&seed) % len : 0;
                char c = (rnd(&seed) % 4 == 0)
                             ? (char)(rnd(&seed) % 256)
                             : alphabet[rnd(&seed) % (sizeof alphabet - 1)];
                switch (rnd(&seed) % 4) {
                case 0: /* replace */
                    if (len)
                        buf[at] = c;
                    break;
                case 1: /* insert */
                    if (len < sizeof buf - 1) {
                        memmove(buf + at + 1, buf + at, len - at);
                        buf[at] = c;
                        len++;
                    }
                    break;
                case 2: /* delete */
                    if (len) {
                        memmove(buf + at, buf + at + 1, len - at - 1);
                        len--;
                    }
                    break;
                default: /* truncate */
                    len = at;
                    break;
                }
            }
        } else {
            len = rnd(&seed) % 64;
            for (size_t i = 0; i < len; i++)
                buf[i] = rnd(&seed) % 8 == 0
                             ? (char)(1 + rnd(&seed) % 255)
                             : alphabet[rnd(&seed) % (sizeof alphabet - 1)];
        }
        /* Random bytes may contain NUL; the symbol API sees up to it. */
        char *sym = malloc(len + 1);
        CHECK(sym != NULL);
        memcpy(sym, buf, len);
        sym[len] = '\0';

        struct zdecoded z;
        if (zdecode__symbol(sym, &z)) {
            check_decoded_fields(sym, &z);
            accepted++;
        }

        size_t dsz = rnd(&seed) % 48;
        char *disp = malloc(dsz ? dsz : 1);
        CHECK(disp != NULL);
        if (zdecode__display(sym, dsz ? disp : NULL, dsz) &&
            strlen(disp) >= dsz)
            UNIT_FAIL("display of \"%s\" overflowed %zu", sym, dsz);
        free(disp);
        free(sym);

        /* The string API is given a buffer without a terminator. */
        char *raw = malloc(len ? len : 1);
        size_t osz = rnd(&seed) % 40;
        char *out = malloc(osz ? osz : 1);
        CHECK(raw != NULL && out != NULL);
        memcpy(raw, buf, len);
        int r = zdecode__string(raw, len, out, osz);
        if (r >= 0 && ((size_t)r >= osz || strlen(out) != (size_t)r))
            UNIT_FAIL("string decode returned %d for outsz %zu", r, osz);
        free(out);
        free(raw);
    }
    /* The mutations must exercise the accepting path too. */
    CHECK(accepted > 1000);
}

UNIT_MAIN()
