/* spawner - a thread that creates short-lived threads one after the other
 * (each spins some tens of µs, then is joined), for SECONDS, on a stack
 * that glibc keeps for reuse above the spawner's own: the one of a thread
 * created before it, which has ended. In the parent's side of clone3, rbp
 * is the new thread's descriptor, at the top of that stack: above the
 * spawner's stack pointer, megabytes away. Prints "threads N". */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;
static double end;
static unsigned long made;
static pthread_mutex_t go_lock = PTHREAD_MUTEX_INITIALIZER;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void *short_lived(void *arg)
{
    for (unsigned long i = 0; i < 20000; i++)
        sink += i;
    return arg;
}

__attribute__((noinline)) static void *first(void *arg) { return arg; }

__attribute__((noinline)) static void *spawn_loop(void *arg)
{
    pthread_mutex_lock(&go_lock); /* (once a has been joined) */
    pthread_mutex_unlock(&go_lock);
    while (now() < end) {
        pthread_t t;
        if (pthread_create(&t, NULL, short_lived, NULL) != 0)
            exit(1);
        pthread_join(t, NULL);
        made++;
    }
    return arg;
}

int main(int argc, char **argv)
{
    pthread_t a, s;
    end = now() + (argc > 1 ? atof(argv[1]) : 1.0);
    /* a's stack is mapped before (above) the spawner's, and once a has
     * ended and been joined, glibc keeps it for reuse: the spawner's first
     * thread takes it, and each next one the same again. */
    pthread_mutex_lock(&go_lock);
    if (pthread_create(&a, NULL, first, NULL) != 0 ||
        pthread_create(&s, NULL, spawn_loop, NULL) != 0 || pthread_join(a, NULL) != 0)
        return 1;
    pthread_mutex_unlock(&go_lock);
    if (pthread_join(s, NULL) != 0)
        return 1;
    printf("threads %lu\n", made);
    return 0;
}
