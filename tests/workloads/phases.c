/* phases - one thread doing two things in turn: busy in phase_a for A
 * seconds, then in phase_b for B seconds, then it exits 0. A trace of it
 * must show the two phases one after the other, each as long as it ran.
 * Usage: phases [A [B]] (default 0.5 0.5). Prints "phase_a S E" and
 * "phase_b S E", when each started and ended by the wall clock (seconds
 * since the epoch, as a recording's start is given), so that the part of a
 * phase that ran before a recording started can be told apart. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static double clock_s(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now(void) { return clock_s(CLOCK_MONOTONIC); }

__attribute__((noinline)) static void spin(double until)
{
    while (now() < until)
        for (int i = 0; i < 100000; i++)
            sink += (unsigned long)i * 3;
}

/* Two functions with the same body: only the name tells them apart. */
__attribute__((noinline)) void phase_a(double seconds) { spin(now() + seconds); }
__attribute__((noinline)) void phase_b(double seconds) { spin(now() + seconds); }

int main(int argc, char **argv)
{
    double a = argc > 1 ? atof(argv[1]) : 0.5, b = argc > 2 ? atof(argv[2]) : 0.5;
    double t0 = clock_s(CLOCK_REALTIME);
    phase_a(a);
    double t1 = clock_s(CLOCK_REALTIME);
    phase_b(b);
    double t2 = clock_s(CLOCK_REALTIME);
    printf("phase_a %.6f %.6f\nphase_b %.6f %.6f\n", t0, t1, t1, t2);
    return 0;
}
