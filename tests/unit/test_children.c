/* test_children.c - a launcher's children's CPU time over a recording
 * (sampler/children.c): what the target waited for, plus each descendant
 * still there (its own time and what it waited for), less what a
 * descendant gone since had used before the recording; the busiest by its
 * own time; and when a recording says so. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sampler/children.h"
#include "sampler/proc.h"
#include "tests/unit/unit.h"

UNIT_MAIN()

static struct child kid(pid_t pid, bool at_start, uint64_t cpu0, uint64_t cpu, uint64_t reaped0,
                        uint64_t reaped, bool gone, const char *cmd)
{
    struct child c = {.pid = pid, .started = 1, .at_start = at_start, .cpu0 = cpu0,
                      .reaped0 = reaped0, .cpu = cpu, .reaped = reaped, .gone = gone};
    snprintf(c.cmd, sizeof c.cmd, "%s", cmd);
    return c;
}

TEST(totals)
{
    struct children k = {.pid = 100, .ok = true, .own0 = 5, .own = 8, .reaped0 = 40,
                         .reaped = 340};
    /* There at the start and still: its time since. */
    k.c[k.n++] = kid(101, true, 1000, 1250, 7, 17, false, "a");
    /* Born since, gone: waited for (in the 300 the target reaped). */
    k.c[k.n++] = kid(102, false, 0, 200, 0, 0, true, "b");
    /* There at the start, gone: what it had used before comes off. */
    k.c[k.n++] = kid(103, true, 60, 90, 4, 4, true, "c");
    uint64_t own, kids;
    const struct child *b;
    children__totals(&k, &own, &kids, &b);
    CHECK_EQ_INT(own, 3);
    CHECK_EQ_INT(kids, 300 + 250 + 10 - 64);
    CHECK(b && b->pid == 101);
    /* None with time of its own: no busiest. */
    k.n = 0;
    k.c[k.n++] = kid(104, false, 0, 0, 0, 0, false, "d");
    children__totals(&k, &own, &kids, &b);
    CHECK(b == NULL);
    CHECK_EQ_INT(kids, 300);
    /* Never read twice: nothing to tell. */
    k.ok = false;
    children__totals(&k, &own, &kids, &b);
    CHECK_EQ_INT(own, 0);
    CHECK_EQ_INT(kids, 0);
}

