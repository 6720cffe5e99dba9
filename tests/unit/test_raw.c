/* The raw recording format: what is written is read back identically, and
 * every damaged file (truncated, bit-flipped, overwritten, with lying
 * lengths and counts) is refused with a message, never a crash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out/raw.h"
#include "out/writer.h"
#include "tests/unit/unit.h"

static void build(struct profile *p)
{
    profile__init(p);
    p->pid = 4321;
    strcpy(p->cmdline, "./prog --x");
    strcpy(p->ghc_version, "9.0.2");
    p->rate_hz = 199;
    p->duration_ns = 3000000000ull;
    p->ticks = 597;
    p->missed_ticks = 3;
    p->errors[WE_NO_SP] = 7;
    p->errors[WE_CCS] = 2;
    hist__add(&p->pause, 5000);
    hist__add(&p->pause, 9000);
    p->short_slices = true;
    p->soft = 50;
    p->soft_breaking = 4;
    p->soft_refused = 6;
    p->soft_short = 1;
    p->soft_idle = 17;
    p->preempt = 900;
    p->preempt_refused = 9;
    p->calls_known = 42;
    p->pause_switched = 2;
    p->cs_drains = 6;
    p->pause_regs_ring = 5;
    p->pause_prefetched = 8;
    p->pause_prefetch_missed = 3;
    p->stop_reads_waiting = 40;
    p->beyond_copy = 12;
    p->soft_again = 23;
    p->pause_between = 29;
    p->handler_entries = 31;
    p->made_with = PROF_MADE_IDLE | PROF_MADE_CCS;
    p->deferred = 987;
    p->cap_held = 654;
    snprintf(p->children, sizeof p->children, "pid 7 (sh) used 0.01 s of CPU while recorded");
    p->copied_bytes = 123456;
    p->copied_threads = 78;
    p->stop_reads = 91;
    p->cs_threads = 11;
    p->cs_refused = 2;
    p->cs_losses = 3;
    p->cs_busy = 4;
    p->fd_short = 5;
    p->fd_limit = 200;
    p->nonblocking = true;
    p->ps_samples = 700;
    p->ps_stale = 30;
    p->ps_lost = 2;
    p->cs_cpu_wide = true;
    p->nice = -10;
    p->self_cpu_ns = 90000000;
    p->first_tick_cpu_ns = 4000000;
    p->cs_errno = 13;
    p->nmodules = 2;
    p->modules = calloc(2, sizeof *p->modules);
    p->modules[0] = (struct prof_module){.path = strdup("/bin/prog"), .lo = 0x400000,
                                         .hi = 0x500000, .bias = 0, .build_id_len = 4};
    memcpy(p->modules[0].build_id, "\x01\x02\x03\x04", 4);
    p->modules[1] = (struct prof_module){.path = strdup("[vdso]"), .lo = 0x7fff0000,
                                         .hi = 0x7fff2000, .bias = 0x7fff0000};
    p->modules[1].blob = malloc(16);
    memset(p->modules[1].blob, 0x7f, 16);
    p->modules[1].blob_len = 16;
    int t0 = profile__thread(p, 4321, "prog");
    int t1 = profile__thread(p, 4322, "prog:w");
    strcpy(p->threads[t1].role, "capability 1");
    struct raw_frame a[3] = {{0x401000, FK_PC, 0}, {0x402000, FK_HS_RET, 0}, {0, FK_HS_UPDATE, 0}};
    struct raw_frame b[2] = {{0x7fff0100, FK_RET, 0}, {WE_NO_SP, FK_INVALID, 0}};
    /* --stack ccs: cost centres by their CostCentre's address. */
    struct raw_frame c[3] = {{0x572400, FK_HS_CCS, 0}, {0x5724c0, FK_HS_CCS, 0}, {WE_CCS, FK_INVALID, 0}};
    int64_t s0 = profile__stack(p, a, 3), s1 = profile__stack(p, b, 2);
    profile__stack(p, c, 3);
    for (int i = 0; i < 10; i++)
        profile__add(p, &(struct prof_sample){.t_ns = (uint64_t)i * 5000000, .thread = (uint32_t)(i & 1 ? t1 : t0),
                                            .stack = (uint32_t)(i % 3 ? s0 : s1), .tag = TAG_HASKELL,
                                            .state = 'R', .cap = (int16_t)(i & 1), .role = ROLE_CAP});
}

