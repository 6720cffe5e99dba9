/* chains - two threads burning CPU in known call chains.
 *
 *   main thread:   main -> outer -> middle -> leaf
 *   worker thread: worker -> outer -> middle -> leaf   (named "chains-worker")
 *
 * Usage: chains SECONDS. Prints "main TID" and "worker TID" lines, then spins
 * for SECONDS and exits 0. Built without frame pointers (see Makefile). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double seconds;
static volatile unsigned long sink;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void leaf(double until)
{
    while (now() < until)
        for (int i = 0; i < 100000; i++)
            sink += (unsigned long)i * 7;
}

__attribute__((noinline)) void middle(double until)
{
    leaf(until);
    sink++;
}

__attribute__((noinline)) void outer(double until)
{
    middle(until);
    sink++;
}

__attribute__((noinline)) void *worker(void *arg)
{
    (void)arg;
    printf("worker %ld\n", (long)syscall(SYS_gettid));
    fflush(stdout);
    outer(now() + seconds);
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t t;
    seconds = argc > 1 ? atof(argv[1]) : 5;
    printf("main %ld\n", (long)syscall(SYS_gettid));
    fflush(stdout);
    pthread_create(&t, NULL, worker, NULL);
    pthread_setname_np(t, "chains-worker");
    outer(now() + seconds);
    pthread_join(t, NULL);
    return 0;
}
