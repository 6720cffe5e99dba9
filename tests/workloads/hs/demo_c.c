/* C side of demo.hs. */
#include <time.h>

double demo_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Called unsafe: the capability stays held while it runs. */
long demo_checksum(long n)
{
    unsigned long h = 5381;
    for (long i = 0; i < n; i++)
        h = h * 33 + (unsigned long)i;
    return (long)(h & 0x7fffffff);
}

/* Called safe: busy in C with the capability released. */
long demo_compress(long n)
{
    volatile unsigned long x = 1;
    for (long i = 0; i < n; i++)
        x = x * 6364136223846793005ul + 1442695040888963407ul;
    return (long)(x >> 33);
}

/* Called safe: blocked in the kernel; still the program's time. */
void demo_wait(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}
