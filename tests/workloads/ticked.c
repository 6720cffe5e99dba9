/* ticked - a loop whose thread takes a timer signal every half
 * millisecond (as a non-threaded GHC 9.0 program takes its runtime's tick),
 * its handler a few instructions. Usage: ticked SECONDS. Prints "ticks N",
 * the signals its handler took, and exits 0. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long ticks, sink;

__attribute__((noinline)) void on_tick(int sig)
{
    (void)sig;
    ticks++;
}

__attribute__((noinline)) void spin(double seconds)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        for (int i = 0; i < 100000; i++)
            sink += (unsigned long)i * 7;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
}

int main(int argc, char **argv)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_tick;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    timer_t tm;
    struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGALRM};
    struct itimerspec its = {{0, 500000}, {0, 500000}};
    if (timer_create(CLOCK_MONOTONIC, &ev, &tm) != 0 || timer_settime(tm, 0, &its, NULL) != 0)
        return 1;
    spin(argc > 1 ? atof(argv[1]) : 2);
    printf("ticks %lu\n", ticks);
    return 0;
}
