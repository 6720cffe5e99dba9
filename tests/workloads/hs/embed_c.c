/* C side of embed.hs: main starts an OS thread that starts the GHC
 * runtime and runs the Haskell work there, then waits for it. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>

#include "HsFFI.h"

extern void embed_work(double secs);

static double secs = 1;

static void *worker(void *arg)
{
    (void)arg;
    int argc = 1;
    char *argv0[] = {"embed", NULL}, **argv = argv0;
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
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        return 1;
    pthread_setname_np(t, "hs_worker");
    pthread_join(t, NULL);
    return 0;
}
