/* calls.c - an fprof-style call analysis of the displayed stacks: for every
 * function (tag and tid pseudo-frames included) its CNT, ACC and OWN
 * samples, and who called it and whom it called, as Erlang's fprof prints
 * them: one `{ callers, function, callees }` paragraph per function.
 *
 * Samples stand in for fprof's times and calls:
 *   CNT  samples with the function on the stack, recursion counted once;
 *   ACC  the same samples, but in a caller or callee row only those where
 *        the call is to the function's outermost instance (fprof charges
 *        ACC once, to the instance highest up the stack), so the callers'
 *        ACC add up to the function's and a recursive call shows CNT with
 *        ACC 0;
 *   OWN  samples with the function as the leaf.
 * A caller row is the function's figures restricted to calls from that
 * caller; a callee row is the callee's figures restricted to calls from the
 * function. The output is Erlang terms (file:consult reads it), one row per
 * line, so it is also easy to parse with a line regex. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "out/counter.h"
#include "out/writer.h"

/* The widest name column; longer names push their row's numbers right. */
#define NAME_COL_MAX 60

struct fn {
    char *quoted;   /* the name as an Erlang string, with its quotes */
    uint64_t cnt;   /* == acc for the function's own row */
    uint64_t own;
    uint64_t stamp; /* the last group counted, for once-per-sample counting */
};

struct edge {
    uint32_t from, to; /* caller, callee: fn indices */
    uint64_t cnt, acc, own;
    uint64_t stamp;
};

struct calls {
    struct counter names; /* name -> fn index + 1, in aux */
    struct fn *fns;
    size_t nfns, cap_fns;
    struct edge *edges;
    size_t nedges, cap_edges;
    uint32_t *edge_hash; /* open addressing, UINT32_MAX is empty */
    size_t edge_hash_size;
};

/* A name as an Erlang string literal. */
static char *erl_quote(const char *s)
{
    size_t n = 3;
    for (const char *c = s; *c; c++)
        n += ((unsigned char)*c < 0x20) ? 4 : (*c == '"' || *c == '\\') ? 2 : 1;
    char *q = malloc(n), *o = q;
    if (!q)
        return NULL;
    *o++ = '"';
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c < 0x20) {
            o += sprintf(o, "\\x%02x", *c);
        } else {
            if (*c == '"' || *c == '\\')
                *o++ = '\\';
            *o++ = (char)*c;
        }
    }
    *o++ = '"';
    *o = 0;
    return q;
}

static int64_t calls__fn(struct calls *c, const char *name)
{
    struct counter_entry *e = counter__add(&c->names, name, 0, 0);
    if (!e)
        return -1;
    if (e->aux)
        return (int64_t)e->aux - 1;
    if (profile__grow((void **)&c->fns, &c->cap_fns, c->nfns + 1, sizeof *c->fns) < 0)
        return -1;
    struct fn *f = &c->fns[c->nfns];
    memset(f, 0, sizeof *f);
    if (!(f->quoted = erl_quote(name)))
        return -1;
    e->aux = ++c->nfns;
    return (int64_t)c->nfns - 1;
}