TEST(verdict)
{
    long hz = sysconf(_SC_CLK_TCK);
    char buf[512];
    struct children k = {.pid = 100, .ok = true, .own0 = 0, .own = (uint64_t)hz / 10,
                         .reaped0 = 0, .reaped = 0};
    /* A busiest child no longer there (no such process): by its command. */
    k.c[k.n++] = kid(0x3ffffff0, false, 0, (uint64_t)hz * 2, 0, 0, false, "./prog +RTS -N2");
    CHECK(children__verdict(&k, 4000000000u, "sh", buf, sizeof buf));
    CHECK_EQ_STR(buf, "pid 100 (sh) used 0.10 s of CPU while recorded, its child processes "
                      "2.00 s, which hsspy does not sample: the busiest, pid 1073741808, has "
                      "exited; profile it directly, hsspy record -- ./prog +RTS -N2");
    CHECK(children__brief(&k, buf, sizeof buf));
    CHECK_EQ_STR(buf, "child processes 2.00 s of CPU, pid 100 itself 0.10 s: not sampled; the "
                      "busiest, pid 1073741808 (exited): ./prog +RTS -N2");
    /* Still there (this very process, started when it did): by pid. */
    char path[64], stat[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)getpid());
    FILE *f = fopen(path, "r");
    CHECK(f && fgets(stat, sizeof stat, f));
    fclose(f);
    unsigned long long started = 0;
    const char *p = strrchr(stat, ')');
    for (int field = 2; p && field < 22; field++)
        p = strchr(p + 1, ' ');
    CHECK(p && sscanf(p, " %llu", &started) == 1);
    k.c[0].pid = getpid();
    k.c[0].started = started;
    CHECK(children__verdict(&k, 4000000000u, "sh", buf, sizeof buf));
    char want[512];
    snprintf(want, sizeof want,
             "pid 100 (sh) used 0.10 s of CPU while recorded, its child processes 2.00 s, "
             "which hsspy does not sample: the busiest is pid %d (./prog +RTS -N2); profile it "
             "with hsspy record -p %d",
             (int)getpid(), (int)getpid());
    CHECK_EQ_STR(buf, want);
    /* top's few words, whatever the share of the time. */
    CHECK(children__brief(&k, buf, sizeof buf));
    snprintf(want, sizeof want,
             "child processes 2.00 s of CPU, pid 100 itself 0.10 s: not sampled; the busiest, "
             "pid %d: ./prog +RTS -N2",
             (int)getpid());
    CHECK_EQ_STR(buf, want);
    /* Under a tenth of one CPU over the recording: not a word. */
    CHECK(!children__verdict(&k, 25000000000u, "sh", buf, sizeof buf));
    /* No more than the target's own: not a word. */
    k.own = (uint64_t)hz * 2;
    CHECK(!children__verdict(&k, 4000000000u, "sh", buf, sizeof buf));
    CHECK(!children__brief(&k, buf, sizeof buf));
    /* None seen with time of its own. */
    k.own = 0;
    k.c[0].cpu = 0;
    k.reaped = (uint64_t)hz;
    CHECK(children__verdict(&k, 4000000000u, "make", buf, sizeof buf));
    CHECK(strstr(buf, "its child processes 1.00 s, which hsspy does not sample; profile the "
                      "program they run directly") != NULL);
}

/* A child that spins for ms milliseconds of CPU once told to go (a byte
 * on *go), then exits. */
static pid_t spinner(int ms, int *go)
{
    int p[2];
    if (pipe(p) < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        char c;
        close(p[1]);
        if (read(p[0], &c, 1) != 1)
            _exit(2);
        struct timespec t0, t;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
        do
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
        while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
        _exit(0);
    }
    close(p[0]);
    *go = p[1];
    return pid;
}

/* This process as the target, starting child after child, more than
 * there is room for: each seen at a look, then gone; the last, seen once
 * the slots are all taken, is still followed (a gone one's slot reused),
 * and the time of all of them is counted, through this process's time of
 * the children it waited for. */
TEST(child_after_child)
{
    struct children k;
    pid_t self = getpid();
    children__start(&k, self, &self, 1, 0);
    if (proc__children(self, 0, &self, 0) == -ENOENT)
        UNIT_SKIP("this kernel has no /proc/PID/task/TID/children (CONFIG_PROC_CHILDREN)");
    pid_t last = 0;
    for (int i = 0; i < CHILDREN_MAX + 4; i++) {
        int go;
        pid_t pid = spinner(i == CHILDREN_MAX + 3 ? 300 : 10, &go);
        CHECK(pid > 0);
        children__end(&k, &self, 1); /* (a look: it is seen) */
        CHECK(write(go, "x", 1) == 1);
        close(go);
        if (i == CHILDREN_MAX + 3) {
            /* Spinning still when looked at: its own time so far. */
            struct timespec ts = {0, 200000000};
            nanosleep(&ts, NULL);
            children__end(&k, &self, 1);
            last = pid;
        }
        int status;
        CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
        children__end(&k, &self, 1); /* (gone) */
    }
    CHECK_EQ_INT(k.n, CHILDREN_MAX);
    uint64_t own, kids;
    const struct child *b;
    children__totals(&k, &own, &kids, &b);
    long hz = sysconf(_SC_CLK_TCK);
    /* 300 ms and 19 times 10, in the kernel's ticks: 0.4 s at least. */
    CHECK((double)kids >= 0.4 * (double)hz);
    CHECK(b && b->pid == last && b->gone);
}
