/* trace.c - Chrome trace-event JSON (the JSON Object Format, with
 * traceEvents), to see phases over time in Perfetto or chrome://tracing:
 * one track per OS thread, its samples turned into nested complete events
 * ("ph":"X"), one per frame level, the tag outermost.
 *
 * A sample stands for the interval from its tick to the thread's next
 * sample, shown or not (its last one: to the next tick of any thread, or one
 * period, 1/rate), as a CPU profile's sample stands for the time to the
 * next one: ticks hsspy missed while it ran late, or where the thread's
 * stop timed out, leave no hole; an idle sample not shown does. The longest
 * such interval goes in the metadata: it is how far off a phase's start or
 * end can be.
 *
 * A frame that stays at the same depth under the same frames from one
 * sample to the next is one event, not one per sample: consecutive
 * identical stacks merge whole, and a long phase is one event however long
 * the recording, which is what keeps the file small enough to load. Thread
 * roots (--threads) are not drawn: each thread is already its own track. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "out/text.h"
#include "out/writer.h"

#define DEFAULT_HZ 99 /* the recorder's default, for profiles without a rate */

struct ev {
    uint64_t t0, t1;  /* ns since the recording started */
    const char *name; /* lives as long as the profile (out__path) */
    uint16_t depth;   /* 0 = outermost */
    uint8_t tag;      /* enum sample_tag of the samples it covers */
};

struct evs {
    struct ev *v;
    size_t n, cap;
};

