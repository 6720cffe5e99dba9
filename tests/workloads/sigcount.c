/* sigcount - counts the real-time signals (SIGRTMIN+1) it receives while it
 * spins for SECONDS, or until EXPECT of them have come, then prints "got N"
 * and exits 0. Queued real-time signals never merge, so N must equal the
 * number sent. With IDLE, that many more threads sleep meanwhile (and take
 * their share of the signals, which are sent to the process): a tracer
 * then has many threads, few of them running. Usage: sigcount SECONDS
 * [EXPECT [IDLE]] */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t got;
static volatile unsigned long sink;

static void on_sig(int s)
{
    (void)s;
    got++;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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
    struct sigaction sa = {0};
    sa.sa_handler = on_sig;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGRTMIN + 1, &sa, NULL);
    double until = now() + (argc > 1 ? atof(argv[1]) : 3);
    int expect = argc > 2 ? atoi(argv[2]) : 0;
    int nidle = argc > 3 ? atoi(argv[3]) : 0;
    for (int i = 0; i < nidle; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, idle, NULL) != 0) {
            fprintf(stderr, "sigcount: cannot start thread %d\n", i);
            return 1;
        }
    }
    printf("ready\n");
    fflush(stdout);
    while (now() < until && (expect <= 0 || got < expect))
        for (int i = 0; i < 10000; i++)
            sink += (unsigned long)i;
    printf("got %d\n", (int)got);
    return 0;
}
