/* The model and screen of hsspy top, on hand-built batches of samples:
 * own and total shares (recursion counted once), idle samples out of the
 * function lists but in the tag mix, the recent window against all-time
 * counts, the achieved rate, the per-thread view, and a screen that fits
 * the terminal and carries no control characters from the target. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out/top.h"
#include "tests/unit/unit.h"

/* Frames' addr index names (innermost first), as profile__symbolize_new
 * would name them. */
static const char *const NAMES[] = {"leaf", "middle", "outer", "main", "worker", "poll",
                                    "phase_a", "phase_b", "f", "g"};

static void name_new(struct profile *p)
{
    if (p->cap_syms < p->nframes) {
        p->syms = realloc(p->syms, p->nframes * sizeof *p->syms);
        memset(p->syms + p->cap_syms, 0, (p->nframes - p->cap_syms) * sizeof *p->syms);
        p->cap_syms = p->nframes;
    }
    for (; p->nnamed < p->nframes; p->nnamed++)
        p->syms[p->nnamed].name = strdup(NAMES[p->frames[p->nnamed].addr]);
}

/* times samples of one stack, evenly spread over [from_ms, to_ms) (all at
 * from_ms if the two are equal: then they weigh the same, and recent shares
 * are exact). */
static void add(struct profile *p, int thread, const int *addrs, int n, int tag, bool idle,
                int times, int from_ms, int to_ms)
{
    struct raw_frame f[16];
    for (int i = 0; i < n; i++)
        f[i] = (struct raw_frame){(uint64_t)addrs[i], FK_RET, 0};
    int64_t st = profile__stack(p, f, n);
    for (int k = 0; k < times; k++) {
        struct prof_sample s = {
            .t_ns = (uint64_t)from_ms * 1000000u +
                    (uint64_t)k * (uint64_t)(to_ms - from_ms) * 1000000u / (uint64_t)times,
            .thread = (uint32_t)thread, .stack = (uint32_t)st, .tag = (uint8_t)tag,
            .state = idle ? 'S' : 'R', .cap = -1, .flags = idle ? SAMPLE_IDLE : 0};
        profile__add(p, &s);
    }
}

/* Hand the batch to the view, as the recording loop does, and drop it. */
static void batch(struct top *v, struct profile *p, int now_ms)
{
    name_new(p);
    CHECK_EQ_INT(top__add(v, p, (uint64_t)now_ms * 1000000u), 0);
    profile__drop_samples(p);
}

/* The line of the screen that ends with name (a function row), or NULL. */
static const char *row(const char *screen, const char *name, double *own, double *total)
{
    static char buf[512];
    for (const char *l = screen; *l;) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        snprintf(buf, sizeof buf, "%.*s", (int)len, l);
        char fn[256];
        if (sscanf(buf, "%lf %lf %255s", own, total, fn) == 3 && strcmp(fn, name) == 0 &&
            strlen(buf) >= strlen(name) && strcmp(buf + strlen(buf) - strlen(name), name) == 0)
            return buf;
        l = e ? e + 1 : l + len;
    }
    return NULL;
}

static void check_row(const char *screen, const char *name, double own, double total)
{
    double o, t;
    if (!row(screen, name, &o, &t))
        UNIT_FAIL("no row for %s in:\n%s", name, screen);
    if (o < own - 0.05 || o > own + 0.05 || t < total - 0.05 || t > total + 0.05)
        UNIT_FAIL("%s: own %.1f total %.1f, expected %.1f %.1f in:\n%s", name, o, t, own, total,
                  screen);
}

static struct profile *new_profile(void)
{
    static struct profile p;
    profile__init(&p);
    p.pid = 100;
    p.rate_hz = 100;
    snprintf(p.cmdline, sizeof p.cmdline, "./prog 5");
    return &p;
}

