/* switcher - THREADS threads (default 4) that nap NAP_US microseconds
 * (default 100) over and over, in switch_nap under switch_loop, for
 * SECONDS (default 10): thousands of context switches a second, each a
 * record (and a sample of registers) in the per-CPU switch events' rings;
 * and SPINNERS threads (default 0) that spin in switch_spin under
 * switch_spinner, never leaving user code. Prints "ready" once its
 * threads run. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long nap_ns = 100000;
static volatile int stop;

__attribute__((noinline)) static void switch_nap(void)
{
    struct timespec ts = {0, nap_ns};
    while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) != 0)
        ;
}

__attribute__((noinline)) static void *switch_loop(void *arg)
{
    (void)arg;
    while (!stop)
        switch_nap();
    return NULL;
}

__attribute__((noinline)) static unsigned long switch_spin(unsigned long x)
{
    for (int i = 0; i < 1000000; i++)
        x = x * 6364136223846793005ul + 1442695040888963407ul;
    return x;
}

static volatile unsigned long sink;

__attribute__((noinline)) static void *switch_spinner(void *arg)
{
    (void)arg;
    unsigned long x = 1;
    while (!stop)
        x = switch_spin(x);
    sink = x;
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4;
    nap_ns = (argc > 2 ? atol(argv[2]) : 100) * 1000;
    double secs = argc > 3 ? atof(argv[3]) : 10;
    int spinners = argc > 4 ? atoi(argv[4]) : 0;
    if (n < 1 || n > 64 || nap_ns < 1000 || nap_ns >= 1000000000 || secs <= 0 ||
        spinners < 0 || spinners > 64) {
        fprintf(stderr, "usage: switcher [THREADS [NAP_US [SECONDS [SPINNERS]]]]\n");
        return 2;
    }
    pthread_t t[128];
    for (int i = 0; i < n + spinners; i++)
        if (pthread_create(&t[i], NULL, i < n ? switch_loop : switch_spinner, NULL) != 0)
            return 1;
    printf("ready\n");
    fflush(stdout);
    struct timespec end = {(time_t)secs, (long)((secs - (time_t)secs) * 1e9)};
    while (clock_nanosleep(CLOCK_MONOTONIC, 0, &end, &end) != 0)
        ;
    stop = 1;
    for (int i = 0; i < n + spinners; i++)
        pthread_join(t[i], NULL);
    return 0;
}
