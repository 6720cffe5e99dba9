/* folded.c - Brendan Gregg's folded stacks: one line per distinct stack,
 * frames outermost first separated by ';', a space, the sample count.
 * The input format of flamegraph.pl, inferno and speedscope. */
#include <stdlib.h>
#include <string.h>

#include "out/counter.h"
#include "out/writer.h"

/* Append a frame name, keeping the format's separator out of it (names
 * are text__clean'ed: no newline or other control character is left). */
static size_t append(char *buf, size_t pos, const char *name)
{
    for (; *name; name++)
        buf[pos++] = *name == ';' ? ':' : *name;
    buf[pos] = 0;
    return pos;
}

static int write_folded(const struct profile *p, const struct out_opts *o, FILE *f)
{
    struct counter c;
    const char *names[MAX_FRAMES + 4];
    char scratch[128];
    char *line = NULL; /* as long as the longest stack's names: never cut */
    size_t cap = 0;
    int r = 0;

    struct out_group *g = NULL;
    size_t ng = 0;

    /* Each distinct stack is named once; stacks that display alike (two
     * raw stacks can) add up in the counter. */
    if (counter__init(&c) < 0 || out__groups(p, o, o->threads ? OUT_BY_THREAD : 0, &g, &ng) < 0) {
        counter__free(&c);
        return -1;
    }
    for (size_t i = 0; i < ng; i++) {
        const struct prof_sample *s = &g[i].s;
        int first, n;
        size_t pos = 0;
        n = out__path(p, s, o, names, MAX_FRAMES + 4, scratch, &first);
        if (n == 0)
            continue;
        size_t need = 1;
        for (int k = 0; k < n; k++)
            need += strlen(names[k]) + 1;
        if (need > cap) {
            char *nl = realloc(line, need);
            if (!nl) {
                r = -1;
                goto out;
            }
            line = nl;
            cap = need;
        }
        line[0] = 0;
        for (int k = 0; k < n; k++) {
            if (k)
                line[pos++] = ';';
            pos = append(line, pos, names[k]);
        }
        if (!counter__add(&c, line, g[i].count, 0)) {
            r = -1;
            goto out;
        }
    }
    struct counter_entry *v = counter__sorted(&c, COUNTER_BY_KEY);
    if (!v) {
        r = -1;
        goto out;
    }
    for (size_t i = 0; i < c.n; i++)
        fprintf(f, "%s %llu\n", v[i].key, (unsigned long long)v[i].count);
    free(v);
out:
    free(line);
    free(g);
    counter__free(&c);
    return r;
}

const struct writer writer_folded = {
    .name = "folded",
    .help = "folded stacks, one line per stack (flamegraph.pl, inferno, speedscope)",
    .text = true,
    .write = write_folded,
};
