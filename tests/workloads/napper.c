/* napper - one thread ("nap") that naps over and over (2 ms sleeps, in
 * nap_inner under nap_outer), one ("fpnap") that does the same in
 * nap_framed (see there), and one ("burst") busy in burst_work a fifth of
 * the time, asleep the rest, while the main thread spins in spin_main: napper
 * [SECONDS] (default 10). The napper runs between any two samples taken
 * at up to 500 Hz, yet is nearly always blocked in its sleep when one is
 * taken. Prints "ready" once it naps, and "naps N" (naps so far) at each
 * SIGUSR1: with its voluntary context switches (one per nap), a test sees
 * whether anything else woke it up. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>

static volatile unsigned long naps;
static volatile sig_atomic_t asked;

static void on_usr1(int sig)
{
    (void)sig;
    asked = 1;
}

__attribute__((noinline)) static void nap_inner(void)
{
    struct timespec ts = {0, 2000000};
    while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) != 0)
        ;
    naps++;
}

__attribute__((noinline)) static void nap_outer(void)
{
    nap_inner();
    __asm__ volatile("" ::: "memory"); /* not a tail call */
}

/* The same nap, made by hand with the system call right here in a
 * function that keeps a frame pointer: its caller's frame is found from
 * rbp, which /proc's pc and sp do not give. */
#pragma GCC push_options
#pragma GCC optimize("no-omit-frame-pointer")
__attribute__((noinline)) static void nap_framed(void)
{
    struct timespec ts = {0, 2000000};
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "0"((long)SYS_nanosleep), "D"(&ts), "S"((void *)0)
                     : "rcx", "r11", "memory");
    (void)ret;
}
#pragma GCC pop_options

static void *fp_napper(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "fpnap");
    for (;;) {
        nap_framed();
        __asm__ volatile("" ::: "memory");
    }
    return NULL;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void burst_work(double until)
{
    while (now() < until)
        ;
}

/* Busy for 20 ms, then asleep for 80, over and over: busy at some samples,
 * then asleep through many. */
static void *burster(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "burst");
    for (;;) {
        burst_work(now() + 0.02);
        struct timespec ts = {0, 80000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void *napper(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "nap");
    for (;;)
        nap_outer();
    return NULL;
}

__attribute__((noinline)) static unsigned long spin_main(double end)
{
    volatile unsigned long x = 0;
    while (now() < end) {
        for (int i = 0; i < 100000; i++)
            x += (unsigned long)i;
        if (asked) {
            asked = 0;
            printf("naps %lu\n", naps);
            fflush(stdout);
        }
    }
    return x;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 10;
    double end = now() + secs;
    pthread_t t, u, b;
    signal(SIGUSR1, on_usr1);
    if (pthread_create(&t, NULL, napper, NULL) != 0 ||
        pthread_create(&u, NULL, fp_napper, NULL) != 0 ||
        pthread_create(&b, NULL, burster, NULL) != 0)
        return 1;
    while (naps == 0)
        ;
    printf("ready\n");
    fflush(stdout);
    spin_main(end);
    return 0;
}
