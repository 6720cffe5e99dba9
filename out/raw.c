/* raw.c - writing and reading hsspy's raw recording format (see raw.h). */
#include "out/raw.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "out/text.h"
#include "out/writer.h"

enum section {
    SEC_META = 1,
    SEC_MODULES = 2,
    SEC_THREADS = 3,
    SEC_FRAMES = 4,
    SEC_STACKS = 5,
    SEC_SAMPLES = 6,
    SEC_NAMES = 7, /* added later: the frames' names (readers before skip it) */
};

/* ------------------------------------------------------------------------
 * Writing: each section is built in memory, then framed.
 * ---------------------------------------------------------------------- */

struct buf {
    uint8_t *p;
    size_t n, cap;
    bool oom;
};

static void put(struct buf *b, const void *v, size_t len)
{
    if (b->oom)
        return;
    if (b->n + len > b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 4096;
        while (nc < b->n + len)
            nc *= 2;
        uint8_t *np = realloc(b->p, nc);
        if (!np) {
            b->oom = true;
            return;
        }
        b->p = np;
        b->cap = nc;
    }
    memcpy(b->p + b->n, v, len);
    b->n += len;
}

static void put_u8(struct buf *b, uint8_t v) { put(b, &v, 1); }
static void put_u32(struct buf *b, uint32_t v) { put(b, &v, 4); }
static void put_u64(struct buf *b, uint64_t v) { put(b, &v, 8); }
static void put_f64(struct buf *b, double v) { put(b, &v, 8); }

static void put_str(struct buf *b, const char *s)
{
    size_t len = s ? strlen(s) : 0;
    put_u32(b, (uint32_t)len);
    put(b, s, len);
}

static void put_hist(struct buf *b, const struct hist *h)
{
    put_u64(b, h->n);
    put_u64(b, h->sum_ns);
    put_u64(b, h->max_ns);
    for (int i = 0; i < HIST_BUCKETS; i++)
        put_u32(b, h->b[i]);
}

/* Write a section built in memory, and forget its payload. */
static void section(FILE *f, bool *bad, uint32_t type, struct buf *payload)
{
    uint64_t size = payload->n;
    *bad |= payload->oom || fwrite(&type, 4, 1, f) != 1 || fwrite(&size, 8, 1, f) != 1 ||
            (size && fwrite(payload->p, 1, payload->n, f) != payload->n);
    free(payload->p);
    memset(payload, 0, sizeof *payload);
}

#define SAMPLE_BYTES (8 + 4 + 4 + 1 + 1 + 1 + 1 + 2)

/* The samples section, written as it is encoded: the samples are many (a
 * long recording has millions), and never all in memory at once here. */
static bool write_samples(const struct profile *p, FILE *f)
{
    struct prof_iter it;
    struct prof_sample x;
    uint8_t rec[256 * SAMPLE_BYTES];
    size_t n = 0;
    uint32_t type = SEC_SAMPLES, count = (uint32_t)p->nsamples;
    uint64_t size = 4 + (uint64_t)p->nsamples * SAMPLE_BYTES;
    bool ok = fwrite(&type, 4, 1, f) == 1 && fwrite(&size, 8, 1, f) == 1 &&
              fwrite(&count, 4, 1, f) == 1 && profile__iter(p, &it) == 0;
    if (!ok)
        return false;
    while (ok && profile__next(&it, &x)) {
        uint8_t *r = rec + n * SAMPLE_BYTES;
        uint16_t cap = (uint16_t)x.cap;
        memcpy(r, &x.t_ns, 8);
        memcpy(r + 8, &x.thread, 4);
        memcpy(r + 12, &x.stack, 4);
        r[16] = x.tag;
        r[17] = (uint8_t)x.state;
        r[18] = x.flags;
        r[19] = x.role;
        memcpy(r + 20, &cap, 2);
        if (++n == 256) {
            ok = fwrite(rec, SAMPLE_BYTES, n, f) == n;
            n = 0;
        }
    }
    ok = ok && (n == 0 || fwrite(rec, SAMPLE_BYTES, n, f) == n);
    profile__iter_free(&it);
    return ok;
}

/* The frames' names as this machine gave them, for a report made where the
 * files are not (a container's, another machine's): those of a profile
 * named from its files, else those a raw file it was read from saved. */
static const struct frame_sym *names_to_save(const struct profile *p)
{
    if (p->nframes == 0)
        return NULL;
    if (p->syms && p->nnamed == p->nframes)
        return p->syms;
    return p->nsaved == p->nframes ? p->saved : NULL;
}