TEST(own_total_and_idle)
{
    struct profile *p = new_profile();
    struct top *v = top__new(1.0, false);
    int t0 = profile__thread(p, 100, "prog");
    int t1 = profile__thread(p, 101, "prog-w");
    add(p, t0, (int[]){0, 1, 2, 3}, 4, TAG_NONE, false, 60, 0, 0);
    add(p, t1, (int[]){0, 1, 2, 4}, 4, TAG_NONE, false, 20, 0, 0);
    add(p, t1, (int[]){1, 2, 4}, 3, TAG_NONE, false, 20, 0, 0);
    add(p, t1, (int[]){5, 4}, 2, TAG_NONE, true, 50, 0, 1000);
    batch(v, p, 1000);
    struct top_opts o = {.keys = "q quit"};
    char *s = top__render(v, p, &o, 40, 100);
    CHECK(s != NULL);
    CHECK(strncmp(s, "hsspy top - pid 100: ./prog 5\n", 30) == 0);
    check_row(s, "leaf", 80.0, 80.0);
    check_row(s, "middle", 20.0, 100.0);
    check_row(s, "outer", 0.0, 100.0);
    check_row(s, "main", 0.0, 60.0);
    check_row(s, "worker", 0.0, 40.0);
    double a, b;
    CHECK(row(s, "poll", &a, &b) == NULL); /* idle: left out */
    CHECK(strstr(s, "tags:") == NULL);     /* not a GHC program */
    /* Sorted by own, then by total. */
    CHECK(strstr(s, " leaf\n") < strstr(s, " middle\n"));
    CHECK(strstr(s, " middle\n") < strstr(s, " outer\n"));
    CHECK(strstr(s, " outer\n") < strstr(s, " main\n"));
    free(s);
    o.sort = TOP_SORT_TOTAL;
    s = top__render(v, p, &o, 40, 100);
    CHECK(strstr(s, " outer\n") < strstr(s, " leaf\n"));
    CHECK(strstr(s, " by total | q quit\n") != NULL);
    free(s);
    top__free(v);

    /* With --idle, the idle thread's functions count too. */
    v = top__new(1.0, true);
    add(p, t1, (int[]){5, 4}, 2, TAG_NONE, true, 50, 1500, 1500);
    add(p, t0, (int[]){0, 3}, 2, TAG_NONE, false, 50, 1500, 1500);
    batch(v, p, 2000);
    s = top__render(v, p, &(struct top_opts){0}, 40, 100);
    check_row(s, "poll", 50.0, 50.0);
    check_row(s, "leaf", 50.0, 50.0);
    free(s);
    top__free(v);
    profile__free(p);
}

TEST(recursion_counts_once)
{
    struct profile *p = new_profile();
    struct top *v = top__new(1.0, false);
    int t = profile__thread(p, 100, "prog");
    add(p, t, (int[]){8, 8, 9, 8, 3}, 5, TAG_NONE, false, 10, 0, 500);
    add(p, t, (int[]){9, 3}, 2, TAG_NONE, false, 10, 500, 1000);
    batch(v, p, 1000);
    struct top_opts o = {.all_time = true};
    char *s = top__render(v, p, &o, 40, 100);
    check_row(s, "f", 50.0, 50.0);
    check_row(s, "g", 50.0, 100.0);
    check_row(s, "main", 0.0, 100.0);
    free(s);
    top__free(v);
    profile__free(p);
}

/* One second of phase_a, then three of phase_b: the recent window (weight
 * halving every second) has all but forgotten phase_a; all-time counts
 * have not. The achieved rate of a steady 100 ticks a second is 100. */