/* Names for every frame, as record gives them before writing a raw file:
 * the frame's index in its name, some parts left out. */
static void name_frames(struct profile *p)
{
    p->syms = calloc(p->nframes, sizeof *p->syms);
    p->frame_object = calloc(p->nframes, sizeof *p->frame_object);
    p->cap_syms = p->nnamed = p->nframes;
    for (size_t i = 0; i < p->nframes; i++) {
        char name[32];
        snprintf(name, sizeof name, "Main.f%zu", i);
        p->syms[i].name = strdup(name);
        p->syms[i].object = strdup("prog");
        p->syms[i].lang = i & 1 ? LANG_HASKELL : LANG_C;
        if (i == 1) {
            p->syms[i].symbol = strdup("Main_f1_info");
            p->syms[i].unit = strdup("main");
            p->syms[i].file = strdup("Main.hs");
            p->syms[i].line = 42;
            p->syms[i].span = strdup("42:3-9");
        }
    }
}

static bool same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool same_names(const struct frame_sym *a, const struct frame_sym *b)
{
    return same(a->name, b->name) && same(a->symbol, b->symbol) && same(a->unit, b->unit) &&
           same(a->object, b->object) && same(a->file, b->file) && same(a->span, b->span) &&
           a->line == b->line && a->lang == b->lang;
}

static uint8_t *serialize(const struct profile *p, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    writer__find("raw")->write(p, &(struct out_opts){0}, f);
    fclose(f);
    return (uint8_t *)buf;
}

