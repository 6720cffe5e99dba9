/* The profile store and the writers, on hand-built profiles: exact folded
 * text, interning, --threads roots, tag frames, idle filtering; the calls
 * analysis's exact counts (recursion, pseudo-functions, --sort); the
 * trace's merged, nested intervals; incremental naming of new frames only,
 * including frames in a library loaded after the module set was built. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "out/profile.h"
#include "out/writer.h"
#include "tests/unit/unit.h"

/* Give frame ids the given names, as profile__symbolize would. */
static void name_frames(struct profile *p, const char *const *names)
{
    p->syms = calloc(p->nframes, sizeof *p->syms);
    p->cap_syms = p->nnamed = p->nframes;
    for (size_t i = 0; i < p->nframes; i++)
        p->syms[i].name = strdup(names[p->frames[i].addr]);
}

static char *render(const struct profile *p, const char *fmt, struct out_opts o)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    writer__find(fmt)->write(p, &o, f);
    fclose(f);
    return buf;
}

/* The walker decides idleness (the /proc state for C programs, the tag
 * for GHC ones) and sets SAMPLE_IDLE; writers only read the flag.
 * Frames use their addr as an index into names (innermost first). */
static void add(struct profile *p, int thread, const int *addrs, int n, int tag, char state,
                bool idle, int times)
{
    struct raw_frame f[16];
    for (int i = 0; i < n; i++)
        f[i] = (struct raw_frame){(uint64_t)addrs[i], FK_RET, 0};
    int64_t st = profile__stack(p, f, n);
    for (int k = 0; k < times; k++) {
        struct prof_sample s = {.thread = (uint32_t)thread, .stack = (uint32_t)st,
                                .tag = (uint8_t)tag, .state = state, .cap = -1};
        if (idle)
            s.flags = SAMPLE_IDLE;
        profile__add(p, &s);
    }
}

/* The compact sample stream gives back every field of every sample, in
 * order: threads past the one-byte index, times going backwards (a tick's
 * samples of threads that did not run come before the others), huge
 * stacks and times, every capability, and samples repeating their
 * thread's previous one. */
TEST(sample_stream)
{
    struct profile p;
    profile__init(&p);
    for (int t = 0; t < 300; t++)
        profile__thread(&p, 1000 + t, "w");
    static struct prof_sample want[20000];
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < 20000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        struct prof_sample s = {0};
        if (i && x % 3 == 0) { /* a repeat of some thread's last sample, later */
            s = want[i - 1 - (x >> 8) % (i < 50 ? i : 50)];
            s.t_ns += x % 2 ? 0 : 1000;
        } else {
            s.t_ns = (x >> 20) % 4 == 0 ? UINT64_MAX - (x % 1000) : (uint64_t)i * 1000000 - x % 5000;
            s.thread = (uint32_t)((x >> 4) % 300);
            s.stack = (uint32_t)(x % 5 == 0 ? UINT32_MAX - (x >> 40) % 7 : (x >> 12) % 1000);
            s.tag = (uint8_t)((x >> 24) % TAG__COUNT);
            s.state = "RSDT?"[(x >> 28) % 5];
            s.flags = (uint8_t)((x >> 31) % 2);
            s.role = (uint8_t)((x >> 33) % ROLE__COUNT);
            uint64_t k = (x >> 36) % 7;
            s.cap = (int16_t)(k == 0 ? -1 : k == 1 ? INT16_MAX : (int)((x >> 40) % 64));
        }
        want[i] = s;
        CHECK_EQ_INT(profile__add(&p, &s), 0);
    }
    CHECK_EQ_INT(p.nsamples, 20000);
    CHECK(p.slen < 20000 * sizeof(struct prof_sample) / 2);
    struct prof_iter it;
    struct prof_sample got;
    CHECK_EQ_INT(profile__iter(&p, &it), 0);
    for (size_t i = 0; i < 20000; i++) {
        CHECK(profile__next(&it, &got));
        if (got.t_ns != want[i].t_ns || got.thread != want[i].thread ||
            got.stack != want[i].stack || got.tag != want[i].tag ||
            got.state != want[i].state || got.flags != want[i].flags ||
            got.role != want[i].role || got.cap != want[i].cap)
            UNIT_FAIL("sample %zu differs", i);
    }
    CHECK(!profile__next(&it, &got));
    profile__iter_free(&it);
    /* A sample of no thread is refused. */
    CHECK(profile__add(&p, &(struct prof_sample){.thread = 300}) < 0);
    profile__free(&p);
}

/* Long texts: where they first differ, with some of each from there. */
#define CHECK_SAME_TEXT(got, want)                                                          \
    do {                                                                                    \
        const char *g_ = (got), *w_ = (want);                                               \
        size_t i_ = 0;                                                                      \
        while (g_ && g_[i_] && g_[i_] == w_[i_])                                            \
            i_++;                                                                           \
        if (!g_ || g_[i_] != w_[i_])                                                        \
            UNIT_FAIL("differs at byte %zu: \"%.80s\", expected \"%.80s\"", i_,            \
                      g_ ? g_ + i_ : "(null)", w_ + i_);                                    \
    } while (0)

static const char *const NAMES[] = {"leaf", "middle", "outer", "main", "wo;rker", "poll"};

TEST(folded_exact)
{
    struct profile p;
    profile__init(&p);
    int t0 = profile__thread(&p, 100, "prog");
    int t1 = profile__thread(&p, 101, "prog-w");
    add(&p, t0, (int[]){0, 1, 2, 3}, 4, TAG_NONE, 'R', false, 3);
    add(&p, t1, (int[]){0, 1, 2, 4}, 4, TAG_NONE, 'R', false, 2);
    add(&p, t1, (int[]){5, 4}, 2, TAG_NONE, 'S', true, 7);
    name_frames(&p, NAMES);
    CHECK_EQ_INT(p.nstacks, 3);
    CHECK_EQ_INT(p.nframes, 6);

    char *s = render(&p, "folded", (struct out_opts){false, false, OUT_SORT_ACC});
    CHECK_EQ_STR(s, "main;outer;middle;leaf 3\n"
                    "wo:rker;outer;middle;leaf 2\n");
    free(s);
    s = render(&p, "folded", (struct out_opts){false, true, OUT_SORT_ACC});
    CHECK_EQ_STR(s, "main;outer;middle;leaf 3\n"
                    "wo:rker;outer;middle;leaf 2\n"
                    "wo:rker;poll 7\n");
    free(s);
    s = render(&p, "folded", (struct out_opts){true, false, OUT_SORT_ACC});
    CHECK_EQ_STR(s, "tid 100 (prog);main;outer;middle;leaf 3\n"
                    "tid 101 (prog-w);wo:rker;outer;middle;leaf 2\n");
    free(s);
    profile__free(&p);
}

