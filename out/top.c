/* top.c - the model and the screen of hsspy top (see top.h). */
#define _GNU_SOURCE
#include "out/top.h"
#include "out/text.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out/counter.h"
#include "out/writer.h"

/* Weights are rescaled once they pass 2^RESCALE_AT: far from a double's
 * limit (2^1023), and rare (every RESCALE_AT half-lives). */
#define RESCALE_AT 512.0
/* In the recent window, what would show as 0.0% in both columns is old
 * news: left out. */
#define NEGLIGIBLE 0.0005

struct fn_w {
    uint32_t fn; /* function id + 1; 0: an empty slot */
    double self, total;
    uint64_t n_self, n_total;
};

/* The figures of all threads together, or of one thread. */
struct scope {
    double w_all, w_shown, w_oncpu, w_tags[TAG__COUNT];
    uint64_t n_all, n_shown, n_oncpu, n_tags[TAG__COUNT];
    struct fn_w *fns; /* open addressing by function id */
    size_t nfns, size;
    uint32_t batch;   /* the batch it last had samples in */
    char role[64];
};

struct top {
    double half_life_ns;
    bool idle;
    uint64_t base_ns;      /* a sample at t weighs 2^((t - base_ns) / half-life) */
    struct counter names;  /* function name -> id + 1 (in aux) */
    const char **fn_name;  /* id -> name (the counter's key) */
    size_t nfn, cap_fn;
    uint32_t *stamp;       /* id -> the last sample it was counted in */
    size_t cap_stamp;
    uint32_t sample_no;
    uint32_t *frame_fn;    /* frame id -> function id + 1; 0: not seen yet */
    size_t cap_frame_fn;
    struct scope *scopes;  /* [0]: all threads; [1 + i]: the profile's thread i */
    size_t nscopes;
    uint32_t batch;
    uint64_t ticks_seen, last_ns;
    double w_ticks, w_time; /* ticks, and seconds, weighed as samples are */
    uint64_t samples;       /* every thread sample taken in */
};

static double weight(const struct top *v, uint64_t t_ns)
{
    return exp2(((double)t_ns - (double)v->base_ns) / v->half_life_ns);
}

struct top *top__new(double half_life_s, bool idle)
{
    struct top *v = calloc(1, sizeof *v);
    if (!v)
        return NULL;
    v->half_life_ns = half_life_s * 1e9;
    v->idle = idle;
    if (counter__init(&v->names) < 0) {
        free(v);
        return NULL;
    }
    return v;
}

void top__free(struct top *v)
{
    if (!v)
        return;
    counter__free(&v->names);
    free(v->fn_name);
    free(v->stamp);
    free(v->frame_fn);
    for (size_t i = 0; i < v->nscopes; i++)
        free(v->scopes[i].fns);
    free(v->scopes);
    free(v);
}

/* The function a frame belongs to (frames at different addresses of one
 * function, or of one name, are one function). */
static int64_t fn_of(struct top *v, const struct profile *p, uint32_t frame)
{
    if (v->frame_fn[frame])
        return v->frame_fn[frame] - 1;
    struct counter_entry *e = counter__add(&v->names, profile__frame_name(p, frame), 0, 0);
    if (!e)
        return -1;
    if (!e->aux) {
        if (profile__grow((void **)&v->fn_name, &v->cap_fn, v->nfn + 1, sizeof *v->fn_name) < 0 ||
            profile__grow((void **)&v->stamp, &v->cap_stamp, v->nfn + 1, sizeof *v->stamp) < 0)
            return -1;
        v->fn_name[v->nfn] = e->key;
        e->aux = ++v->nfn;
    }
    /* Only a named frame's function is kept (all are, in a batch). */
    if (frame < p->nnamed)
        v->frame_fn[frame] = (uint32_t)e->aux;
    return (int64_t)e->aux - 1;
}

