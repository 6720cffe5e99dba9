/* test_psample.c - reading perf samples (--nonblocking): the records of a
 * ring's bytes, each sample with its thread (wrap-around, lost and
 * malformed records, samples without user registers, short stack copies),
 * context-switch records, then
 * the real per-CPU events on a thread of this process spinning in a known
 * function, their switch records of a thread that naps, and their
 * instants taking a new period; and events that record switches alone. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sampler/proc.h"
#include "sampler/psample.h"
#include "tests/unit/unit.h"

UNIT_MAIN()

#define RING 32768 /* bytes: a power of two, room for a few samples */

static uint8_t ring[RING];

static uint64_t put_bytes(uint64_t pos, const void *src, size_t len)
{
    for (size_t i = 0; i < len; i++)
        ring[(pos + i) % RING] = ((const uint8_t *)src)[i];
    return pos + len;
}

static uint64_t put_u64(uint64_t pos, uint64_t v) { return put_bytes(pos, &v, 8); }

/* A sample record as hsspy asks for them: tid, time, user registers (abi
 * and the 18 of REGS_MASK, from `base` up: rbp = base + 6, rsp = base + 7,
 * rip = base + 8), then `stack` bytes of stack (each its offset & 0xff),
 * of which `dyn` were copied. Returns the position after it. */
static uint64_t put_sample(uint64_t pos, uint64_t t, uint64_t abi, uint64_t base, uint64_t stack,
                           uint64_t dyn)
{
    uint64_t size = 8 + 8 + 8 + 8 + (abi ? 18 * 8 : 0) + 8 + (stack ? stack + 8 : 0);
    struct perf_event_header h = {PERF_RECORD_SAMPLE, 0, (uint16_t)size};
    uint64_t p = put_bytes(pos, &h, sizeof h);
    p = put_u64(p, 42ull << 32 | 42); /* pid, tid */
    p = put_u64(p, t);
    p = put_u64(p, abi);
    for (int i = 0; abi && i < 18; i++)
        p = put_u64(p, base + (uint64_t)i);
    p = put_u64(p, stack);
    for (uint64_t i = 0; i < stack; i++) {
        uint8_t b = (uint8_t)i;
        p = put_bytes(p, &b, 1);
    }
    if (stack)
        p = put_u64(p, dyn);
    return p;
}

static uint64_t put_lost(uint64_t pos, uint64_t n)
{
    struct perf_event_header h = {PERF_RECORD_LOST, 0, 24};
    uint64_t p = put_bytes(pos, &h, sizeof h);
    p = put_u64(p, 7); /* id */
    return put_u64(p, n);
}

/* The newest well-formed sample of the records from *tail to head, as a
 * tick takes it, counting samples and lost ones. 1 (in *hit) or 0. */
static int newest(uint64_t *tail, uint64_t head, struct psample_hit *hit, unsigned long *samples,
                  unsigned long *lost);

static void check_stack_bytes(const struct psample_hit *hit, uint32_t len)
{
    static uint8_t out[PSAMPLE_STACK];
    CHECK_EQ_INT(hit->stack_len, len);
    psample__ring_copy(ring, RING, hit->stack_pos, out, len);
    for (uint32_t i = 0; i < len; i++)
        if (out[i] != (uint8_t)i)
            UNIT_FAIL("stack byte %u is %u, expected %u", i, out[i], (uint8_t)i);
}

TEST(newest_of_several)
{
    uint64_t tail = 0, h = 0;
    unsigned long samples = 0, lost = 0;
    struct psample_hit hit = {0};
    memset(ring, 0, sizeof ring);
    h = put_sample(h, 100, PERF_SAMPLE_REGS_ABI_64, 1000, 4096, 4096);
    h = put_sample(h, 200, PERF_SAMPLE_REGS_ABI_64, 2000, 2048, 2048);
    CHECK_EQ_INT(newest(&tail, h, &hit, &samples, &lost), 1);
    CHECK_EQ_INT(tail, h);
    CHECK_EQ_INT(samples, 2);
    CHECK_EQ_INT(lost, 0);
    CHECK_EQ_INT(hit.t_ns, 200);
    CHECK_EQ_INT(hit.regs.rax, 2000);
    CHECK_EQ_INT(hit.regs.rbp, 2006);
    CHECK_EQ_INT(hit.regs.rsp, 2007);
    CHECK_EQ_INT(hit.regs.rip, 2008);
    CHECK_EQ_INT(hit.regs.r8, 2010);
    CHECK_EQ_INT(hit.regs.r13, 2015);
    CHECK_EQ_INT(hit.regs.r15, 2017);
    CHECK_EQ_INT(hit.regs.fs_base, 0);
    check_stack_bytes(&hit, 2048);
    /* Nothing new: no sample. */
    CHECK_EQ_INT(newest(&tail, h, &hit, &samples, &lost), 0);
    CHECK_EQ_INT(samples, 2);
}