TEST(round_trip)
{
    struct profile a, b;
    char err[200];
    size_t len;
    build(&a);
    uint8_t *buf = serialize(&a, &len);
    CHECK(len > 100);
    if (raw__parse(buf, len, &b, err, sizeof err) < 0)
        UNIT_FAIL("parse: %s", err);
    CHECK_EQ_INT(b.pid, 4321);
    CHECK_EQ_STR(b.cmdline, "./prog --x");
    CHECK_EQ_STR(b.ghc_version, "9.0.2");
    CHECK(b.rate_hz == 199);
    CHECK_EQ_INT(b.ticks, 597);
    CHECK_EQ_INT(b.missed_ticks, 3);
    CHECK_EQ_INT(b.errors[WE_NO_SP], 7);
    CHECK_EQ_INT(b.errors[WE_CCS], 2);
    CHECK_EQ_INT(b.pause.n, 2);
    CHECK_EQ_INT(b.pause.max_ns, 9000);
    CHECK(b.short_slices && !b.realtime);
    CHECK_EQ_INT(b.soft, 50);
    CHECK_EQ_INT(b.soft_breaking, 4);
    CHECK_EQ_INT(b.soft_refused, 6);
    CHECK_EQ_INT(b.soft_short, 1);
    CHECK_EQ_INT(b.copied_bytes, 123456);
    CHECK_EQ_INT(b.copied_threads, 78);
    CHECK_EQ_INT(b.stop_reads, 91);
    CHECK_EQ_INT(b.cs_threads, 11);
    CHECK_EQ_INT(b.cs_refused, 2);
    CHECK_EQ_INT(b.cs_losses, 3);
    CHECK_EQ_INT(b.cs_busy, 4);
    CHECK_EQ_INT(b.fd_short, 5);
    CHECK_EQ_INT(b.fd_limit, 200);
    CHECK(b.nonblocking);
    CHECK_EQ_INT(b.ps_samples, 700);
    CHECK_EQ_INT(b.ps_stale, 30);
    CHECK_EQ_INT(b.ps_lost, 2);
    CHECK(b.cs_cpu_wide);
    CHECK_EQ_INT(b.nice, -10);
    CHECK_EQ_INT(b.self_cpu_ns, 90000000);
    CHECK_EQ_INT(b.first_tick_cpu_ns, 4000000);
    CHECK_EQ_INT(b.soft_idle, 17);
    CHECK_EQ_INT(b.preempt, 900);
    CHECK_EQ_INT(b.preempt_refused, 9);
    CHECK_EQ_INT(b.calls_known, 42);
    CHECK_EQ_INT(b.pause_switched, 2);
    CHECK_EQ_INT(b.cs_drains, 6);
    CHECK_EQ_INT(b.pause_regs_ring, 5);
    CHECK_EQ_INT(b.pause_prefetched, 8);
    CHECK_EQ_INT(b.pause_prefetch_missed, 3);
    CHECK_EQ_INT(b.stop_reads_waiting, 40);
    CHECK_EQ_INT(b.beyond_copy, 12);
    CHECK_EQ_INT(b.soft_again, 23);
    CHECK_EQ_INT(b.pause_between, 29);
    CHECK_EQ_INT(b.handler_entries, 31);
    CHECK_EQ_INT(b.made_with, PROF_MADE_IDLE | PROF_MADE_CCS);
    CHECK_EQ_INT(b.deferred, 987);
    CHECK_EQ_INT(b.cap_held, 654);
    CHECK(b.made_known);
    CHECK_EQ_STR(b.children, "pid 7 (sh) used 0.01 s of CPU while recorded");
    CHECK_EQ_INT(b.cs_errno, 13);
    CHECK_EQ_INT(b.nmodules, 2);
    CHECK_EQ_STR(b.modules[0].path, "/bin/prog");
    CHECK_EQ_INT(b.modules[0].build_id_len, 4);
    CHECK(memcmp(b.modules[0].build_id, "\x01\x02\x03\x04", 4) == 0);
    CHECK_EQ_INT(b.modules[1].blob_len, 16);
    CHECK_EQ_INT(b.modules[1].bias, 0x7fff0000);
    CHECK_EQ_INT(b.nthreads, 2);
    CHECK_EQ_STR(b.threads[1].role, "capability 1");
    CHECK_EQ_INT(b.threads[1].samples, 5);
    CHECK_EQ_INT(b.threads[0].tags[TAG_HASKELL], 5);
    CHECK_EQ_INT(b.nframes, a.nframes);
    CHECK_EQ_INT(b.nstacks, 3);
    CHECK_EQ_INT(b.nsamples, 10);
    for (size_t i = 0; i < a.nframes; i++) {
        CHECK_EQ_INT(b.frames[i].addr, a.frames[i].addr);
        CHECK_EQ_INT(b.frames[i].kind, a.frames[i].kind);
    }
    struct prof_iter ia, ib;
    struct prof_sample sa, sb;
    CHECK_EQ_INT(profile__iter(&a, &ia), 0);
    CHECK_EQ_INT(profile__iter(&b, &ib), 0);
    while (profile__next(&ia, &sa)) {
        CHECK(profile__next(&ib, &sb));
        CHECK_EQ_INT(sb.t_ns, sa.t_ns);
        CHECK_EQ_INT(sb.thread, sa.thread);
        CHECK_EQ_INT(sb.stack, sa.stack);
        CHECK_EQ_INT(sb.tag, sa.tag);
        CHECK_EQ_INT(sb.state, sa.state);
        CHECK_EQ_INT(sb.flags, sa.flags);
        CHECK_EQ_INT(sb.role, sa.role);
        CHECK_EQ_INT(sb.cap, sa.cap);
    }
    CHECK(!profile__next(&ib, &sb));
    profile__iter_free(&ia);
    profile__iter_free(&ib);
    uint32_t n;
    const uint32_t *ids = profile__stack_ids(&b, 0, &n);
    CHECK_EQ_INT(n, 3);
    CHECK_EQ_INT(b.frames[ids[1]].addr, 0x402000);
    ids = profile__stack_ids(&b, 2, &n);
    CHECK_EQ_INT(n, 3);
    CHECK_EQ_INT(b.frames[ids[0]].kind, FK_HS_CCS);
    CHECK_EQ_INT(b.frames[ids[0]].addr, 0x572400);
    CHECK_EQ_INT(b.frames[ids[1]].kind, FK_HS_CCS);
    CHECK_EQ_INT(b.frames[ids[1]].addr, 0x5724c0);
    CHECK_EQ_INT(b.nsaved, 0); /* a profile not named saves no names */
    free(buf);
    profile__free(&a);
    profile__free(&b);
}

