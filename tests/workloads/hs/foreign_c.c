/* C side of foreign.hs: two OS threads the runtime never hears of. */
#define _GNU_SOURCE
#include <pthread.h>
#include <time.h>

__attribute__((noinline)) long foreign_crunch(long n)
{
    volatile long s = 0;
    for (long i = 0; i < n; i++)
        s += i;
    return s;
}

static void *spinner(void *arg)
{
    (void)arg;
    for (;;)
        foreign_crunch(1000000);
    return NULL;
}

static void *napper(void *arg)
{
    (void)arg;
    struct timespec ts = {0, 2000000};
    for (;;)
        nanosleep(&ts, NULL);
    return NULL;
}

void foreign_start(void)
{
    pthread_t a, b;
    if (pthread_create(&a, NULL, spinner, NULL) == 0)
        pthread_setname_np(a, "c_spinner");
    if (pthread_create(&b, NULL, napper, NULL) == 0)
        pthread_setname_np(b, "c_napper");
}

double foreign_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