TEST(wraps_around)
{
    uint64_t start = RING - 300; /* the stack straddles the end of the ring */
    uint64_t tail = start, h;
    unsigned long samples = 0, lost = 0;
    struct psample_hit hit = {0};
    memset(ring, 0, sizeof ring);
    h = put_sample(start, 5, PERF_SAMPLE_REGS_ABI_64, 10, 1024, 1024);
    CHECK_EQ_INT(newest(&tail, h, &hit, &samples, &lost), 1);
    CHECK_EQ_INT(hit.regs.rip, 18);
    CHECK(hit.stack_pos % RING > RING - 300);
    check_stack_bytes(&hit, 1024);
}

TEST(short_copy_and_no_stack)
{
    uint64_t tail = 0, h = 0;
    unsigned long samples = 0, lost = 0;
    struct psample_hit hit = {0};
    memset(ring, 0, sizeof ring);
    /* The kernel could copy only 512 of 4096 bytes (the top of the stack). */
    h = put_sample(h, 1, PERF_SAMPLE_REGS_ABI_64, 0, 4096, 512);
    CHECK_EQ_INT(newest(&tail, h, &hit, &samples, &lost), 1);
    check_stack_bytes(&hit, 512);
    /* No stack at all (size 0, then no dyn_size). */
    h = put_sample(h, 2, PERF_SAMPLE_REGS_ABI_64, 0, 0, 0);
    CHECK_EQ_INT(newest(&tail, h, &hit, &samples, &lost), 1);
    CHECK_EQ_INT(hit.t_ns, 2);
    CHECK_EQ_INT(hit.stack_len, 0);
}

TEST(no_user_registers_is_no_sample)
{
    uint64_t tail = 0, h = 0;
    unsigned long samples = 0, lost = 0;
    struct psample_hit hit = {0};
    memset(ring, 0, sizeof ring);
    h = put_sample(h, 1, PERF_SAMPLE_REGS_ABI_64, 500, 256, 256);
    /* Taken with no user registers (ABI_NONE): counted, not used. */
    h = put_sample(h, 2, PERF_SAMPLE_REGS_ABI_NONE, 0, 0, 0);
    CHECK_EQ_INT(newest(&tail, h, &hit, &samples, &lost), 1);
    CHECK_EQ_INT(samples, 2);
    CHECK_EQ_INT(hit.t_ns, 1); /* the older one, which has them */
    CHECK_EQ_INT(hit.regs.rip, 508);
}

TEST(lost_records_counted)
{
    uint64_t tail = 0, h = 0;
    unsigned long samples = 0, lost = 0;
    struct psample_hit hit = {0};
    memset(ring, 0, sizeof ring);
    h = put_lost(h, 5);
    h = put_sample(h, 9, PERF_SAMPLE_REGS_ABI_64, 0, 128, 128);
    h = put_lost(h, 2);
    CHECK_EQ_INT(newest(&tail, h, &hit, &samples, &lost), 1);
    CHECK_EQ_INT(lost, 7);
    CHECK_EQ_INT(samples, 1);
    CHECK_EQ_INT(hit.t_ns, 9);
}

TEST(malformed_records)
{
    uint64_t tail = 0, h = 0, h2;
    unsigned long samples = 0, lost = 0;
    struct psample_hit hit = {0};
    memset(ring, 0, sizeof ring);
    h = put_sample(h, 1, PERF_SAMPLE_REGS_ABI_64, 0, 64, 64);
    /* A header claiming more bytes than were written: the scan stops. */
    struct perf_event_header bad = {PERF_RECORD_SAMPLE, 0, 4000};
    h2 = put_bytes(h, &bad, sizeof bad);
    h2 = put_u64(h2, 0);
    CHECK_EQ_INT(newest(&tail, h2, &hit, &samples, &lost), 1);
    CHECK_EQ_INT(hit.t_ns, 1);
    CHECK_EQ_INT(tail, h2); /* and does not read it again */
    /* A zero-sized header: no endless loop. */
    memset(ring, 0, sizeof ring);
    tail = 0;
    CHECK_EQ_INT(newest(&tail, 256, &hit, &samples, &lost), 0);
    CHECK_EQ_INT(tail, 256);
    /* A stack size larger than a sample can have, or than its record. */
    memset(ring, 0, sizeof ring);
    tail = 0;
    h = put_sample(0, 3, PERF_SAMPLE_REGS_ABI_64, 0, PSAMPLE_STACK + 8, PSAMPLE_STACK + 8);
    CHECK_EQ_INT(newest(&tail, h, &hit, &samples, &lost), 0);
    /* A record too short for its registers. */
    memset(ring, 0, sizeof ring);
    tail = 0;
    struct perf_event_header shortrec = {PERF_RECORD_SAMPLE, 0, 48};
    h = put_bytes(0, &shortrec, sizeof shortrec);
    h = put_u64(h, 0);
    h = put_u64(h, 0);
    h = put_u64(h, PERF_SAMPLE_REGS_ABI_64);
    h = put_u64(h, 0);
    h = put_u64(h, 0);
    CHECK_EQ_INT(newest(&tail, h, &hit, &samples, &lost), 0);
    /* A head that ran more than a ring ahead (or behind): only the newest
     * ring's worth is looked at. */
    memset(ring, 0, sizeof ring);
    tail = 0;
    h = put_sample(10 * RING, 4, PERF_SAMPLE_REGS_ABI_64, 0, 64, 64);
    CHECK_EQ_INT(newest(&tail, h, &hit, &samples, &lost), 0);
    CHECK_EQ_INT(tail, h);
}

