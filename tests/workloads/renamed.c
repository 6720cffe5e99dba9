/* renamed - a thread that names itself 0.1 s after it starts, and is gone
 * well before the program ends:
 *
 *   worker: spin 0.1 s as "renamed", name itself "renamed-late",
 *           spin 0.3 s, exit
 *   main:   wait for it, then sleep 1 s
 *
 * Prints "worker TID" and exits 0. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void spin(double seconds)
{
    double until = now() + seconds;
    while (now() < until)
        for (int i = 0; i < 10000; i++)
            sink += (unsigned long)i;
}

static void *worker(void *arg)
{
    (void)arg;
    printf("worker %ld\n", (long)syscall(SYS_gettid));
    fflush(stdout);
    spin(0.1);
    pthread_setname_np(pthread_self(), "renamed-late");
    spin(0.3);
    return NULL;
}

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    struct timespec ts = {1, 0};
    nanosleep(&ts, NULL);
    return 0;
}