TEST(folded_merges_same_names)
{
    struct profile p;
    profile__init(&p);
    int t0 = profile__thread(&p, 7, "x");
    /* Different addresses, same function names: one folded line. */
    add(&p, t0, (int[]){0, 3}, 2, TAG_NONE, 'R', false, 1);
    add(&p, t0, (int[]){0, 3}, 2, TAG_NONE, 'R', false, 1);
    name_frames(&p, (const char *const[]){"f", "f", "f", "g"});
    struct raw_frame other[2] = {{1, FK_RET, 0}, {3, FK_RET, 0}};
    int64_t st = profile__stack(&p, other, 2);
    CHECK_EQ_INT(st, 1);
    /* Name the new frame too (interning gave it an empty slot). */
    CHECK(p.syms[p.nframes - 1].name == NULL);
    p.syms[p.nframes - 1] = (struct frame_sym){.name = strdup("f")};
    profile__add(&p, &(struct prof_sample){.thread = 0, .stack = 1, .state = 'R'});
    char *s = render(&p, "folded", (struct out_opts){false, false, OUT_SORT_ACC});
    CHECK_EQ_STR(s, "g;f 3\n");
    free(s);
    profile__free(&p);
}

TEST(folded_merges_running_code_and_its_frame)
{
    struct profile p;
    profile__init(&p);
    int t0 = profile__thread(&p, 7, "x");
    /* The running code and the same function's frame under it, of Haskell
     * code and of the runtime's Cmm, one frame each; two C calls of one
     * function (recursion) stay two, as do two C functions named stg_. */
    add(&p, t0, (int[]){0, 1, 2, 3, 4, 5}, 6, TAG_NONE, 'R', false, 1);
    add(&p, t0, (int[]){6, 7, 5}, 3, TAG_NONE, 'R', false, 1);
    add(&p, t0, (int[]){8, 9, 5}, 3, TAG_NONE, 'R', false, 1);
    name_frames(&p, (const char *const[]){"stg_compactAddWorkerzh", "stg_compactAddWorkerzh",
                                          "stg_compactAddzh", "Main.go", "Main.go", "main",
                                          "evacuate", "evacuate", "stg_exit", "stg_exit"});
    for (size_t i = 0; i < p.nframes; i++) {
        uint64_t a = p.frames[i].addr;
        p.syms[i].lang = a <= 2 || a >= 6 ? LANG_RTS : a <= 4 ? LANG_HASKELL : LANG_C;
        if (a >= 8)
            p.syms[i].lang = LANG_C; /* (a C function with such a name) */
    }
    char *s = render(&p, "folded", (struct out_opts){false, false, OUT_SORT_ACC});
    CHECK_EQ_STR(s, "main;Main.go;stg_compactAddzh;stg_compactAddWorkerzh 1\n"
                    "main;evacuate;evacuate 1\n"
                    "main;stg_exit;stg_exit 1\n");
    free(s);
    profile__free(&p);
}

TEST(tag_frames_follow_thread_root)
{
    struct profile p;
    profile__init(&p);
    int t0 = profile__thread(&p, 5, "hs");
    add(&p, t0, (int[]){0, 3}, 2, TAG_HASKELL, 'R', false, 2);
    add(&p, t0, (int[]){5}, 1, TAG_SAFE_FFI, 'S', false, 1);
    name_frames(&p, NAMES);
    char *s = render(&p, "folded", (struct out_opts){true, false, OUT_SORT_ACC});
    /* A safe-FFI sample sleeping in the kernel is not idle for a GHC
     * program: only the flag decides, not the state. */
    CHECK_EQ_STR(s, "tid 5 (hs);[haskell];main;leaf 2\n"
                    "tid 5 (hs);[safe-ffi];poll 1\n");
    free(s);
    profile__free(&p);
}

TEST(report_counts_threads)
{
    struct profile p;
    profile__init(&p);
    p.pid = 42;
    strcpy(p.cmdline, "./prog --flag");
    p.rate_hz = 99;
    p.duration_ns = 2000000000;
    p.ticks = 10;
    int t0 = profile__thread(&p, 42, "prog");
    add(&p, t0, (int[]){0, 1, 3}, 3, TAG_NONE, 'R', false, 6);
    add(&p, t0, (int[]){1, 3}, 2, TAG_NONE, 'R', false, 2);
    add(&p, t0, (int[]){5, 3}, 2, TAG_NONE, 'S', true, 2);
    name_frames(&p, NAMES);
    char *s = render(&p, "report", (struct out_opts){false, false, OUT_SORT_ACC});
    CHECK(strstr(s, "pid 42: ./prog --flag"));
    CHECK(strstr(s, "99 Hz asked, 5.0 Hz achieved"));
    CHECK(strstr(s, "thread 42 (prog): 10 samples, on CPU 80.0%, 8 shown"));
    /* -F takes rates below 1 Hz: asked as given, not "0 Hz". */
    p.rate_hz = 0.5;
    char *slow = render(&p, "report", (struct out_opts){false, false, OUT_SORT_ACC});
    CHECK(strstr(slow, "rate:      0.5 Hz asked, 5.0 Hz achieved"));
    free(slow);
    p.rate_hz = 99;
    CHECK(strstr(s, "     75.0%  leaf\n"));
    CHECK(strstr(s, "     25.0%  middle\n"));
    CHECK(strstr(s, "    100.0%  main\n"));
    CHECK(!strstr(s, "poll"));
    free(s);
    profile__free(&p);
}

/* hsspy's CPU per tick is the steady one: the first tick (every thread's
 * first stop and full read) apart, where the recording has it. */
TEST(report_cpu_per_tick_after_the_first)
{
    struct profile p;
    profile__init(&p);
    p.rate_hz = 100;
    p.duration_ns = 1000000000;
    p.ticks = 101;
    p.nice = -10;
    p.self_cpu_ns = 45000000; /* 4.5% of one CPU */
    p.first_tick_cpu_ns = 25000000;
    char *s = render(&p, "report", (struct out_opts){false, false, OUT_SORT_ACC});
    CHECK(strstr(s, "hsspy:     4.5% of one CPU while recording (200 us per tick after the first, "
                    "which took 25.0 ms), at nice -10\n"));
    free(s);
    p.first_tick_cpu_ns = 0; /* a recording of an earlier hsspy: all ticks alike */
    s = render(&p, "report", (struct out_opts){false, false, OUT_SORT_ACC});
    CHECK(strstr(s, "4.5% of one CPU while recording (446 us per tick), at nice -10\n"));
    free(s);
    profile__free(&p);
}

/* An empty recording (the program exited at once) gives no per-tick cost
 * of hsspy (was "53.4% of one CPU ... (0 us per tick)"); one sample of one
 * thread is said in the singular; a recording of cost-centre stacks says
 * so. */