static int evs__add(struct evs *e, const struct ev *x)
{
    if (e->n == e->cap) {
        size_t nc = e->cap ? e->cap * 2 : 1024;
        struct ev *nv = realloc(e->v, nc * sizeof *nv);
        if (!nv)
            return -1;
        e->v = nv;
        e->cap = nc;
    }
    e->v[e->n++] = *x;
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Parents before children: the order trace viewers nest complete events
 * with the same start in. */
static int cmp_ev(const void *a, const void *b)
{
    const struct ev *x = a, *y = b;
    if (x->t0 != y->t0)
        return x->t0 < y->t0 ? -1 : 1;
    return (int)x->depth - (int)y->depth;
}

/* Microseconds, exactly, from nanoseconds: no rounding can make a child
 * stick out of its parent. */
static void json_us(FILE *f, uint64_t ns)
{
    if (ns % 1000)
        fprintf(f, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
    else
        fprintf(f, "%" PRIu64, ns / 1000);
}

/* Colour hints for the tag events, from the trace viewer's reserved
 * colour names (Perfetto colours by name and ignores them). */
static const char *tag_cname(int tag)
{
    switch (tag) {
    case TAG_HASKELL: return "thread_state_running";
    case TAG_UNSAFE_FFI: return "thread_state_runnable";
    case TAG_SAFE_FFI: return "thread_state_iowait";
    case TAG_GC: return "terrible";
    case TAG_RTS: return "generic_work";
    case TAG_IDLE: return "thread_state_sleeping";
    default: return NULL;
    }
}

/* The next sample of thread t, from the iterator; false after its last. */
static bool next_of(struct prof_iter *it, uint32_t t, struct prof_sample *s)
{
    while (profile__next(it, s))
        if (s->thread == t)
            return true;
    return false;
}

/* One thread's samples (in time order, as they are recorded) into events;
 * ticks are all the ticks' times, in order. The open frames are those of
 * the previous sample, still running until a sample shows something else
 * at their depth or a gap comes. *longest grows to the longest interval a
 * shown sample stands for. */
static int thread_events(const struct profile *p, const struct out_opts *o, uint32_t thread,
                         const uint64_t *ticks, size_t nticks, uint64_t period,
                         struct evs *out, uint64_t *longest)
{
    struct ev stk[MAX_FRAMES + 4];
    const char *names[MAX_FRAMES + 4];
    char scratch[128];
    int nopen = 0;
    uint64_t end = 0; /* where the open frames' last sample ends */
    struct prof_iter it;
    struct prof_sample cur, next, prev;
    bool have_prev = false, have_next;
    int r = -1;

    if (profile__iter(p, &it) < 0)
        return -1;
    have_next = next_of(&it, thread, &next);

#define CLOSE_TO(k, t)                                                                        \
    do {                                                                                      \
        while (nopen > (k)) {                                                                 \
            stk[--nopen].t1 = (t);                                                            \
            if (evs__add(out, &stk[nopen]) < 0)                                               \
                goto fail;                                                                    \
        }                                                                                     \
    } while (0)

    while (have_next) {
        cur = next;
        have_next = next_of(&it, thread, &next);
        const struct prof_sample *s = &cur;
        /* A thread that was kept waiting for a CPU is sampled once for the
         * several ticks it stood for (copies with one time): on a timeline
         * the first copy already covers them. */
        bool copy = have_prev && prev.t_ns == s->t_ns;
        prev = cur;
        have_prev = true;
        if (copy)
            continue;
        if (!out__visible(p, s, o)) {
            CLOSE_TO(0, end);
            continue;
        }
        uint64_t t = s->t_ns, t_end;
        if (have_next && next.t_ns > t) {
            t_end = next.t_ns;
        } else { /* the first tick after t, by bisection */
            size_t lo = 0, hi = nticks;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (ticks[mid] <= t)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            t_end = lo < nticks ? ticks[lo] : t + period;
        }
        if (t_end - t > *longest)
            *longest = t_end - t;
        if (nopen && t != end)
            CLOSE_TO(0, end);
        int first, m = out__path(p, s, o, names, MAX_FRAMES + 4, scratch, &first);
        int k = 0;
        while (k < nopen && k < m &&
               (stk[k].name == names[k] || strcmp(stk[k].name, names[k]) == 0))
            k++;
        CLOSE_TO(k, t);
        for (; nopen < m; nopen++)
            stk[nopen] = (struct ev){.t0 = t, .name = names[nopen], .depth = (uint16_t)nopen,
                                     .tag = s->tag};
        end = t_end;
    }
    CLOSE_TO(0, end);
#undef CLOSE_TO
    r = 0;
fail:
    profile__iter_free(&it);
    return r;
}

/* Events are separated, not ended, by commas: JSON allows no trailing one. */
static void next_event(FILE *f, bool *first)
{
    fputs(*first ? "\n" : ",\n", f);
    *first = false;
}

/* A metadata event. */
static void meta(FILE *f, bool *first, const char *what, int pid, int tid, const char *key,
                 const char *str, long num)
{
    next_event(f, first);
    fprintf(f, "{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"%s\":", what, pid,
            tid, key);
    if (str)
        text__json(f, str);
    else
        fprintf(f, "%ld", num);
    fputs("}}", f);
}

/* The sampling's health, for the viewer's metadata dialog and for scripts. */
static void other_data(const struct profile *p, uint64_t shown, uint64_t events, uint64_t period,
                       uint64_t longest, FILE *f)
{
    uint64_t errors = profile__walk_errors(p);
    fputs("\"otherData\":{\"tool\":\"hsspy\",\"command\":", f);
    text__json(f, p->cmdline);
    char runtime[32];
    snprintf(runtime, sizeof runtime, "%s%s", p->ghc_version[0] ? "GHC " : "native",
             p->ghc_version);
    fprintf(f, ",\"pid\":%d,\"runtime\":", (int)p->pid);
    text__json(f, runtime);
    if (p->launched && p->exited && WIFEXITED(p->exit_status))
        fprintf(f, ",\"exit_status\":%d", WEXITSTATUS(p->exit_status));
    else if (p->launched && p->exited && WIFSIGNALED(p->exit_status))
        fprintf(f, ",\"killed_by_signal\":%d", WTERMSIG(p->exit_status));
    fprintf(f,
            ",\"start_unix_ns\":%" PRIu64 ",\"duration_s\":%.3f,\"rate_asked_hz\":%.1f"
            ",\"rate_achieved_hz\":%.1f,\"sample_period_us\":%.1f,\"longest_sample_us\":%.1f"
            ",\"ticks\":%" PRIu64
            ",\"missed_ticks\":%" PRIu64 ",\"pause_mean_us\":%.1f,\"pause_max_us\":%.1f"
            ",\"errors\":%" PRIu64 ",\"error_kinds\":{",
            p->start_wall_ns, (double)p->duration_ns / 1e9, p->rate_hz, profile__achieved_hz(p),
            (double)period / 1e3, (double)longest / 1e3, p->ticks, p->missed_ticks,
            p->pause.n ? (double)p->pause.sum_ns / (double)p->pause.n / 1e3 : 0.0,
            (double)p->pause.max_ns / 1e3, errors);
    for (int e = 1, any = 0; e < WE__COUNT; e++)
        if (p->errors[e]) {
            fputs(any++ ? "," : "", f);
            text__json(f, walk_error__str(e));
            fprintf(f, ":%" PRIu64, p->errors[e]);
        }
    fprintf(f,
            "},\"lost_threads\":%" PRIu64 ",\"samples\":%zu,\"samples_shown\":%" PRIu64
            ",\"events\":%" PRIu64 "}",
            p->lost_threads, p->nsamples, shown, events);
}

/* One complete event. */
static void event(FILE *f, bool *first, int pid, int tid, const struct ev *e)
{
    next_event(f, first);
    fputs("{\"name\":", f);
    text__json(f, e->name);
    if (e->tag != TAG_NONE)
        fprintf(f, ",\"cat\":\"%s\"", sample_tag__str(e->tag));
    if (e->depth == 0 && tag_cname(e->tag))
        fprintf(f, ",\"cname\":\"%s\"", tag_cname(e->tag));
    fputs(",\"ph\":\"X\",\"ts\":", f);
    json_us(f, e->t0);
    fputs(",\"dur\":", f);
    json_us(f, e->t1 - e->t0);
    fprintf(f, ",\"pid\":%d,\"tid\":%d}", pid, tid);
}

static int write_trace(const struct profile *p, const struct out_opts *o, FILE *f)
{
    struct out_opts no_root = *o;
    size_t nticks = 0, cap = 0;
    uint64_t *ticks = NULL;
    uint64_t *shown = calloc(p->nthreads + 1, sizeof *shown);
    struct out_rank *rank = NULL;
    struct evs ev = {0};
    uint64_t events = 0, longest = 0;
    struct prof_iter it;
    struct prof_sample s;
    int r = -1;

    /* Each thread is its own track: a root frame naming it again would
     * only push every stack one level down. */
    no_root.threads = false;
    if (!shown || profile__iter(p, &it) < 0)
        goto out;
    double hz = p->rate_hz > 0 ? p->rate_hz : DEFAULT_HZ;
    uint64_t period = (uint64_t)(1e9 / hz);

    /* Every tick's time, once (samples of one tick share it), and the
     * samples shown per thread; shown[nthreads] is the total. */
    while (profile__next(&it, &s)) {
        bool visible = out__visible(p, &s, o);
        shown[s.thread] += visible;
        shown[p->nthreads] += visible;
        if (nticks && ticks[nticks - 1] == s.t_ns)
            continue;
        if (nticks == cap) {
            size_t nc = cap ? 2 * cap : 4096;
            uint64_t *nt = realloc(ticks, nc * sizeof *nt);
            if (!nt) {
                profile__iter_free(&it);
                goto out;
            }
            ticks = nt;
            cap = nc;
        }
        ticks[nticks++] = s.t_ns;
    }
    profile__iter_free(&it);
    if (nticks)
        qsort(ticks, nticks, sizeof *ticks, cmp_u64);
    size_t uniq = 0;
    for (size_t i = 0; i < nticks; i++)
        if (uniq == 0 || ticks[i] != ticks[uniq - 1])
            ticks[uniq++] = ticks[i];
    nticks = uniq;

    /* Tracks busiest first, as in the other formats. */
    if (out__rank_threads(p, shown, &rank) < 0)
        goto out;
    int pid = (int)p->pid;
    bool first = true;
    fputs("{\"traceEvents\":[", f);
    meta(f, &first, "process_name", pid, pid, "name", p->cmdline[0] ? p->cmdline : "?", 0);
    for (size_t i = 0; i < p->nthreads; i++) {
        size_t t = rank[i].t;
        const struct prof_thread *th = &p->threads[t];
        char name[128];
        if (!shown[t])
            continue;
        snprintf(name, sizeof name, "tid %d %s%s%s%s", (int)th->tid, th->comm,
                 th->role[0] ? " (" : "", th->role, th->role[0] ? ")" : "");
        meta(f, &first, "thread_name", pid, (int)th->tid, "name", name, 0);
        meta(f, &first, "thread_sort_index", pid, (int)th->tid, "sort_index", NULL, (long)i);
    }
    /* A thread at a time, so memory holds one thread's events, not all. */
    for (size_t i = 0; i < p->nthreads; i++) {
        size_t t = rank[i].t;
        ev.n = 0;
        if (!p->threads[t].samples)
            continue;
        if (thread_events(p, &no_root, (uint32_t)t, ticks, nticks, period, &ev, &longest) < 0)
            goto out;
        qsort(ev.v, ev.n, sizeof *ev.v, cmp_ev);
        for (size_t k = 0; k < ev.n; k++)
            event(f, &first, pid, (int)p->threads[t].tid, &ev.v[k]);
        events += ev.n;
    }
    fputs("\n],\n\"displayTimeUnit\":\"ms\",\n", f);
    other_data(p, shown[p->nthreads], events, period, longest, f);
    fputs("}\n", f);
    r = 0;
out:
    free(ev.v);
    free(rank);
    free(shown);
    free(ticks);
    return r;
}

const struct writer writer_trace = {
    .name = "trace",
    .help = "Chrome trace-event JSON: each thread's stacks over time (Perfetto, chrome://tracing)",
    .text = true,
    .write = write_trace,
};
