/* test_proc.c - naming a blocked thread's system call: the hash of its
 * /proc syscall line as the kernel writes it, on a real thread blocked in
 * a read; and the calls learnt from registers (proc_calls): learnt only
 * where registers and line agree and only from inside a call, found by
 * the very registers, the oldest forgotten when full. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <time.h>
#include <unistd.h>

#include "sampler/proc.h"
#include "tests/unit/unit.h"

UNIT_MAIN()

static int pipe_fd[2];
static atomic_int reader_tid;
static char reader_buf[16];

static void *reader(void *arg)
{
    (void)arg;
    atomic_store(&reader_tid, (int)syscall(SYS_gettid));
    ssize_t n = read(pipe_fd[0], reader_buf, 7);
    return (void *)(intptr_t)n;
}

static void nap_ms(int ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

TEST(syscall_where_is_the_kernels_line)
{
    pthread_t t;
    CHECK(pipe(pipe_fd) == 0);
    CHECK(pthread_create(&t, NULL, reader, NULL) == 0);
    while (!atomic_load(&reader_tid))
        nap_ms(1);
    pid_t tid = atomic_load(&reader_tid);
    int fd = proc__open_syscall(getpid(), tid);
    CHECK(fd >= 0);
    long nr = -1;
    uint64_t sp = 0, pc = 0, where = 0;
    for (int i = 0; i < 2000 && nr != 0; i++) {
        if (proc__syscall_fd(fd, &nr, &sp, &pc, &where) != PROC_BLOCKED)
            nr = -1;
        if (nr != 0)
            nap_ms(1);
    }
    char path[96], line[256];
    snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
    ssize_t got = proc__read(path, line, sizeof line);
    CHECK(write(pipe_fd[1], "x", 1) == 1);
    pthread_join(t, NULL);
    close(fd);
    close(pipe_fd[0]);
    close(pipe_fd[1]);
    if (nr != 0)
        UNIT_FAIL("the reader never showed blocked in read(2) in its syscall file");
    CHECK(got > 0);
    long lnr;
    unsigned long long a[6], lsp, lpc;
    if (sscanf(line, "%ld %llx %llx %llx %llx %llx %llx %llx %llx", &lnr, &a[0], &a[1], &a[2],
               &a[3], &a[4], &a[5], &lsp, &lpc) != 9)
        UNIT_FAIL("syscall line not understood: %s", line);
    CHECK_EQ_INT(lnr, 0);
    CHECK_EQ_INT(a[0], pipe_fd[0]);
    CHECK(a[1] == (unsigned long long)(uintptr_t)reader_buf);
    CHECK_EQ_INT(a[2], 7);
    CHECK(lsp == sp && lpc == pc);
    uint64_t args[6] = {a[0], a[1], a[2], a[3], a[4], a[5]};
    if (proc__syscall_where(0, args, sp, pc) != where)
        UNIT_FAIL("the hash of the line formatted here differs from the kernel's: %s", line);
    args[2] = 8;
    CHECK(proc__syscall_where(0, args, sp, pc) != where);
}

/* Registers of a thread inside call nr: rax -ENOSYS, the rest from seed. */
static struct user_regs_struct in_call(uint64_t seed)
{
    struct user_regs_struct r;
    memset(&r, 0, sizeof r);
    r.rax = (unsigned long long)-ENOSYS;
    r.rip = 0x401000 + seed;
    r.rsp = 0x7ffc0000 - seed * 64;
    r.rdi = 3 + seed;
    r.rsi = 0x5000 + seed;
    r.rdx = 7;
    r.r10 = seed;
    r.r8 = 1;
    r.r9 = 2;
    r.rbx = 99; /* (not the call's: whatever it is) */
    return r;
}

static uint64_t where_of(long nr, const struct user_regs_struct *r)
{
    uint64_t args[6] = {r->rdi, r->rsi, r->rdx, r->r10, r->r8, r->r9};
    return proc__syscall_where(nr, args, r->rsp, r->rip);
}