TEST(report_header_words)
{
    struct profile p;
    profile__init(&p);
    p.rate_hz = 99;
    p.duration_ns = 3000000;
    p.self_cpu_ns = 1600000;
    snprintf(p.ghc_version, sizeof p.ghc_version, "9.0.2");
    char *s = render(&p, "report", (struct out_opts){false, false, OUT_SORT_ACC});
    CHECK(!strstr(s, "of one CPU"));
    CHECK(strstr(s, "samples:   0 thread samples from 0 threads\n"));
    CHECK(strstr(s, "runtime:   GHC 9.0.2\n"));
    free(s);
    p.ticks = 1;
    p.made_with = PROF_MADE_CCS;
    int t0 = profile__thread(&p, 42, "prog");
    add(&p, t0, (int[]){0, 1}, 2, TAG_HASKELL, 'R', false, 1);
    name_frames(&p, NAMES);
    s = render(&p, "report", (struct out_opts){false, false, OUT_SORT_ACC});
    CHECK(strstr(s, "of one CPU"));
    CHECK(strstr(s, "samples:   1 thread sample from 1 thread\n"));
    CHECK(strstr(s, "runtime:   GHC 9.0.2; Haskell stacks: cost-centre stacks (--stack ccs)\n"));
    free(s);
    /* Stops, not threads: a thread may stop late at many ticks. And the
     * ticks put off to keep hsspy to half a CPU, said with its CPU. */
    p.late = 1003;
    p.cap_held = 7;
    s = render(&p, "report", (struct out_opts){false, false, OUT_SORT_ACC});
    CHECK(strstr(s, "late:      1003 times a thread stopped after its tick (waiting for a CPU), "
                    "sampled then\n"));
    CHECK(strstr(s, "; held to half a CPU 7 times, the next tick put off (the ticks that could "
                    "not come in time are among the missed)\n"));
    free(s);
    profile__free(&p);
}

/* Switch records refused: the errno said, or, for rings without locked
 * memory (mmap's EPERM, read before as a perf event refused), that. */
TEST(report_switches_refused)
{
    struct profile p;
    profile__init(&p);
    p.rate_hz = 99;
    p.cs_refused = 2;
    p.cs_errno = 13;
    char *s = render(&p, "report", (struct out_opts){false, false, OUT_SORT_ACC});
    CHECK(strstr(s, "told by /proc for all 2 (perf events refused: Permission denied)\n"));
    free(s);
    p.cs_errno = PROF_CS_ELOCKED;
    s = render(&p, "report", (struct out_opts){false, false, OUT_SORT_ACC});
    CHECK(strstr(s, "told by /proc for all 2 (perf events refused: their rings' locked memory is "
                    "used up: perf_event_mlock_kb, ulimit -l)\n"));
    free(s);
    profile__free(&p);
}

TEST(speedscope_exact)
{
    struct profile p;
    profile__init(&p);
    p.pid = 42;
    strcpy(p.cmdline, "./prog \"x\"");
    p.rate_hz = 100;
    p.duration_ns = 2000000000;
    p.ticks = 10;
    int t0 = profile__thread(&p, 42, "prog");
    int t1 = profile__thread(&p, 43, "w\xff"); /* cleaned as it enters: "w?" */
    strcpy(p.threads[t0].role, "capability 0");
    add(&p, t0, (int[]){0, 1, 3}, 3, TAG_HASKELL, 'R', false, 2);
    add(&p, t0, (int[]){1, 3}, 2, TAG_NONE, 'R', false, 1);
    add(&p, t1, (int[]){4, 1, 3}, 3, TAG_HASKELL, 'R', false, 4);
    add(&p, t1, (int[]){5}, 1, TAG_IDLE, 'S', true, 2);
    /* Two frames named leaf in a.c, on lines 7 and 9: one speedscope
     * frame, without a line; middle has one line, kept. */
    name_frames(&p, (const char *const[]){"leaf", "middle", "outer", "main", "leaf", "poll"});
    for (size_t i = 0; i < p.nframes; i++) {
        uint64_t a = p.frames[i].addr;
        if (a == 0 || a == 4 || a == 1)
            p.syms[i].file = strdup("a.c");
        p.syms[i].line = a == 0 ? 7 : a == 4 ? 9 : a == 1 ? 20 : 0;
    }
    char *s = render(&p, "speedscope", (struct out_opts){true, false, OUT_SORT_ACC});
    CHECK_SAME_TEXT(s,
        "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
        "\"name\":\"hsspy: pid 42: ./prog \\\"x\\\"; samples: 7 thread samples (idle threads' "
        "samples left out; --idle keeps them); rate: 100 Hz asked, 5.0 Hz achieved; ticks: 10, "
        "0 missed; errors: 0; duration: 2.00 s\",\n"
        "\"exporter\":\"hsspy " HSSPY_VERSION "\",\n"
        "\"activeProfileIndex\":0,\n"
        "\"shared\":{\"frames\":[\n"
        "{\"name\":\"[haskell]\"},\n"
        "{\"name\":\"main\"},\n"
        "{\"name\":\"middle\",\"file\":\"a.c\",\"line\":20},\n"
        "{\"name\":\"leaf\",\"file\":\"a.c\"}]},\n"
        "\"profiles\":[\n"
        "{\"type\":\"sampled\",\"name\":\"tid 43 w?\",\"unit\":\"none\",\"startValue\":0,"
        "\"endValue\":4,\n"
        "\"samples\":[[0,1,2,3],\n[0,1,2,3],\n[0,1,2,3],\n[0,1,2,3]],\n"
        "\"weights\":[1,1,1,1]},\n"
        "{\"type\":\"sampled\",\"name\":\"tid 42 prog (capability 0)\",\"unit\":\"none\","
        "\"startValue\":0,\"endValue\":3,\n"
        "\"samples\":[[0,1,2,3],\n[0,1,2,3],\n[1,2]],\n"
        "\"weights\":[1,1,1]}]}\n");
    free(s);
    profile__free(&p);
}

TEST(histogram_quantiles)
{
    struct hist h = {0};
    for (int i = 1; i <= 1000; i++)
        hist__add(&h, (uint64_t)i * 1000); /* 1..1000 µs */
    uint64_t med = hist__quantile(&h, 0.5), p99 = hist__quantile(&h, 0.99);
    /* Buckets are 1/8 of a doubling wide: within 12.5%. */
    CHECK(med >= 500000 && med <= 570000);
    CHECK(p99 >= 990000 && p99 <= 1000000);
    CHECK_EQ_INT(h.max_ns, 1000000);
}

TEST(many_stacks_rehash)
{
    struct profile p;
    profile__init(&p);
    int t = profile__thread(&p, 1, "a");
    for (int i = 0; i < 20000; i++) {
        struct raw_frame f[2] = {{(uint64_t)i, FK_PC, 0}, {7, FK_RET, 0}};
        int64_t id = profile__stack(&p, f, 2);
        CHECK_EQ_INT(id, i);
        profile__add(&p, &(struct prof_sample){.thread = (uint32_t)t, .stack = (uint32_t)id});
    }
    for (int i = 0; i < 20000; i += 997) {
        struct raw_frame f[2] = {{(uint64_t)i, FK_PC, 0}, {7, FK_RET, 0}};
        CHECK_EQ_INT(profile__stack(&p, f, 2), i);
    }
    CHECK_EQ_INT(p.nframes, 20001);
    profile__free(&p);
}