static void put_names(struct buf *s, const struct frame_sym *names, size_t n)
{
    static const struct frame_sym none;
    put_u32(s, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        const struct frame_sym *fs = names ? &names[i] : &none;
        put_str(s, fs->name);
        put_str(s, fs->symbol);
        put_str(s, fs->unit);
        put_str(s, fs->object);
        put_str(s, fs->file);
        put_str(s, fs->span);
        put_u32(s, (uint32_t)fs->line);
        put_u8(s, fs->lang);
    }
}

/* names_follow: the names section is left to raw__write_names. */
static int write_raw_file(const struct profile *p, bool names_follow, FILE *f)
{
    struct buf s = {0};
    bool bad = false;
    const struct frame_sym *names = names_follow ? NULL : names_to_save(p);
    uint32_t version = RAW_VERSION, nsec = names || names_follow ? 7 : 6;

    bad |= fwrite("HSSPYRAW", 8, 1, f) != 1 || fwrite(&version, 4, 1, f) != 1 ||
           fwrite(&nsec, 4, 1, f) != 1;

    put_u32(&s, (uint32_t)p->pid);
    put_str(&s, p->cmdline);
    put_str(&s, p->ghc_version);
    put_u8(&s, p->launched);
    put_u8(&s, p->exited);
    put_u32(&s, (uint32_t)p->exit_status);
    put_f64(&s, p->rate_hz);
    put_u64(&s, p->start_wall_ns);
    put_u64(&s, p->duration_ns);
    put_u64(&s, p->ticks);
    put_u64(&s, p->missed_ticks);
    put_hist(&s, &p->pause);
    put_hist(&s, &p->stop_latency);
    put_u32(&s, WE__COUNT);
    for (int i = 0; i < WE__COUNT; i++)
        put_u64(&s, p->errors[i]);
    put_u64(&s, p->lost_threads);
    put_u64(&s, p->repeated);
    put_u64(&s, p->self_cpu_ns);
    put_u64(&s, p->signals_forwarded);
    put_u64(&s, p->live_reads);
    put_u64(&s, p->soft);
    put_u64(&s, p->late);
    put_u64(&s, p->restarted);
    put_u8(&s, p->realtime); /* added later: readers take it if present */
    put_u8(&s, p->short_slices); /* later still */
    put_u64(&s, p->soft_breaking); /* and later */
    put_u64(&s, p->soft_refused);
    put_u64(&s, p->soft_short);
    put_u64(&s, p->copied_bytes); /* later again */
    put_u64(&s, p->copied_threads);
    put_u64(&s, p->stop_reads); /* later still */
    put_u64(&s, p->cs_threads); /* and later */
    put_u64(&s, p->cs_refused);
    put_u64(&s, p->cs_losses);
    put_u64(&s, p->cs_busy);
    put_u32(&s, p->cs_errno);
    put_u64(&s, p->fd_short); /* and later */
    put_u64(&s, p->fd_limit);
    put_u8(&s, p->nonblocking); /* and later */
    put_u64(&s, p->ps_samples);
    put_u64(&s, p->ps_stale);
    put_u64(&s, p->ps_lost);
    put_u8(&s, p->cs_cpu_wide); /* and later */
    put_u8(&s, (uint8_t)(int8_t)p->nice); /* and later */
    put_u64(&s, p->first_tick_cpu_ns); /* and later */
    put_u64(&s, p->soft_idle); /* and later */
    put_u64(&s, p->preempt); /* and later */
    put_u64(&s, p->preempt_refused);
    put_u64(&s, p->calls_known); /* and later */
    put_u64(&s, p->pause_switched); /* and later */
    put_u64(&s, p->cs_drains); /* and later */
    put_u64(&s, p->pause_regs_ring); /* and later */
    put_u64(&s, p->pause_prefetched); /* and later */
    put_u64(&s, p->pause_prefetch_missed);
    put_u64(&s, p->stop_reads_waiting); /* and later */
    put_u64(&s, p->beyond_copy); /* and later */
    put_str(&s, p->children); /* and later */
    put_u64(&s, p->soft_again); /* and later */
    put_u64(&s, p->pause_between);
    put_u64(&s, p->handler_entries); /* and later */
    put_u8(&s, p->made_with); /* and later */
    put_u64(&s, p->deferred); /* and later */
    put_u64(&s, p->cap_held); /* and later */
    section(f, &bad, SEC_META, &s);

    put_u32(&s, (uint32_t)p->nmodules);
    for (size_t i = 0; i < p->nmodules; i++) {
        const struct prof_module *m = &p->modules[i];
        put_str(&s, m->path);
        put_u64(&s, m->lo);
        put_u64(&s, m->hi);
        put_u64(&s, (uint64_t)m->bias);
        put_u32(&s, m->build_id_len);
        put(&s, m->build_id, m->build_id_len);
        put_u64(&s, m->blob_len);
        put(&s, m->blob, m->blob_len);
    }
    section(f, &bad, SEC_MODULES, &s);

    put_u32(&s, (uint32_t)p->nthreads);
    for (size_t i = 0; i < p->nthreads; i++) {
        put_u32(&s, (uint32_t)p->threads[i].tid);
        put_str(&s, p->threads[i].comm);
        put_str(&s, p->threads[i].role);
    }
    section(f, &bad, SEC_THREADS, &s);

    put_u32(&s, (uint32_t)p->nframes);
    for (size_t i = 0; i < p->nframes; i++) {
        put_u64(&s, p->frames[i].addr);
        put_u32(&s, p->frames[i].kind);
        put_u32(&s, p->frames[i].aux);
    }
    section(f, &bad, SEC_FRAMES, &s);

    if (names) {
        put_names(&s, names, p->nframes);
        section(f, &bad, SEC_NAMES, &s);
    }

    put_u32(&s, (uint32_t)p->nstacks);
    for (size_t i = 0; i < p->nstacks; i++) {
        uint32_t n;
        const uint32_t *ids = profile__stack_ids(p, (uint32_t)i, &n);
        put_u32(&s, n);
        put(&s, ids, (size_t)n * 4);
    }
    section(f, &bad, SEC_STACKS, &s);

    bad |= !write_samples(p, f);
    return bad ? -1 : 0;
}

