/* crasher - three threads spin while the first counts SECONDS, then ends
 * the process: "segv" writes through a null pointer (SIGSEGV, the default
 * action: killed, core dumped where allowed), "abort" calls abort(), a
 * number N exits with status N. A profiler must pass the fault on to the
 * program as it would have come without it, and say how it ended.
 * Usage: crasher SECONDS segv|abort|N */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *spin(void *arg)
{
    (void)arg;
    for (;;)
        sink++;
    return NULL;
}

__attribute__((noinline)) static void crash_here(const char *how)
{
    volatile int *volatile nowhere = NULL; /* (loaded at run time: no trap put there instead) */
    if (strcmp(how, "segv") == 0)
        *nowhere = 1;
    if (strcmp(how, "abort") == 0)
        abort();
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: crasher SECONDS segv|abort|N\n");
        return 2;
    }
    double end = now() + atof(argv[1]);
    pthread_t t;
    for (int i = 0; i < 3; i++)
        pthread_create(&t, NULL, spin, NULL);
    printf("ready\n");
    fflush(stdout);
    while (now() < end)
        sink++;
    crash_here(argv[2]);
    return atoi(argv[2]);
}
