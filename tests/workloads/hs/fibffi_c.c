/* C side of fibffi.hs. */
#include <time.h>

long fibffi_spin(long n)
{
    volatile long s = 0;
    for (long i = 0; i < n * 10; i++)
        s += i;
    return s & 1;
}

double fibffi_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
