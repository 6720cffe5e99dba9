/* deepcall - mostly a shallow loop (spin, under main;shallow_a or
 * shallow_b), and every 600 µs or so a short call that takes 12 KB of
 * stack (deep_work, under main;call_a or call_b;deep_frame), for
 * a number of seconds: a C stack that is, now and then and briefly, much
 * deeper than in the samples before, as a program's printf (an 8 KB
 * buffer) or GMP's temporaries make it. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile long sink;

__attribute__((noinline)) static void spin(long n)
{
    for (long i = 0; i < n; i++)
        sink += i;
}

__attribute__((noinline)) static void deep_work(volatile char *buf, size_t len)
{
    for (int round = 0; round < 60; round++)
        for (size_t i = 0; i < len; i += 64)
            buf[i] = (char)(buf[i] + round);
}

/* 12 KB of the stack, written, then worked on for some tens of µs. */
__attribute__((noinline)) static void deep_frame(void)
{
    volatile char buf[12 * 1024];
    memset((char *)buf, 1, sizeof buf);
    deep_work(buf, sizeof buf);
}

__attribute__((noinline)) static void call_a(void) { deep_frame(); }
__attribute__((noinline)) static void call_b(void) { deep_frame(); }
__attribute__((noinline)) static void shallow_a(void) { spin(300000); }
__attribute__((noinline)) static void shallow_b(void) { spin(300000); }

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 1.0;
    double end = now() + secs;
    for (unsigned k = 0; now() < end; k++) {
        if (k & 1) {
            shallow_a();
            call_a();
        } else {
            shallow_b();
            call_b();
        }
    }
    return 0;
}
