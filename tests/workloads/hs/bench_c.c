/* C side of bench.hs: busy loops and a short sleep, called through unsafe
 * and safe foreign imports, and the clock the program times itself with. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* BENCH_CPU=N: the whole program on CPU N only, from before the runtime
 * starts its first thread (make bench's runs with a CPU to spare: the
 * program on one, hsspy on the other, set by taskset). */
__attribute__((constructor)) static void bench_pin(void)
{
    const char *cpu = getenv("BENCH_CPU");
    if (!cpu || !*cpu)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(atoi(cpu), &set);
    sched_setaffinity(0, sizeof set, &set);
}

int64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A fixed number of steps of an LCG: about 1 ns each, the same work
 * whatever else runs. Called unsafe (capability held) and safe (released). */
int64_t bench_spin(int64_t n)
{
    volatile uint64_t x = 1;
    for (int64_t i = 0; i < n; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    return (int64_t)(x >> 33);
}

/* Called safe: blocked in the kernel, capability released. */
void bench_sleep_us(int64_t us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}
