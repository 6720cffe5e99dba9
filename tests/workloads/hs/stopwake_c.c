/* C side of stopwake.hs: the calls, and the watcher that writes to the
 * pipe once it sees the main thread stopped by a tracer ('t') for the third
 * time. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static int pipefd[2];
static pid_t main_tid;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The main thread's state letter, from its stat file (kept open: one
 * pread a look, to write as soon as it is stopped). */
static char state_of(int fd)
{
    char buf[512];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return '?';
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    return p && p[1] == ' ' ? p[2] : '?';
}

static void *watch(void *arg)
{
    (void)arg;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)main_tid);
    int fd = open(path, O_RDONLY);
    double give_up = now() + 5;
    bool seen = false;
    /* (Not at the first stops: a profiler's first look at a thread may
     * differ from the others.) */
    int stops = 0;
    for (int was = 0; fd >= 0 && stops < 3 && now() < give_up;) {
        int is = state_of(fd) == 't';
        stops += is && !was;
        was = is;
    }
    seen = fd >= 0 && now() < give_up;
    if (write(pipefd[1], "x", 1) != 1)
        exit(1);
    printf(seen ? "woken while stopped\n" : "woken late (%d stops)\n", stops);
    fflush(stdout);
    return NULL;
}

void sw_start(void)
{
    pthread_t t;
    main_tid = (pid_t)syscall(SYS_gettid);
    if (pipe(pipefd) != 0 || pthread_create(&t, NULL, watch, NULL) != 0)
        exit(1);
    pthread_setname_np(t, "stopwake-watch");
    printf("ready\n");
    fflush(stdout);
}

/* Waits for the pipe, waking every millisecond: a thread that runs between
 * any two samples, so that a profiler looks at it (and stops it: its Sp is
 * in a register) each time, and finds it asleep in poll. */
long sw_await(void)
{
    char c;
    struct pollfd p = {pipefd[0], POLLIN, 0};
    while (poll(&p, 1, 1) != 1)
        ;
    if (read(pipefd[0], &c, 1) != 1)
        exit(1);
    __asm__ volatile("" ::: "memory"); /* not a tail call */
    return 1;
}

long sw_crunch(double seconds)
{
    /* (the clock through the vDSO: no system call) */
    double until = now() + seconds;
    while (now() < until)
        for (int i = 0; i < 100000; i++)
            sink += (unsigned long)i * 7;
    return 2;
}

long sw_doze(double seconds)
{
    struct timespec ts = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
    __asm__ volatile("" ::: "memory");
    return 3;
}