struct fold {
    struct psample_hit *hit;
    int found;
    unsigned long *samples, *lost;
};

static void keep_newest(void *ctx, const struct psample_rec *r)
{
    struct fold *f = ctx;
    if (r->type == PERF_RECORD_LOST) {
        *f->lost += r->lost;
        return;
    }
    (*f->samples)++; /* (a sample, well-formed or not: type 0) */
    if (r->type == PERF_RECORD_SAMPLE) {
        *f->hit = r->hit;
        f->found = 1;
    }
}

static int newest(uint64_t *tail, uint64_t head, struct psample_hit *hit, unsigned long *samples,
                  unsigned long *lost)
{
    struct fold f = {hit, 0, samples, lost};
    psample__each(ring, RING, tail, head, hit->src, keep_newest, &f);
    return f.found;
}

static struct psample_rec seen[16];
static int nseen;

static void note(void *ctx, const struct psample_rec *r)
{
    (void)ctx;
    if (nseen < 16)
        seen[nseen++] = *r;
}

/* A sample record of thread tid (put_sample writes 42). */
static uint64_t put_sample_of(uint64_t pos, uint32_t tid, uint64_t t)
{
    uint64_t end = put_sample(pos, t, PERF_SAMPLE_REGS_ABI_64, 300, 256, 256);
    put_u64(pos + sizeof(struct perf_event_header), (uint64_t)tid << 32 | 1);
    return end;
}

TEST(each_record_with_its_thread)
{
    uint64_t tail = 0, h = 0;
    struct psample src;
    memset(ring, 0, sizeof ring);
    memset(&src, 0, sizeof src);
    nseen = 0;
    h = put_sample_of(h, 7, 10);
    h = put_sample(h, 11, PERF_SAMPLE_REGS_ABI_64, 300, 256, 256);
    /* A record of another type (what a CPU-wide ring might also hold):
     * skipped. */
    struct perf_event_header other = {PERF_RECORD_COMM, 0, 24};
    uint64_t p = put_bytes(h, &other, sizeof other);
    p = put_u64(p, 0);
    h = put_u64(p, 0);
    struct perf_event_header lh = {PERF_RECORD_LOST, 0, 24};
    p = put_bytes(h, &lh, sizeof lh);
    p = put_u64(p, 1);
    h = put_u64(p, 3); /* lost */
    h = put_sample(h, 12, PERF_SAMPLE_REGS_ABI_NONE, 0, 0, 0);
    psample__each(ring, RING, &tail, h, &src, note, NULL);
    CHECK_EQ_INT(tail, h);
    CHECK_EQ_INT(nseen, 4);
    CHECK_EQ_INT(seen[0].type, PERF_RECORD_SAMPLE);
    CHECK_EQ_INT(seen[0].tid, 7);
    CHECK_EQ_INT(seen[0].hit.t_ns, 10);
    CHECK_EQ_INT(seen[1].type, PERF_RECORD_SAMPLE);
    CHECK_EQ_INT(seen[1].tid, 42);
    CHECK_EQ_INT(seen[1].hit.t_ns, 11);
    CHECK_EQ_INT(seen[1].hit.regs.rip, 308);
    CHECK(seen[1].hit.src == &src);
    CHECK_EQ_INT(seen[1].hit.stack_len, 256);
    CHECK_EQ_INT(seen[2].type, PERF_RECORD_LOST);
    CHECK_EQ_INT(seen[2].lost, 3);
    /* A sample without user registers (a kernel thread): told, as no
     * sample (type 0). */
    CHECK_EQ_INT(seen[3].type, 0);
    CHECK_EQ_INT(seen[3].tid, 42);
    /* Nothing new: nothing told. */
    psample__each(ring, RING, &tail, h, &src, note, NULL);
    CHECK_EQ_INT(nseen, 4);
}

/* A sample of a switch (psample_set__open_switches) of thread 9 of
 * process 8: time t, then the first nregs of the 18 user registers, from
 * base up, and nothing after them. */
static uint64_t put_regs_sample(uint64_t pos, uint64_t t, uint64_t base, int nregs)
{
    struct perf_event_header hd = {PERF_RECORD_SAMPLE, 0, (uint16_t)(8 + 8 + 8 + 8 + nregs * 8)};
    uint64_t p = put_bytes(pos, &hd, sizeof hd);
    p = put_u64(p, 9ull << 32 | 8); /* pid 8, tid 9 */
    p = put_u64(p, t);
    p = put_u64(p, PERF_SAMPLE_REGS_ABI_64);
    for (int i = 0; i < nregs; i++)
        p = put_u64(p, base + (uint64_t)i);
    return p;
}

/* The samples of switches: user registers and nothing after them; one cut
 * short is no sample. */
