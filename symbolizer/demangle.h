/* demangle.h - C++ symbol names as a person reads them.
 *
 * A C++ function's linker symbol is mangled (Itanium ABI):
 * "_ZL11depth_throwi" is `depth_throw(int)`, "_ZNSt6vectorIiSaIiEE9push_backERKi"
 * `std::vector<int, std::allocator<int> >::push_back(int const&)`. The
 * demangler is libstdc++'s own (__cxa_demangle), loaded on first use from
 * libstdc++.so.6; without it names stay as the linker has them. A name
 * that could make it write without end is demangled apart, with limits.
 *
 *   char buf[512];
 *   if (demangle__cxx("_ZL11depth_throwi.cold", buf, sizeof buf))
 *       // buf: "depth_throw(int) [clone .cold]"
 */
#ifndef HSSPY_DEMANGLE_H
#define HSSPY_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

/* Write sym demangled into out (truncated to size, NUL-terminated). False,
 * writing nothing, when sym is not a mangled C++ name or the demangler is
 * not there. */
bool demangle__cxx(const char *sym, char *out, size_t size);

/* The back-references (S_, S0_, T_, ...) in a mangled name, counted
 * generously: above a few, sym is demangled in a child process, with
 * limits (see demangle.c). */
size_t demangle__backrefs(const char *sym);

/* Is libstdc++'s demangler there? */
bool demangle__available(void);

#endif