static uint64_t edge_hash(uint32_t from, uint32_t to)
{
    uint64_t h = ((uint64_t)from << 32 | to) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

static int rehash_edges(struct calls *c)
{
    size_t size = c->edge_hash_size ? c->edge_hash_size * 2 : 1024;
    uint32_t *t = malloc(size * sizeof *t);
    if (!t)
        return -1;
    memset(t, 0xff, size * sizeof *t);
    for (uint32_t i = 0; i < c->nedges; i++) {
        size_t h = edge_hash(c->edges[i].from, c->edges[i].to) & (size - 1);
        while (t[h] != UINT32_MAX)
            h = (h + 1) & (size - 1);
        t[h] = i;
    }
    free(c->edge_hash);
    c->edge_hash = t;
    c->edge_hash_size = size;
    return 0;
}

static struct edge *calls__edge(struct calls *c, uint32_t from, uint32_t to)
{
    if ((c->nedges + 1) * 2 > c->edge_hash_size && rehash_edges(c) < 0)
        return NULL;
    size_t mask = c->edge_hash_size - 1, h = edge_hash(from, to) & mask;
    for (; c->edge_hash[h] != UINT32_MAX; h = (h + 1) & mask) {
        struct edge *e = &c->edges[c->edge_hash[h]];
        if (e->from == from && e->to == to)
            return e;
    }
    if (profile__grow((void **)&c->edges, &c->cap_edges, c->nedges + 1, sizeof *c->edges) < 0)
        return NULL;
    c->edge_hash[h] = (uint32_t)c->nedges;
    struct edge *e = &c->edges[c->nedges++];
    *e = (struct edge){.from = from, .to = to};
    return e;
}

static void calls__free(struct calls *c)
{
    for (size_t i = 0; i < c->nfns; i++)
        free(c->fns[i].quoted);
    free(c->fns);
    free(c->edges);
    free(c->edge_hash);
    counter__free(&c->names);
}

/* Count one displayed stack (outermost first) seen in w samples; stamp
 * tells this stack from the previous ones, for once-per-sample counts. */
static int calls__stack(struct calls *c, const char *const *names, int n, uint64_t w,
                        uint64_t stamp)
{
    uint32_t ids[MAX_FRAMES + 4];
    for (int k = 0; k < n; k++) {
        int64_t id = calls__fn(c, names[k]);
        if (id < 0)
            return -1;
        ids[k] = (uint32_t)id;
    }
    for (int k = 0; k < n; k++) {
        struct fn *f = &c->fns[ids[k]];
        /* The first time a function is met going up from the root is its
         * outermost instance: the one its ACC is charged to. */
        bool outermost = f->stamp != stamp;
        if (outermost) {
            f->stamp = stamp;
            f->cnt += w;
        }
        if (k == 0)
            continue;
        struct edge *e = calls__edge(c, ids[k - 1], ids[k]);
        if (!e)
            return -1;
        if (e->stamp != stamp) {
            e->stamp = stamp;
            e->cnt += w;
        }
        if (outermost)
            e->acc += w;
        if (k == n - 1)
            e->own += w;
    }
    if (n > 0)
        c->fns[ids[n - 1]].own += w;
    return 0;
}

/* Samples that display the same stack: same stack id, tag and (with
 * --threads) thread. Grouped first so each distinct stack is named and
 * counted once, however long the recording; in a fixed order (stack,
 * thread, tag), so the output does not depend on the grouping's. */
static int cmp_group(const void *a, const void *b)
{
    const struct prof_sample *x = &((const struct out_group *)a)->s;
    const struct prof_sample *y = &((const struct out_group *)b)->s;
    if (x->stack != y->stack)
        return x->stack < y->stack ? -1 : 1;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    return (int)x->tag - (int)y->tag;
}

static int calls__build(struct calls *c, const struct profile *p, const struct out_opts *o,
                        uint64_t *shown)
{
    struct out_group *g;
    size_t ng;
    const char *names[MAX_FRAMES + 4];
    char scratch[128];
    int r = 0;
    int64_t visible = out__groups(p, o, o->threads ? OUT_BY_THREAD : 0, &g, &ng);

    if (visible < 0)
        return -1;
    *shown = (uint64_t)visible;
    qsort(g, ng, sizeof *g, cmp_group);
    uint64_t stamp = 0;
    for (size_t i = 0; i < ng && r == 0; i++) {
        int first;
        int n = out__path(p, &g[i].s, o, names, MAX_FRAMES + 4, scratch, &first);
        r = calls__stack(c, names, n, g[i].count, ++stamp);
    }
    free(g);
    return r;
}

/* The order of rows: by ACC or OWN as asked, the other one next, then the
 * number of samples with the call at all, then by name. */
static enum out_sort sort_by;
static const struct calls *sort_calls;

static int cmp_figures(uint64_t acc_x, uint64_t own_x, uint64_t cnt_x, uint64_t acc_y,
                       uint64_t own_y, uint64_t cnt_y)
{
    uint64_t kx = sort_by == OUT_SORT_OWN ? own_x : acc_x;
    uint64_t ky = sort_by == OUT_SORT_OWN ? own_y : acc_y;
    uint64_t lx = sort_by == OUT_SORT_OWN ? acc_x : own_x;
    uint64_t ly = sort_by == OUT_SORT_OWN ? acc_y : own_y;
    if (kx != ky)
        return kx > ky ? -1 : 1;
    if (lx != ly)
        return lx > ly ? -1 : 1;
    if (cnt_x != cnt_y)
        return cnt_x > cnt_y ? -1 : 1;
    return 0;
}

static int cmp_fn(const void *a, const void *b)
{
    const struct fn *x = &sort_calls->fns[*(const uint32_t *)a];
    const struct fn *y = &sort_calls->fns[*(const uint32_t *)b];
    int r = cmp_figures(x->cnt, x->own, x->cnt, y->cnt, y->own, y->cnt);
    return r ? r : strcmp(x->quoted, y->quoted);
}

/* Edges sorted for a callers list (by callee, then figures and caller) or
 * a callees list (by caller, then figures and callee). */
static bool sort_callers;

static int cmp_edge(const void *a, const void *b)
{
    const struct edge *x = &sort_calls->edges[*(const uint32_t *)a];
    const struct edge *y = &sort_calls->edges[*(const uint32_t *)b];
    uint32_t gx = sort_callers ? x->to : x->from, gy = sort_callers ? y->to : y->from;
    if (gx != gy)
        return gx < gy ? -1 : 1;
    int r = cmp_figures(x->acc, x->own, x->cnt, y->acc, y->own, y->cnt);
    if (r)
        return r;
    uint32_t ox = sort_callers ? x->from : x->to, oy = sort_callers ? y->from : y->to;
    return strcmp(sort_calls->fns[ox].quoted, sort_calls->fns[oy].quoted);
}

static double share(uint64_t n, uint64_t total)
{
    return total ? 100.0 * (double)n / (double)total : 0.0;
}

#define COLUMNS "       CNT       ACC   ACC%%       OWN   OWN%%"

/* One row: an opening, the name padded to the column, the figures, a
 * closing. Openings are three characters wide, as in fprof. */
static void row(FILE *f, const char *open, const char *quoted, int col, uint64_t cnt,
                uint64_t acc, uint64_t own, uint64_t total, const char *close)
{
    int len = (int)strlen(quoted) + 1;
    fprintf(f, "%s%s,%*s%10" PRIu64 ",%9" PRIu64 ",%6.1f,%9" PRIu64 ",%6.1f}%s\n", open,
            quoted, len < col ? col - len : 0, "", cnt, acc, share(acc, total), own,
            share(own, total), close);
}

/* A key of a property list, padded so the values line up. */
__attribute__((format(printf, 5, 6))) static void prop(FILE *f, bool first, const char *key,
                                                       bool last, const char *fmt, ...)
{
    va_list ap;
    fprintf(f, "%s{%s,%*s", first ? " [" : "  ", key, 18 - (int)strlen(key), "");
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fprintf(f, "}%s\n", last ? "]}." : ",");
}

static int header(const struct profile *p, const struct out_opts *o, uint64_t shown,
                  FILE *f)
{
    uint64_t errors = profile__walk_errors(p), threads = profile__threads_sampled(p);
    char runtime[32];
    snprintf(runtime, sizeof runtime, "%s%s", p->ghc_version[0] ? "GHC " : "native",
             p->ghc_version);
    char *cmd = erl_quote(p->cmdline), *rt = erl_quote(runtime);
    if (!cmd || !rt) {
        free(cmd);
        free(rt);
        return -1;
    }

    fprintf(f, "%%%% hsspy calls: an fprof-style analysis of sampled stacks.\n"
               "%%%% Figures are samples (one thread's stack at one tick), shares are of\n"
               "%%%% all samples shown. CNT: samples with the function on the stack;\n"
               "%%%% ACC: the same, charged to the caller of its outermost instance;\n"
               "%%%% OWN: samples with it as the leaf. Each paragraph is\n"
               "%%%% {callers, function (marked %%), callees}; see hsspy(1).\n");
    fprintf(f, "{analysis_options, [{sort, %s}, {threads, %s}, {idle, %s}]}.\n\n",
            o->sort == OUT_SORT_OWN ? "own" : "acc", o->threads ? "true" : "false",
            o->idle ? "true" : "false");

    fprintf(f, "{target,\n");
    prop(f, true, "pid", false, "%d", (int)p->pid);
    prop(f, false, "command", false, "%s", cmd);
    if (p->launched && p->exited && WIFEXITED(p->exit_status))
        prop(f, false, "exit_status", false, "%d", WEXITSTATUS(p->exit_status));
    else if (p->launched && p->exited && WIFSIGNALED(p->exit_status))
        prop(f, false, "killed_by_signal", false, "%d", WTERMSIG(p->exit_status));
    prop(f, false, "runtime", true, "%s", rt);
    free(cmd);
    free(rt);

    fprintf(f, "{sampling,\n");
    prop(f, true, "duration_s", false, "%.3f", (double)p->duration_ns / 1e9);
    prop(f, false, "rate_asked_hz", false, "%.1f", p->rate_hz);
    prop(f, false, "rate_achieved_hz", false, "%.1f", profile__achieved_hz(p));
    prop(f, false, "ticks", false, "%" PRIu64, p->ticks);
    prop(f, false, "missed_ticks", false, "%" PRIu64, p->missed_ticks);
    prop(f, false, "pause_mean_us", false, "%.1f",
         p->pause.n ? (double)p->pause.sum_ns / (double)p->pause.n / 1e3 : 0.0);
    prop(f, false, "pause_max_us", false, "%.1f", (double)p->pause.max_ns / 1e3);
    prop(f, false, "errors", false, "%" PRIu64, errors);
    fprintf(f, "  {error_kinds,%7s[", "");
    for (int e = 1, any = 0; e < WE__COUNT; e++)
        if (p->errors[e])
            fprintf(f, "%s{\"%s\", %" PRIu64 "}", any++ ? ", " : "", walk_error__str(e),
                    p->errors[e]);
    fprintf(f, "]},\n");
    prop(f, false, "lost_threads", false, "%" PRIu64, p->lost_threads);
    prop(f, false, "threads", false, "%" PRIu64, threads);
    prop(f, false, "samples", false, "%zu", p->nsamples);
    prop(f, false, "samples_shown", true, "%" PRIu64, shown);
    return 0;
}

static int write_calls(const struct profile *p, const struct out_opts *o, FILE *f)
{
    struct calls c = {0};
    uint32_t *order = NULL, *callers = NULL, *callees = NULL;
    size_t *in_off = NULL, *out_off = NULL;
    uint64_t shown = 0, own_total = 0;
    int r = -1;

    if (counter__init(&c.names) < 0 || calls__build(&c, p, o, &shown) < 0)
        goto out;
    order = malloc((c.nfns + 1) * sizeof *order);
    callers = malloc((c.nedges + 1) * sizeof *callers);
    callees = malloc((c.nedges + 1) * sizeof *callees);
    in_off = calloc(c.nfns + 1, sizeof *in_off);
    out_off = calloc(c.nfns + 1, sizeof *out_off);
    if (!order || !callers || !callees || !in_off || !out_off)
        goto out;

    sort_by = o->sort;
    sort_calls = &c;
    int col = 0;
    for (uint32_t i = 0; i < c.nfns; i++) {
        order[i] = i;
        own_total += c.fns[i].own;
        int len = (int)strlen(c.fns[i].quoted) + 1;
        if (len > col)
            col = len;
    }
    if (col > NAME_COL_MAX)
        col = NAME_COL_MAX;
    if (col < 8)
        col = 8;
    qsort(order, c.nfns, sizeof *order, cmp_fn);
    /* Each function's callers and callees are runs of these two orders. */
    for (uint32_t i = 0; i < c.nedges; i++) {
        callers[i] = callees[i] = i;
        in_off[c.edges[i].to + 1]++;
        out_off[c.edges[i].from + 1]++;
    }
    for (size_t i = 0; i < c.nfns; i++) {
        in_off[i + 1] += in_off[i];
        out_off[i + 1] += out_off[i];
    }
    sort_callers = true;
    qsort(callers, c.nedges, sizeof *callers, cmp_edge);
    sort_callers = false;
    qsort(callees, c.nedges, sizeof *callees, cmp_edge);

    if (header(p, o, shown, f) < 0)
        goto out;
    fprintf(f, "\n%%%*s" COLUMNS "\n", col + 2, "");
    row(f, "[{ ", "totals", col, shown, shown, own_total, shown, "].");
    for (size_t k = 0; k < c.nfns; k++) {
        uint32_t i = order[k];
        const struct fn *fn = &c.fns[i];
        if (k % 20 == 0)
            fprintf(f, "\n%%%*s" COLUMNS "\n", col + 2, "");
        else
            fputc('\n', f);
        if (in_off[i] == in_off[i + 1])
            fprintf(f, "{[],\n");
        for (size_t e = in_off[i]; e < in_off[i + 1]; e++) {
            const struct edge *x = &c.edges[callers[e]];
            row(f, e == in_off[i] ? "{[{" : "  {", c.fns[x->from].quoted, col, x->cnt, x->acc,
                x->own, shown, e + 1 == in_off[i + 1] ? "]," : ",");
        }
        row(f, " { ", fn->quoted, col, fn->cnt, fn->cnt, fn->own, shown, ",     %");
        if (out_off[i] == out_off[i + 1])
            fprintf(f, " []}.\n");
        for (size_t e = out_off[i]; e < out_off[i + 1]; e++) {
            const struct edge *x = &c.edges[callees[e]];
            row(f, e == out_off[i] ? " [{" : "  {", c.fns[x->to].quoted, col, x->cnt, x->acc,
                x->own, shown, e + 1 == out_off[i + 1] ? "]}." : ",");
        }
    }
    r = 0;
out:
    free(order);
    free(callers);
    free(callees);
    free(in_off);
    free(out_off);
    calls__free(&c);
    return r;
}

const struct writer writer_calls = {
    .name = "calls",
    .help = "per function its callers and callees, CNT/ACC/OWN samples (fprof style)",
    .text = true,
    .write = write_calls,
};