/* -f calls, read back as its documented one-row-per-line form. */
struct calls_row {
    char name[64];
    unsigned long long cnt, acc, own;
};
struct calls_para {
    struct calls_row callers[8], fn, callees[8];
    int ncallers, ncallees;
};

/* One row: a three-character opening, "name", CNT, ACC, ACC%, OWN, OWN%. */
static bool parse_row(const char *line, struct calls_row *r)
{
    const char *q = line + 3, *e;
    double sa, so;
    if (strlen(line) < 4 || *q != '"' || !(e = strchr(q + 1, '"')) ||
        (size_t)(e - q - 1) >= sizeof r->name)
        return false;
    memcpy(r->name, q + 1, (size_t)(e - q - 1));
    r->name[e - q - 1] = 0;
    return sscanf(e + 1, ", %llu, %llu, %lf, %llu, %lf}", &r->cnt, &r->acc, &sa, &r->own,
                  &so) == 5;
}

/* Every paragraph of an output, in order; returns how many. */
static int parse_calls(const char *out, struct calls_para *v, int max)
{
    int n = 0;
    bool after_fn = false;
    for (const char *l = out; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        char line[256];
        size_t len = strcspn(l, "\n");
        if (len >= sizeof line)
            return -1;
        memcpy(line, l, len);
        line[len] = 0;
        if (strncmp(line, "{[", 2) == 0) { /* a paragraph opens */
            if (n == max)
                return -1;
            memset(&v[n++], 0, sizeof *v);
            after_fn = false;
            if (strcmp(line, "{[],") == 0)
                continue;
        }
        if (n == 0 || line[0] == '%' || strcmp(line, " []}.") == 0 || !line[0])
            continue;
        struct calls_para *p = &v[n - 1];
        struct calls_row r;
        if (!parse_row(line, &r))
            return -1;
        if (strncmp(line, " { ", 3) == 0) {
            p->fn = r;
            after_fn = true;
        } else if (!after_fn && p->ncallers < 8) {
            p->callers[p->ncallers++] = r;
        } else if (after_fn && p->ncallees < 8) {
            p->callees[p->ncallees++] = r;
        } else {
            return -1;
        }
    }
    return n;
}

static const struct calls_para *para_of(const struct calls_para *v, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(v[i].fn.name, name) == 0)
            return &v[i];
    return NULL;
}

static bool row_is(const struct calls_row *r, const char *name, unsigned long long cnt,
                   unsigned long long acc, unsigned long long own)
{
    return strcmp(r->name, name) == 0 && r->cnt == cnt && r->acc == acc && r->own == own;
}

/* [haskell];main;outer;middle;leaf x3, [haskell];main;rec;middle;rec;leaf
 * x2 (indirect recursion), [unsafe-ffi];main;rec;rec;rec x4 (direct, at
 * the leaf: the call rec->rec twice in each), and an idle [idle];main;poll
 * x5 on the second thread. */
static void calls_profile(struct profile *p)
{
    profile__init(p);
    p->pid = 42;
    strcpy(p->cmdline, "./prog \"q\"");
    p->rate_hz = 99;
    p->duration_ns = 2000000000;
    p->ticks = 198;
    p->missed_ticks = 2;
    hist__add(&p->pause, 5000);
    hist__add(&p->pause, 15000);
    p->errors[WE_C_UNWIND] = 3;
    int t0 = profile__thread(p, 100, "prog");
    int t1 = profile__thread(p, 101, "prog-w");
    add(p, t0, (int[]){0, 1, 2, 3}, 4, TAG_HASKELL, 'R', false, 3);
    add(p, t0, (int[]){0, 6, 1, 6, 3}, 5, TAG_HASKELL, 'R', false, 2);
    add(p, t1, (int[]){6, 6, 6, 3}, 4, TAG_UNSAFE_FFI, 'R', false, 4);
    add(p, t1, (int[]){5, 3}, 2, TAG_IDLE, 'S', true, 5);
    name_frames(p, (const char *const[]){"leaf", "middle", "outer", "main", "unused", "poll",
                                         "rec"});
}

TEST(calls_counts_and_recursion)
{
    struct profile p;
    struct calls_para v[16];
    calls_profile(&p);
    char *s = render(&p, "calls", (struct out_opts){false, false, OUT_SORT_ACC});
    int n = parse_calls(s, v, 16);
    CHECK_EQ_INT(n, 7);
    CHECK(strstr(s, "[{ totals,") && strstr(s, "9,        9, 100.0,        9, 100.0}]."));

    const struct calls_para *q = para_of(v, n, "main");
    CHECK(q && row_is(&q->fn, "main", 9, 9, 0));
    CHECK_EQ_INT(q->ncallers, 2);
    CHECK(row_is(&q->callers[0], "[haskell]", 5, 5, 0));
    CHECK(row_is(&q->callers[1], "[unsafe-ffi]", 4, 4, 0));
    CHECK_EQ_INT(q->ncallees, 2);
    CHECK(row_is(&q->callees[0], "rec", 6, 6, 0));
    CHECK(row_is(&q->callees[1], "outer", 3, 3, 0));

    /* rec is on 6 samples, however often each; its ACC goes to main, its
     * outermost caller; the recursive calls are CNT (once per sample, not
     * per call) with ACC 0, and the samples that end in rec called from
     * rec are that call's OWN. */
    q = para_of(v, n, "rec");
    CHECK(q && row_is(&q->fn, "rec", 6, 6, 4));
    CHECK_EQ_INT(q->ncallers, 3);
    CHECK(row_is(&q->callers[0], "main", 6, 6, 0));
    CHECK(row_is(&q->callers[1], "rec", 4, 0, 4));
    CHECK(row_is(&q->callers[2], "middle", 2, 0, 0));
    CHECK_EQ_INT(q->ncallees, 3);
    CHECK(row_is(&q->callees[0], "leaf", 2, 2, 2));
    CHECK(row_is(&q->callees[1], "middle", 2, 2, 0));
    CHECK(row_is(&q->callees[2], "rec", 4, 0, 4));

    q = para_of(v, n, "middle");
    CHECK(q && row_is(&q->fn, "middle", 5, 5, 0));
    CHECK_EQ_INT(q->ncallers, 2);
    CHECK(row_is(&q->callers[0], "outer", 3, 3, 0));
    CHECK(row_is(&q->callers[1], "rec", 2, 2, 0));
    CHECK_EQ_INT(q->ncallees, 2);
    CHECK(row_is(&q->callees[0], "leaf", 3, 3, 3));
    CHECK(row_is(&q->callees[1], "rec", 2, 0, 0));

    /* The tags are functions at the root: no callers. */
    q = para_of(v, n, "[haskell]");
    CHECK(q && row_is(&q->fn, "[haskell]", 5, 5, 0));
    CHECK_EQ_INT(q->ncallers, 0);
    CHECK_EQ_INT(q->ncallees, 1);
    CHECK(row_is(&q->callees[0], "main", 5, 5, 0));
    q = para_of(v, n, "[unsafe-ffi]");
    CHECK(q && row_is(&q->fn, "[unsafe-ffi]", 4, 4, 0));
    CHECK(para_of(v, n, "outer") && row_is(&para_of(v, n, "outer")->fn, "outer", 3, 3, 0));
    CHECK(!strstr(s, "poll") && !strstr(s, "[idle]"));

    /* One paragraph exactly, to pin the layout: names padded to one
     * column, a leaf with no callees. */
    CHECK(strstr(s, "\n{[{\"middle\",               3,        3,  33.3,        3,  33.3},\n"
                    "  {\"rec\",                  2,        2,  22.2,        2,  22.2}],\n"
                    " { \"leaf\",                 5,        5,  55.6,        5,  55.6},     %\n"
                    " []}.\n"));
    free(s);
    profile__free(&p);
}