static int write_raw(const struct profile *p, const struct out_opts *o, FILE *f)
{
    (void)o;
    return write_raw_file(p, false, f);
}

int raw__write_unnamed(const struct profile *p, FILE *f)
{
    return write_raw_file(p, true, f);
}

int raw__write_names(const struct profile *p, FILE *f)
{
    struct buf s = {0};
    bool bad = false;
    put_names(&s, names_to_save(p), p->nframes);
    section(f, &bad, SEC_NAMES, &s);
    return bad ? -1 : 0;
}

const struct writer writer_raw = {
    .name = "raw",
    .help = "hsspy's own recording: addresses, and names for elsewhere (read with hsspy report FILE)",
    .text = false,
    .write = write_raw,
};

/* ------------------------------------------------------------------------
 * Reading: a cursor that never steps past its end.
 * ---------------------------------------------------------------------- */

struct cur {
    const uint8_t *p;
    size_t left;
    char *err;
    size_t errlen;
    bool bad;
};

static void failf(struct cur *c, const char *fmt, ...)
{
    va_list ap;
    if (c->bad)
        return;
    c->bad = true;
    va_start(ap, fmt);
    vsnprintf(c->err, c->errlen, fmt, ap);
    va_end(ap);
}

static bool get(struct cur *c, void *out, size_t len, const char *what)
{
    if (c->bad)
        return false;
    if (len > c->left) {
        failf(c, "truncated: %s runs past the end of its section", what);
        return false;
    }
    if (out)
        memcpy(out, c->p, len);
    c->p += len;
    c->left -= len;
    return true;
}

static uint8_t get_u8(struct cur *c, const char *w)
{
    uint8_t v = 0;
    get(c, &v, 1, w);
    return v;
}
static uint16_t get_u16(struct cur *c, const char *w)
{
    uint16_t v = 0;
    get(c, &v, 2, w);
    return v;
}
static uint32_t get_u32(struct cur *c, const char *w)
{
    uint32_t v = 0;
    get(c, &v, 4, w);
    return v;
}
static uint64_t get_u64(struct cur *c, const char *w)
{
    uint64_t v = 0;
    get(c, &v, 8, w);
    return v;
}
static double get_f64(struct cur *c, const char *w)
{
    double v = 0;
    get(c, &v, 8, w);
    return v;
}

/* A count of items of at least `min` bytes each that must fit what is left. */
static uint32_t get_count(struct cur *c, size_t min, const char *what)
{
    uint32_t n = get_u32(c, what);
    if (!c->bad && min && n > c->left / min) {
        failf(c, "corrupt: %u %s cannot fit in %zu bytes", n, what, c->left);
        return 0;
    }
    return n;
}

static void get_str(struct cur *c, char *out, size_t size, const char *what)
{
    uint32_t len = get_u32(c, what);
    if (c->bad)
        return;
    if (len > c->left) {
        failf(c, "truncated: %s runs past the end of its section", what);
        return;
    }
    size_t take = len < size - 1 ? len : size - 1;
    memcpy(out, c->p, take);
    out[take] = 0;
    text__clean(out); /* a file is input: its strings can hold any byte */
    c->p += len;
    c->left -= len;
}