static struct fn_w *entry(struct scope *s, uint32_t fn)
{
    if ((s->nfns + 1) * 2 > s->size) {
        size_t size = s->size ? s->size * 2 : 64;
        struct fn_w *t = calloc(size, sizeof *t);
        if (!t)
            return NULL;
        for (size_t i = 0; i < s->size; i++) {
            if (!s->fns[i].fn)
                continue;
            size_t h = (s->fns[i].fn * 2654435761u) & (size - 1);
            while (t[h].fn)
                h = (h + 1) & (size - 1);
            t[h] = s->fns[i];
        }
        free(s->fns);
        s->fns = t;
        s->size = size;
    }
    size_t h = ((fn + 1) * 2654435761u) & (s->size - 1);
    while (s->fns[h].fn && s->fns[h].fn != fn + 1)
        h = (h + 1) & (s->size - 1);
    if (!s->fns[h].fn) {
        s->fns[h].fn = fn + 1;
        s->nfns++;
    }
    return &s->fns[h];
}

/* Bring every weight down by 2^-k, with the base k half-lives later: the
 * shares do not change. */
static void rescale(struct top *v, uint64_t now_ns)
{
    double f = 1.0 / weight(v, now_ns);
    for (size_t i = 0; i < v->nscopes; i++) {
        struct scope *s = &v->scopes[i];
        s->w_all *= f;
        s->w_shown *= f;
        s->w_oncpu *= f;
        for (int g = 0; g < TAG__COUNT; g++)
            s->w_tags[g] *= f;
        for (size_t k = 0; k < s->size; k++) {
            s->fns[k].self *= f;
            s->fns[k].total *= f;
        }
    }
    v->w_ticks *= f;
    v->w_time *= f;
    v->base_ns = now_ns;
}

static int add_sample(struct top *v, const struct profile *p, const struct prof_sample *s)
{
    double w = weight(v, s->t_ns);
    struct scope *sc[2] = {&v->scopes[0], &v->scopes[1 + s->thread]};
    bool shown = v->idle || !(s->flags & SAMPLE_IDLE);
    uint32_t n = 0;
    const uint32_t *ids = shown ? profile__stack_ids(p, s->stack, &n) : NULL;

    for (int k = 0; k < 2; k++) {
        sc[k]->w_all += w;
        sc[k]->n_all++;
        if (s->tag < TAG__COUNT) {
            sc[k]->w_tags[s->tag] += w;
            sc[k]->n_tags[s->tag]++;
        }
        if (profile__on_cpu(s)) {
            sc[k]->w_oncpu += w;
            sc[k]->n_oncpu++;
        }
        if (shown) {
            sc[k]->w_shown += w;
            sc[k]->n_shown++;
        }
    }
    sc[1]->batch = v->batch;
    if (!n)
        return 0;
    if (++v->sample_no == 0) { /* wrapped: no stamp may look current */
        memset(v->stamp, 0, v->nfn * sizeof *v->stamp);
        v->sample_no = 1;
    }
    /* Own: the innermost frame. Total: every function on the stack, once
     * however often it recurses. */
    for (uint32_t i = 0; i < n; i++) {
        int64_t fn = fn_of(v, p, ids[i]);
        if (fn < 0)
            return -ENOMEM;
        bool first = v->stamp[fn] != v->sample_no;
        if (!first && i > 0)
            continue;
        v->stamp[fn] = v->sample_no;
        for (int k = 0; k < 2; k++) {
            struct fn_w *e = entry(sc[k], (uint32_t)fn);
            if (!e)
                return -ENOMEM;
            if (i == 0) {
                e->self += w;
                e->n_self++;
            }
            if (first) {
                e->total += w;
                e->n_total++;
            }
        }
    }
    return 0;
}