/* The names record gave the frames travel in the file. hsspy report keeps
 * them for frames whose files it could not open (here: none), not for
 * frames with a fixed name, and a raw file written from the report (or
 * from a file read, unnamed) saves them again. */
TEST(saved_names)
{
    struct profile a, b, c, d;
    struct modset none;
    char err[200];
    size_t len, len2, changed;
    build(&a);
    name_frames(&a);
    uint8_t *buf = serialize(&a, &len);
    if (raw__parse(buf, len, &b, err, sizeof err) < 0)
        UNIT_FAIL("parse: %s", err);
    CHECK_EQ_INT(b.nsaved, a.nframes);
    for (size_t i = 0; i < a.nframes; i++)
        CHECK(same_names(&b.saved[i], &a.syms[i]));
    CHECK(b.saved[2].file == NULL && b.saved[2].line == 0);

    /* Written again from the file as read (raw_resize does): still saved. */
    uint8_t *buf2 = serialize(&b, &len2);
    if (raw__parse(buf2, len2, &d, err, sizeof err) < 0)
        UNIT_FAIL("parse again: %s", err);
    CHECK_EQ_INT(d.nsaved, a.nframes);
    CHECK(same_names(&d.saved[1], &a.syms[1]));
    free(buf2);
    profile__free(&d);

    CHECK_EQ_INT(modset__init_saved(&none, NULL, 0, &changed), 0);
    CHECK_EQ_INT(profile__symbolize(&b, &none), 0);
    size_t kept = profile__keep_saved(&b, &none), fixed = 0;
    for (size_t i = 0; i < a.nframes; i++) {
        uint64_t addr;
        if (symbolize__code_addr(&a.frames[i], &addr) || a.frames[i].kind == FK_HS_CCS) {
            CHECK(same_names(&b.syms[i], &a.syms[i]));
        } else {
            CHECK(strcmp(b.syms[i].name, a.syms[i].name) != 0); /* [invalid] and the like */
            fixed++;
        }
    }
    CHECK_EQ_INT(kept, a.nframes - fixed);
    CHECK(fixed >= 2);
    buf2 = serialize(&b, &len2);
    if (raw__parse(buf2, len2, &c, err, sizeof err) < 0)
        UNIT_FAIL("parse the report's raw file: %s", err);
    CHECK_EQ_INT(c.nsaved, a.nframes);
    CHECK(same_names(&c.saved[1], &a.syms[1]));
    modset__free(&none);
    free(buf2);
    free(buf);
    profile__free(&a);
    profile__free(&b);
    profile__free(&c);
}

/* A recording writes its raw file in two steps: all but the names, then,
 * its samples dropped and its frames named, the names. The file reads as
 * one written at once; names never given are empty, none saved. */
TEST(names_after_samples)
{
    struct profile a, b;
    char err[200], *buf = NULL;
    size_t len;
    build(&a);
    FILE *f = open_memstream(&buf, &len);
    CHECK_EQ_INT(raw__write_unnamed(&a, f), 0);
    profile__drop_samples(&a);
    name_frames(&a);
    CHECK_EQ_INT(raw__write_names(&a, f), 0);
    fclose(f);
    if (raw__parse((const uint8_t *)buf, len, &b, err, sizeof err) < 0)
        UNIT_FAIL("parse: %s", err);
    CHECK_EQ_INT(b.nsamples, 10);
    CHECK_EQ_INT(b.nsaved, a.nframes);
    for (size_t i = 0; i < a.nframes; i++)
        CHECK(same_names(&b.saved[i], &a.syms[i]));
    profile__free(&b);
    free(buf);
    profile__free(&a);

    build(&a); /* never named: empty names */
    buf = NULL;
    f = open_memstream(&buf, &len);
    CHECK_EQ_INT(raw__write_unnamed(&a, f), 0);
    CHECK_EQ_INT(raw__write_names(&a, f), 0);
    fclose(f);
    if (raw__parse((const uint8_t *)buf, len, &b, err, sizeof err) < 0)
        UNIT_FAIL("parse unnamed: %s", err);
    CHECK_EQ_INT(b.nsaved, a.nframes);
    for (size_t i = 0; i < a.nframes; i++)
        CHECK(b.saved[i].name == NULL && b.saved[i].file == NULL);
    profile__free(&b);
    free(buf);
    profile__free(&a);
}

