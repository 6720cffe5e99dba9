/* writer.c - the table of output formats and what they share. */
#include "out/writer.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const struct writer writer_folded;
extern const struct writer writer_report;
extern const struct writer writer_calls;
extern const struct writer writer_trace;
extern const struct writer writer_dump;
extern const struct writer writer_json;
extern const struct writer writer_raw;
extern const struct writer writer_svg;
extern const struct writer writer_pprof;
extern const struct writer writer_speedscope;

static const struct writer *const all[] = {
    &writer_folded,
    &writer_report,
    &writer_calls,
    &writer_trace,
    &writer_dump,
    &writer_json,
    &writer_raw,
    &writer_svg,
    &writer_pprof,
    &writer_speedscope,
    NULL,
};

const struct writer *writer__find(const char *name)
{
    for (size_t i = 0; all[i]; i++)
        if (strcmp(all[i]->name, name) == 0)
            return all[i];
    return NULL;
}

const struct writer *const *writer__all(void) { return all; }

int out__cmp_rank(const void *a, const void *b)
{
    const struct out_rank *x = a, *y = b;
    if (x->oncpu != y->oncpu)
        return x->oncpu > y->oncpu ? -1 : 1;
    if (x->shown != y->shown)
        return x->shown > y->shown ? -1 : 1;
    if (x->all != y->all)
        return x->all > y->all ? -1 : 1;
    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

int out__rank_threads(const struct profile *p, const uint64_t *shown, struct out_rank **ranks)
{
    struct out_rank *v = malloc((p->nthreads ? p->nthreads : 1) * sizeof *v);
    if (!v)
        return -1;
    for (size_t t = 0; t < p->nthreads; t++) {
        const struct prof_thread *th = &p->threads[t];
        v[t] = (struct out_rank){t, (double)th->oncpu, (double)shown[t], (double)th->samples,
                                 th->tid};
    }
    qsort(v, p->nthreads, sizeof *v, out__cmp_rank);
    *ranks = v;
    return 0;
}

bool out__visible(const struct profile *p, const struct prof_sample *s, const struct out_opts *o)
{
    (void)p;
    return o->idle || !(s->flags & SAMPLE_IDLE);
}

/* Are frames a and b both Haskell code, or both the runtime's Cmm? */
static bool same_code(const struct profile *p, uint32_t a, uint32_t b)
{
    unsigned la = p->syms[a].lang, lb = p->syms[b].lang;
    if (la == LANG_HASKELL && lb == LANG_HASKELL)
        return true;
    return la == LANG_RTS && lb == LANG_RTS &&
           strncmp(profile__frame_name(p, a), "stg_", 4) == 0;
}

int out__frames(const struct profile *p, const struct prof_sample *s, uint32_t *out, int max)
{
    int n = 0;
    uint32_t len;
    const uint32_t *ids = profile__stack_ids(p, s->stack, &len);

    /* Stored innermost first; displayed outermost first. The code a
     * Haskell thread is running and the continuation it pushed usually
     * belong to the same function: one frame, not two. So too for the
     * runtime's Cmm code (stg_*: a primop's worker that pushes frames of
     * its own, stg_compactAddWorkerzh). */
    for (uint32_t i = len; i-- > 0 && n < max;) {
        if (n > 0 && p->syms && same_code(p, ids[i], ids[i + 1]) &&
            strcmp(profile__frame_name(p, out[n - 1]), profile__frame_name(p, ids[i])) == 0)
            continue;
        out[n++] = ids[i];
    }
    return n;
}

int out__path(const struct profile *p, const struct prof_sample *s, const struct out_opts *o,
              const char **names, int max, char *scratch, int *first_code)
{
    int n = 0;
    uint32_t ids[MAX_FRAMES];

    if (o->threads && n < max) {
        const struct prof_thread *t = &p->threads[s->thread];
        snprintf(scratch, 128, "tid %d (%s)", (int)t->tid, t->comm);
        names[n++] = scratch;
    }
    if (s->tag != TAG_NONE && n < max)
        names[n++] = out__tag_frame(s->tag);
    *first_code = n;
    int k = out__frames(p, s, ids, max - n < MAX_FRAMES ? max - n : MAX_FRAMES);
    for (int i = 0; i < k; i++)
        names[n++] = profile__frame_name(p, ids[i]);
    return n;
}

static uint64_t group_hash(const struct prof_sample *s)
{
    uint64_t h = ((uint64_t)s->stack << 32) ^ ((uint64_t)s->thread << 12) ^
                 ((uint64_t)(uint8_t)s->state << 4) ^ s->tag;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

static bool group_eq(const struct prof_sample *a, const struct prof_sample *b)
{
    return a->stack == b->stack && a->thread == b->thread && a->state == b->state &&
           a->tag == b->tag;
}

int64_t out__groups(const struct profile *p, const struct out_opts *o, unsigned by,
                    struct out_group **groups, size_t *n)
{
    struct prof_iter it;
    struct prof_sample s;
    struct out_group *g = NULL;
    uint32_t *slot = NULL; /* index + 1 into g; 0: empty */
    size_t ng = 0, cap = 0, size = 1024;
    int64_t shown = 0;

    *groups = NULL;
    *n = 0;
    if (profile__iter(p, &it) < 0 || !(slot = calloc(size, sizeof *slot)))
        goto oom;
    while (profile__next(&it, &s)) {
        if (!out__visible(p, &s, o))
            continue;
        shown++;
        struct prof_sample key = {.stack = s.stack, .tag = s.tag};
        if (by & OUT_BY_THREAD)
            key.thread = s.thread;
        if (by & OUT_BY_STATE)
            key.state = s.state;
        size_t h = (size_t)group_hash(&key) & (size - 1);
        while (slot[h] && !group_eq(&g[slot[h] - 1].s, &key))
            h = (h + 1) & (size - 1);
        if (slot[h]) {
            g[slot[h] - 1].count++;
            continue;
        }
        if (ng == cap) {
            size_t nc = cap ? 2 * cap : 256;
            struct out_group *ngv = realloc(g, nc * sizeof *g);
            if (!ngv)
                goto oom;
            g = ngv;
            cap = nc;
        }
        struct prof_sample first = s;
        first.thread = key.thread;
        first.state = key.state;
        g[ng] = (struct out_group){first, 1};
        slot[h] = (uint32_t)++ng;
        if (ng * 2 > size) { /* rehash at half full */
            size_t ns = size * 2;
            uint32_t *nsl = calloc(ns, sizeof *nsl);
            if (!nsl)
                goto oom;
            for (size_t i = 0; i < ng; i++) {
                size_t k = (size_t)group_hash(&g[i].s) & (ns - 1);
                while (nsl[k])
                    k = (k + 1) & (ns - 1);
                nsl[k] = (uint32_t)(i + 1);
            }
            free(slot);
            slot = nsl;
            size = ns;
        }
    }
    profile__iter_free(&it);
    free(slot);
    *groups = g;
    *n = ng;
    return shown;
oom:
    profile__iter_free(&it);
    free(slot);
    free(g);
    return -1;
}

const char *out__tag_frame(int tag)
{
    static char tags[TAG__COUNT][24];
    if (tag <= TAG_NONE || tag >= TAG__COUNT)
        return NULL;
    if (!tags[tag][0])
        snprintf(tags[tag], sizeof tags[tag], "[%s]", sample_tag__str(tag));
    return tags[tag];
}

void out__health(const struct profile *p, const struct out_opts *o, char *buf, size_t size,
                 const char *sep)
{
    uint64_t errors = profile__walk_errors(p);
    size_t pos = 0, shown = 0;
    struct prof_iter it;
    struct prof_sample smp;
    if (profile__iter(p, &it) == 0) {
        while (profile__next(&it, &smp))
            shown += out__visible(p, &smp, o);
        profile__iter_free(&it);
    }
#define PUT(...)                                                                     \
    do {                                                                             \
        int n_ = snprintf(buf + pos, size > pos ? size - pos : 0, __VA_ARGS__);      \
        pos += n_ > 0 ? (size_t)n_ : 0;                                              \
    } while (0)
    PUT("samples: %zu thread samples%s", shown,
        shown < p->nsamples ? " (idle threads' samples left out; --idle keeps them)" : "");
    PUT("%srate: %g Hz asked, %.1f Hz achieved", sep, p->rate_hz, profile__achieved_hz(p));
    PUT("%sticks: %" PRIu64 ", %" PRIu64 " missed", sep, p->ticks, p->missed_ticks);
    if (p->pause.n)
        PUT("%spause per stopped thread: mean %.1f us, max %.1f us", sep,
            (double)p->pause.sum_ns / (double)p->pause.n / 1e3, (double)p->pause.max_ns / 1e3);
    PUT("%serrors: %" PRIu64, sep, errors);
    const char *open = " (";
    for (int e = 1; e < WE__COUNT; e++)
        if (p->errors[e]) {
            PUT("%s%s: %" PRIu64, open, walk_error__str(e), p->errors[e]);
            open = ", ";
        }
    if (errors)
        PUT(")");
    if (p->lost_threads)
        PUT(", %" PRIu64 " thread stops timed out", p->lost_threads);
    PUT("%sduration: %.2f s", sep, (double)p->duration_ns / 1e9);
#undef PUT
    if (size && pos >= size)
        buf[size - 1] = 0;
}