TEST(calls_sort_acc_and_own)
{
    struct profile p;
    struct calls_para v[16];
    calls_profile(&p);
    const char *by_acc[] = {"main", "rec", "leaf", "[haskell]", "middle", "[unsafe-ffi]", "outer"};
    const char *by_own[] = {"leaf", "rec", "main", "[haskell]", "middle", "[unsafe-ffi]", "outer"};

    char *s = render(&p, "calls", (struct out_opts){false, false, OUT_SORT_ACC});
    CHECK(strstr(s, "{analysis_options, [{sort, acc}, {threads, false}, {idle, false}]}."));
    int n = parse_calls(s, v, 16);
    CHECK_EQ_INT(n, 7);
    for (int i = 0; i < n; i++)
        CHECK_EQ_STR(v[i].fn.name, by_acc[i]);
    free(s);

    s = render(&p, "calls", (struct out_opts){false, false, OUT_SORT_OWN});
    CHECK(strstr(s, "{analysis_options, [{sort, own}, {threads, false}, {idle, false}]}."));
    n = parse_calls(s, v, 16);
    CHECK_EQ_INT(n, 7);
    for (int i = 0; i < n; i++)
        CHECK_EQ_STR(v[i].fn.name, by_own[i]);
    /* Callers and callees follow the same order. */
    const struct calls_para *q = para_of(v, n, "rec");
    CHECK(q && q->ncallers == 3);
    CHECK(row_is(&q->callers[0], "rec", 4, 0, 4));
    CHECK(row_is(&q->callers[1], "main", 6, 6, 0));
    CHECK(row_is(&q->callers[2], "middle", 2, 0, 0));
    CHECK(row_is(&q->callees[0], "rec", 4, 0, 4));
    CHECK(row_is(&q->callees[1], "leaf", 2, 2, 2));
    free(s);
    profile__free(&p);
}

TEST(calls_threads_idle_and_header)
{
    struct profile p;
    struct calls_para v[16];
    calls_profile(&p);
    /* With --threads each thread is a root function above its tags;
     * with --idle the idle tag and its stack count too. */
    char *s = render(&p, "calls", (struct out_opts){true, true, OUT_SORT_ACC});
    int n = parse_calls(s, v, 16);
    CHECK_EQ_INT(n, 11);
    const struct calls_para *q = para_of(v, n, "tid 100 (prog)");
    CHECK(q && row_is(&q->fn, "tid 100 (prog)", 5, 5, 0) && q->ncallers == 0);
    CHECK(q->ncallees == 1 && row_is(&q->callees[0], "[haskell]", 5, 5, 0));
    q = para_of(v, n, "tid 101 (prog-w)");
    CHECK(q && row_is(&q->fn, "tid 101 (prog-w)", 9, 9, 0) && q->ncallees == 2);
    CHECK(row_is(&q->callees[0], "[idle]", 5, 5, 0));
    CHECK(row_is(&q->callees[1], "[unsafe-ffi]", 4, 4, 0));
    q = para_of(v, n, "[haskell]");
    CHECK(q && q->ncallers == 1 && row_is(&q->callers[0], "tid 100 (prog)", 5, 5, 0));
    q = para_of(v, n, "main");
    CHECK(q && row_is(&q->fn, "main", 14, 14, 0));
    q = para_of(v, n, "poll");
    CHECK(q && row_is(&q->fn, "poll", 5, 5, 5));
    CHECK(strstr(s, "[{ totals,") && strstr(s, "14,       14, 100.0,       14, 100.0}]."));

    /* The header: target and sampling health, as property lists. */
    CHECK(strstr(s, "{target,\n [{pid,               42},\n"
                    "  {command,           \"./prog \\\"q\\\"\"},\n"
                    "  {runtime,           \"native\"}]}.\n"));
    CHECK(strstr(s, "{sampling,\n [{duration_s,        2.000},\n"
                    "  {rate_asked_hz,     99.0},\n"
                    "  {rate_achieved_hz,  99.0},\n"
                    "  {ticks,             198},\n"
                    "  {missed_ticks,      2},\n"
                    "  {pause_mean_us,     10.0},\n"
                    "  {pause_max_us,      15.0},\n"
                    "  {errors,            3},\n"
                    "  {error_kinds,       [{\"C unwind failed\", 3}]},\n"));
    CHECK(strstr(s, "  {samples,           14},\n  {samples_shown,     14}]}.\n"));
    free(s);
    profile__free(&p);
}

