/* test_prefetch.c - capture__prefetch: a stopped thread's C stack read
 * where it was at its last captures, before its registers are known, then
 * kept by capture__thread if it holds the stack at the registers' rsp and
 * dropped if not; on a real traced child, each capture checked against a
 * read of the same bytes while the thread is still stopped. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sampler/capture.h"
#include "sampler/remote.h"
#include "sampler/tracee.h"
#include "tests/unit/unit.h"

UNIT_MAIN()

/* Spins with a mark in rbx and a frame of known bytes on its stack. */
static void *spin(void *arg)
{
    volatile uint64_t frame[512];
    (void)arg;
    for (size_t i = 0; i < 512; i++)
        frame[i] = 0x5157000000000000ull | i;
    __asm__ volatile("mov $0x1111111111, %%rbx\n\t"
                     "1: inc %%rax\n\t"
                     "jmp 1b\n\t"
                     :
                     : "r"(frame)
                     : "rax", "rbx", "memory");
    return NULL;
}

static void child_main(int ready)
{
    pthread_t t;
    if (pthread_create(&t, NULL, spin, NULL) != 0)
        _exit(1);
    struct timespec ts = {0, 20 * 1000000L};
    nanosleep(&ts, NULL);
    if (write(ready, "r", 1) != 1)
        _exit(1);
    for (;;)
        pause();
}

static bool stop(pid_t tid)
{
    int status;
    return ptrace(PTRACE_INTERRUPT, tid, 0, 0) == 0 &&
           waitpid(tid, &status, __WALL) == tid && WIFSTOPPED(status);
}

/* Does the image hold [a, a + len) as the child's memory has it now? */
static bool same_as_live(const struct capture *c, pid_t pid, uint64_t a, size_t len)
{
    static uint8_t live[65536];
    const uint8_t *p = memimg__ptr(&c->img, a, len);
    return p && len <= sizeof live && remote__read(pid, a, live, len) == 0 &&
           memcmp(p, live, len) == 0;
}

/* Bytes the image holds, over all its regions. */
static size_t image_bytes(const struct capture *c)
{
    size_t n = 0;
    for (size_t i = 0; i < c->img.n; i++)
        n += c->img.reg[i].len;
    return n;
}

/* One stop's capture with th->last_rsp and th->other_rsp as given: the
 * prefetch, then capture__thread with the registers. Returns the calls to
 * process_vm_readv capture__thread made after the prefetch. */
static unsigned long prefetched_capture(struct capture *c, pid_t pid, struct tthread *th,
                                        const struct user_regs_struct *regs, uint64_t last,
                                        uint64_t other)
{
    capture__begin(c);
    th->last_rsp = last;
    th->other_rsp = other;
    capture__prefetch(c, pid, th);
    unsigned long calls = remote__calls();
    capture__thread(c, pid, th, regs, NULL, NULL);
    return remote__calls() - calls;
}

