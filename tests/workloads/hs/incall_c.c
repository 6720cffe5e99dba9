/* incall_c.c - the C side of incall.hs: a thread of its own, named
 * c_incaller, alternating 3 ms of busy C (incall_busy) and 3 ms of calls
 * into Haskell (incallWork). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <time.h>

extern int incallWork(int);

static volatile uint64_t sink;
static double seconds;
static pthread_t thread;

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

__attribute__((noinline)) void incall_busy(uint64_t ns)
{
    uint64_t end = now_ns() + ns;
    while (now_ns() < end)
        for (int i = 0; i < 1000; i++)
            sink += (uint64_t)i * 7;
}

static void *incaller(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "c_incaller");
    uint64_t end = now_ns() + (uint64_t)(seconds * 1e9);
    int r = 0;
    while (now_ns() < end) {
        incall_busy(3000000);
        uint64_t d = now_ns() + 3000000;
        while (now_ns() < d)
            r += incallWork(r);
    }
    sink += (uint64_t)r;
    return NULL;
}

void incall_start(double s)
{
    seconds = s;
    pthread_create(&thread, NULL, incaller, NULL);
}

void incall_join(void) { pthread_join(thread, NULL); }
