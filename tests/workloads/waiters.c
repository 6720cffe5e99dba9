/* waiters - one busy thread and N that wait on a condition variable that
 * is never signalled: waiters [SECONDS [N]] (default 10 s, 3 waiters,
 * at most 1000). The waiters are
 * named "waiter" and block in wait_forever; the main thread spins in
 * spin_main. Prints "ready" once the waiters wait. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static int waiting;

__attribute__((noinline)) static void wait_forever(void)
{
    pthread_mutex_lock(&mu);
    waiting++;
    for (;;)
        pthread_cond_wait(&never, &mu);
}

static void *waiter(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "waiter");
    wait_forever();
    return NULL;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static unsigned long spin_main(double end)
{
    volatile unsigned long x = 0;
    while (now() < end)
        for (int i = 0; i < 100000; i++)
            x += (unsigned long)i;
    return x;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 10;
    int nw = argc > 2 ? atoi(argv[2]) : 3;
    if (nw < 1 || nw > 1000)
        nw = 3;
    pthread_t t;
    for (int i = 0; i < nw; i++)
        pthread_create(&t, NULL, waiter, NULL);
    for (;;) {
        pthread_mutex_lock(&mu);
        int n = waiting;
        pthread_mutex_unlock(&mu);
        if (n == nw)
            break;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    puts("ready");
    fflush(stdout);
    spin_main(now() + secs);
    return 0;
}
