/* churn - OS threads born and dying all the time: keeps about 16 alive, each
 * living 2-20 ms, for SECONDS. Prints "threads N" (how many ran to their end)
 * and exits 0 if every one of them did. With IDLE, that many more threads
 * sleep all the while: a tracer then has many threads, few of them running.
 * Usage: churn [SECONDS [IDLE]] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *life(void *arg)
{
    double until = now() + 0.002 + 0.018 * ((double)(long)arg / 100.0);
    while (now() < until)
        for (int i = 0; i < 1000; i++)
            sink += (unsigned long)i;
    return (void *)1;
}

static void *idle(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

int main(int argc, char **argv)
{
    double end = now() + (argc > 1 ? atof(argv[1]) : 10);
    int nidle = argc > 2 ? atoi(argv[2]) : 0;
    for (int i = 0; i < nidle; i++) {
        pthread_t it;
        if (pthread_create(&it, NULL, idle, NULL) != 0) {
            fprintf(stderr, "churn: cannot start idle thread %d\n", i);
            return 1;
        }
    }
    pthread_t t[16];
    long done = 0, started = 0;
    for (int i = 0; i < 16; i++)
        pthread_create(&t[i], NULL, life, (void *)(started++ % 100));
    while (now() < end) {
        for (int i = 0; i < 16; i++) {
            void *r;
            pthread_join(t[i], &r);
            done += r == (void *)1;
            pthread_create(&t[i], NULL, life, (void *)(started++ % 100));
        }
    }
    for (int i = 0; i < 16; i++) {
        void *r;
        pthread_join(t[i], &r);
        done += r == (void *)1;
    }
    printf("threads %ld\n", done);
    return done == started ? 0 : 1;
}