/* For texts too long for CHECK_EQ_STR's message: where they first differ. */
#define CHECK_TEXT(got, want)                                                                 \
    do {                                                                                      \
        const char *g_ = (got), *w_ = (want);                                                 \
        size_t i_ = 0;                                                                        \
        if (!g_)                                                                              \
            UNIT_FAIL("%s is NULL", #got);                                                    \
        while (g_[i_] && g_[i_] == w_[i_])                                                    \
            i_++;                                                                             \
        if (g_[i_] != w_[i_])                                                                 \
            UNIT_FAIL("%s differs at byte %zu: \"%.80s\", expected \"%.80s\"", #got, i_,       \
                      g_ + i_, w_ + i_);                                                      \
    } while (0)

/* One sample at a given time (ns), frames named by index as above. */
static void add_at(struct profile *p, int thread, const int *addrs, int n, int tag, bool idle,
                   uint64_t t_ns)
{
    struct raw_frame f[16];
    for (int i = 0; i < n; i++)
        f[i] = (struct raw_frame){(uint64_t)addrs[i], FK_RET, 0};
    int64_t st = profile__stack(p, f, n);
    profile__add(p, &(struct prof_sample){.t_ns = t_ns, .thread = (uint32_t)thread,
                                          .stack = (uint32_t)st, .tag = (uint8_t)tag,
                                          .state = idle ? 'S' : 'R',
                                          .flags = idle ? SAMPLE_IDLE : 0, .cap = -1});
}

#define MS 1000000ull

/* 100 Hz, ticks at 0, 10, 20, 30, 60, 70 and 80.0005 ms (40 and 50 were
 * missed). The main thread: a, a, b under [haskell];main, then c in an
 * unsafe call across the missed ticks, an idle sample, then a again. A
 * second thread in [rts] whose stop timed out at 20 and that is not seen
 * after 30, and a third that is only ever idle. */
static void trace_profile(struct profile *p)
{
    profile__init(p);
    p->pid = 42;
    strcpy(p->cmdline, "./prog x");
    p->rate_hz = 100;
    p->duration_ns = 70 * MS;
    p->ticks = 7;
    p->missed_ticks = 2;
    p->lost_threads = 1;
    strcpy(p->ghc_version, "9.0.2");
    int t0 = profile__thread(p, 100, "prog");
    int t1 = profile__thread(p, 101, "prog-w");
    int t2 = profile__thread(p, 102, "prog-io");
    strcpy(p->threads[t0].role, "capability 0");
    add_at(p, t0, (int[]){0, 1}, 2, TAG_HASKELL, false, 0);
    add_at(p, t1, (int[]){4}, 1, TAG_RTS, false, 0);
    add_at(p, t2, (int[]){5}, 1, TAG_IDLE, true, 0);
    add_at(p, t0, (int[]){0, 1}, 2, TAG_HASKELL, false, 10 * MS);
    add_at(p, t1, (int[]){4}, 1, TAG_RTS, false, 10 * MS);
    add_at(p, t0, (int[]){2, 1}, 2, TAG_HASKELL, false, 20 * MS);
    add_at(p, t0, (int[]){3, 1}, 2, TAG_UNSAFE_FFI, false, 30 * MS);
    add_at(p, t1, (int[]){4}, 1, TAG_RTS, false, 30 * MS);
    add_at(p, t0, (int[]){3, 1}, 2, TAG_UNSAFE_FFI, false, 60 * MS);
    add_at(p, t0, (int[]){5, 1}, 2, TAG_IDLE, true, 70 * MS);
    add_at(p, t0, (int[]){0, 1}, 2, TAG_HASKELL, false, 80 * MS + 500);
    name_frames(p, (const char *const[]){"a\"\\\xce\xbb\xff", "main", "b", "c", "x", "poll"});
}

TEST(trace_merges_and_nests)
{
    struct profile p;
    trace_profile(&p);
    char *s = render(&p, "trace", (struct out_opts){false, false, OUT_SORT_ACC});
    /* Parents before children; a and a merge, b splits only the leaf; a
     * tag change or a hidden idle sample closes everything, missed ticks
     * and a timed-out stop do not (the longest sample: c's, across the
     * missed ticks). The name is escaped and its invalid byte replaced. */
    CHECK_TEXT(s,
        "{\"traceEvents\":[\n"
        "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":42,\"tid\":42,\"args\":{\"name\":\"./prog x\"}},\n"
        "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":42,\"tid\":100,\"args\":{\"name\":\"tid 100 prog (capability 0)\"}},\n"
        "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":42,\"tid\":100,\"args\":{\"sort_index\":0}},\n"
        "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":42,\"tid\":101,\"args\":{\"name\":\"tid 101 prog-w\"}},\n"
        "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":42,\"tid\":101,\"args\":{\"sort_index\":1}},\n"
        "{\"name\":\"[haskell]\",\"cat\":\"haskell\",\"cname\":\"thread_state_running\",\"ph\":\"X\",\"ts\":0,\"dur\":30000,\"pid\":42,\"tid\":100},\n"
        "{\"name\":\"main\",\"cat\":\"haskell\",\"ph\":\"X\",\"ts\":0,\"dur\":30000,\"pid\":42,\"tid\":100},\n"
        "{\"name\":\"a\\\"\\\\\xce\xbb\\ufffd\",\"cat\":\"haskell\",\"ph\":\"X\",\"ts\":0,\"dur\":20000,\"pid\":42,\"tid\":100},\n"
        "{\"name\":\"b\",\"cat\":\"haskell\",\"ph\":\"X\",\"ts\":20000,\"dur\":10000,\"pid\":42,\"tid\":100},\n"
        "{\"name\":\"[unsafe-ffi]\",\"cat\":\"unsafe-ffi\",\"cname\":\"thread_state_runnable\",\"ph\":\"X\",\"ts\":30000,\"dur\":40000,\"pid\":42,\"tid\":100},\n"
        "{\"name\":\"main\",\"cat\":\"unsafe-ffi\",\"ph\":\"X\",\"ts\":30000,\"dur\":40000,\"pid\":42,\"tid\":100},\n"
        "{\"name\":\"c\",\"cat\":\"unsafe-ffi\",\"ph\":\"X\",\"ts\":30000,\"dur\":40000,\"pid\":42,\"tid\":100},\n"
        "{\"name\":\"[haskell]\",\"cat\":\"haskell\",\"cname\":\"thread_state_running\",\"ph\":\"X\",\"ts\":80000.500,\"dur\":10000,\"pid\":42,\"tid\":100},\n"
        "{\"name\":\"main\",\"cat\":\"haskell\",\"ph\":\"X\",\"ts\":80000.500,\"dur\":10000,\"pid\":42,\"tid\":100},\n"
        "{\"name\":\"a\\\"\\\\\xce\xbb\\ufffd\",\"cat\":\"haskell\",\"ph\":\"X\",\"ts\":80000.500,\"dur\":10000,\"pid\":42,\"tid\":100},\n"
        "{\"name\":\"[rts]\",\"cat\":\"rts\",\"cname\":\"generic_work\",\"ph\":\"X\",\"ts\":0,\"dur\":60000,\"pid\":42,\"tid\":101},\n"
        "{\"name\":\"x\",\"cat\":\"rts\",\"ph\":\"X\",\"ts\":0,\"dur\":60000,\"pid\":42,\"tid\":101}\n"
        "],\n"
        "\"displayTimeUnit\":\"ms\",\n"
        "\"otherData\":{\"tool\":\"hsspy\",\"command\":\"./prog x\",\"pid\":42,\"runtime\":\"GHC 9.0.2\","
        "\"start_unix_ns\":0,\"duration_s\":0.070,\"rate_asked_hz\":100.0,\"rate_achieved_hz\":100.0,"
        "\"sample_period_us\":10000.0,\"longest_sample_us\":30000.0,\"ticks\":7,\"missed_ticks\":2,\"pause_mean_us\":0.0,"
        "\"pause_max_us\":0.0,\"errors\":0,\"error_kinds\":{},\"lost_threads\":1,\"samples\":11,"
        "\"samples_shown\":9,\"events\":12}}\n");

    /* Threads are tracks already: --threads adds no root frame. */
    char *t = render(&p, "trace", (struct out_opts){true, false, OUT_SORT_ACC});
    CHECK_TEXT(t, s);
    free(t);
    free(s);

    /* With --idle the idle sample is shown, up to the next tick, and the
     * idle-only thread gets its track. */
    s = render(&p, "trace", (struct out_opts){false, true, OUT_SORT_ACC});
    CHECK(strstr(s, "{\"name\":\"c\",\"cat\":\"unsafe-ffi\",\"ph\":\"X\",\"ts\":30000,"
                    "\"dur\":40000,\"pid\":42,\"tid\":100},\n"));
    CHECK(strstr(s, "{\"name\":\"[idle]\",\"cat\":\"idle\",\"cname\":\"thread_state_sleeping\","
                    "\"ph\":\"X\",\"ts\":70000,\"dur\":10000.500,\"pid\":42,\"tid\":100},\n"));
    CHECK(strstr(s, "{\"name\":\"poll\",\"cat\":\"idle\",\"ph\":\"X\",\"ts\":70000,"
                    "\"dur\":10000.500,\"pid\":42,\"tid\":100},\n"));
    CHECK(strstr(s, "\"args\":{\"name\":\"tid 102 prog-io\"}}"));
    CHECK(strstr(s, "{\"name\":\"poll\",\"cat\":\"idle\",\"ph\":\"X\",\"ts\":0,"
                    "\"dur\":10000,\"pid\":42,\"tid\":102}"));
    CHECK(strstr(s, "\"samples_shown\":11,\"events\":17}}\n"));
    free(s);
    profile__free(&p);
}

__attribute__((noinline)) int symbolize_new_probe(int x) { return x * 3 + 1; }

/* A live view names frames as they come: the ones named before keep their
 * names (not looked up again), and a frame in a library loaded since the
 * module set was read gets its name, not "libfoo+0x..." or "[unknown]". */
/* The runtime's version comes from the program's file (or a raw file's):
 * quoted as any string, in the trace's JSON and the calls' Erlang. */
TEST(runtime_version_quoted)
{
    struct profile p;
    trace_profile(&p);
    strcpy(p.ghc_version, "9\"x\\");
    char *s = render(&p, "trace", (struct out_opts){false, false, OUT_SORT_ACC});
    CHECK(strstr(s, "\"runtime\":\"GHC 9\\\"x\\\\\","));
    free(s);
    s = render(&p, "calls", (struct out_opts){false, false, OUT_SORT_ACC});
    CHECK(strstr(s, "{runtime,") && strstr(s, " \"GHC 9\\\"x\\\\\"}]}."));
    free(s);
    profile__free(&p);
}

TEST(symbolize_new_names_only_new_frames)
{
    struct profile p;
    struct modset ms;
    profile__init(&p);
    CHECK_EQ_INT(modset__init(&ms, getpid()), 0);
    struct raw_frame a = {(uint64_t)(uintptr_t)symbolize_new_probe, FK_PC, 0};
    CHECK(profile__stack(&p, &a, 1) == 0);
    CHECK_EQ_INT(profile__symbolize_new(&p, &ms), 0);
    CHECK_EQ_INT(p.nnamed, 1);
    CHECK_EQ_STR(profile__frame_name(&p, 0), "symbolize_new_probe");
    /* Mark the name: a second call must not look frame 0 up again. */
    free(p.syms[0].name);
    p.syms[0].name = strdup("named before");

    /* Lazy: its ps_* imports are the debugger's to provide, and unused here. */
    void *lib = dlopen("libthread_db.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!lib)
        UNIT_FAIL("dlopen libthread_db.so.1: %s", dlerror());
    void *fn = dlsym(lib, "td_init");
    CHECK(fn != NULL);
    CHECK(modset__find(&ms, (uint64_t)(uintptr_t)fn) == NULL); /* loaded after */
    struct raw_frame b[2] = {{(uint64_t)(uintptr_t)fn, FK_PC, 0}, a};
    CHECK(profile__stack(&p, b, 2) == 1);
    CHECK_EQ_STR(profile__frame_name(&p, 1), "[unknown]"); /* not named yet */
    CHECK_EQ_INT(profile__symbolize_new(&p, &ms), 0);
    CHECK_EQ_INT(p.nnamed, 2);
    CHECK_EQ_STR(profile__frame_name(&p, 0), "named before");
    CHECK_EQ_STR(profile__frame_name(&p, 1), "td_init");
    dlclose(lib);
    modset__free(&ms);
    profile__free(&p);
}

UNIT_MAIN()

/* Each thread's role is named after what it does when it works: a worker
 * that held capability 1 a third of the time and waited for work the rest
 * is capability 1's; one that worked in 1 sample of 400 is an idle worker;
 * the main thread never is one (it waits for its Haskell thread). */
static void add_roles_flagged(struct profile *p, int thread, int role, int cap, int times,
                              uint8_t flags)
{
    for (int k = 0; k < times; k++) {
        struct prof_sample s = {.thread = (uint32_t)thread, .role = (uint8_t)role,
                                .cap = (int16_t)cap, .tag = TAG_IDLE, .state = 'S',
                                .flags = flags};
        profile__add(p, &s);
    }
}

static void add_roles(struct profile *p, int thread, int role, int cap, int times)
{
    add_roles_flagged(p, thread, role, cap, times, 0);
}

TEST(role_names)
{
    struct profile p;
    profile__init(&p);
    p.pid = 10;
    int main_t = profile__thread(&p, 10, "prog");
    int busy = profile__thread(&p, 11, "prog:w");
    int idle = profile__thread(&p, 12, "prog:w");
    int ffi = profile__thread(&p, 13, "prog:w");
    int mixed = profile__thread(&p, 14, "prog:w");
    add_roles(&p, main_t, ROLE_IDLE_WORKER, -1, 90);
    add_roles(&p, main_t, ROLE_CAP, 0, 10);
    add_roles(&p, busy, ROLE_IDLE_WORKER, -1, 200);
    add_roles(&p, busy, ROLE_CAP, 1, 100);
    add_roles(&p, idle, ROLE_IDLE_WORKER, -1, 399);
    add_roles(&p, idle, ROLE_CAP, 0, 1);
    add_roles(&p, ffi, ROLE_IDLE_WORKER, -1, 50);
    add_roles(&p, ffi, ROLE_SAFE_FFI, -1, 30);
    add_roles(&p, ffi, ROLE_CAP, 0, 20);
    add_roles(&p, mixed, ROLE_NONE, -1, 5);
    profile__name_roles(&p);
    CHECK_EQ_STR(p.threads[main_t].role, "bound main thread (capability 0)");
    CHECK_EQ_STR(p.threads[busy].role, "capability 1");
    CHECK_EQ_STR(p.threads[idle].role, "idle worker");
    CHECK_EQ_STR(p.threads[ffi].role, "safe-FFI worker");
    CHECK_EQ_STR(p.threads[mixed].role, "");
    profile__free(&p);
}

/* A bound thread (forkOS, SAMPLE_BOUND) is not a worker: in safe calls
 * most of the time (before: "safe-FFI worker"), holding a capability,
 * or waiting (never an "idle worker"); a worker that once ran a call in
 * from C, a few of its samples bound, is still a worker. */
TEST(role_names_bound)
{
    struct profile p;
    profile__init(&p);
    p.pid = 10;
    int napper = profile__thread(&p, 11, "prog");
    int computer = profile__thread(&p, 12, "prog");
    int waiter = profile__thread(&p, 13, "prog");
    int worker = profile__thread(&p, 14, "prog:w");
    struct {
        int t, role, cap, n;
        bool bound;
    } v[] = {{napper, ROLE_SAFE_FFI, -1, 90, true},     {napper, ROLE_CAP, 1, 10, true},
             {computer, ROLE_CAP, 1, 80, true},         {computer, ROLE_SAFE_FFI, -1, 20, true},
             {waiter, ROLE_IDLE_WORKER, -1, 99, true},  {waiter, ROLE_CAP, 0, 1, true},
             {worker, ROLE_SAFE_FFI, -1, 90, false},    {worker, ROLE_CAP, 0, 10, true}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        add_roles_flagged(&p, v[i].t, v[i].role, v[i].cap, v[i].n,
                          v[i].bound ? SAMPLE_BOUND : 0);
    profile__name_roles(&p);
    CHECK_EQ_STR(p.threads[napper].role, "bound thread (in safe calls)");
    CHECK_EQ_STR(p.threads[computer].role, "bound thread (capability 1)");
    CHECK_EQ_STR(p.threads[waiter].role, "bound thread (capability 0)");
    CHECK_EQ_STR(p.threads[worker].role, "safe-FFI worker");
    profile__free(&p);
}

/* A capability a collection holds as one of several, which a thread waits
 * for (SAMPLE_CAP_COLLECTED), is held by "a collection", gc, in the
 * report's table (was "free"); the waiting thread is not named after it. */
TEST(capability_held_by_a_collection)
{
    struct profile p;
    profile__init(&p);
    p.pid = 10;
    p.ticks = 10;
    p.rate_hz = 99;
    p.duration_ns = 100000000;
    int holder = profile__thread(&p, 10, "prog");
    int waiter = profile__thread(&p, 11, "prog:w");
    add(&p, holder, (int[]){0, 1}, 2, TAG_HASKELL, 'R', false, 0); /* (its stack: id 0) */
    add_roles(&p, holder, ROLE_CAP, 0, 10);
    for (int k = 0; k < 10; k++) {
        struct prof_sample s = {.thread = (uint32_t)waiter, .role = ROLE_IDLE_WORKER,
                                .cap = k < 4 ? 1 : -1, .tag = k < 4 ? TAG_GC : TAG_IDLE,
                                .state = 'S', .flags = k < 4 ? SAMPLE_CAP_COLLECTED : SAMPLE_IDLE};
        profile__add(&p, &s);
    }
    profile__name_roles(&p);
    name_frames(&p, NAMES);
    CHECK_EQ_STR(p.threads[waiter].role, "idle worker");
    char *s = render(&p, "report", (struct out_opts){false, false, OUT_SORT_ACC});
    CHECK(strstr(s, "  capability 1: held 40.0% (by a collection 40.0%)\n    gc 40.0% free 60.0%\n"));
    CHECK(strstr(s, "  capability 0: held 100.0% (by tid 10 100.0%)\n"));
    free(s);
    profile__free(&p);
}

/* A frame with no address (an update frame whose thunk is a black hole
 * already) shows "-" in the dump's address column, not 0x0000000000000000. */
TEST(dump_frame_without_address)
{
    struct profile p;
    profile__init(&p);
    p.pid = 10;
    p.ticks = 1;
    int t0 = profile__thread(&p, 10, "prog");
    struct raw_frame f[2] = {{1, FK_PC, 0}, {0, FK_HS_UPDATE, 0}};
    int64_t st = profile__stack(&p, f, 2);
    profile__add(&p, &(struct prof_sample){.thread = (uint32_t)t0, .stack = (uint32_t)st,
                                           .tag = TAG_HASKELL, .state = 'R', .cap = -1});
    name_frames(&p, NAMES);
    char *s = render(&p, "dump", (struct out_opts){false, false, OUT_SORT_ACC});
    CHECK(strstr(s, "  #0   0x0000000000000001 pc         middle\n"));
    CHECK(strstr(s, "  #1   -                  update     leaf\n"));
    free(s);
    profile__free(&p);
}

/* Threads come busiest first, the same in every format that orders them:
 * by samples on a CPU, then samples shown, then all. A thread blocked in
 * a safe call (state S, shown) has the most samples but none on a CPU:
 * it comes after the two that computed, the one with more on a CPU first;
 * one only idle comes last (and speedscope, which shows no empty
 * profile, leaves it out). */
TEST(threads_busiest_first_in_every_format)
{
    struct profile p;
    profile__init(&p);
    p.pid = 42;
    p.rate_hz = 100;
    p.duration_ns = 100 * MS;
    p.ticks = 10;
    int blocked = profile__thread(&p, 41, "blocked");
    int some = profile__thread(&p, 42, "some");
    int most = profile__thread(&p, 43, "most");
    int idle = profile__thread(&p, 44, "sleepy");
    add(&p, blocked, (int[]){3, 1}, 2, TAG_SAFE_FFI, 'S', false, 9);
    add(&p, some, (int[]){0, 1}, 2, TAG_HASKELL, 'R', false, 3);
    add(&p, most, (int[]){2, 1}, 2, TAG_HASKELL, 'R', false, 5);
    add(&p, idle, (int[]){5}, 1, TAG_IDLE, 'S', true, 9);
    name_frames(&p, (const char *const[]){"a", "main", "b", "c", "x", "poll"});
    CHECK_EQ_INT((int)p.threads[blocked].oncpu, 0);
    CHECK_EQ_INT((int)p.threads[most].oncpu, 5);
    const char *fmts[] = {"report", "speedscope", "trace"};
    const char *pats[][4] = {{"thread 43 (most)", "thread 42 (some)", "thread 41 (blocked)",
                              "thread 44 (sleepy)"},
                             {"tid 43 most", "tid 42 some", "tid 41 blocked", NULL},
                             {"tid 43 most", "tid 42 some", "tid 41 blocked", NULL}};
    for (int f = 0; f < 3; f++) {
        char *s = render(&p, fmts[f], (struct out_opts){false, false, OUT_SORT_ACC});
        const char *at = s;
        for (int i = 0; i < 4 && pats[f][i]; i++) {
            const char *next = strstr(at, pats[f][i]);
            if (!next)
                UNIT_FAIL("%s: \"%s\" not after the thread before it", fmts[f], pats[f][i]);
            at = next;
        }
        if (f > 0)
            CHECK(!strstr(s, "sleepy"));
        if (f == 2) { /* (and the sort index says the same) */
            CHECK(strstr(s, "\"tid\":43,\"args\":{\"sort_index\":0}"));
            CHECK(strstr(s, "\"tid\":41,\"args\":{\"sort_index\":2}"));
        }
        free(s);
    }
    profile__free(&p);
}