TEST(registers_alone)
{
    uint64_t tail = 0, h = 0;
    struct psample src;
    memset(ring, 0, sizeof ring);
    memset(&src, 0, sizeof src);
    src.regs_only = true;
    nseen = 0;
    h = put_regs_sample(h, 77, 500, 18);
    h = put_regs_sample(h, 78, 600, 17);
    psample__each(ring, RING, &tail, h, &src, note, NULL);
    CHECK_EQ_INT(tail, h);
    CHECK_EQ_INT(nseen, 2);
    CHECK_EQ_INT(seen[0].type, PERF_RECORD_SAMPLE);
    CHECK_EQ_INT(seen[0].pid, 8);
    CHECK_EQ_INT(seen[0].tid, 9);
    CHECK_EQ_INT(seen[0].t_ns, 77);
    CHECK_EQ_INT(seen[0].hit.regs.rbp, 506);
    CHECK_EQ_INT(seen[0].hit.regs.rsp, 507);
    CHECK_EQ_INT(seen[0].hit.regs.rip, 508);
    CHECK_EQ_INT(seen[0].hit.regs.r15, 517);
    CHECK_EQ_INT(seen[0].hit.stack_len, 0);
    CHECK_EQ_INT(seen[1].type, 0);
    /* The same bytes read as samples with a stack: the first lacks its
     * stack's size, no sample either. */
    src.regs_only = false;
    nseen = 0;
    tail = 0;
    psample__each(ring, RING, &tail, h, &src, note, NULL);
    CHECK_EQ_INT(nseen, 2);
    CHECK_EQ_INT(seen[0].type, 0);
}

/* A context-switch record as the per-CPU events write them: the other
 * thread, then the sample_id (pid, tid of the thread switching, time). */
static uint64_t put_switch(uint64_t pos, uint32_t pid, uint32_t tid, bool in, bool preempted,
                           uint64_t t)
{
    uint16_t misc = (uint16_t)((in ? 0 : PERF_RECORD_MISC_SWITCH_OUT) |
                               (preempted ? PERF_RECORD_MISC_SWITCH_OUT_PREEMPT : 0));
    struct perf_event_header h = {PERF_RECORD_SWITCH_CPU_WIDE, misc, 32};
    uint64_t p = put_bytes(pos, &h, sizeof h);
    p = put_u64(p, 999ull << 32 | 999); /* the thread on the other side */
    p = put_u64(p, (uint64_t)tid << 32 | pid);
    return put_u64(p, t);
}

TEST(switch_records)
{
    uint64_t tail = RING - 40, h; /* (the second record wraps) */
    struct psample src;
    memset(ring, 0, sizeof ring);
    memset(&src, 0, sizeof src);
    nseen = 0;
    h = put_switch(tail, 5, 6, true, false, 100);
    h = put_switch(h, 5, 6, false, true, 200);
    h = put_switch(h, 5, 7, false, false, 300);
    h = put_sample_of(h, 6, 400);
    /* Too short for its sample_id: skipped. */
    struct perf_event_header shortsw = {PERF_RECORD_SWITCH_CPU_WIDE, 0, 16};
    uint64_t p = put_bytes(h, &shortsw, sizeof shortsw);
    h = put_u64(p, 0);
    h = put_switch(h, 5, 6, true, false, 500);
    psample__each(ring, RING, &tail, h, &src, note, NULL);
    CHECK_EQ_INT(tail, h);
    CHECK_EQ_INT(nseen, 5);
    CHECK_EQ_INT(seen[0].type, PERF_RECORD_SWITCH_CPU_WIDE);
    CHECK_EQ_INT(seen[0].pid, 5);
    CHECK_EQ_INT(seen[0].tid, 6);
    CHECK(seen[0].in && !seen[0].preempted);
    CHECK_EQ_INT(seen[0].t_ns, 100);
    CHECK(!seen[1].in && seen[1].preempted); /* out, still runnable */
    CHECK_EQ_INT(seen[1].t_ns, 200);
    CHECK_EQ_INT(seen[2].tid, 7);
    CHECK(!seen[2].in && !seen[2].preempted); /* out, to sleep */
    CHECK_EQ_INT(seen[3].type, PERF_RECORD_SAMPLE);
    CHECK_EQ_INT(seen[3].tid, 6);
    CHECK_EQ_INT(seen[3].pid, 1);
    CHECK_EQ_INT(seen[3].t_ns, 400);
    CHECK_EQ_INT(seen[4].type, PERF_RECORD_SWITCH_CPU_WIDE);
    CHECK_EQ_INT(seen[4].t_ns, 500);
}

/* Whether opening the per-CPU events failed for want of the right (or of
 * perf events at all), not for a fault of hsspy's. */
static bool not_allowed(int err)
{
    return err == -EACCES || err == -EPERM || err == -ENOSYS || err == -ENOENT ||
           err == -EOPNOTSUPP;
}

/* The real events, on a thread spinning in spin_here with a marker on its
 * stack. */
static atomic_int phase;
static atomic_int tid_of;
static volatile uint64_t *marker_at;

static __attribute__((noinline)) void spin_here(void)
{
    while (atomic_load_explicit(&phase, memory_order_relaxed) == 1)
        ;
}

static void *spinner(void *arg)
{
    volatile uint64_t marker[2] = {0x5eed5eed5eed5eedull, 0};
    (void)arg;
    marker_at = marker;
    atomic_store(&tid_of, (int)syscall(SYS_gettid));
    spin_here();
    marker[1] = 1;
    return NULL;
}