int top__add(struct top *v, const struct profile *p, uint64_t now_ns)
{
    if (now_ns < v->last_ns)
        now_ns = v->last_ns;
    if (((double)now_ns - (double)v->base_ns) / v->half_life_ns > RESCALE_AT)
        rescale(v, now_ns);
    if (p->nthreads + 1 > v->nscopes) {
        size_t cap = v->nscopes;
        if (profile__grow((void **)&v->scopes, &cap, p->nthreads + 1, sizeof *v->scopes) < 0)
            return -ENOMEM;
        v->nscopes = cap;
    }
    if (profile__grow((void **)&v->frame_fn, &v->cap_frame_fn, p->nframes + 1,
                    sizeof *v->frame_fn) < 0)
        return -ENOMEM;
    v->batch++;
    struct prof_iter it;
    struct prof_sample s;
    if (profile__iter(p, &it) < 0)
        return -ENOMEM;
    while (profile__next(&it, &s))
        if (add_sample(v, p, &s) < 0) {
            profile__iter_free(&it);
            return -ENOMEM;
        }
    profile__iter_free(&it);
    v->samples += p->nsamples;
    /* A thread's role as of this batch, if it was sampled in it. */
    for (size_t t = 0; t < p->nthreads; t++)
        if (v->scopes[1 + t].batch == v->batch)
            memcpy(v->scopes[1 + t].role, p->threads[t].role, sizeof v->scopes[1 + t].role);
    /* The time since the last batch weighs the integral of the weight over
     * it; its ticks are taken as spread evenly over it, so a steady rate
     * comes out exact. */
    double dt = (double)(now_ns - v->last_ns) / 1e9;
    double w_dt = (weight(v, now_ns) - weight(v, v->last_ns)) * v->half_life_ns / 1e9 / M_LN2;
    v->w_ticks += (double)(p->ticks - v->ticks_seen) * (dt > 0 ? w_dt / dt : weight(v, now_ns));
    v->w_time += w_dt;
    v->ticks_seen = p->ticks;
    v->last_ns = now_ns;
    return 0;
}

/* ---- the screen ---- */

struct screen {
    char *buf;
    size_t len, cap;
    int rows, cols, lines;
    bool oom;
};

/* Append one character of s, or '?' for what text__clean replaces (what
 * a terminal could take as a control: names and command lines come from
 * the target). Returns the bytes consumed. */
static size_t put_char(char *out, size_t *o, const unsigned char *s)
{
    bool bad;
    int n = text__char(s, &bad);
    if (bad) {
        out[(*o)++] = '?'; /* (one a byte: a C1 control shows as "??") */
        return 1;
    }
    memcpy(out + *o, s, (size_t)n);
    *o += (size_t)n;
    return (size_t)n;
}

