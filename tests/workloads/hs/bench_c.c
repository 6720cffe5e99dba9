/* C side of bench.hs: busy loops and a short sleep, called through unsafe
 * and safe foreign imports, and the clock the program times itself with. */
#include <stdint.h>
#include <time.h>

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