TEST(prefetched_stacks_kept_where_they_hold_and_dropped_where_not)
{
    pid_t child = unit_spawn_ready(child_main);
    CHECK(child > 0);
    struct tracee t;
    memset(&t, 0, sizeof t);
    if (tracee__attach(&t, child) != 0) {
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        UNIT_FAIL("cannot attach to the child");
    }
    /* The spinner, by its mark; held stopped for all that follows. */
    struct tthread *sp = NULL, *mainth = NULL;
    struct user_regs_struct regs, mregs;
    for (size_t i = 0; i < t.n; i++) {
        struct user_regs_struct g;
        if (!stop(t.th[i].tid) || ptrace(PTRACE_GETREGS, t.th[i].tid, 0, &g) != 0)
            continue;
        if (g.rbx == 0x1111111111ull) {
            sp = &t.th[i];
            regs = g;
        } else if (t.th[i].tid == child) {
            mainth = &t.th[i];
            mregs = g;
        }
    }
    const char *fail = NULL;
    unsigned long calls = 0;
    struct capture c;
    CHECK(capture__init(&c, 65536) == 0);
    CHECK(capture__reserve(&c, 4, 0, 0) == 0);
    if (!sp || !mainth) {
        fail = "the child's threads not found";
        goto out;
    }
    sp->nahead = 0;
    sp->stack_want = 4096;
    uint64_t rsp = regs.rsp;

    /* Never captured: nothing prefetched, the stack read at rsp. */
    calls = prefetched_capture(&c, child, sp, &regs, 0, 0);
    if (c.pre_used || c.pre_missed || calls != 1 || c.th[0].stack_len != 4096 ||
        !same_as_live(&c, child, rsp, 4096)) {
        fail = "a thread never captured";
        goto out;
    }
    /* Its rsp 512 bytes below where it was: kept, no read after it. */
    calls = prefetched_capture(&c, child, sp, &regs, rsp + 512, 0);
    if (c.pre_used != 1 || c.pre_missed || calls != 0 || c.th[0].stack_len != 4096 ||
        !same_as_live(&c, child, rsp, 4096)) {
        fail = "a stack pointer a little below the last";
        goto out;
    }
    /* Just above (a frame popped): kept. */
    calls = prefetched_capture(&c, child, sp, &regs, rsp - 512, 0);
    if (c.pre_used != 2 || c.pre_missed || calls != 0 || c.th[0].stack_len != 4096 ||
        !same_as_live(&c, child, rsp, 4096)) {
        fail = "a stack pointer a little above the last";
        goto out;
    }
    /* 2 KB above: the prefetch ends short of rsp + 4096: dropped, and read
     * again at rsp. */
    calls = prefetched_capture(&c, child, sp, &regs, rsp - 2048, 0);
    if (c.pre_used != 2 || c.pre_missed != 1 || calls != 1 || c.th[0].stack_len != 4096 ||
        !same_as_live(&c, child, rsp, 4096) || image_bytes(&c) != 4096 + CAPTURE_RED_ZONE ||
        memimg__ptr(&c.img, rsp - 2048 - CAPTURE_PRE_BELOW, 8)) {
        fail = "a stack pointer 2 KB above the last";
        goto out;
    }
    /* Far from the last, at the one before: kept from that range, the
     * other dropped. */
    calls = prefetched_capture(&c, child, sp, &regs, rsp + 65536, rsp + 100);
    if (c.pre_used != 3 || c.pre_missed != 1 || calls != 0 || c.th[0].stack_len != 4096 ||
        !same_as_live(&c, child, rsp, 4096) ||
        image_bytes(&c) != CAPTURE_PRE_BELOW + CAPTURE_PRE_ABOVE + 4096) {
        fail = "a stack pointer at the capture before the last";
        goto out;
    }
    /* The lower range first, whichever was the last (a range cut short by
     * the stack's top ends the system call: one after it takes another). */
    for (int k = 0; k < 2 && !fail; k++) {
        capture__begin(&c);
        sp->last_rsp = k ? rsp - 20000 : rsp + 20000;
        sp->other_rsp = k ? rsp + 20000 : rsp - 20000;
        capture__prefetch(&c, child, sp);
        if (c.pre.n != 2 || c.pre.at[0].addr != rsp - 20000 - CAPTURE_PRE_BELOW ||
            c.pre.at[1].addr != rsp + 20000 - CAPTURE_PRE_BELOW)
            fail = "the order of the ranges";
        capture__begin(&c);
    }
    if (fail)
        goto out;
    /* Near neither: both dropped. */
    calls = prefetched_capture(&c, child, sp, &regs, rsp + 65536, rsp - 65536);
    if (c.pre_used != 3 || c.pre_missed != 2 || calls != 1 ||
        image_bytes(&c) != 4096 + CAPTURE_RED_ZONE ||
        !same_as_live(&c, child, rsp, 4096)) {
        fail = "a stack pointer near neither";
        goto out;
    }
    /* The main thread near the top of its stack: as much as a read at rsp
     * gives (the mapping's end), from the prefetch or not. */
    mainth->nahead = 0;
    mainth->stack_want = 65536;
    prefetched_capture(&c, child, mainth, &mregs, 0, 0);
    uint64_t top = c.th[0].stack_len;
    calls = prefetched_capture(&c, child, mainth, &mregs, mregs.rsp, 0);
    if (top == 0 || top >= 65536 || c.pre_used != 4 || calls != 0 ||
        c.th[0].stack_len != top || !same_as_live(&c, child, mregs.rsp, top)) {
        fail = "a stack that ends within reach";
        goto out;
    }
    /* Its stack pointers remembered: the last, and the last one before it
     * that was out of the last one's reach. */
    struct tthread r;
    memset(&r, 0, sizeof r);
    struct thread_capture tc;
    memset(&tc, 0, sizeof tc);
    tc.first_note = c.img.nnotes;
    uint64_t seq[] = {0x7000000, 0x7000000 - 200, 0x7000000 - 20000, 0x7000000 - 19900};
    uint64_t want_last[] = {0x7000000, 0x7000000 - 200, 0x7000000 - 20000, 0x7000000 - 19900};
    uint64_t want_other[] = {0, 0, 0x7000000 - 200, 0x7000000 - 200};
    for (size_t i = 0; i < 4 && !fail; i++) {
        tc.regs.rsp = seq[i];
        capture__remember(&c, &r, &tc);
        if (r.last_rsp != want_last[i] || r.other_rsp != want_other[i])
            fail = "the stack pointers remembered";
    }
out:;
    unsigned long kept = c.pre_used, dropped = c.pre_missed;
    capture__free(&c);
    for (size_t i = 0; i < t.n; i++)
        ptrace(PTRACE_CONT, t.th[i].tid, 0, 0);
    tracee__detach(&t, 1000);
    tracee__free(&t);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    if (fail)
        UNIT_FAIL("%s: kept %lu, dropped %lu, calls after %lu", fail, kept, dropped, calls);
}
