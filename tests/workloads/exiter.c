/* exiter - exits just after a sample of a deep C stack. It spins for
 * SECONDS (a profiler's copy of its C stack shrinks to what those shallow
 * samples use), then dives DEPTH frames of dive(), each with a 256-byte
 * buffer, and spins at the bottom until a ptrace stop has come and gone:
 * its voluntary context switches (getrusage RUSAGE_THREAD) go up by one,
 * as a spinning thread's own never do. Then it exits at once, while the
 * profiler walks the stack of that stop, most of which it did not copy.
 * With "thread", all that is done by a second thread, the first (the
 * process's leader) having ended in pthread_exit: a zombie whose pid has
 * no memory left, while the process runs on.
 * Usage: exiter SECONDS DEPTH [thread] */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
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

__attribute__((noinline)) static void spin_for(double secs)
{
    double end = now() + secs;
    volatile unsigned long spins = 0;
    while (now() < end)
        spins++;
}

static double secs = 0.5;
static int depth = 100;

static void *alone(void *arg)
{
    (void)arg;
    spin_for(secs);
    dive(depth);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        secs = atof(argv[1]);
    if (argc > 2)
        depth = atoi(argv[2]);
    if (argc > 3 && strcmp(argv[3], "thread") == 0) {
        pthread_t t;
        if (pthread_create(&t, NULL, alone, NULL) != 0)
            return 2;
        pthread_exit(NULL);
    }
    spin_for(secs);
    dive(depth);
    return 1;
}