static char *get_strdup(struct cur *c, const char *what)
{
    uint32_t len = get_u32(c, what);
    char *s;
    if (c->bad)
        return NULL;
    if (len > c->left || len > (1u << 20)) {
        failf(c, "corrupt: %s of %u bytes", what, len);
        return NULL;
    }
    s = malloc((size_t)len + 1);
    if (!s) {
        failf(c, "out of memory");
        return NULL;
    }
    memcpy(s, c->p, len);
    s[len] = 0;
    c->p += len;
    c->left -= len;
    return s;
}

static void get_hist(struct cur *c, struct hist *h)
{
    h->n = get_u64(c, "a histogram");
    h->sum_ns = get_u64(c, "a histogram");
    h->max_ns = get_u64(c, "a histogram");
    for (int i = 0; i < HIST_BUCKETS; i++)
        h->b[i] = get_u32(c, "a histogram");
}

static void read_meta(struct cur *c, struct profile *p)
{
    p->pid = (pid_t)get_u32(c, "the pid");
    get_str(c, p->cmdline, sizeof p->cmdline, "the command line");
    get_str(c, p->ghc_version, sizeof p->ghc_version, "the GHC version");
    p->launched = get_u8(c, "a flag");
    p->exited = get_u8(c, "a flag");
    p->exit_status = (int)get_u32(c, "the exit status");
    p->rate_hz = get_f64(c, "the rate");
    p->start_wall_ns = get_u64(c, "the start time");
    p->duration_ns = get_u64(c, "the duration");
    p->ticks = get_u64(c, "the ticks");
    p->missed_ticks = get_u64(c, "the missed ticks");
    get_hist(c, &p->pause);
    get_hist(c, &p->stop_latency);
    uint32_t ne = get_count(c, 8, "error counters");
    for (uint32_t i = 0; i < ne && !c->bad; i++) {
        uint64_t v = get_u64(c, "an error counter");
        if (i < WE__COUNT)
            p->errors[i] = v;
    }
    p->lost_threads = get_u64(c, "a counter");
    p->repeated = get_u64(c, "a counter");
    p->self_cpu_ns = get_u64(c, "a counter");
    p->signals_forwarded = get_u64(c, "a counter");
    p->live_reads = get_u64(c, "a counter");
    p->soft = get_u64(c, "a counter");
    p->late = get_u64(c, "a counter");
    p->restarted = get_u64(c, "a counter");
    if (!c->bad && c->left >= 1) /* absent from files of earlier hsspys */
        p->realtime = get_u8(c, "a flag") != 0;
    if (!c->bad && c->left >= 1)
        p->short_slices = get_u8(c, "a flag") != 0;
    if (!c->bad && c->left >= 24) {
        p->soft_breaking = get_u64(c, "a counter");
        p->soft_refused = get_u64(c, "a counter");
        p->soft_short = get_u64(c, "a counter");
    }
    if (!c->bad && c->left >= 16) {
        p->copied_bytes = get_u64(c, "a counter");
        p->copied_threads = get_u64(c, "a counter");
    }
    if (!c->bad && c->left >= 8)
        p->stop_reads = get_u64(c, "a counter");
    if (!c->bad && c->left >= 36) {
        p->cs_threads = get_u64(c, "a counter");
        p->cs_refused = get_u64(c, "a counter");
        p->cs_losses = get_u64(c, "a counter");
        p->cs_busy = get_u64(c, "a counter");
        p->cs_errno = get_u32(c, "an errno");
    }
    if (!c->bad && c->left >= 16) {
        p->fd_short = get_u64(c, "a counter");
        p->fd_limit = get_u64(c, "a limit");
    }
    if (!c->bad && c->left >= 1 + 3 * 8) {
        p->nonblocking = get_u8(c, "a flag") != 0;
        p->ps_samples = get_u64(c, "a counter");
        p->ps_stale = get_u64(c, "a counter");
        p->ps_lost = get_u64(c, "a counter");
    }
    if (!c->bad && c->left >= 1)
        p->cs_cpu_wide = get_u8(c, "a flag") != 0;
    if (!c->bad && c->left >= 1) {
        int n = (int8_t)get_u8(c, "a nice value");
        p->nice = n >= -20 && n <= 19 ? n : 0; /* (nonsense in a corrupt file) */
    }
    if (!c->bad && c->left >= 8) {
        p->first_tick_cpu_ns = get_u64(c, "a counter");
        if (p->first_tick_cpu_ns > p->self_cpu_ns || p->ticks < 2)
            p->first_tick_cpu_ns = 0; /* (nonsense in a corrupt file) */
    }
    if (!c->bad && c->left >= 8)
        p->soft_idle = get_u64(c, "a counter");
    if (!c->bad && c->left >= 16) {
        p->preempt = get_u64(c, "a counter");
        p->preempt_refused = get_u64(c, "a counter");
    }
    if (!c->bad && c->left >= 8)
        p->calls_known = get_u64(c, "a counter");
    if (!c->bad && c->left >= 8)
        p->pause_switched = get_u64(c, "a counter");
    if (!c->bad && c->left >= 8)
        p->cs_drains = get_u64(c, "a counter");
    if (!c->bad && c->left >= 8)
        p->pause_regs_ring = get_u64(c, "a counter");
    if (!c->bad && c->left >= 16) {
        p->pause_prefetched = get_u64(c, "a counter");
        p->pause_prefetch_missed = get_u64(c, "a counter");
    }
    if (!c->bad && c->left >= 8)
        p->stop_reads_waiting = get_u64(c, "a counter");
    if (!c->bad && c->left >= 8)
        p->beyond_copy = get_u64(c, "a counter");
    if (!c->bad && c->left >= 4)
        get_str(c, p->children, sizeof p->children, "the word on children");
    if (!c->bad && c->left >= 8)
        p->soft_again = get_u64(c, "a counter");
    if (!c->bad && c->left >= 8)
        p->pause_between = get_u64(c, "a counter");
    if (!c->bad && c->left >= 8)
        p->handler_entries = get_u64(c, "a counter");
    if (!c->bad && c->left >= 1) {
        p->made_with = get_u8(c, "a flag") & (PROF_MADE_IDLE | PROF_MADE_THREADS | PROF_MADE_CCS);
        p->made_known = true;
    }
    if (!c->bad && c->left >= 8)
        p->deferred = get_u64(c, "a counter");
    if (!c->bad && c->left >= 8)
        p->cap_held = get_u64(c, "a counter");
    if (!(p->rate_hz > 0 && p->rate_hz <= 1e6))
        p->rate_hz = 0; /* nonsense in a corrupt file: say "unknown", not NaN */
}

