/* nappers - many threads ("nap") that nap over and over (1 ms sleeps, in
 * nap_inner under nap_outer), as a server's threads blocked in short
 * calls, and as many as asked ("busy") that spin in busy_work: nappers
 * [THREADS [SECONDS [BUSY]]] (default 50 threads, 10 s, none busy). Each runs
 * between any two samples, and nearly always sleeps when one is taken;
 * reading them all one after another takes long enough that many wake up
 * and sleep again before their turn. Prints "ready" once every thread has
 * napped, and at each SIGUSR1 "naps N" (naps so far, all threads): with
 * their voluntary context switches (one per nap), a test sees whether
 * anything else woke them up. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static atomic_ulong naps;
static atomic_int started;
static volatile sig_atomic_t asked;

static void on_usr1(int sig)
{
    (void)sig;
    asked = 1;
}

__attribute__((noinline)) static void nap_inner(void)
{
    struct timespec ts = {0, 1000000};
    while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) != 0)
        ;
    atomic_fetch_add(&naps, 1);
}

__attribute__((noinline)) static void nap_outer(void)
{
    nap_inner();
    __asm__ volatile("" ::: "memory"); /* not a tail call */
}

__attribute__((noinline)) static void busy_work(void)
{
    for (volatile unsigned long i = 0; i < 1000000; i++)
        ;
}

static void *busy(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "busy");
    for (;;)
        busy_work();
    return NULL;
}

static void *napper(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "nap");
    nap_outer();
    atomic_fetch_add(&started, 1);
    for (;;)
        nap_outer();
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 50;
    double secs = argc > 2 ? atof(argv[2]) : 10;
    int busies = argc > 3 ? atoi(argv[3]) : 0;
    signal(SIGUSR1, on_usr1);
    for (int i = 0; i < busies; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, busy, NULL) != 0)
            return 1;
    }
    for (int i = 0; i < threads; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, napper, NULL) != 0)
            return 1;
    }
    while (atomic_load(&started) < threads)
        usleep(1000);
    printf("ready\n");
    fflush(stdout);
    struct timespec end, now, tick = {0, 10000000};
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += (time_t)secs;
    do {
        nanosleep(&tick, NULL);
        if (asked) {
            asked = 0;
            printf("naps %lu\n", atomic_load(&naps));
            fflush(stdout);
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (now.tv_sec < end.tv_sec ||
             (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
    return 0;
}
