/* work - a fixed amount of CPU work on THREADS threads (default 2), in the
 * call chain outer -> middle -> leaf, for overhead benchmarks: the time it
 * takes is the figure, so it prints "elapsed_ms N" (its own monotonic clock,
 * excluding process start and exit). Usage: work [THREADS] [MILLIONS]. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long iterations;
static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long leaf(long n)
{
    unsigned long h = 1469598103934665603ull;
    for (long i = 0; i < n; i++)
        h = (h ^ (unsigned long)i) * 1099511628211ull;
    return h;
}

__attribute__((noinline)) static unsigned long middle(long n)
{
    unsigned long s = 0;
    for (int k = 0; k < 100; k++)
        s += leaf(n / 100 + k); /* distinct calls: not folded into one */
    return s;
}

__attribute__((noinline)) static void *outer(void *arg)
{
    (void)arg;
    sink += middle(iterations);
    return NULL;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 2;
    iterations = (argc > 2 ? atol(argv[2]) : 500) * 1000000L;
    pthread_t t[64];
    if (threads < 1 || threads > 64)
        return 2;
    double start = now_ms();
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, outer, NULL);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    printf("elapsed_ms %.1f\n", now_ms() - start);
    return 0;
}
