/* sample.c - names of the raw-sample enums. */
#include "sampler/sample.h"

const char *walk_error__str(enum walk_error e)
{
    static const char *const s[] = {
#define X(e, str) str,
        WALK_ERRORS(X)
#undef X
    };
    return (unsigned)e < WE__COUNT ? s[e] : "unknown error";
}

const char *sample_tag__str(enum sample_tag t)
{
    static const char *const s[] = {
#define X(e, str) str,
        SAMPLE_TAGS(X)
#undef X
    };
    return (unsigned)t < TAG__COUNT ? s[t] : "?";
}

const char *thread_role__str(enum thread_role r)
{
    static const char *const s[] = {
#define X(e, str) str,
        THREAD_ROLES(X)
#undef X
    };
    return (unsigned)r < ROLE__COUNT ? s[r] : "?";
}
