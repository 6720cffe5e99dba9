/* demangle.c - C++ names through libstdc++'s __cxa_demangle, loaded on first
 * use: hsspy is C and needs no C++ runtime unless a profile has C++ in it. */
#include "symbolizer/demangle.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef char *(*cxa_demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);

static cxa_demangle_fn cxa_demangle;
static pthread_once_t loaded = PTHREAD_ONCE_INIT;

static void load(void)
{
    void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
    if (h)
        *(void **)&cxa_demangle = dlsym(h, "__cxa_demangle");
}

bool demangle__available(void)
{
    pthread_once(&loaded, load);
    return cxa_demangle != NULL;
}

bool demangle__cxx(const char *sym, char *out, size_t size)
{
    if (!sym || strncmp(sym, "_Z", 2) != 0 || !size || !demangle__available())
        return false;
    int status = -1;
    char *d = cxa_demangle(sym, NULL, NULL, &status);
    if (!d || status != 0) {
        free(d);
        return false;
    }
    snprintf(out, size, "%s", d);
    free(d);
    return true;
}