/* A names section that does not match the frames is refused. */
/* A raw file is input like the target: its strings (written by a hostile
 * or damaged hand) are read back as text, each byte that is not a '?'. */
TEST(strings_read_as_text)
{
    struct profile a, b;
    char err[200];
    size_t len;
    build(&a);
    name_frames(&a);
    free(a.syms[0].name);
    a.syms[0].name = strdup("esc\x1b]0;X\x07 bad\xff caf\xc3\xa9");
    free(a.syms[1].file);
    a.syms[1].file = strdup("dir\n/M.hs");
    strcpy(a.cmdline, "./prog \x1b[2J");
    strcpy(a.threads[1].comm, "w\r\xfe");
    uint8_t *buf = serialize(&a, &len);
    if (raw__parse(buf, len, &b, err, sizeof err) < 0)
        UNIT_FAIL("parse: %s", err);
    CHECK_EQ_STR(b.saved[0].name, "esc?]0;X? bad? caf\xc3\xa9");
    CHECK_EQ_STR(b.saved[1].file, "dir?/M.hs");
    CHECK_EQ_STR(b.cmdline, "./prog ?[2J");
    CHECK_EQ_STR(b.threads[1].comm, "w??");
    free(buf);
    profile__free(&a);
    profile__free(&b);
}

/* A sample's thread state is printed as it is (dump, json): a byte that
 * is no state letter is a corrupt file. */
TEST(bad_state_refused)
{
    struct profile a, b;
    char err[200];
    size_t len;
    build(&a);
    profile__add(&a, &(struct prof_sample){.t_ns = 60000000, .thread = 0, .stack = 0,
                                          .tag = TAG_HASKELL, .state = '"', .role = ROLE_CAP});
    uint8_t *buf = serialize(&a, &len);
    CHECK(raw__parse(buf, len, &b, err, sizeof err) < 0);
    CHECK(strstr(err, "has thread state 34") != NULL);
    free(buf);
    profile__free(&a);
}

TEST(saved_names_mismatch)
{
    struct profile a, b;
    char err[200];
    size_t len;
    build(&a);
    name_frames(&a);
    uint8_t *buf = serialize(&a, &len);
    /* Find the names section (type 7) and make its count one short. */
    size_t at = 16;
    bool found = false;
    while (at + 12 <= len) {
        uint32_t type, n;
        uint64_t size;
        memcpy(&type, buf + at, 4);
        memcpy(&size, buf + at + 4, 8);
        if (type == 7) {
            memcpy(&n, buf + at + 12, 4);
            n--;
            memcpy(buf + at + 12, &n, 4);
            found = true;
            break;
        }
        at += 12 + size;
    }
    CHECK(found);
    CHECK(raw__parse(buf, len, &b, err, sizeof err) < 0);
    CHECK(strstr(err, "frame names for"));
    free(buf);
    profile__free(&a);
}

/* A file from an earlier hsspy, whose header section ends before the
 * counters added since: it loads, the missing counters read as zero. */
