/* test_stop_regs.c - a stopped thread's registers from the sample of its
 * switch off its CPU (tracee__stop_regs), against PTRACE_GETREGS, on a
 * real traced child: a thread spinning in user code with known values in
 * its registers, one blocked in read(2), one in epoll_wait (which a stop
 * breaks with EINTR: its registers must come from PTRACE_GETREGS, which
 * has the call's number for its restart); and the spinner's stops seen
 * only after the records were read (a thread that stops after its tick). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sampler/psample.h"
#include "sampler/tracee.h"
#include "tests/unit/unit.h"

UNIT_MAIN()

/* Spins forever with marks in every callee-saved register but rbp (the
 * frame pointer, left alone) and a counter in rax. */
static void *spin_marked(void *arg)
{
    (void)arg;
    __asm__ volatile("mov $0x1111111111, %%rbx\n\t"
                     "mov $0x1212121212, %%r12\n\t"
                     "mov $0x1313131313, %%r13\n\t"
                     "mov $0x1414141414, %%r14\n\t"
                     "mov $0x1515151515, %%r15\n\t"
                     "1: inc %%rax\n\t"
                     "jmp 1b\n\t"
                     :
                     :
                     : "rax", "rbx", "r12", "r13", "r14", "r15", "memory");
    return NULL;
}

static int block_fd[2];

static void *block_read(void *arg)
{
    char c;
    (void)arg;
    while (read(block_fd[0], &c, 1) != 0)
        ;
    return NULL;
}

static void *block_epoll(void *arg)
{
    struct epoll_event ev;
    int ep = epoll_create1(0);
    (void)arg;
    for (;;)
        epoll_wait(ep, &ev, 1, -1);
    return NULL;
}

/* The child: the three threads, then its main thread waits (nanosleep). */
static void child_main(int ready)
{
    pthread_t t;
    if (pipe(block_fd) != 0 || pthread_create(&t, NULL, spin_marked, NULL) != 0 ||
        pthread_create(&t, NULL, block_read, NULL) != 0 ||
        pthread_create(&t, NULL, block_epoll, NULL) != 0)
        _exit(1);
    struct timespec ts = {0, 50 * 1000000L};
    nanosleep(&ts, NULL);
    if (write(ready, "r", 1) != 1)
        _exit(1);
    for (;;)
        pause();
}

static void nop(void *ctx, const struct psample_rec *r)
{
    (void)ctx;
    (void)r;
}

/* Interrupt th and wait for its stop; then it is held. */
static bool stop(struct tthread *th)
{
    int status;
    th->want = true;
    th->t_interrupt_ns = tracee__now_ns();
    if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) != 0)
        return false;
    if (waitpid(th->tid, &status, __WALL) != th->tid || !WIFSTOPPED(status))
        return false;
    th->want = false;
    th->run = TT_HELD;
    return true;
}

static void go_on(struct tthread *th)
{
    ptrace(PTRACE_CONT, th->tid, 0, 0);
    th->run = TT_RUNNING;
}

#define GPRS(X)                                                                          \
    X(rax) X(rbx) X(rcx) X(rdx) X(rsi) X(rdi) X(rbp) X(rsp) X(rip) X(r8) X(r9) X(r10) \
        X(r11) X(r12) X(r13) X(r14) X(r15) X(fs_base)

/* The first register where a and b differ, or NULL. */
static const char *differ(const struct user_regs_struct *a, const struct user_regs_struct *b)
{
#define SAME(r)                                                                          \
    if (a->r != b->r)                                                                    \
        return #r;
    GPRS(SAME)
#undef SAME
    return NULL;
}

