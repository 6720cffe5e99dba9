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
