/* test_demangle.c - unit tests for symbolizer/demangle.c: C++ linker symbols
 * (taken from `nm` of g++ 12 objects and libstdc++) read as their source
 * names, GCC's clone suffixes kept; C and Haskell symbols, and what is not
 * a valid mangling, left alone. */
#include "tests/unit/unit.h"
#include "symbolizer/demangle.h"

#include <stdbool.h>

UNIT_MAIN()

TEST(cxx_names)
{
    static const struct {
        const char *sym, *want;
    } cases[] = {
        {"_ZL11depth_throwi", "depth_throw(int)"},
        {"_ZL11depth_throwi.cold", "depth_throw(int) [clone .cold]"},
        {"_ZNSt13runtime_errorD1Ev", "std::runtime_error::~runtime_error()"},
        {"_ZNSt6vectorIiSaIiEE9push_backERKi",
         "std::vector<int, std::allocator<int> >::push_back(int const&)"},
        {"_ZN5shape6Circle4areaEv", "shape::Circle::area()"},
    };
    char buf[256];
    if (!demangle__available())
        UNIT_SKIP("libstdc++.so.6 is not installed: C++ names stay mangled");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        CHECK(demangle__cxx(cases[i].sym, buf, sizeof buf));
        CHECK_EQ_STR(buf, cases[i].want);
    }
}

TEST(not_cxx_left_alone)
{
    char buf[64] = "untouched";
    if (!demangle__available())
        UNIT_SKIP("libstdc++.so.6 is not installed: C++ names stay mangled");
    CHECK(!demangle__cxx("malloc", buf, sizeof buf));
    CHECK(!demangle__cxx("Main_zdwfib_info", buf, sizeof buf));
    CHECK(!demangle__cxx("_Z", buf, sizeof buf));
    CHECK(!demangle__cxx("_Zgarbage!", buf, sizeof buf));
    CHECK(!demangle__cxx(NULL, buf, sizeof buf));
    CHECK_EQ_STR(buf, "untouched");
}

TEST(truncated_to_the_buffer)
{
    char buf[8];
    if (!demangle__available())
        UNIT_SKIP("libstdc++.so.6 is not installed: C++ names stay mangled");
    CHECK(demangle__cxx("_ZN5shape6Circle4areaEv", buf, sizeof buf));
    CHECK_EQ_STR(buf, "shape::");
}

/* "_Z1fSt4pairIiiE" then K times "S_IS<n>_S<n>_E": f(pair<int, int>,
 * pair<pair<int, int>, pair<int, int> >, ...), each argument twice the one
 * before, through two back-references to it. */
static void doubling(int k, char *s, size_t size)
{
    static const char digits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    size_t n = (size_t)snprintf(s, size, "_Z1fSt4pairIiiE");
    for (int i = 0; i < k && n < size; i++) {
        char id[3] = {digits[i % 36], 0, 0};
        if (i >= 36) {
            id[0] = digits[i / 36];
            id[1] = digits[i % 36];
        }
        n += (size_t)snprintf(s + n, size - n, "S_IS%s_S%s_E", id, id);
    }
}

TEST(backrefs_counted)
{
    char s[512];
    CHECK_EQ_INT(demangle__backrefs("_ZL11depth_throwi"), 0);
    CHECK_EQ_INT(demangle__backrefs("_ZNSt6vectorIiSaIiEE9push_backERKi"), 0);
    CHECK_EQ_INT(demangle__backrefs("_Z1fIiEvT_S_"), 2);
    doubling(12, s, sizeof s);
    CHECK_EQ_INT(demangle__backrefs(s), 36);
}

/* Twelve doublings, 36 back-references: demangled in a child, as it would
 * be here. */
TEST(many_backrefs_demangled_apart)
{
    char s[512], apart[4096];
    if (!demangle__available())
        UNIT_SKIP("libstdc++.so.6 is not installed: C++ names stay mangled");
    doubling(12, s, sizeof s);
    CHECK(demangle__cxx(s, apart, sizeof apart));
    static const char start[] = "f(std::pair<int, int>, std::pair<std::pair<int, int>, "
                                "std::pair<int, int> >, std::pair<std::pair<std::pair<int, int>, ";
    CHECK(strncmp(apart, start, sizeof start - 1) == 0);
    CHECK(strlen(apart) == sizeof apart - 1); /* (2^12 pairs: cut at the buffer) */
}

/* Thirty doublings in 315 bytes would be gigabytes of output: the child
 * runs out of memory or CPU time, and the name stays mangled, hsspy's own
 * memory untouched. (Before: 24 took 7 s and 1 GB in hsspy itself.) */
TEST(exploding_name_left_mangled)
{
    char s[512], out[256] = "untouched";
    if (!demangle__available())
        UNIT_SKIP("libstdc++.so.6 is not installed: C++ names stay mangled");
    doubling(30, s, sizeof s);
    CHECK(!demangle__cxx(s, out, sizeof out));
    CHECK_EQ_STR(out, "untouched");
}