TEST(recent_window_forgets)
{
    struct profile *p = new_profile();
    struct top *v = top__new(1.0, false);
    int t = profile__thread(p, 100, "prog");
    add(p, t, (int[]){6, 3}, 2, TAG_NONE, false, 100, 0, 1000);
    p->ticks = 100;
    batch(v, p, 1000);
    char *s = top__render(v, p, &(struct top_opts){0}, 40, 100);
    check_row(s, "phase_a", 100.0, 100.0);
    CHECK(strstr(s, "rate 100 Hz asked, 100.0 Hz achieved | 100 samples | 1.0 s |") != NULL);
    free(s);
    for (int sec = 1; sec < 4; sec++) {
        add(p, t, (int[]){7, 3}, 2, TAG_NONE, false, 100, sec * 1000, sec * 1000 + 1000);
        p->ticks += 100;
        batch(v, p, sec * 1000 + 1000);
    }
    double own_a, own_b, total;
    s = top__render(v, p, &(struct top_opts){0}, 40, 100);
    CHECK(row(s, "phase_a", &own_a, &total) && row(s, "phase_b", &own_b, &total));
    /* Weights: phase_a (2^1 - 1), phase_b (2^4 - 2^1), times the same
     * factor: phase_a 1/15 = 6.7%. */
    if (own_a < 6.0 || own_a > 7.4 || own_b < 92.6 || own_b > 94.0)
        UNIT_FAIL("recent: phase_a %.1f%%, phase_b %.1f%%, expected 6.7 and 93.3:\n%s", own_a,
                  own_b, s);
    CHECK(strstr(s, "rate 100 Hz asked, 100.0 Hz achieved | 400 samples | 4.0 s |") != NULL);
    CHECK(strstr(s, "recent, weight halves every 1 s") != NULL);
    free(s);
    s = top__render(v, p, &(struct top_opts){.all_time = true}, 40, 100);
    check_row(s, "phase_a", 25.0, 25.0);
    check_row(s, "phase_b", 75.0, 75.0);
    CHECK(strstr(s, "all time |") != NULL);
    free(s);
    /* Hours later, weights have been rescaled and shares still hold. */
    for (int k = 0; k < 3; k++) {
        int from = 3600000 * (k + 1);
        add(p, t, (int[]){7, 3}, 2, TAG_NONE, false, 50, from, from + 1000);
        add(p, t, (int[]){6, 3}, 2, TAG_NONE, false, 50, from, from + 1000);
        batch(v, p, from + 1000);
    }
    s = top__render(v, p, &(struct top_opts){0}, 40, 100);
    check_row(s, "phase_a", 50.0, 50.0);
    free(s);
    top__free(v);
    profile__free(p);
}

/* A GHC program: the tag mix over every sample (idle included), merged and
 * per thread; each thread its own section, busiest first, with its role. */
TEST(tags_and_threads)
{
    struct profile *p = new_profile();
    struct top *v = top__new(1.0, false);
    snprintf(p->ghc_version, sizeof p->ghc_version, "9.0.2");
    int t0 = profile__thread(p, 100, "prog");
    int t1 = profile__thread(p, 101, "prog:w");
    int t2 = profile__thread(p, 102, "ghc_ticker");
    add(p, t0, (int[]){0, 3}, 2, TAG_HASKELL, false, 30, 500, 500);
    add(p, t0, (int[]){0, 2}, 2, TAG_UNSAFE_FFI, false, 10, 500, 500);
    add(p, t1, (int[]){1, 4}, 2, TAG_SAFE_FFI, false, 20, 500, 500);
    add(p, t2, (int[]){5}, 1, TAG_IDLE, true, 20, 500, 500);
    snprintf(p->threads[t0].role, sizeof p->threads[t0].role, "bound main thread");
    snprintf(p->threads[t1].role, sizeof p->threads[t1].role, "safe-FFI worker");
    batch(v, p, 1000);
    char *s = top__render(v, p, &(struct top_opts){0}, 40, 100);
    CHECK(strstr(s, "hsspy top - pid 100: ./prog 5  GHC 9.0.2\n") == s);
    CHECK(strstr(s, "\ntags: haskell 37.5% unsafe-ffi 12.5% safe-ffi 25.0% gc 0.0% rts 0.0% "
                    "idle 25.0%\n") != NULL);
    check_row(s, "leaf", 66.7, 66.7);
    free(s);

    s = top__render(v, p, &(struct top_opts){.threads = true}, 40, 100);
    const char *h0 = strstr(s, "\ntid 100 (prog) bound main thread: 66.7% of the samples shown, "
                               "on CPU 100%\n  tags: haskell 75.0% unsafe-ffi 25.0% safe-ffi "
                               "0.0% gc 0.0% rts 0.0% idle 0.0%\n");
    const char *h1 = strstr(s, "\ntid 101 (prog:w) safe-FFI worker: 33.3% of the samples shown");
    const char *h2 = strstr(s, "\ntid 102 (ghc_ticker): idle");
    if (!h0 || !h1 || !h2 || !(h0 < h1 && h1 < h2))
        UNIT_FAIL("thread sections missing or out of order:\n%s", s);
    /* Each thread's functions in its own section, as shares of its samples. */
    double own, total;
    CHECK(row(h0, "leaf", &own, &total) && own == 100.0);
    CHECK(row(h1, "middle", &own, &total) && own == 100.0);
    CHECK(strstr(h0, " middle\n") > h1);
    CHECK(strstr(s, "\ntags:") == NULL); /* per thread only */
    free(s);
    top__free(v);
    profile__free(p);
}

