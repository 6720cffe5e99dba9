/* cost_centre.c - reading a CostCentre and its strings from the file. */
#include "symbolizer/cost_centre.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "symbolizer/ipe.h"

/* The NUL-terminated string at link-time address vaddr in m's file, or
 * NULL if it is not all there. */
static const char *file_string(const struct module *m, uint64_t vaddr)
{
    size_t avail = 0;
    const uint8_t *p = vaddr ? module__file_at(m, vaddr, &avail) : NULL;
    if (!p)
        return NULL;
    if (avail > COST_CENTRE__MAX_STR)
        avail = COST_CENTRE__MAX_STR;
    return memchr(p, 0, avail) ? (const char *)p : NULL;
}

/* A pointer-sized field of the struct at bytes p (avail of them). */
static bool pointer_field(const uint8_t *p, size_t avail, struct rts_layout__field f,
                          uint64_t *out)
{
    if (!rts_layout__has(f) || f.size != 8 || f.off < 0 || (size_t)f.off + 8 > avail)
        return false;
    memcpy(out, p + f.off, 8);
    return true;
}

int cost_centre__read(const struct module *m, const struct rts_layout *L, uint64_t addr,
                      struct cost_centre *out)
{
    uint64_t label, module, srcloc;
    size_t avail = 0;
    const uint8_t *p;

    memset(out, 0, sizeof *out);
    if (!L || L->cc.struct_size <= 0)
        return -EINVAL;
    p = module__file_at(m, addr - (uint64_t)m->bias, &avail);
    if (!p || avail < (size_t)L->cc.struct_size)
        return -ENOENT;
    if (!pointer_field(p, avail, L->cc.label, &label) ||
        !pointer_field(p, avail, L->cc.module, &module) ||
        !pointer_field(p, avail, L->cc.srcloc, &srcloc))
        return -EINVAL;
    out->label = file_string(m, label);
    out->module = file_string(m, module);
    out->srcloc = file_string(m, srcloc);
    if (!out->label || !out->label[0] || !out->module) {
        memset(out, 0, sizeof *out);
        return -EINVAL;
    }
    if (!out->srcloc)
        out->srcloc = "";
    return 0;
}

bool cost_centre__srcloc(const char *srcloc, char *file, size_t size, int *line,
                         const char **span)
{
    /* GHC writes "file:5:1-20", "file:5:1", "file:(5,1)-(7,30)"; a file
     * name could hold a ':', a line cannot, so take the first ':' that a
     * line follows. */
    for (const char *c = srcloc ? strchr(srcloc, ':') : NULL; c; c = strchr(c + 1, ':')) {
        const char *s = c + 1;
        const char *d = *s == '(' ? s + 1 : s;
        if (c == srcloc || *d < '0' || *d > '9')
            continue;
        int l = ipe__span_line(s);
        if (l <= 0)
            continue;
        snprintf(file, size, "%.*s", (int)(c - srcloc), srcloc);
        *line = l;
        *span = s;
        return true;
    }
    return false;
}
