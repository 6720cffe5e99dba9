/* stopcost.c - make bench's floor: what this machine charges for the
 * operations one hsspy tick is made of, measured bare, without hsspy. A
 * child spins; the parent, its tracer, does once a millisecond (as hsspy
 * at 1 kHz) one of: a system call, a sleep and its wake-up, a
 * process_vm_readv of the child's stack, a read of /proc/PID/syscall, or a
 * whole stop (PTRACE_INTERRUPT, wait4, PTRACE_GETREGS, PTRACE_CONT) of the
 * child, first running on another CPU, then waiting for the tracer's own
 * CPU. Each figure is the median over the repetitions of the tracer's CPU
 * time (its thread CPU clock, less what reading that clock costs), and for
 * a stop also the time from the interrupt to the resume.
 *
 * On bare metal an interrupt of a thread on another CPU costs the tracer a
 * microsecond or two; in a guest whose inter-processor interrupts go
 * through the hypervisor it can cost tens: that is the floor under
 * hsspy's figures, whatever hsspy does.
 *
 * Usage: stopcost [REPEATS]   (default 2000; prints "name value" lines)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu(void) { return ns(CLOCK_THREAD_CPUTIME_ID); }

static int cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static double median_us(uint64_t *v, int n, uint64_t less)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    uint64_t m = v[n / 2];
    return (double)(m > less ? m - less : 0) / 1000.0;
}

static bool pin(pid_t pid, int cpu_no)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu_no, &set);
    return sched_setaffinity(pid, sizeof set, &set) == 0;
}

static void tick_sleep(void)
{
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
}

/* One stop of the child per tick; prints its parts under the name PFX. */
static void stops(pid_t child, int n, uint64_t clk, const char *pfx)
{
    uint64_t *part[4], *pause = calloc((size_t)n, sizeof *pause);
    uint64_t *whole = calloc((size_t)n, sizeof *whole);
    for (int k = 0; k < 4; k++)
        part[k] = calloc((size_t)n, sizeof **part);
    if (!pause || !whole || !part[0] || !part[1] || !part[2] || !part[3]) {
        fprintf(stderr, "stopcost: out of memory\n");
        exit(1);
    }
    for (int i = 0; i < n; i++) {
        struct user_regs_struct regs;
        int status;
        tick_sleep();
        uint64_t c0 = cpu();
        ptrace(PTRACE_INTERRUPT, child, 0, 0);
        uint64_t c1 = cpu();
        waitpid(child, &status, __WALL);
        uint64_t c2 = cpu(), t2 = ns(CLOCK_MONOTONIC);
        ptrace(PTRACE_GETREGS, child, 0, &regs);
        uint64_t c3 = cpu();
        ptrace(PTRACE_CONT, child, 0, 0);
        uint64_t c4 = cpu(), t4 = ns(CLOCK_MONOTONIC);
        uint64_t c[5] = {c0, c1, c2, c3, c4};
        whole[i] = 0;
        for (int k = 0; k < 4; k++) {
            uint64_t d = c[k + 1] - c[k];
            part[k][i] = d > clk ? d - clk : 0;
            whole[i] += part[k][i];
        }
        pause[i] = t4 - t2;
    }
    printf("%s_interrupt %.1f\n", pfx, median_us(part[0], n, 0));
    printf("%s_wait %.1f\n", pfx, median_us(part[1], n, 0));
    printf("%s_getregs %.1f\n", pfx, median_us(part[2], n, 0));
    printf("%s_cont %.1f\n", pfx, median_us(part[3], n, 0));
    printf("%s_all %.1f\n", pfx, median_us(whole, n, 0));
    printf("%s_pause %.1f\n", pfx, median_us(pause, n, 0));
    for (int k = 0; k < 4; k++)
        free(part[k]);
    free(pause);
    free(whole);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 2000;
    if (n < 10 || n > 1000000) {
        fprintf(stderr, "usage: stopcost [REPEATS]\n");
        return 2;
    }
    uint64_t *v = calloc((size_t)n, sizeof *v);
    if (!v)
        return 1;
    static volatile uint64_t spin_buf[1024];
    /* The first two CPUs this process may use: the tracer on one, the
     * child on the other (or on the same one, for a thread waiting for
     * the tracer's CPU). */
    cpu_set_t allowed;
    int cpus[2] = {-1, -1}, ncpu = 0;
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
        for (int c = 0; c < CPU_SETSIZE && ncpu < 2; c++)
            if (CPU_ISSET(c, &allowed))
                cpus[ncpu++] = c;
    if (ncpu == 0 || !pin(0, cpus[0])) {
        fprintf(stderr, "stopcost: cannot pin itself to a CPU\n");
        return 1;
    }
    pid_t parent = getpid();
    pid_t child = fork();
    if (child < 0) {
        perror("stopcost: fork");
        return 1;
    }
    if (child == 0) {
        /* Never outlive the tracer (make bench interrupted, say). */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(0);
        for (uint64_t i = 0;; i++)
            spin_buf[i & 1023] = i;
    }
    if (ncpu == 2 && !pin(child, cpus[1]))
        ncpu = 1;
    if (ptrace(PTRACE_SEIZE, child, 0, 0) < 0) {
        perror("stopcost: PTRACE_SEIZE");
        kill(child, SIGKILL);
        return 1;
    }

    /* What reading the CPU clock costs: taken off every figure. */
    for (int i = 0; i < n; i++) {
        uint64_t a = cpu();
        v[i] = cpu() - a;
    }
    qsort(v, (size_t)n, sizeof *v, cmp);
    uint64_t clk = v[n / 2];
    printf("clock %.2f\n", (double)clk / 1000.0);

    for (int i = 0; i < n; i++) {
        uint64_t a = cpu();
        syscall(SYS_getppid);
        v[i] = cpu() - a;
    }
    printf("syscall %.2f\n", median_us(v, n, clk));

    for (int i = 0; i < n; i++) {
        uint64_t a = cpu();
        tick_sleep();
        v[i] = cpu() - a;
    }
    printf("sleep %.1f\n", median_us(v, n, clk));

    /* The child's own memory, where its loop writes: 8 KB, a typical
     * stack read. */
    static uint8_t buf[8192];
    struct iovec l = {buf, sizeof buf}, r = {(void *)spin_buf, sizeof buf};
    for (int i = 0; i < n; i++) {
        tick_sleep();
        uint64_t a = cpu();
        ssize_t got = process_vm_readv(child, &l, 1, &r, 1, 0);
        v[i] = cpu() - a;
        if (got != (ssize_t)sizeof buf) {
            perror("stopcost: process_vm_readv");
            kill(child, SIGKILL);
            return 1;
        }
    }
    printf("vm_readv %.1f\n", median_us(v, n, clk));

    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", (int)child, (int)child);
    int fd = open(path, O_RDONLY);
    if (fd >= 0) {
        char line[256];
        int m = 0;
        for (int i = 0; i < n; i++) {
            tick_sleep();
            uint64_t a = cpu();
            if (pread(fd, line, sizeof line, 0) <= 0)
                break;
            v[m++] = cpu() - a;
        }
        if (m > 0)
            printf("proc_syscall %.1f\n", median_us(v, m, clk));
        close(fd);
    }

    if (ncpu == 2)
        stops(child, n, clk, "running");
    pin(child, cpus[0]); /* now it can run only when the tracer sleeps */
    stops(child, n, clk, "waiting");

    kill(child, SIGKILL);
    waitpid(child, NULL, __WALL);
    free(v);
    return 0;
}