static void nap_ms(int ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The spinner's samples: how many, the newest (its stack copied out);
 * and the context switches of the napping thread (this one): how many
 * times it was given a CPU, left one to sleep, or was preempted. */
struct mine {
    pid_t tid, napper, child;
    int n, others;
    int foreign, child_switches; /* samples of other processes; switches of child */
    struct psample_hit hit;
    uint8_t stack[PSAMPLE_STACK];
    int ins, slept, preempted;
};

static void take_mine(void *ctx, const struct psample_rec *r)
{
    struct mine *m = ctx;
    if (r->type == PERF_RECORD_SWITCH_CPU_WIDE && r->tid == m->napper && r->pid == getpid()) {
        m->ins += r->in;
        m->slept += !r->in && !r->preempted;
        m->preempted += r->preempted;
    }
    if (r->type == PERF_RECORD_SWITCH_CPU_WIDE && m->child && r->pid == m->child)
        m->child_switches++;
    if (r->type != PERF_RECORD_SAMPLE)
        return;
    if (r->pid != getpid())
        m->foreign++;
    if (r->tid != m->tid) {
        m->others++;
        return;
    }
    m->n++;
    m->hit = r->hit;
    psample__copy_stack(&r->hit, m->stack);
}

/* The spinner's samples over ms milliseconds, read every 5 ms. */
static void collect(struct psample_set *s, struct mine *m, int ms)
{
    psample_set__read(s, take_mine, m); /* (older ones: dropped) */
    psample_set__release(s);
    m->n = m->others = 0;
    m->ins = m->slept = m->preempted = 0;
    for (int t = 0; t < ms; t += 5) {
        nap_ms(5);
        psample_set__read(s, take_mine, m);
        psample_set__release(s);
    }
}

TEST(real_samples_and_rephase)
{
    pthread_t t;
    atomic_store(&phase, 1);
    CHECK(pthread_create(&t, NULL, spinner, NULL) == 0);
    while (!atomic_load(&tid_of))
        nap_ms(1);
    struct psample_set s;
    int err = psample_set__open(&s, 1000000, PSAMPLE_PAGES);
    if (err < 0) {
        atomic_store(&phase, 2);
        pthread_join(t, NULL);
        if (not_allowed(err))
            UNIT_SKIP("perf events on every CPU are not allowed here (%s): --nonblocking "
                      "is refused", strerror(-err));
        UNIT_FAIL("psample_set__open: %s", strerror(-err));
    }
    static struct mine m;
    m.tid = atomic_load(&tid_of);
    m.napper = (pid_t)syscall(SYS_gettid);
    /* Opened disabled: nothing until enabled. */
    collect(&s, &m, 50);
    CHECK_EQ_INT(m.n, 0);
    CHECK_EQ_INT(m.ins, 0);
    psample_set__enable(&s);
    collect(&s, &m, 300);
    /* The sampling events record this thread's naps too (counted exactly
     * by real_switch_records, where no sample fills the ring). */
    if (m.slept < 1 || m.ins < 1)
        UNIT_FAIL("60 naps, seen leaving a CPU to sleep %d times and given one %d times",
                  m.slept, m.ins);
    uint64_t now = now_ns();
    int fast = m.n;
    /* A sample a millisecond of wall time, and the spinner never sleeps:
     * nearly every instant finds it on a CPU. */
    if (fast < 150)
        UNIT_FAIL("%d samples of a spinning thread in 300 ms at 1 kHz", fast);
    /* Taken in spin_here, on the spinner's stack, just now. */
    uint64_t f = (uint64_t)(uintptr_t)spin_here;
    if (!(m.hit.regs.rip >= f && m.hit.regs.rip < f + 64))
        UNIT_FAIL("rip %#llx is not in spin_here (%#llx)", (unsigned long long)m.hit.regs.rip,
                  (unsigned long long)f);
    uint64_t mk = (uint64_t)(uintptr_t)marker_at;
    CHECK(m.hit.regs.rsp < mk);
    CHECK(mk + 8 <= m.hit.regs.rsp + m.hit.stack_len);
    CHECK(m.hit.t_ns <= now && now - m.hit.t_ns < 2000000000ull);
    uint64_t w;
    memcpy(&w, m.stack + (mk - m.hit.regs.rsp), 8);
    CHECK_EQ_INT(w, 0x5eed5eed5eed5eedull);
    /* A period of 20 ms from now, on every CPU: a twentieth of the
     * samples. */
    psample_set__rephase(&s, 20000000);
    collect(&s, &m, 300);
    int slow = m.n;
    atomic_store(&phase, 2);
    pthread_join(t, NULL);
    psample_set__close(&s);
    CHECK_EQ_INT(s.n, 0);
    if (!(slow >= 5 && slow <= 30))
        UNIT_FAIL("%d samples in 300 ms at a 20 ms period (%d at 1 ms)", slow, fast);
}

/* The switch events' rings grow with the tick: 16 pages for each 10 ms
 * of it, rounded up to a power of two, at most 128 a CPU and 1024 in all,
 * never fewer than 16. */
TEST(switch_pages)
{
    CHECK_EQ_INT((int)psample__switch_pages(1000000, 2), 16);     /* 1 kHz */
    CHECK_EQ_INT((int)psample__switch_pages(10000000, 2), 16);    /* 100 Hz */
    CHECK_EQ_INT((int)psample__switch_pages(10000001, 2), 32);
    CHECK_EQ_INT((int)psample__switch_pages(20000000, 2), 32);    /* 50 Hz */
    CHECK_EQ_INT((int)psample__switch_pages(50000000, 2), 128);   /* 20 Hz: 5 spans, 8 */
    CHECK_EQ_INT((int)psample__switch_pages(1000000000, 2), 128); /* 1 Hz: the cap */
    CHECK_EQ_INT((int)psample__switch_pages(50000000, 16), 64);   /* the budget */
    CHECK_EQ_INT((int)psample__switch_pages(50000000, 64), 16);
    CHECK_EQ_INT((int)psample__switch_pages(50000000, 4096), 16); /* never fewer */
    CHECK_EQ_INT((int)psample__switch_pages(50000000, -1), 128);  /* CPUs unknown */
}

/* A set of switch events has rings of the pages asked for (a power of
 * two; 16 otherwise), as the kernel reports them. */
TEST(real_switch_ring_pages)
{
    size_t asked[] = {64, 48};
    size_t got[] = {64, PSAMPLE_PAGES};
    for (int k = 0; k < 2; k++) {
        struct psample_set s;
        int err = psample_set__open_switches(&s, getpid(), asked[k]);
        if (err < 0) {
            if (not_allowed(err))
                UNIT_SKIP("perf events on every CPU are not allowed here (%s): per-thread "
                          "events tell", strerror(-err));
            UNIT_FAIL("psample_set__open_switches: %s", strerror(-err));
        }
        int open = 0;
        for (int i = 0; i < s.n; i++) {
            if (s.cpu[i].fd < 0)
                continue;
            open++;
            const struct perf_event_mmap_page *pg = s.cpu[i].ring;
            if (pg->data_size != got[k] * (uint64_t)sysconf(_SC_PAGESIZE))
                UNIT_FAIL("%zu pages asked: CPU %d's ring has %llu bytes of data", asked[k], i,
                          (unsigned long long)pg->data_size);
        }
        CHECK(open > 0);
        psample_set__close(&s);
    }
}

/* Events of switches (psample_set__open_switches): this thread's naps,
 * each a time it left a CPU to sleep and was given one again, with a
 * sample of its registers as it left (no stack bytes: where it sleeps, on
 * its own stack), while a child process that naps too has its switches
 * recorded but never sampled; and the records written since a read,
 * looked at (peek) and then read all the same. */
TEST(real_switch_records)
{
    struct psample_set s;
    int err = psample_set__open_switches(&s, getpid(), 0);
    if (err < 0) {
        if (not_allowed(err))
            UNIT_SKIP("perf events on every CPU are not allowed here (%s): per-thread events "
                      "tell", strerror(-err));
        UNIT_FAIL("psample_set__open_switches: %s", strerror(-err));
    }
    static struct mine m;
    m.napper = m.tid = (pid_t)syscall(SYS_gettid);
    collect(&s, &m, 50);
    CHECK_EQ_INT(m.ins, 0); /* disabled until enabled */
    CHECK_EQ_INT(m.n, 0);
    psample_set__enable(&s);
    m.child = fork();
    CHECK(m.child >= 0);
    if (m.child == 0) {
        for (int i = 0; i < 400; i++)
            nap_ms(1);
        _exit(0);
    }
    collect(&s, &m, 300);
    kill(m.child, SIGKILL);
    waitpid(m.child, NULL, 0);
    if (m.slept < 55 || m.ins < 55)
        UNIT_FAIL("60 naps, seen leaving a CPU to sleep %d times and given one %d times "
                  "(preempted %d times)", m.slept, m.ins, m.preempted);
    if (m.child_switches < 100)
        UNIT_FAIL("the napping child's switches: %d records", m.child_switches);
    CHECK_EQ_INT(m.foreign, 0);
    bool sampled = s.switch_samples;
    if (sampled) {
        /* A sample each time it left a CPU (asleep or preempted). */
        if (m.n < m.slept + m.preempted)
            UNIT_FAIL("%d samples of this thread's switches, for %d times it left a CPU", m.n,
                      m.slept + m.preempted);
        CHECK_EQ_INT(m.hit.stack_len, 0);
        uint64_t sp = (uint64_t)(uintptr_t)__builtin_frame_address(0);
        /* Its stack pointer in the kernel's sleep: below this frame, within
         * the few frames of nap_ms and the C library. */
        if (!(m.hit.regs.rsp < sp && sp - m.hit.regs.rsp < 64 * 1024))
            UNIT_FAIL("stack pointer of the newest sample %#llx, this frame's %#llx",
                      (unsigned long long)m.hit.regs.rsp, (unsigned long long)sp);
    } else {
        CHECK_EQ_INT(m.n, 0); /* the records alone */
    }
    /* The records since a read, looked at without reading them: one nap,
     * one more time given a CPU; told again by the next read. */
    psample_set__read(&s, take_mine, &m);
    m.ins = 0;
    psample_set__peek(&s, take_mine, &m);
    int before = m.ins;
    nap_ms(2);
    psample_set__peek(&s, take_mine, &m);
    int after = m.ins;
    m.ins = 0;
    psample_set__read(&s, take_mine, &m);
    int read = m.ins;
    psample_set__close(&s);
    if (!(after >= before + 1 && read >= after))
        UNIT_FAIL("times given a CPU since the read: %d before a nap, %d after, %d read then",
                  before, after, read);
    if (!sampled)
        UNIT_SKIP("the records checked; no samples of switches here: their BPF filter could "
                  "not be set (no CAP_BPF, or not in the initial PID namespace)");
}

/* A thread that reads a pipe, 7 bytes then 5, over and over, one byte
 * given at a time: blocked in read(2) in one of two ways by turns. */
static int feed[2];
static atomic_int feeder_tid, feeder_stop;
static char feed_buf[16];

static void *fed(void *arg)
{
    (void)arg;
    atomic_store(&feeder_tid, (int)syscall(SYS_gettid));
    for (int i = 0; !atomic_load(&feeder_stop); i++)
        if (read(feed[0], feed_buf, i % 2 ? 5 : 7) <= 0)
            break;
    return NULL;
}

/* The newest sample of m->tid (by time: the rings are read CPU by CPU). */
static void take_newest(void *ctx, const struct psample_rec *r)
{
    struct mine *m = ctx;
    if (r->type != PERF_RECORD_SAMPLE || r->tid != m->tid)
        return;
    if (!m->n || r->hit.t_ns >= m->hit.t_ns)
        m->hit = r->hit;
    m->n++;
}

/* Wait until the fed thread blocks in read(2) for len bytes, then read the
 * records: its newest sample (of its switch to sleep there), and what its
 * syscall file says. */
static bool blocked_in_read(struct psample_set *s, struct mine *m, int sys_fd, size_t len,
                            uint64_t *where)
{
    long nr = -1;
    uint64_t sp, pc;
    for (int i = 0; i < 2000; i++) {
        if (proc__syscall_fd(sys_fd, &nr, &sp, &pc, where) == PROC_BLOCKED && nr == 0) {
            char path[96], line[256];
            snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)m->tid);
            unsigned long long a[3];
            if (proc__read(path, line, sizeof line) > 0 &&
                sscanf(line, "0 %llx %llx %llx", &a[0], &a[1], &a[2]) == 3 && a[2] == len)
                break;
        }
        nr = -1;
        nap_ms(1);
    }
    m->n = 0;
    psample_set__read(s, take_newest, m);
    psample_set__release(s);
    return nr == 0 && m->n > 0;
}