TEST(calls_learnt_and_found)
{
    struct proc_calls cs;
    memset(&cs, 0, sizeof cs);
    struct user_regs_struct r = in_call(1);
    long nr = -1;
    uint64_t where = 0;
    CHECK(!proc__calls_find(&cs, &r, &nr, &where));
    /* Not learnt: a line of other registers, or of no call, or registers
     * not taken inside a call. */
    CHECK(!proc__calls_learn(&cs, &r, 0, where_of(1, &r)));
    CHECK(!proc__calls_learn(&cs, &r, -1, where_of(0, &r)));
    struct user_regs_struct out = r;
    out.rax = 0;
    CHECK(!proc__calls_learn(&cs, &out, 0, where_of(0, &out)));
    CHECK_EQ_INT(cs.n, 0);
    CHECK(proc__calls_learn(&cs, &r, 0, where_of(0, &r)));
    CHECK(proc__calls_find(&cs, &r, &nr, &where));
    CHECK_EQ_INT(nr, 0);
    CHECK(where == where_of(0, &r));
    /* Registers not the call's do not matter; any of its arguments, its sp
     * or its pc does; and outside a call nothing is found. */
    struct user_regs_struct s = r;
    s.rbx = 1;
    s.rcx = 2;
    CHECK(proc__calls_find(&cs, &s, &nr, &where));
    const size_t off[] = {offsetof(struct user_regs_struct, rdi),
                          offsetof(struct user_regs_struct, rsi),
                          offsetof(struct user_regs_struct, rdx),
                          offsetof(struct user_regs_struct, r10),
                          offsetof(struct user_regs_struct, r8),
                          offsetof(struct user_regs_struct, r9),
                          offsetof(struct user_regs_struct, rsp),
                          offsetof(struct user_regs_struct, rip)};
    for (size_t i = 0; i < sizeof off / sizeof off[0]; i++) {
        s = r;
        *(unsigned long long *)((char *)&s + off[i]) += 8;
        if (proc__calls_find(&cs, &s, &nr, &where))
            UNIT_FAIL("found with register at offset %zu changed", off[i]);
    }
    CHECK(!proc__calls_find(&cs, &out, &nr, &where));
    /* The same registers learnt as another call: the newer holds. */
    CHECK(proc__calls_learn(&cs, &r, 202, where_of(202, &r)));
    CHECK_EQ_INT(cs.n, 1);
    CHECK(proc__calls_find(&cs, &r, &nr, &where));
    CHECK_EQ_INT(nr, 202);
    /* Full: the oldest goes. */
    for (uint64_t k = 2; k <= PROC_CALLS + 1; k++) {
        struct user_regs_struct q = in_call(k);
        CHECK(proc__calls_learn(&cs, &q, (long)k, where_of((long)k, &q)));
    }
    CHECK_EQ_INT(cs.n, PROC_CALLS);
    CHECK(!proc__calls_find(&cs, &r, &nr, &where));
    for (uint64_t k = 2; k <= PROC_CALLS + 1; k++) {
        struct user_regs_struct q = in_call(k);
        CHECK(proc__calls_find(&cs, &q, &nr, &where));
        CHECK_EQ_INT(nr, (long)k);
        CHECK(where == where_of((long)k, &q));
    }
}

/* A stat line's CPU times and start, counted from the last ')': a comm may
 * hold spaces and parentheses. */
TEST(stat_cpu_fields)
{
    const char *line = "4242 (a) b (c) S 1 4242 4242 0 -1 4194560 120 0 0 0 "
                       "731 52 9000 88 20 0 3 0 123456 10000000 200 18446744073709551615\n";
    uint64_t own = 0, reaped = 0, started = 0;
    CHECK_EQ_INT(proc__stat_cpu(line, &own, &reaped, &started), 0);
    CHECK_EQ_INT(own, 731 + 52);
    CHECK_EQ_INT(reaped, 9000 + 88);
    CHECK_EQ_INT(started, 123456);
    CHECK_EQ_INT(proc__stat_cpu("4242 (x) S 1 2 3", &own, &reaped, &started), -EINVAL);
    CHECK_EQ_INT(proc__stat_cpu("4242 x S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19",
                                &own, &reaped, &started),
                 -EINVAL);
    CHECK_EQ_INT(proc__stat_cpu("4242 (x) S 1 4242 4242 0 -1 0 0 0 0 0 7 -1 0 0 20 0 1 0 5",
                                &own, &reaped, &started),
                 -EINVAL);
}