static void line(struct screen *sc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(struct screen *sc, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    if (sc->lines >= sc->rows || sc->oom)
        return;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    size_t need = sc->len + (size_t)sc->cols * 4 + 2;
    if (need > sc->cap) {
        size_t nc = sc->cap * 2 > need ? sc->cap * 2 : need + 4096;
        char *nb = realloc(sc->buf, nc);
        if (!nb) {
            sc->oom = true;
            return;
        }
        sc->buf = nb;
        sc->cap = nc;
    }
    const unsigned char *s = (const unsigned char *)text;
    size_t last = sc->len;
    for (int col = 0; *s && col < sc->cols; col++) {
        last = sc->len;
        s += put_char(sc->buf, &sc->len, s);
    }
    /* Cut at the screen's edge: its last column says so (two names that
     * differ past it would otherwise look the same). */
    if (*s && sc->cols > 0) {
        sc->len = last;
        sc->buf[sc->len++] = '>';
    }
    sc->buf[sc->len++] = '\n';
    sc->lines++;
}

static int rows_left(const struct screen *sc) { return sc->rows - sc->lines; }

static double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

/* A scope's figure: recent (weighed) or all-time (counted). */
#define FIG(o, s, w, n) ((o)->all_time ? (double)(s)->n : (s)->w)

static void tags_line(struct screen *sc, const struct top_opts *o, const struct scope *s,
                      const char *indent)
{
    char buf[256];
    int len = 0;
    double all = FIG(o, s, w_all, n_all);
    for (int g = 1; g < TAG__COUNT; g++) {
        double x = o->all_time ? (double)s->n_tags[g] : s->w_tags[g];
        len += snprintf(buf + len, sizeof buf - (size_t)len, " %s %.1f%%", sample_tag__str(g),
                        100.0 * ratio(x, all));
    }
    line(sc, "%stags:%s", indent, buf);
}

struct row {
    const char *name;
    double self, total;
};

static int cmp_own(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    if (x->self != y->self)
        return x->self > y->self ? -1 : 1;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int cmp_total(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    if (x->self != y->self)
        return x->self > y->self ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Up to max lines of a scope's functions, by own or total share. */
static void functions(struct screen *sc, const struct top *v, const struct top_opts *o,
                      const struct scope *s, int max)
{
    double shown = FIG(o, s, w_shown, n_shown);
    struct row *r = malloc((s->nfns ? s->nfns : 1) * sizeof *r);
    size_t n = 0;
    if (!r) {
        sc->oom = true;
        return;
    }
    for (size_t i = 0; i < s->size; i++) {
        const struct fn_w *e = &s->fns[i];
        if (!e->fn)
            continue;
        struct row x = {v->fn_name[e->fn - 1],
                        ratio(o->all_time ? (double)e->n_self : e->self, shown),
                        ratio(o->all_time ? (double)e->n_total : e->total, shown)};
        if (x.self < NEGLIGIBLE && x.total < NEGLIGIBLE)
            continue;
        r[n++] = x;
    }
    qsort(r, n, sizeof *r, o->sort == TOP_SORT_OWN ? cmp_own : cmp_total);
    for (size_t i = 0; i < n && (int)i < max; i++)
        line(sc, "%6.1f  %6.1f  %s", 100.0 * r[i].self, 100.0 * r[i].total, r[i].name);
    free(r);
}

static void thread_header(struct screen *sc, const struct top_opts *o, const struct profile *p,
                          size_t t, const struct scope *all, const struct scope *s)
{
    const struct prof_thread *th = &p->threads[t];
    double shown = FIG(o, s, w_shown, n_shown);
    char what[128];
    if (shown > 0)
        snprintf(what, sizeof what, "%.1f%% of the samples shown, on CPU %.0f%%",
                 100.0 * ratio(shown, FIG(o, all, w_shown, n_shown)),
                 100.0 * ratio(FIG(o, s, w_oncpu, n_oncpu), FIG(o, s, w_all, n_all)));
    else
        snprintf(what, sizeof what, "idle (--idle shows its functions)");
    line(sc, "tid %d (%s)%s%s%s: %s", (int)th->tid, th->comm, s->role[0] ? " " : "", s->role,
         th->exited ? ", exited" : "", what);
}

/* One section per thread, the busiest first: a header, its tags (GHC), and
 * as many of its functions as the rows allow when shared out evenly; the
 * last row says how many threads did not fit, if any. */
static void thread_sections(struct screen *sc, const struct top *v, const struct top_opts *o,
                            const struct profile *p, bool ghc)
{
    const struct scope *all = &v->scopes[0];
    size_t nt = v->nscopes > 1 ? v->nscopes - 1 : 0;
    if (nt > p->nthreads)
        nt = p->nthreads;
    struct out_rank *ord = malloc((nt ? nt : 1) * sizeof *ord);
    size_t n = 0, busy = 0;
    if (!ord) {
        sc->oom = true;
        return;
    }
    double all_w = FIG(o, all, w_all, n_all);
    for (size_t t = 0; t < nt; t++) {
        const struct scope *s = &v->scopes[1 + t];
        double w = FIG(o, s, w_all, n_all);
        /* A thread gone quiet (exited) fades out of the recent window. */
        if (w <= 0 || ratio(w, all_w) < NEGLIGIBLE)
            continue;
        ord[n++] = (struct out_rank){t, FIG(o, s, w_oncpu, n_oncpu), FIG(o, s, w_shown, n_shown), w,
                                     p->threads[t].tid};
        busy += ord[n - 1].shown > 0;
    }
    qsort(ord, n, sizeof *ord, out__cmp_rank); /* (busiest first) */
    int per_head = ghc ? 2 : 1;
    int idle_lines = (int)(n - busy);
    int each = busy ? (rows_left(sc) - idle_lines - (int)busy * per_head) / (int)busy : 0;
    if (each < 1)
        each = 1;
    for (size_t i = 0; i < n && rows_left(sc) > 0; i++) {
        const struct scope *s = &v->scopes[1 + ord[i].t];
        bool more = i + 1 < n;
        int head = ord[i].shown > 0 ? per_head : 1;
        if (more && rows_left(sc) < head + 1) {
            line(sc, "... %zu more thread%s: a taller terminal shows them", n - i,
                 n - i == 1 ? "" : "s");
            break;
        }
        thread_header(sc, o, p, ord[i].t, all, s);
        if (ord[i].shown <= 0)
            continue;
        if (ghc)
            tags_line(sc, o, s, "  ");
        int room = rows_left(sc) - (more ? 1 : 0);
        functions(sc, v, o, s, each < room ? each : room);
    }
    free(ord);
}

char *top__render(const struct top *v, const struct profile *p, const struct top_opts *o,
                  int rows, int cols)
{
    struct screen sc = {.rows = rows > 0 ? rows : 0, .cols = cols > 0 ? cols : 0};
    const struct scope *all = v->nscopes ? &v->scopes[0] : &(struct scope){0};
    bool ghc = p->ghc_version[0] != 0;
    uint64_t errors = profile__walk_errors(p);
    double secs = (double)v->last_ns / 1e9;

    sc.buf = malloc(4096);
    sc.cap = sc.buf ? 4096 : 0;
    if (!sc.buf)
        return NULL;
    sc.buf[0] = 0;
    line(&sc, "hsspy top - pid %d: %s%s%s", (int)p->pid, p->cmdline, ghc ? "  GHC " : "",
         p->ghc_version);
    line(&sc, "rate %g Hz asked, %.1f Hz achieved | %" PRIu64 " samples | %.1f s | %" PRIu64
              " missed ticks | %" PRIu64 " errors",
         p->rate_hz, o->all_time ? ratio((double)p->ticks, secs) : ratio(v->w_ticks, v->w_time),
         v->samples, secs, p->missed_ticks, errors);
    char window[64];
    if (o->all_time)
        snprintf(window, sizeof window, "all time");
    else
        snprintf(window, sizeof window, "recent, weight halves every %.3g s",
                 v->half_life_ns / 1e9);
    line(&sc, "%s | %s | by %s%s%s%s%s", window, o->threads ? "per thread" : "all threads",
         o->sort == TOP_SORT_OWN ? "own" : "total", o->options && o->options[0] ? " | " : "",
         o->options ? o->options : "", o->keys && o->keys[0] ? " | " : "", o->keys ? o->keys : "");
    if (ghc && !o->threads)
        tags_line(&sc, o, all, "");
    if (p->children[0])
        line(&sc, "%s", p->children);
    if (p->target_stopped)
        line(&sc, "pid %d is stopped (SIGSTOP, or Ctrl-Z in its shell): nothing runs to sample; "
                  "kill -CONT %d continues it",
             (int)p->pid, (int)p->pid);
    line(&sc, "%s", "");
    if (FIG(o, all, w_all, n_all) <= 0) {
        line(&sc, "waiting for samples...");
    } else {
        line(&sc, "  OWN%%  TOTAL%%  FUNCTION");
        if (o->threads)
            thread_sections(&sc, v, o, p, ghc);
        else if (FIG(o, all, w_shown, n_shown) > 0)
            functions(&sc, v, o, all, rows_left(&sc));
        else
            line(&sc, "every thread is idle (--idle shows what they wait in)");
    }
    if (sc.oom) {
        free(sc.buf);
        return NULL;
    }
    sc.buf[sc.len] = 0;
    return sc.buf;
}
