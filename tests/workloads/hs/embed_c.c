/* C side of embed.hs: main starts an OS thread that starts the GHC
 * runtime and runs the Haskell work there, then waits for it.
 * Usage: embed [SECONDS [DELAY_MS]]: the thread first spends DELAY_MS
 * asleep, before it starts the runtime. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "HsFFI.h"

extern void embed_work(double secs);

static double secs = 1;
static long delay_ms;

static void *worker(void *arg)
{
    (void)arg;
    int argc = 1;
    char *argv0[] = {"embed", NULL}, **argv = argv0;
    struct timespec d = {delay_ms / 1000, delay_ms % 1000 * 1000000};
    nanosleep(&d, NULL);
    hs_init(&argc, &argv);
    embed_work(secs);
    hs_exit();
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t t;
    if (argc > 1)
        secs = atof(argv[1]);
    if (argc > 2)
        delay_ms = atol(argv[2]);
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        return 1;
    pthread_setname_np(t, "hs_worker");
    pthread_join(t, NULL);
    return 0;
}