/* This process's own stat file: its CPU time grows as it spins, and a
 * child it waited for adds the child's to its reaped time; the child is
 * listed among its children while it lives. */
TEST(stat_cpu_and_children_live)
{
    char path[64], buf[1024];
    uint64_t own0, reaped0, own, reaped, st0, st;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)getpid());
    CHECK(proc__read(path, buf, sizeof buf) > 0);
    CHECK_EQ_INT(proc__stat_cpu(buf, &own0, &reaped0, &st0), 0);
    int go[2];
    CHECK(pipe(go) == 0);
    pid_t kid = fork();
    if (kid == 0) {
        char c;
        close(go[1]);
        if (read(go[0], &c, 1) < 0)
            _exit(2);
        /* 0.3 s of CPU, then out. */
        struct timespec t0, t;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
        do
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
        while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < 0.3);
        _exit(0);
    }
    CHECK(kid > 0);
    close(go[0]);
    pid_t kids[8];
    int n = proc__children(getpid(), 0, kids, 8);
    if (n == -ENOENT) {
        close(go[1]);
        waitpid(kid, NULL, 0);
        UNIT_SKIP("this kernel has no /proc/PID/task/TID/children (CONFIG_PROC_CHILDREN)");
    }
    bool listed = false;
    for (int i = 0; i < n && i < 8; i++)
        listed |= kids[i] == kid;
    CHECK(listed);
    CHECK(write(go[1], "x", 1) == 1);
    close(go[1]);
    int status;
    CHECK(waitpid(kid, &status, 0) == kid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(proc__read(path, buf, sizeof buf) > 0);
    CHECK_EQ_INT(proc__stat_cpu(buf, &own, &reaped, &st), 0);
    long hz = sysconf(_SC_CLK_TCK);
    CHECK(st == st0);
    CHECK(own >= own0);
    /* (0.3 s, to the kernel's accounting in ticks: at least 0.2 s.) */
    CHECK((double)(reaped - reaped0) >= 0.2 * (double)hz);
    CHECK_EQ_INT(proc__children(getpid(), 0, kids, 8), n - 1);
}

/* A field of a status file: found only as a whole key at a line's start,
 * its value without the blanks before it or the newline, cut to size; the
 * last line without a newline too; and hsspy's own NSpid is its pid. */
TEST(status_fields)
{
    const char *text = "Name:\tx y\nTgid:\t12\nNSpid:\t12\t3\nCapEff:\t000001ffffffffff\n"
                       "Cpus_allowed_list:\t0-1";
    char v[32];
    CHECK(proc__status_field(text, "NSpid", v, sizeof v));
    CHECK_EQ_STR(v, "12\t3");
    CHECK(proc__status_field(text, "CapEff", v, sizeof v));
    CHECK_EQ_STR(v, "000001ffffffffff");
    CHECK(proc__status_field(text, "Name", v, sizeof v));
    CHECK_EQ_STR(v, "x y");
    CHECK(proc__status_field(text, "Cpus_allowed_list", v, sizeof v));
    CHECK_EQ_STR(v, "0-1");
    CHECK(proc__status_field(text, "CapEff", v, 5));
    CHECK_EQ_STR(v, "0000");
    CHECK(!proc__status_field(text, "Cap", v, sizeof v));   /* (a prefix of a key) */
    CHECK(!proc__status_field(text, "pid", v, sizeof v));   /* (a key's tail) */
    CHECK(!proc__status_field(text, "Groups", v, sizeof v));
    CHECK(!proc__status_field("", "Name", v, sizeof v));
    CHECK(proc__self_status_field("Tgid", v, sizeof v));
    CHECK_EQ_INT(atoi(v), (int)getpid());
}
