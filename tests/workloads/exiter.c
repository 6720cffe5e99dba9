/* exiter - exits just after a sample of a deep C stack. It spins in main
 * for SECONDS (a profiler's copy of its C stack shrinks to what those
 * shallow samples use), then dives DEPTH frames of dive(), each with a
 * 256-byte buffer, and spins at the bottom until a ptrace stop has come
 * and gone: its voluntary context switches (getrusage RUSAGE_THREAD) go up
 * by one, as a spinning thread's own never do. Then it exits at once,
 * while the profiler walks the stack of that stop, most of which it did
 * not copy. Usage: exiter SECONDS DEPTH */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long voluntary_switches(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_nvcsw;
}

__attribute__((noinline)) static void exit_after_stop(void)
{
    long before = voluntary_switches();
    double give_up = now() + 10;
    while (voluntary_switches() == before && now() < give_up)
        ;
    _exit(0);
}

__attribute__((noinline)) static void dive(int depth)
{
    volatile char buf[256];
    buf[0] = (char)depth;
    if (depth > 1)
        dive(depth - 1);
    else
        exit_after_stop();
    buf[1] = buf[0]; /* not a tail call */
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 0.5;
    int depth = argc > 2 ? atoi(argv[2]) : 100;
    double end = now() + secs;
    volatile unsigned long spins = 0;
    while (now() < end)
        spins++;
    dive(depth);
    return 1;
}