/* The registers of a thread's switch to sleep in a system call are the
 * ones its syscall file shows (proc_calls learns them), and name that call
 * when it blocks the same way again, not when it blocks another way. */
TEST(real_switch_registers_name_the_call)
{
    struct psample_set s;
    int err = psample_set__open_switches(&s, getpid(), 0);
    if (err < 0) {
        if (not_allowed(err))
            UNIT_SKIP("perf events on every CPU are not allowed here (%s): /proc names "
                      "every call", strerror(-err));
        UNIT_FAIL("psample_set__open_switches: %s", strerror(-err));
    }
    if (!s.switch_samples) {
        psample_set__close(&s);
        UNIT_SKIP("no samples of switches here: their BPF filter could not be set (no "
                  "CAP_BPF, or not in the initial PID namespace); /proc names every call");
    }
    psample_set__enable(&s);
    CHECK(pipe(feed) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, fed, NULL) == 0);
    while (!atomic_load(&feeder_tid))
        nap_ms(1);
    static struct mine m;
    memset(&m, 0, sizeof m);
    m.tid = m.napper = atomic_load(&feeder_tid);
    int sys_fd = proc__open_syscall(getpid(), m.tid);
    struct proc_calls calls;
    memset(&calls, 0, sizeof calls);
    uint64_t where7 = 0, where5 = 0, again = 0, found_where = 0;
    long nr = -1;
    bool ok7 = blocked_in_read(&s, &m, sys_fd, 7, &where7);
    struct user_regs_struct r7 = m.hit.regs;
    bool learnt7 = ok7 && proc__calls_learn(&calls, &r7, 0, where7);
    CHECK(write(feed[1], "x", 1) == 1);
    bool ok5 = blocked_in_read(&s, &m, sys_fd, 5, &where5);
    struct user_regs_struct r5 = m.hit.regs;
    bool found5 = proc__calls_find(&calls, &r5, &nr, &found_where);
    bool learnt5 = ok5 && proc__calls_learn(&calls, &r5, 0, where5);
    CHECK(write(feed[1], "x", 1) == 1);
    bool again7 = blocked_in_read(&s, &m, sys_fd, 7, &again);
    bool found7 = again7 && proc__calls_find(&calls, &m.hit.regs, &nr, &found_where);
    atomic_store(&feeder_stop, 1);
    CHECK(write(feed[1], "x", 1) == 1);
    pthread_join(t, NULL);
    close(sys_fd);
    close(feed[0]);
    close(feed[1]);
    psample_set__close(&s);
    if (!ok7 || !ok5 || !again7)
        UNIT_FAIL("the reader's blocked reads seen: %d %d %d (its switches sampled)", ok7, ok5,
                  again7);
    if (!learnt7 || !learnt5)
        UNIT_FAIL("registers of the switch to sleep not those its syscall file shows: rax "
                  "%#llx rdi %llu rdx %llu",
                  (unsigned long long)r7.rax, (unsigned long long)r7.rdi,
                  (unsigned long long)r7.rdx);
    CHECK_EQ_INT(r7.rdi, feed[0]);
    CHECK_EQ_INT(r7.rdx, 7);
    CHECK_EQ_INT(r5.rdx, 5);
    CHECK(!found5);
    CHECK(found7);
    CHECK_EQ_INT(nr, 0);
    CHECK(found_where == where7 && again == where7);
}