static void read_modules(struct cur *c, struct profile *p)
{
    uint32_t n = get_count(c, 4 + 8 * 3 + 4 + 8, "modules");
    if (c->bad)
        return;
    p->modules = calloc(n ? n : 1, sizeof *p->modules);
    if (!p->modules) {
        failf(c, "out of memory");
        return;
    }
    for (uint32_t i = 0; i < n && !c->bad; i++) {
        struct prof_module *m = &p->modules[i];
        p->nmodules++; /* counted now: profile__free frees what follows */
        m->path = get_strdup(c, "a module path");
        m->lo = get_u64(c, "a module");
        m->hi = get_u64(c, "a module");
        m->bias = (int64_t)get_u64(c, "a module");
        m->build_id_len = get_u32(c, "a build-id");
        if (m->build_id_len > sizeof m->build_id) {
            failf(c, "corrupt: a build-id of %u bytes", m->build_id_len);
            break;
        }
        get(c, m->build_id, m->build_id_len, "a build-id");
        uint64_t bl = get_u64(c, "a module image");
        if (bl) {
            if (bl > c->left || bl > (16u << 20)) {
                failf(c, "corrupt: a module image of %llu bytes", (unsigned long long)bl);
                break;
            }
            m->blob = malloc(bl);
            if (!m->blob) {
                failf(c, "out of memory");
                break;
            }
            m->blob_len = bl;
            get(c, m->blob, bl, "a module image");
        }
        if (m->hi < m->lo)
            failf(c, "corrupt: module %s ends before it starts", m->path ? m->path : "?");
    }
}

static void read_threads(struct cur *c, struct profile *p)
{
    uint32_t n = get_count(c, 12, "threads");
    for (uint32_t i = 0; i < n && !c->bad; i++) {
        char comm[16], role[64];
        pid_t tid = (pid_t)get_u32(c, "a thread");
        get_str(c, comm, sizeof comm, "a thread name");
        get_str(c, role, sizeof role, "a thread role");
        if (c->bad)
            break;
        /* profile__thread merges repeated tids: a corrupt file could name
         * one tid twice, which must not give two indices to one thread. */
        if (p->nthreads != i) {
            failf(c, "corrupt: thread %d listed twice", (int)tid);
            break;
        }
        int ti = profile__thread(p, tid, comm);
        if (ti < 0) {
            failf(c, "out of memory");
            break;
        }
        if ((uint32_t)ti != i) {
            failf(c, "corrupt: thread %d listed twice", (int)tid);
            break;
        }
        memcpy(p->threads[ti].role, role, sizeof role);
    }
}

