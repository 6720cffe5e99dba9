/* epilogue: one thread calling, in a loop, popper (which saves rbp and
 * spends a good part of its time in its last instructions: its unwind
 * information still says rbp is saved just below the stack pointer once it
 * has popped it) and other (which saves rbx in that same slot), from
 * framed, whose frame is found through rbp (a frame pointer). Usage:
 * epilogue SECONDS */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile long sink;

__attribute__((noinline)) long popper(long x)
{
    long r;
    __asm__ volatile("lea 1(%1), %0" : "=r"(r) : "r"(x) : "rbp");
    return r;
}

__attribute__((noinline)) long other(long x)
{
    long r;
    __asm__ volatile("lea 2(%1), %0" : "=r"(r) : "r"(x) : "rbx");
    return r;
}

__attribute__((noinline, optimize("no-omit-frame-pointer"))) long framed(long n)
{
    long s = 0;
    for (long i = 0; i < n; i++) {
        s += popper(i);
        s += other(s);
    }
    return s;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 2;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        sink += framed(100000);
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
    printf("epilogue done\n");
    return 0;
}