TEST(stop_registers_from_the_switch_sample)
{
    pid_t child = unit_spawn_ready(child_main);
    CHECK(child > 0);

    struct psample_set s;
    int err = psample_set__open_switches(&s, child, 0);
    if (err < 0 || !s.switch_samples) {
        if (err == 0)
            psample_set__close(&s);
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        if (err == -EACCES || err == -EPERM || err == -ENOSYS || err == -ENOENT ||
            err == -EOPNOTSUPP || err == 0)
            UNIT_SKIP("no samples of switches here (%s): every stop's registers come from "
                      "PTRACE_GETREGS", err ? strerror(-err) : "no BPF filter");
        UNIT_FAIL("psample_set__open_switches: %s", strerror(-err));
    }
    struct tracee t;
    memset(&t, 0, sizeof t);
    if (tracee__attach(&t, child) != 0) {
        psample_set__close(&s);
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        UNIT_FAIL("cannot attach to the child");
    }
    psample_set__enable(&s);
    t.sw = &s;
    /* Each thread's thread pointer, from a first stop. */
    for (size_t i = 0; i < t.n; i++) {
        struct user_regs_struct g;
        struct tthread *th = &t.th[i];
        if (stop(th) && ptrace(PTRACE_GETREGS, th->tid, 0, &g) == 0)
            th->fs_base = g.fs_base;
        go_on(th);
    }
    /* Which thread is which, by where the GETREGS of a stop finds it. */
    int ring[8] = {0}, stops[8] = {0}, eintr[8] = {0};
    const char *bad = NULL;
    struct user_regs_struct br, bg;
    int kind_of[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
    for (int round = 0; round < 40 && !bad; round++) {
        psample_set__read(&s, nop, NULL);
        psample_set__release(&s);
        for (size_t i = 0; i < t.n && i < 8 && !bad; i++) {
            struct tthread *th = &t.th[i];
            struct user_regs_struct r, g;
            if (!stop(th))
                continue;
            bool from_ring = tracee__stop_regs(&t, th, &r, NULL, NULL);
            CHECK(ptrace(PTRACE_GETREGS, th->tid, 0, &g) == 0);
            go_on(th);
            stops[i]++;
            /* 0: in user code (the spinner, its marks in rbx); 1: a call
             * the stop broke with EINTR (epoll_wait); 2: another call. */
            int kind = g.rbx == 0x1111111111ull ? 0 : (long long)g.rax == -EINTR ? 1 : 2;
            kind_of[i] = kind;
            eintr[i] += kind == 1;
            if (from_ring) {
                ring[i]++;
                if ((bad = differ(&r, &g))) {
                    br = r;
                    bg = g;
                }
            }
        }
    }
    int spinner = -1, epoller = -1, reader = -1;
    for (size_t i = 0; i < t.n && i < 8; i++) {
        if (kind_of[i] == 0)
            spinner = (int)i;
        else if (kind_of[i] == 1)
            epoller = (int)i;
        else if (t.th[i].tid != child)
            reader = (int)i;
    }
    /* A stop seen after the tick's read of the records has taken its
     * sample (a thread that stops after its tick was over): still used. */
    int late_ring = 0, late_stops = 0;
    for (int round = 0; round < 20 && !bad && spinner >= 0; round++) {
        struct tthread *th = &t.th[spinner];
        struct user_regs_struct r, g;
        if (!stop(th))
            continue;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL); /* (its switch is over) */
        tracee__read_switches(&t);
        bool from_ring = tracee__stop_regs(&t, th, &r, NULL, NULL);
        CHECK(ptrace(PTRACE_GETREGS, th->tid, 0, &g) == 0);
        go_on(th);
        late_stops++;
        if (from_ring && !(bad = differ(&r, &g)))
            late_ring++;
        else if (from_ring) {
            br = r;
            bg = g;
        }
    }
    size_t nthreads = t.n;
    tracee__detach(&t, 1000);
    tracee__free(&t);
    psample_set__close(&s);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    if (bad)
        UNIT_FAIL("%s from the switch's sample differs from PTRACE_GETREGS's: rip %#llx rsp "
                  "%#llx rax %#llx against rip %#llx rsp %#llx rax %#llx", bad,
                  (unsigned long long)br.rip, (unsigned long long)br.rsp,
                  (unsigned long long)br.rax, (unsigned long long)bg.rip,
                  (unsigned long long)bg.rsp, (unsigned long long)bg.rax);
    CHECK_EQ_INT(nthreads, 4);
    if (spinner < 0 || epoller < 0 || reader < 0)
        UNIT_FAIL("the child's threads not told apart: spinner %d, epoll_wait %d, read %d",
                  spinner, epoller, reader);
    /* Its switch comes within microseconds of the stop: nearly always in
     * time. (Every stop's registers were compared above.) */
    if (ring[spinner] < stops[spinner] / 2 || ring[reader] < stops[reader] / 2)
        UNIT_FAIL("registers from the switch's sample at %d of %d stops of the spinner, %d "
                  "of %d of the reader", ring[spinner], stops[spinner], ring[reader],
                  stops[reader]);
    /* A call broken with EINTR: never from the sample. */
    CHECK_EQ_INT(eintr[epoller], stops[epoller]);
    CHECK_EQ_INT(ring[epoller], 0);
    if (late_ring < late_stops / 2)
        UNIT_FAIL("registers from the switch's sample, read before the stop was seen, at %d of "
                  "%d stops of the spinner", late_ring, late_stops);
}