/* An optional string: NULL for an empty one. */
static char *get_name_part(struct cur *c, const char *what)
{
    char *v = get_strdup(c, what);
    if (v && !v[0]) {
        free(v);
        v = NULL;
    }
    return v;
}

static void read_names(struct cur *c, struct profile *p)
{
    uint32_t n = get_count(c, 6 * 4 + 4 + 1, "frame names");
    if (c->bad)
        return;
    if (n != p->nframes) {
        failf(c, "corrupt: %u frame names for %zu frames", n, p->nframes);
        return;
    }
    p->saved = calloc(n ? n : 1, sizeof *p->saved);
    if (!p->saved) {
        failf(c, "out of memory");
        return;
    }
    p->nsaved = n; /* counted now: profile__free frees what follows */
    for (uint32_t i = 0; i < n && !c->bad; i++) {
        struct frame_sym *fs = &p->saved[i];
        fs->name = get_name_part(c, "a frame name");
        fs->symbol = get_name_part(c, "a frame name");
        fs->unit = get_name_part(c, "a frame name");
        fs->object = get_name_part(c, "a frame name");
        fs->file = get_name_part(c, "a frame name");
        fs->span = get_name_part(c, "a frame name");
        fs->line = (int)get_u32(c, "a frame name");
        fs->lang = get_u8(c, "a frame name");
        if (fs->lang > LANG_NONE)
            failf(c, "corrupt: frame name %u has language %u", i, fs->lang);
        profile__clean_sym(fs);
        /* (an empty name: none saved for that frame) */
    }
}

static void read_frames(struct cur *c, struct profile *p)
{
    uint32_t n = get_count(c, 16, "frames");
    for (uint32_t i = 0; i < n && !c->bad; i++) {
        struct raw_frame f;
        f.addr = get_u64(c, "a frame");
        f.kind = get_u32(c, "a frame");
        f.aux = get_u32(c, "a frame");
        if (c->bad)
            break;
        if (f.kind >= FK__COUNT) {
            failf(c, "corrupt: frame %u has kind %u", i, f.kind);
            break;
        }
        /* Frames are stored interned; a corrupt file could repeat one, which
         * would shift every id after it. */
        int64_t id = profile__stack(p, &f, 1);
        if (id < 0 || p->nframes != i + 1) {
            failf(c, id < 0 ? "out of memory" : "corrupt: frame %u is a repeat", i);
            break;
        }
    }
    /* profile__stack made one-frame stacks as a side effect: start the stack
     * table afresh (the frames stay). */
    p->nstacks = 0;
    p->nids = 0;
    memset(p->stack_hash, 0xff, p->stack_hash_size * sizeof *p->stack_hash);
}

static void read_stacks(struct cur *c, struct profile *p, struct raw_frame *tmp)
{
    uint32_t n = get_count(c, 4, "stacks");
    for (uint32_t i = 0; i < n && !c->bad; i++) {
        uint32_t len = get_u32(c, "a stack");
        if (c->bad)
            break;
        if (len > MAX_FRAMES + 8) {
            failf(c, "corrupt: stack %u has %u frames", i, len);
            break;
        }
        for (uint32_t k = 0; k < len && !c->bad; k++) {
            uint32_t id = get_u32(c, "a stack");
            if (!c->bad && id >= p->nframes) {
                failf(c, "corrupt: stack %u names frame %u of %zu", i, id, p->nframes);
                break;
            }
            tmp[k] = p->frames[id];
        }
        if (c->bad)
            break;
        int64_t sid = profile__stack(p, tmp, (int)len);
        if (sid < 0 || p->nstacks != i + 1) {
            failf(c, sid < 0 ? "out of memory" : "corrupt: stack %u is a repeat", i);
            break;
        }
    }
}

