/* rts_layout.c - finds the generated RTS layout table (layout_ghc_*.c) for
 * a GHC version and RTS variant.  The list of versions is
 * RTS_LAYOUT__VERSIONS in rts_layout.h; nothing here changes per version.
 */
#include "rts_layout.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define RTS_LAYOUT__VERSION_PTR(v) &rts_layout__ghc_##v,
static const struct rts_layout__version *const versions[] = {
    RTS_LAYOUT__VERSIONS(RTS_LAYOUT__VERSION_PTR)
};

const struct rts_layout *rts_layout__find(const char *ghc_version,
                                          bool threaded, bool profiled,
                                          bool debug)
{
    if (!ghc_version)
        return NULL;
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
        /* Exact match only: even patch releases may move fields, and a
         * wrong offset is worse than a clear "unsupported version". */
        if (strcmp(versions[i]->ghc_version, ghc_version) == 0)
            return versions[i]->variant[RTS_LAYOUT__VARIANT(threaded, profiled,
                                                            debug)];
    }
    return NULL;
}

const char *rts_layout__supported(void)
{
    static char list[256];
    if (!list[0]) {
        size_t w = 0;
        for (size_t i = 0; i < sizeof versions / sizeof versions[0] && w < sizeof list; i++)
            w += (size_t)snprintf(list + w, sizeof list - w, "%s%s", i ? ", " : "",
                                  versions[i]->ghc_version);
    }
    return list;
}