/* Records lost (a LOST record) in what a read tells. */
static void take_lost(void *ctx, const struct psample_rec *r)
{
    if (r->type == PERF_RECORD_LOST)
        ++*(int *)ctx;
}

/* Switch events on every CPU for this process (rings of `pages`), or the
 * test skipped where they are not allowed. */
#define OPEN_OWN_SWITCHES(set, pages)                                                      \
    do {                                                                                   \
        int err_ = psample_set__open_switches(&(set), getpid(), (pages));                  \
        if (err_ < 0) {                                                                    \
            if (not_allowed(err_))                                                         \
                UNIT_SKIP("perf events on every CPU are not allowed here (%s): per-thread " \
                          "events tell", strerror(-err_));                                 \
            UNIT_FAIL("psample_set__open_switches: %s", strerror(-err_));                  \
        }                                                                                  \
    } while (0)

/* A switch event's ring is readable to poll(2) once half full, before it
 * overflows: a thread napping fills this process's rings with its
 * switches, none read until one polls readable, and then none was lost. */
TEST(real_switch_rings_poll_half_full)
{
    struct psample_set s;
    OPEN_OWN_SWITCHES(s, PSAMPLE_PAGES);
    struct pollfd pf[256];
    nfds_t n = 0;
    for (int i = 0; i < s.n && n < 256; i++)
        if (s.cpu[i].fd >= 0)
            pf[n++] = (struct pollfd){.fd = s.cpu[i].fd, .events = POLLIN};
    psample_set__enable(&s);
    /* 16 pages hold some 270 switches with their samples (or 900 records
     * alone): at most 5000 naps of 100 us. */
    int naps = 0, ready = 0, lost = 0, bad = 0;
    for (; naps < 5000 && !ready; naps++) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
        ready = poll(pf, n, 0);
    }
    for (nfds_t k = 0; k < n; k++)
        bad += (pf[k].revents & (POLLERR | POLLHUP | POLLNVAL)) != 0;
    psample_set__read(&s, take_lost, &lost);
    psample_set__release(&s);
    /* Read: not readable again until it fills anew. */
    int again = poll(pf, n, 0);
    psample_set__close(&s);
    if (ready <= 0)
        UNIT_FAIL("no ring readable after %d naps", naps);
    CHECK_EQ_INT(bad, 0);
    /* (Half a ring is some 500 switches of any program on a CPU.) */
    if (naps < 10)
        UNIT_FAIL("readable after %d naps: not half full yet", naps);
    if (lost)
        UNIT_FAIL("readable after %d naps, with records lost already", naps);
    if (again != 0)
        UNIT_FAIL("still readable once read: %d", again);
}

