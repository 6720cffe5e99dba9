/* lifecycle - a target that forks and execs while it is profiled.
 *
 *   lifecycle fork SECONDS   spin, forking a short-lived child every 50 ms;
 *                            prints "children N" and exits 0 when all were
 *                            reaped with status 0
 *   lifecycle exec SECONDS   spin half the time, then exec itself as
 *                            "lifecycle spin SECONDS/2", which spins in
 *                            spin_after_exec, prints "after exec" and
 *                            exits 0
 *   lifecycle thread-exec SECONDS
 *                            the same exec done by a second thread, while
 *                            the first spins on
 *   lifecycle vfork SECONDS  print "vforked", then wait for a vfork child
 *                            that sleeps SECONDS (the parent cannot be
 *                            stopped meanwhile) and exits 0
 *   lifecycle nodump SECONDS make itself not dumpable (prctl), spin in
 *                            spin_after_exec, print "not dumpable", exit 0
 *   lifecycle reexec SECONDS N
 *                            exec itself N times over (a few ms apart),
 *                            then spin in spin_after_exec, print "after
 *                            N execs" and exit 5
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void spin_until(double until)
{
    while (now() < until)
        for (int i = 0; i < 10000; i++)
            sink += (unsigned long)i;
}

__attribute__((noinline)) static void spin_after_exec(double secs)
{
    spin_until(now() + secs);
    __asm__ volatile("" ::: "memory"); /* not a tail call: it stays on the stack */
}

static char *self;

static void *exec_from_thread(void *arg)
{
    double secs = *(double *)arg;
    char half[32];
    spin_until(now() + secs / 2);
    snprintf(half, sizeof half, "%g", secs / 2);
    execl("/proc/self/exe", self, "spin", half, (char *)NULL);
    return NULL;
}

int main(int argc, char **argv)
{
    self = argv[0];
    if (argc < 3)
        return 2;
    double secs = atof(argv[2]);
    if (strcmp(argv[1], "fork") == 0) {
        double end = now() + secs;
        int children = 0, bad = 0;
        while (now() < end) {
            pid_t c = fork();
            if (c == 0) {
                spin_until(now() + 0.01);
                _exit(0);
            }
            children++;
            spin_until(now() + 0.05);
            int st;
            if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
                bad++;
        }
        printf("children %d bad %d\n", children, bad);
        return bad != 0;
    }
    if (strcmp(argv[1], "exec") == 0) {
        char half[32];
        spin_until(now() + secs / 2);
        snprintf(half, sizeof half, "%g", secs / 2);
        execl("/proc/self/exe", argv[0], "spin", half, (char *)NULL);
        return 3;
    }
    if (strcmp(argv[1], "thread-exec") == 0) {
        /* The same exec from a second thread while the first spins on:
         * the kernel ends the first, and the second takes its tid. */
        pthread_t t;
        static double s;
        s = secs;
        if (pthread_create(&t, NULL, exec_from_thread, &s) != 0)
            return 3;
        spin_until(now() + secs * 2);
        return 3;
    }
    if (strcmp(argv[1], "nodump") == 0) {
        if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
            return 3;
        spin_after_exec(secs);
        printf("not dumpable\n");
        return 0;
    }
    if (strcmp(argv[1], "vfork") == 0) {
        printf("vforked\n");
        fflush(stdout);
        pid_t c = vfork();
        if (c == 0) {
            struct timespec d = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
            nanosleep(&d, NULL);
            _exit(0);
        }
        int st;
        return c > 0 && waitpid(c, &st, 0) == c && WIFEXITED(st) ? WEXITSTATUS(st) : 3;
    }
    if (strcmp(argv[1], "reexec") == 0 && argc > 3) {
        int left = atoi(argv[3]);
        static char n[16];
        if (left <= 0) {
            spin_after_exec(secs);
            printf("after N execs\n");
            return 5;
        }
        spin_until(now() + 0.003);
        snprintf(n, sizeof n, "%d", left - 1);
        char *again[] = {argv[0], argv[1], argv[2], n, NULL};
        execv("/proc/self/exe", again);
        return 3;
    }
    if (strcmp(argv[1], "spin") == 0) {
        spin_after_exec(secs);
        printf("after exec\n");
        return 0;
    }
    return 2;
}
