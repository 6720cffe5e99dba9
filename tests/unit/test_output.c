/* The profile store and the folded writer, on hand-built profiles: exact
 * output text, interning, --threads roots, tag frames, idle filtering. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out/profile.h"
#include "out/writer.h"
#include "tests/unit/unit.h"

/* Give frame ids the given names, as profile__symbolize would. */
static void name_frames(struct profile *p, const char *const *names)
{
    p->syms = calloc(p->nframes, sizeof *p->syms);
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

    char *s = render(&p, "folded", (struct out_opts){false, false});
    CHECK_EQ_STR(s, "main;outer;middle;leaf 3\n"
                    "wo:rker;outer;middle;leaf 2\n");
    free(s);
    s = render(&p, "folded", (struct out_opts){false, true});
    CHECK_EQ_STR(s, "main;outer;middle;leaf 3\n"
                    "wo:rker;outer;middle;leaf 2\n"
                    "wo:rker;poll 7\n");
    free(s);
    s = render(&p, "folded", (struct out_opts){true, false});
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
    /* Name the new frame too. */
    p.syms = realloc(p.syms, p.nframes * sizeof *p.syms);
    p.syms[p.nframes - 1] = (struct frame_sym){.name = strdup("f")};
    profile__add(&p, &(struct prof_sample){.thread = 0, .stack = 1, .state = 'R'});
    char *s = render(&p, "folded", (struct out_opts){false, false});
    CHECK_EQ_STR(s, "g;f 3\n");
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
    char *s = render(&p, "folded", (struct out_opts){true, false});
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
    char *s = render(&p, "report", (struct out_opts){false, false});
    CHECK(strstr(s, "pid 42: ./prog --flag"));
    CHECK(strstr(s, "99 Hz asked, 5.0 Hz achieved"));
    CHECK(strstr(s, "thread 42 (prog): 10 samples, on CPU 80.0%, 8 shown"));
    CHECK(strstr(s, "     75.0%  leaf\n"));
    CHECK(strstr(s, "     25.0%  middle\n"));
    CHECK(strstr(s, "    100.0%  main\n"));
    CHECK(!strstr(s, "poll"));
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
    int t1 = profile__thread(&p, 43, "w\xff");
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
    char *s = render(&p, "speedscope", (struct out_opts){true, false});
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
        "{\"type\":\"sampled\",\"name\":\"tid 43 w\\ufffd\",\"unit\":\"none\",\"startValue\":0,"
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

UNIT_MAIN()