TEST(earlier_header)
{
    struct profile a, b;
    char err[200];
    size_t len;
    uint64_t size;
    build(&a);
    uint8_t *buf = serialize(&a, &len);
    /* "HSSPYRAW", version, section count; then the header section first:
     * type, size, payload. Drop the counts of interrupts deferred and of
     * ticks put off at half a CPU (cut -4),
     * then also the options record was given (cut -3),
     * then also the count of stops at a signal handler's entry (cut -2), then also the count of stops resumed between reads
     * of blocked threads and the count of those read again (cut -1), then also the word on children, then also the count
     * of samples whose C stack went beyond the copy, then also the count of reads while registers were
     * awaited, then also the counts of stops whose C stack was prefetched,
     * then also the count of stops whose registers came from their
     * switch's sample, then also the count of rings read
     * between ticks, then also the count of pauses timed from a switch,
     * then also the count of calls named by registers,
     * then also the counts of threads sampled preempted,
     * then also the count of blocked threads idle again, then also the
     * first tick's CPU, then also the nice
     * value, then also the flag of
     * per-CPU switch records, then also the --nonblocking figures (a flag and
     * three counters), then also the figures of files (two counters), then
     * also the context-switch figures before them (four counters and an
     * errno), then also the counter before them (reads
     * per stop), then also the two before it (copied bytes and threads),
     * then also the three before them (soft_*): files of earlier hsspys. */
    const size_t at = 8 + 4 + 4 + 4;
    CHECK(len > at + 8);
    memcpy(&size, buf + at, 8);
    static const int cuts[] = {-4, -3, -2, -1, 0, 8, 16, 32, 40, 48, 56, 64, 80, 88, 96, 97, 98, 123, 139, 175, 183, 199, 223};
    /* (The counts of threads read again and of stops resumed between
     * reads; the word on children: a length and its bytes.) */
    const int deferred = 16, made = 1, newest = 8, again = 16, words = 4 + (int)strlen(a.children);
    for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
        int cut = cuts[k];
        int drop = deferred + (cut == -4 ? 0 : made) + (cut >= -2 ? newest : 0) +
                   (cut <= -2 ? 0 : again) + (cut < 0 ? 0 : words + cut);
        uint64_t shorter = size - (uint64_t)drop;
        uint8_t *old = malloc(len);
        CHECK(old != NULL);
        memcpy(old, buf, at);
        memcpy(old + at, &shorter, 8);
        memcpy(old + at + 8, buf + at + 8, (size_t)shorter);
        memcpy(old + at + 8 + shorter, buf + at + 8 + size, len - (at + 8 + size));
        if (raw__parse(old, len - (size_t)drop, &b, err, sizeof err) < 0)
            UNIT_FAIL("parse without the last %d bytes of the header: %s", drop, err);
        CHECK_EQ_INT(b.deferred, 0);
        CHECK_EQ_INT(b.cap_held, 0);
        CHECK(b.made_known == (cut == -4));
        CHECK_EQ_INT(b.made_with, cut == -4 ? PROF_MADE_IDLE | PROF_MADE_CCS : 0);
        CHECK_EQ_INT(b.handler_entries, cut <= -3 ? 31 : 0);
        CHECK_EQ_INT(b.soft_again, cut <= -2 ? 23 : 0);
        CHECK_EQ_INT(b.pause_between, cut <= -2 ? 29 : 0);
        CHECK_EQ_STR(b.children, cut < 0 ? a.children : "");
        CHECK_EQ_INT(b.beyond_copy, cut <= 0 ? 12 : 0);
        CHECK_EQ_INT(b.stop_reads_waiting, cut <= 8 ? 40 : 0);
        CHECK_EQ_INT(b.pause_prefetched, cut <= 16 ? 8 : 0);
        CHECK_EQ_INT(b.pause_prefetch_missed, cut <= 16 ? 3 : 0);
        CHECK_EQ_INT(b.pause_regs_ring, cut <= 32 ? 5 : 0);
        CHECK_EQ_INT(b.cs_drains, cut <= 40 ? 6 : 0);
        CHECK_EQ_INT(b.pause_switched, cut <= 48 ? 2 : 0);
        CHECK_EQ_INT(b.calls_known, cut <= 56 ? 42 : 0);
        CHECK_EQ_INT(b.preempt, cut <= 64 ? 900 : 0);
        CHECK_EQ_INT(b.preempt_refused, cut <= 64 ? 9 : 0);
        CHECK_EQ_INT(b.soft_idle, cut <= 80 ? 17 : 0);
        CHECK_EQ_INT(b.first_tick_cpu_ns, cut <= 88 ? 4000000 : 0);
        CHECK_EQ_INT(b.self_cpu_ns, 90000000);
        CHECK_EQ_INT(b.nice, cut <= 96 ? -10 : 0);
        CHECK(b.cs_cpu_wide == (cut <= 97));
        CHECK(b.nonblocking == (cut <= 98));
        CHECK_EQ_INT(b.ps_samples, cut <= 98 ? 700 : 0);
        CHECK_EQ_INT(b.ps_lost, cut <= 98 ? 2 : 0);
        CHECK_EQ_INT(b.fd_short, cut <= 123 ? 5 : 0);
        CHECK_EQ_INT(b.fd_limit, cut <= 123 ? 200 : 0);
        CHECK_EQ_INT(b.cs_threads, cut <= 139 ? 11 : 0);
        CHECK_EQ_INT(b.cs_losses, cut <= 139 ? 3 : 0);
        CHECK_EQ_INT(b.cs_errno, cut <= 139 ? 13 : 0);
        CHECK_EQ_INT(b.cs_busy, cut <= 139 ? 4 : 0);
        CHECK_EQ_INT(b.stop_reads, cut <= 175 ? 91 : 0);
        CHECK_EQ_INT(b.copied_bytes, cut <= 183 ? 123456 : 0);
        CHECK_EQ_INT(b.copied_threads, cut <= 183 ? 78 : 0);
        CHECK_EQ_INT(b.soft_short, cut <= 199 ? 1 : 0);
        CHECK_EQ_INT(b.soft, 50);
        CHECK_EQ_INT(b.nsamples, 10);
        profile__free(&b);
        free(old);
    }
    free(buf);
    profile__free(&a);
}