/* The screen never has more rows or columns than the terminal, and a
 * command line or thread name with escape sequences cannot drive it. */
TEST(fits_and_is_clean)
{
    struct profile *p = new_profile();
    struct top *v = top__new(1.0, false);
    snprintf(p->cmdline, sizeof p->cmdline, "./evil \x1b[2J\x9b" "2J \xc2\x9b" "2J \xce\xbb");
    int t0 = profile__thread(p, 100, "ev\x1bil");
    for (int k = 0; k < 10; k++)
        add(p, t0, (int[]){k, (k + 1) % 10}, 2, TAG_NONE, false, 10 + k, 0, 1000);
    batch(v, p, 1000);
    for (int threads = 0; threads < 2; threads++) {
        char *s = top__render(v, p, &(struct top_opts){.threads = threads}, 7, 24);
        int lines = 0;
        for (char *l = s; *l; lines++) {
            char *e = strchr(l, '\n');
            CHECK(e != NULL);
            int cols = 0;
            for (char *c = l; c < e; c++)
                cols += ((unsigned char)*c & 0xc0) != 0x80;
            if (cols > 24)
                UNIT_FAIL("a line of %d columns: %.*s", cols, (int)(e - l), l);
            l = e + 1;
        }
        CHECK_EQ_INT(lines, 7);
        for (char *c = s; *c; c++)
            if ((*c > 0 && *c < 0x20 && *c != '\n') || *c == 0x7f ||
                (c[0] == '\xc2' && (unsigned char)c[1] >= 0x80 && (unsigned char)c[1] < 0xa0) ||
                *c == '\x9b')
                UNIT_FAIL("a control character at %d in:\n%s", (int)(c - s), s);
        free(s);
    }
    char *s = top__render(v, p, &(struct top_opts){0}, 7, 100);
    CHECK(strstr(s, "./evil ?[2J?2J ??2J \xce\xbb\n") != NULL); /* UTF-8 kept */
    free(s);
    s = top__render(v, p, &(struct top_opts){0}, 0, 0);
    CHECK_EQ_STR(s, "");
    free(s);
    top__free(v);
    profile__free(p);
}

TEST(waiting_before_samples)
{
    struct profile *p = new_profile();
    struct top *v = top__new(1.0, false);
    char *s = top__render(v, p, &(struct top_opts){0}, 10, 80);
    CHECK(strstr(s, "\nwaiting for samples...\n") != NULL);
    free(s);
    top__free(v);
    profile__free(p);
}

UNIT_MAIN()

/* A line wider than the screen ends in '>' at its last column (before: cut
 * silently, so two names that differ past the edge looked the same); one
 * that fits does not. */
TEST(cut_lines_marked)
{
    struct profile *p = new_profile();
    struct top *v = top__new(1.0, false);
    int t = profile__thread(p, 100, "prog");
    add(p, t, (int[]){0, 3}, 2, TAG_NONE, false, 10, 500, 500);
    batch(v, p, 1000);
    char *s = top__render(v, p, &(struct top_opts){0}, 10, 24);
    CHECK(strstr(s, "hsspy top - pid 100: ./>\n") == s);
    CHECK(strstr(s, "\n 100.0   100.0  leaf\n") != NULL);
    free(s);
    top__free(v);
    profile__free(p);
}

/* Per thread, the busiest first by time on a CPU: 60 samples of a thread
 * blocked in a safe call came before the 30 of the one computing (before:
 * by samples). Threads that do not fit are counted on the last row. */
