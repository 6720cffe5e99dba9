/* burn.c - make bench's control: take from the machine the CPU hsspy takes
 * at 1 kHz, and nothing else. Every millisecond (+-10%, as hsspy's ticks)
 * it wakes up, spins for BUSY_US microseconds of its own CPU time and
 * sleeps again, in the same 0.1 ms scheduler slices as hsspy where the
 * kernel has them. It stops no thread and reads no memory: the slowdown it
 * causes is what any sampler that needs that much CPU would cost a program
 * that fills the machine, whatever its method.
 *
 * Usage: burn BUSY_US   (runs until killed)
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 2 || atoi(argv[1]) <= 0) {
        fprintf(stderr, "usage: burn BUSY_US\n");
        return 2;
    }
    uint64_t busy = (uint64_t)atoi(argv[1]) * 1000u;
    struct { /* struct sched_attr: SCHED_OTHER, nice 0, a 0.1 ms slice */
        uint32_t size, policy;
        uint64_t flags;
        int32_t nice;
        uint32_t priority;
        uint64_t runtime, deadline, period;
    } a = {.size = 48, .runtime = 100000};
    syscall(SYS_sched_setattr, 0, &a, 0); /* older kernels ignore it */
    uint64_t state = ns(CLOCK_MONOTONIC) | 1, next = ns(CLOCK_MONOTONIC);
    for (;;) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        next += 900000u + state % 200001u;
        uint64_t now = ns(CLOCK_MONOTONIC);
        if (now < next) {
            struct timespec t = {(time_t)(next / 1000000000u), (long)(next % 1000000000u)};
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
        } else if (now > next + 1000000u) {
            next = now; /* fell behind: skip, as hsspy does */
        }
        uint64_t cpu0 = ns(CLOCK_THREAD_CPUTIME_ID);
        while (ns(CLOCK_THREAD_CPUTIME_ID) - cpu0 < busy)
            ;
    }
}