TEST(clear_errors)
{
    struct profile a, b;
    char err[200];
    size_t len;
    build(&a);
    uint8_t *buf = serialize(&a, &len);
    CHECK(raw__parse((const uint8_t *)"hello", 5, &b, err, sizeof err) < 0);
    CHECK(strstr(err, "not an hsspy raw file"));
    /* An empty file, one cut in its header, one gzip made: said so. */
    CHECK(raw__parse((const uint8_t *)"", 0, &b, err, sizeof err) < 0);
    CHECK_EQ_STR(err, "empty: there is no recording in it");
    CHECK(raw__parse(buf, 10, &b, err, sizeof err) < 0);
    CHECK_EQ_STR(err, "truncated: the file ends in its header (10 bytes)");
    CHECK(raw__parse((const uint8_t *)"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10, &b, err,
                     sizeof err) < 0);
    CHECK(strstr(err, "compressed with gzip"));
    CHECK(raw__parse(buf, len / 2, &b, err, sizeof err) < 0);
    CHECK(strstr(err, "truncated"));
    /* Two recordings in one file (cat a.raw b.raw), or junk after one: the
     * reader read the first and said nothing. */
    uint8_t *twice = malloc(2 * len);
    CHECK(twice != NULL);
    memcpy(twice, buf, len);
    memcpy(twice + len, buf, len);
    CHECK(raw__parse(twice, len + 1, &b, err, sizeof err) < 0);
    CHECK(strstr(err, "corrupt: 1 bytes after its last section"));
    CHECK(raw__parse(twice, 2 * len, &b, err, sizeof err) < 0);
    free(twice);
    /* Ending where a section should begin: said so (was "a section header
     * runs past the end of its section"). */
    uint64_t first;
    memcpy(&first, buf + 20, 8);
    CHECK(raw__parse(buf, 28 + (size_t)first, &b, err, sizeof err) < 0);
    CHECK(strstr(err, "truncated: the file ends before its section 2 of "));
    /* A sample's time far past the recording's end: damage (a flipped
     * byte gave a trace an event at 62,672 s of a 3 s recording). */
    struct profile late;
    build(&late);
    profile__add(&late, &(struct prof_sample){.t_ns = 62672000000000ull, .thread = 0, .stack = 0,
                                              .tag = TAG_HASKELL, .state = 'R', .cap = -1});
    size_t late_len;
    uint8_t *late_buf = serialize(&late, &late_len);
    CHECK(raw__parse(late_buf, late_len, &b, err, sizeof err) < 0);
    CHECK(strstr(err, "corrupt: sample 10 at 62672.0 s of a 3.0 s recording"));
    free(late_buf);
    profile__free(&late);
    buf[8] = 9; /* version */
    CHECK(raw__parse(buf, len, &b, err, sizeof err) < 0);
    CHECK(strstr(err, "version 9"));
    free(buf);
    profile__free(&a);
}