TEST(threads_by_cpu_and_counted)
{
    struct profile *p = new_profile();
    struct top *v = top__new(1.0, false);
    snprintf(p->ghc_version, sizeof p->ghc_version, "9.0.2");
    int blocked = profile__thread(p, 100, "prog");
    int busy = profile__thread(p, 101, "prog:w");
    add(p, busy, (int[]){0, 3}, 2, TAG_HASKELL, false, 30, 500, 500);
    struct raw_frame f[2] = {{1, FK_RET, 0}, {4, FK_RET, 0}};
    int64_t st = profile__stack(p, f, 2);
    for (int k = 0; k < 60; k++) {
        struct prof_sample smp = {.t_ns = 500000000u, .thread = (uint32_t)blocked,
                                  .stack = (uint32_t)st, .tag = TAG_SAFE_FFI, .state = 'S',
                                  .cap = -1};
        profile__add(p, &smp);
    }
    for (int k = 0; k < 10; k++)
        add(p, profile__thread(p, 200 + k, "other"), (int[]){2}, 1, TAG_SAFE_FFI, false, 1, 500,
            500);
    batch(v, p, 1000);
    char *s = top__render(v, p, &(struct top_opts){.threads = true}, 40, 100);
    const char *h_busy = strstr(s, "\ntid 101 (prog:w): ");
    const char *h_blocked = strstr(s, "\ntid 100 (prog): ");
    if (!h_busy || !h_blocked || h_busy > h_blocked)
        UNIT_FAIL("the thread on a CPU is not first:\n%s", s);
    CHECK(strstr(s, "more thread") == NULL);
    free(s);
    /* 12 sections of 2 to 4 rows in 12 rows: the last row counts the rest. */
    s = top__render(v, p, &(struct top_opts){.threads = true}, 12, 100);
    int lines = 0;
    for (const char *c = s; *c; c++)
        lines += *c == '\n';
    CHECK_EQ_INT(lines, 12);
    const char *more = strstr(s, " more threads: a taller terminal shows them\n");
    if (!more || more[strlen(" more threads: a taller terminal shows them\n")] != 0 ||
        !strstr(s, "\n... "))
        UNIT_FAIL("no count of the threads left out on the last row:\n%s", s);
    free(s);
    top__free(v);
    profile__free(p);
}

/* A target in a job-control stop is said so in the header. */
TEST(stopped_target_said)
{
    struct profile *p = new_profile();
    struct top *v = top__new(1.0, false);
    p->target_stopped = true;
    char *s = top__render(v, p, &(struct top_opts){0}, 10, 200);
    CHECK(strstr(s, "\npid 100 is stopped (SIGSTOP, or Ctrl-Z in its shell): nothing runs to "
                    "sample; kill -CONT 100 continues it\n") != NULL);
    free(s);
    p->target_stopped = false;
    s = top__render(v, p, &(struct top_opts){0}, 10, 200);
    CHECK(strstr(s, "is stopped") == NULL);
    free(s);
    top__free(v);
    profile__free(p);
}

/* The options that change what is seen are in the header; a thread gone
 * since is marked so in its section. */
TEST(options_and_exited_threads)
{
    struct profile *p = new_profile();
    struct top *v = top__new(1.0, true);
    int t0 = profile__thread(p, 100, "prog");
    int t1 = profile__thread(p, 101, "prog-w");
    add(p, t0, (int[]){0, 3}, 2, TAG_NONE, false, 10, 500, 500);
    add(p, t1, (int[]){1, 4}, 2, TAG_NONE, false, 10, 500, 500);
    p->threads[t1].exited = true;
    batch(v, p, 1000);
    struct top_opts o = {.threads = true, .options = "--idle --nonblocking", .keys = "q quit"};
    char *s = top__render(v, p, &o, 40, 200);
    CHECK(strstr(s, " | by own | --idle --nonblocking | q quit\n") != NULL);
    CHECK(strstr(s, "\ntid 101 (prog-w), exited: ") != NULL);
    CHECK(strstr(s, "\ntid 100 (prog): ") != NULL);
    free(s);
    top__free(v);
    profile__free(p);
}
