/* test_cswitch.c - reading context-switch records: the fold over a ring's
 * bytes (wrap-around, lost records, a full ring, bad headers), when a stop
 * began by its thread's switch off its CPU, then a real ring on a thread
 * of this process that sleeps, wakes and spins. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sampler/cswitch.h"
#include "sampler/tracee.h"
#include "tests/unit/unit.h"

UNIT_MAIN()

#define RING 256 /* bytes: small, so that records wrap */

static uint8_t ring[RING];

/* Write a record of `size` bytes at position pos (mod RING); its header
 * only, as cswitch reads no more. */
static uint64_t put(uint64_t pos, uint32_t type, uint16_t misc, uint16_t size)
{
    struct perf_event_header h = {type, misc, size};
    memcpy(ring + (pos % RING), &h, sizeof h);
    return pos + size;
}

static struct cswitch fresh(void)
{
    struct cswitch c;
    memset(&c, 0, sizeof c);
    c.fd = -1;
    return c;
}

TEST(in_out_preempt)
{
    struct cswitch c = fresh();
    uint64_t h = 0;
    h = put(h, PERF_RECORD_SWITCH, 0, 8);
    CHECK(cswitch__fold(&c, ring, RING, h));
    CHECK_EQ_INT(c.ins, 1);
    CHECK_EQ_INT(c.where, CS_ON_CPU);
    h = put(h, PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT | PERF_RECORD_MISC_SWITCH_OUT_PREEMPT, 8);
    CHECK(cswitch__fold(&c, ring, RING, h));
    CHECK_EQ_INT(c.ins, 1);
    CHECK_EQ_INT(c.where, CS_PREEMPTED);
    h = put(h, PERF_RECORD_SWITCH, 0, 8);
    h = put(h, PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT, 8);
    CHECK(cswitch__fold(&c, ring, RING, h));
    CHECK_EQ_INT(c.ins, 2);
    CHECK_EQ_INT(c.where, CS_ASLEEP);
    CHECK_EQ_INT(c.tail, h);
    /* Nothing new: nothing changes. */
    CHECK(cswitch__fold(&c, ring, RING, h));
    CHECK_EQ_INT(c.ins, 2);
    CHECK_EQ_INT(c.where, CS_ASLEEP);
}

/* Positions grow without bound; records are found modulo the size, across
 * the end of the ring, and records of other types are stepped over. */
TEST(wraps_and_skips)
{
    struct cswitch c = fresh();
    uint64_t h = 1000 * RING - 16;
    c.tail = h;
    h = put(h, PERF_RECORD_SWITCH, 0, 8);
    h = put(h, PERF_RECORD_COMM, 0, 24); /* straddles the end */
    h = put(h, PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT, 8);
    CHECK(cswitch__fold(&c, ring, RING, h));
    CHECK_EQ_INT(c.ins, 1);
    CHECK_EQ_INT(c.where, CS_ASLEEP);
    CHECK_EQ_INT(c.tail, h);
}

/* Lost records: what happened is unknown, so it counts as a run and the
 * state as unknown, until the next record says. */
TEST(lost)
{
    struct cswitch c = fresh();
    uint64_t h = 0;
    h = put(h, PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT, 8);
    CHECK(cswitch__fold(&c, ring, RING, h));
    CHECK_EQ_INT(c.where, CS_ASLEEP);
    h = put(h, PERF_RECORD_LOST, 0, 24);
    h = put(h, PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT, 8);
    CHECK(!cswitch__fold(&c, ring, RING, h));
    CHECK_EQ_INT(c.ins, 1);
    CHECK_EQ_INT(c.where, CS_UNKNOWN);
    CHECK_EQ_INT(c.tail, h);
    h = put(h, PERF_RECORD_SWITCH, 0, 8);
    CHECK(cswitch__fold(&c, ring, RING, h));
    CHECK_EQ_INT(c.ins, 2);
    CHECK_EQ_INT(c.where, CS_ON_CPU);
}

/* A ring filled up may have dropped its newest records before any LOST
 * record says so. */
TEST(full)
{
    struct cswitch c = fresh();
    uint64_t h = 0;
    for (int i = 0; i < RING / 8; i++)
        h = put(h, PERF_RECORD_SWITCH, i % 2 ? PERF_RECORD_MISC_SWITCH_OUT : 0, 8);
    CHECK(!cswitch__fold(&c, ring, RING, h));
    CHECK_EQ_INT(c.ins, 1);
    CHECK_EQ_INT(c.where, CS_UNKNOWN);
    CHECK_EQ_INT(c.tail, h);
}

/* Garbage in the ring ends the fold (no endless loop on a size of 0, no
 * read past the head); the head going backwards too. */