/* A first tick that took more CPU than the whole recording is nonsense (a
 * corrupt file): read as unknown, so that the report counts every tick. */
TEST(first_tick_nonsense)
{
    struct profile a, b;
    char err[200];
    size_t len;
    build(&a);
    a.first_tick_cpu_ns = a.self_cpu_ns + 1;
    uint8_t *buf = serialize(&a, &len);
    if (raw__parse(buf, len, &b, err, sizeof err) < 0)
        UNIT_FAIL("parse: %s", err);
    CHECK_EQ_INT(b.self_cpu_ns, 90000000);
    CHECK_EQ_INT(b.first_tick_cpu_ns, 0);
    profile__free(&b);
    free(buf);
    profile__free(&a);
}

static uint64_t rng = 0x243f6a8885a308d3ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

TEST(fuzz_never_crashes)
{
    struct profile a, b;
    char err[200];
    size_t len;
    int accepted = 0, rejected = 0;
    build(&a);
    name_frames(&a);
    uint8_t *good = serialize(&a, &len);
    for (int iter = 0; iter < 100000; iter++) {
        size_t n = len;
        uint8_t *m = malloc(len + 64);
        memcpy(m, good, len);
        switch (next() % 5) {
        case 0: /* truncate */
            n = next() % len;
            break;
        case 1: /* flip bits */
            for (int k = 0; k < 1 + (int)(next() % 4); k++)
                m[next() % len] ^= (uint8_t)(1u << (next() % 8));
            break;
        case 2: /* random bytes over a stretch */
            for (size_t k = next() % len, e = k + next() % 32; k < e && k < len; k++)
                m[k] = (uint8_t)next();
            break;
        case 3: { /* a lying 32-bit length or count somewhere */
            size_t at = next() % (len - 4);
            uint32_t v = (uint32_t)next() % 4 == 0 ? 0xffffffffu : (uint32_t)(next() % 100000);
            memcpy(m + at, &v, 4);
            break;
        }
        default: /* extra garbage at the end */
            for (int k = 0; k < 64; k++)
                m[len + (size_t)k] = (uint8_t)next();
            n = len + next() % 64;
            break;
        }
        /* The parser gets exactly n bytes: ASan sees any read beyond. */
        uint8_t *exact = malloc(n ? n : 1);
        memcpy(exact, m, n);
        if (raw__parse(exact, n, &b, err, sizeof err) == 0) {
            accepted++;
            /* Whatever was accepted is consistent. */
            struct prof_iter it;
            struct prof_sample x;
            if (profile__iter(&b, &it) == 0) {
                while (profile__next(&it, &x))
                    if (x.thread >= b.nthreads || x.stack >= b.nstacks)
                        UNIT_FAIL("accepted an inconsistent sample at iteration %d", iter);
                profile__iter_free(&it);
            }
            profile__free(&b);
        } else {
            rejected++;
            if (!err[0])
                UNIT_FAIL("rejected without a message at iteration %d", iter);
        }
        free(exact);
        free(m);
    }
    CHECK(rejected > 1000);
    CHECK(accepted > 100); /* flips in names and times are harmless */
    free(good);
    profile__free(&a);
}

UNIT_MAIN()