/* count sample records from c, the first of them number `first`. */
static void read_sample_records(struct cur *c, struct profile *p, uint32_t first, uint32_t count)
{
    for (uint32_t i = first; i < first + count && !c->bad; i++) {
        struct prof_sample s = {0};
        s.t_ns = get_u64(c, "a sample");
        s.thread = get_u32(c, "a sample");
        s.stack = get_u32(c, "a sample");
        s.tag = get_u8(c, "a sample");
        s.state = (char)get_u8(c, "a sample");
        s.flags = get_u8(c, "a sample");
        s.role = get_u8(c, "a sample");
        s.cap = (int16_t)get_u16(c, "a sample");
        if (c->bad)
            break;
        if (s.thread >= p->nthreads || s.stack >= p->nstacks || s.tag >= TAG__COUNT ||
            s.role >= ROLE__COUNT) {
            failf(c, "corrupt: sample %u refers to thread %u, stack %u, tag %u", i, s.thread,
                  s.stack, s.tag);
            break;
        }
        /* (Taken while it recorded: a time far past its end is damage, which
         * a trace would draw hours long.) */
        if (p->duration_ns && s.t_ns > p->duration_ns + p->duration_ns / 10 + 1000000000ull) {
            failf(c, "corrupt: sample %u at %.1f s of a %.1f s recording", i, (double)s.t_ns / 1e9,
                  (double)p->duration_ns / 1e9);
            break;
        }
        /* A /proc state letter, '?' or none: it is printed as it is. */
        if (s.state && s.state != '?' && !((s.state >= 'A' && s.state <= 'Z') ||
                                           (s.state >= 'a' && s.state <= 'z'))) {
            failf(c, "corrupt: sample %u has thread state %u", i, (unsigned char)s.state);
            break;
        }
        if (profile__add(p, &s) < 0)
            failf(c, "out of memory");
    }
}

/* Where a raw file's bytes come from: memory, or a file read a piece at a
 * time (a recording of millions of samples is never all in memory). */
struct src {
    const uint8_t *mem; /* memory: the bytes not taken yet */
    FILE *f;            /* or a file, `left` bytes of it still to read */
    uint8_t *buf;       /* the file's piece last taken */
    size_t cap;
    size_t left;
};

/* The next len bytes (valid until the next call), or NULL if fewer are
 * left, the file cannot be read, or memory runs out. */
static const uint8_t *take(struct src *s, size_t len)
{
    if (len > s->left)
        return NULL;
    s->left -= len;
    if (!s->f) {
        const uint8_t *p = s->mem;
        s->mem += len;
        return p;
    }
    if (len > s->cap) {
        uint8_t *nb = realloc(s->buf, len);
        if (!nb)
            return NULL;
        s->buf = nb;
        s->cap = len;
    }
    return len == 0 || fread(s->buf, 1, len, s->f) == len ? s->buf : NULL;
}

/* Sample records at a time read from a file: a multiple of the record. */
#define SAMPLES_PER_PIECE 4096

static void parse(struct src *src, struct profile *p, char *err, size_t errlen, struct cur *c)
{
    struct raw_frame *tmp = malloc((MAX_FRAMES + 8) * sizeof *tmp);
    bool seen[7] = {false};
    size_t have = src->left < 16 ? src->left : 16;
    const uint8_t *h = take(src, have);

    if (!tmp) {
        failf(c, "out of memory");
        return;
    }
    if (have == 0) {
        failf(c, "empty: there is no recording in it");
        goto out;
    }
    if (h && have >= 2 && h[0] == 0x1f && h[1] == 0x8b) {
        failf(c, "compressed with gzip: pipe it through zcat into hsspy report -");
        goto out;
    }
    if (!h || memcmp(h, "HSSPYRAW", have < 8 ? have : 8) != 0) {
        failf(c, "not an hsspy raw file");
        goto out;
    }
    if (have < 16) {
        failf(c, "truncated: the file ends in its header (%zu bytes)", have);
        goto out;
    }
    uint32_t version, nsec;
    memcpy(&version, h + 8, 4);
    memcpy(&nsec, h + 12, 4);
    if (version != RAW_VERSION) {
        failf(c, "raw format version %u; this hsspy reads version %d", version, RAW_VERSION);
        goto out;
    }
    for (uint32_t i = 0; i < nsec && !c->bad; i++) {
        const uint8_t *sh = take(src, 12);
        uint32_t type;
        uint64_t size;
        if (!sh) {
            failf(c, "truncated: the file ends before its section %u of %u", i + 1, nsec);
            break;
        }
        memcpy(&type, sh, 4);
        memcpy(&size, sh + 4, 8);
        if (size > src->left) {
            failf(c, "truncated: section %u needs %llu bytes, %zu are left", type,
                  (unsigned long long)size, src->left);
            break;
        }
        /* Sections refer to earlier ones (samples to stacks to frames):
         * each may appear once, in order. */
        if (type >= 1 && type <= 6) {
            if (seen[type] || (type > 1 && !seen[type - 1])) {
                failf(c, "corrupt: section %u out of order", type);
                break;
            }
            seen[type] = true;
        }
        if (type == SEC_SAMPLES) {
            /* A piece at a time: count, then records. */
            const uint8_t *q = size >= 4 ? take(src, 4) : NULL;
            uint32_t n = 0;
            if (!q) {
                failf(c, "truncated: samples runs past the end of its section");
                break;
            }
            memcpy(&n, q, 4);
            uint64_t rest = size - 4;
            if (n > rest / SAMPLE_BYTES) {
                failf(c, "corrupt: %u samples cannot fit in %llu bytes", n,
                      (unsigned long long)rest);
                break;
            }
            for (uint32_t done = 0; done < n && !c->bad;) {
                uint32_t k = n - done < SAMPLES_PER_PIECE ? n - done : SAMPLES_PER_PIECE;
                const uint8_t *piece = take(src, (size_t)k * SAMPLE_BYTES);
                if (!piece) {
                    failf(c, "truncated: a sample runs past the end of its section");
                    break;
                }
                struct cur pc = {piece, (size_t)k * SAMPLE_BYTES, err, errlen, false};
                read_sample_records(&pc, p, done, k);
                c->bad |= pc.bad;
                done += k;
            }
            rest -= (uint64_t)n * SAMPLE_BYTES;
            if (!c->bad && rest && !take(src, (size_t)rest)) /* trailing bytes */
                failf(c, "truncated: section %u", type);
            continue;
        }
        const uint8_t *payload = take(src, (size_t)size);
        if (!payload) {
            failf(c, src->f ? "cannot read section %u" : "truncated: section %u", type);
            break;
        }
        struct cur sc = {payload, (size_t)size, err, errlen, false};
        switch (type) {
        case SEC_META: read_meta(&sc, p); break;
        case SEC_MODULES: read_modules(&sc, p); break;
        case SEC_THREADS: read_threads(&sc, p); break;
        case SEC_FRAMES: read_frames(&sc, p); break;
        case SEC_STACKS: read_stacks(&sc, p, tmp); break;
        case SEC_NAMES:
            if (!seen[SEC_FRAMES] || p->saved)
                failf(c, "corrupt: section %u out of order", type);
            else
                read_names(&sc, p);
            break;
        default: break; /* a later version's section */
        }
        c->bad |= sc.bad;
    }
    if (!c->bad && !seen[SEC_SAMPLES])
        failf(c, "truncated: the file ends before its samples");
    if (!c->bad && src->left)
        failf(c, "corrupt: %zu bytes after its last section (two files in one?)", src->left);
out:
    free(tmp);
}