TEST(bad_headers)
{
    static const uint16_t sizes[] = {0, 4, 12, 16};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        struct cswitch c = fresh();
        put(0, PERF_RECORD_SWITCH, 0, sizes[i]);
        uint64_t h = 8; /* 8 bytes written; the header says otherwise */
        CHECK(!cswitch__fold(&c, ring, RING, h));
        CHECK_EQ_INT(c.where, CS_UNKNOWN);
        CHECK_EQ_INT(c.tail, h);
    }
    struct cswitch c = fresh();
    c.tail = 80;
    CHECK(!cswitch__fold(&c, ring, RING, 40));
    CHECK_EQ_INT(c.tail, 40);
}

/* A real ring, on a thread that sleeps in read(2), is woken, then spins. */
static int pipefd[2];
static atomic_int phase;
static atomic_int tid_of;

static void *sleeper(void *arg)
{
    char b;
    (void)arg;
    atomic_store(&tid_of, (int)syscall(SYS_gettid));
    if (read(pipefd[0], &b, 1) != 1) /* woken by the test */
        return NULL;
    if (read(pipefd[0], &b, 1) != 1) /* asleep again */
        return NULL;
    atomic_store(&phase, 1);
    while (atomic_load(&phase) == 1)
        ; /* on a CPU, or waiting for one */
    return NULL;
}

static void nap_ms(int ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* A stop begins when its thread left its CPU after the interrupt, whether
 * hsspy saw the stop before that record's time (polling: PTRACE_GETREGS
 * waits for the switch to end) or long after (woken by its SIGCHLD); not
 * at a switch before the interrupt (an earlier one), nor at one more than
 * a millisecond past the stop seen, nor without a record. */
TEST(stop_began_at_switch_off_cpu)
{
    struct tthread th;
    memset(&th, 0, sizeof th);
    th.t_interrupt_ns = 1000000000u;
    CHECK(tracee__stop_began(&th, 1000030000u) == 1000030000u); /* no record */
    th.out_peeked_ns = 1000020000u;
    CHECK(tracee__stop_began(&th, 1000090000u) == 1000020000u); /* seen late */
    CHECK(tracee__stop_began(&th, 1000008000u) == 1000020000u); /* seen early */
    th.out_peeked_ns = 999990000u; /* before the interrupt: not this stop's */
    CHECK(tracee__stop_began(&th, 1000030000u) == 1000030000u);
    th.out_peeked_ns = th.t_interrupt_ns;
    CHECK(tracee__stop_began(&th, 1000030000u) == 1000030000u);
    th.out_peeked_ns = 1000030000u + 1000000u; /* a millisecond after it was seen */
    CHECK(tracee__stop_began(&th, 1000030000u) == 1000030000u);
    th.out_peeked_ns = 1000030000u + 999999u;
    CHECK(tracee__stop_began(&th, 1000030000u) == 1000030000u + 999999u);
}

TEST(real_ring)
{
    pthread_t t;
    CHECK(pipe(pipefd) == 0);
    CHECK(pthread_create(&t, NULL, sleeper, NULL) == 0);
    while (!atomic_load(&tid_of))
        nap_ms(1);
    nap_ms(20); /* asleep in its first read */
    struct cswitch c;
    int err = cswitch__open(&c, atomic_load(&tid_of));
    if (err == -EACCES || err == -EPERM || err == -ENOSYS) {
        atomic_store(&phase, 2);
        if (write(pipefd[1], "xy", 2) != 2)
            UNIT_FAIL("write");
        pthread_join(t, NULL);
        UNIT_SKIP("perf events are not allowed here (%s): hsspy falls back on /proc",
                  strerror(-err));
    }
    if (err < 0)
        UNIT_FAIL("cswitch__open: %s", strerror(-err));
    CHECK(cswitch__update(&c));
    CHECK_EQ_INT(c.ins, 0); /* asleep all along */
    CHECK_EQ_INT(c.where, CS_UNKNOWN);
    CHECK(write(pipefd[1], "x", 1) == 1);
    /* It wakes, reads, and sleeps in its second read. */
    for (int i = 0; i < 2000 && (c.ins == 0 || c.where != CS_ASLEEP); i++) {
        nap_ms(1);
        CHECK(cswitch__update(&c));
    }
    CHECK(c.ins >= 1);
    CHECK_EQ_INT(c.where, CS_ASLEEP);
    uint64_t ins = c.ins;
    nap_ms(20);
    CHECK(cswitch__update(&c));
    CHECK_EQ_INT(c.ins, ins); /* it has not run since */
    CHECK(write(pipefd[1], "x", 1) == 1);
    while (atomic_load(&phase) != 1)
        nap_ms(1);
    nap_ms(20);
    CHECK(cswitch__update(&c));
    CHECK(c.ins > ins);
    CHECK(c.where == CS_ON_CPU || c.where == CS_PREEMPTED);
    atomic_store(&phase, 2);
    pthread_join(t, NULL);
    cswitch__close(&c);
    CHECK_EQ_INT(c.fd, -1);
    close(pipefd[0]);
    close(pipefd[1]);
}