/* A ring full of records not yet released: the kernel drops what has no
 * room and says so (PERF_RECORD_LOST) only once it has room again, after
 * a release; a peek, or a read, of the ring before that tells of a loss
 * all the same, or a thread given a CPU while its records were dropped
 * would seem not to have run since. */
TEST(real_switch_ring_full_is_a_loss)
{
    struct psample_set s;
    OPEN_OWN_SWITCHES(s, PSAMPLE_PAGES);
    psample_set__enable(&s);
    /* 16 pages hold some 900 records: naps of 100 us, until one ring has
     * no room left (at most 20000). */
    int naps = 0;
    bool full = false;
    for (; naps < 20000 && !full; naps++) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
        for (int i = 0; i < s.n; i++) {
            const struct perf_event_mmap_page *pg = s.cpu[i].ring;
            if (s.cpu[i].fd >= 0 &&
                pg->data_size - (pg->data_head - pg->data_tail) < PSAMPLE_FULL_FREE)
                full = true;
        }
    }
    /* (And more, which it has no room for.) */
    for (int i = 0; i < 100; i++) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    int peeked = 0, read = 0, after = 0;
    psample_set__peek(&s, take_lost, &peeked);
    psample_set__read(&s, take_lost, &read);
    psample_set__release(&s);
    for (int i = 0; i < 20 && !after; i++) {
        nap_ms(1);
        psample_set__read(&s, take_lost, &after);
    }
    psample_set__close(&s);
    if (!full)
        UNIT_FAIL("no ring full after %d naps", naps);
    if (peeked < 1 || read < 1)
        UNIT_FAIL("a ring full after %d naps: %d losses peeked, %d read", naps, peeked, read);
    /* Released, it has room: the kernel's own record of the loss. */
    CHECK(after >= 1);
}
