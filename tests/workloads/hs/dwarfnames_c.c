/* dwarfnames_c.c - the C side of dwarfnames.hs: a thread of its own that
 * calls hsWork (a foreign export) for SECONDS. */
#include <pthread.h>
#include <stdint.h>
#include <time.h>

extern int hsWork(int);

static volatile uint64_t sink;
static double seconds;
static pthread_t thread;

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void *caller(void *arg)
{
    (void)arg;
    uint64_t end = now_ns() + (uint64_t)(seconds * 1e9);
    int r = 0;
    while (now_ns() < end)
        r += hsWork(r);
    sink += (uint64_t)r;
    return NULL;
}

void dn_start_c_thread(double s)
{
    seconds = s;
    pthread_create(&thread, NULL, caller, NULL);
}

void dn_join_c_thread(void) { pthread_join(thread, NULL); }