int raw__parse(const uint8_t *buf, size_t len, struct profile *p, char *err, size_t errlen)
{
    struct src src = {.mem = buf, .left = len};
    struct cur c = {NULL, 0, err, errlen, false};

    if (profile__init(p) < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    parse(&src, p, err, errlen, &c);
    if (c.bad) {
        profile__free(p);
        return -1;
    }
    return 0;
}

/* All of fd (a pipe, a terminal), in memory: its length in *len, or NULL
 * (errno set). */
static uint8_t *read_all(int fd, size_t *len)
{
    size_t n = 0, cap = 1 << 16;
    uint8_t *buf = malloc(cap);
    while (buf) {
        if (n == cap) {
            uint8_t *nb = cap < SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
            if (!nb) {
                free(buf);
                errno = ENOMEM;
                return NULL;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            errno = e;
            return NULL;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    *len = n;
    return buf;
}

int raw__read(const char *path, struct profile *p, char *err, size_t errlen)
{
    bool in = strcmp(path, "-") == 0;
    FILE *f = in ? stdin : fopen(path, "rb");
    struct stat st;
    struct cur c = {NULL, 0, err, errlen, false};

    if (!f) {
        snprintf(err, errlen, "%s", strerror(errno));
        return -1;
    }
    if (fstat(fileno(f), &st) < 0 || S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s", S_ISDIR(st.st_mode) ? "a directory" : strerror(errno));
        if (!in)
            fclose(f);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        /* A pipe (zcat run.hsspy.gz | hsspy report -), standard input:
         * read whole, then parsed from memory. */
        size_t len;
        uint8_t *buf = read_all(fileno(f), &len);
        int e = errno;
        if (!in)
            fclose(f);
        if (!buf) {
            snprintf(err, errlen, "%s", strerror(e));
            return -1;
        }
        int rc = raw__parse(buf, len, p, err, errlen);
        free(buf);
        return rc;
    }
    struct src src = {.f = f, .left = (size_t)st.st_size};
    if (profile__init(p) < 0) {
        snprintf(err, errlen, "out of memory");
        if (!in)
            fclose(f);
        return -1;
    }
    parse(&src, p, err, errlen, &c);
    if (!c.bad && ferror(f))
        failf(&c, "read error");
    free(src.buf);
    if (!in)
        fclose(f);
    if (c.bad) {
        profile__free(p);
        return -1;
    }
    return 0;
}
