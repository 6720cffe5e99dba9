/* C side of calib.hs. */
#include <time.h>

long calib_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

/* Busy (on CPU) for us microseconds. */
void calib_busy(long us)
{
    long end = calib_now() + us;
    volatile unsigned long x = 1;
    while (calib_now() < end)
        for (int i = 0; i < 200; i++)
            x = x * 6364136223846793005ul + 1;
}

/* Blocked in the kernel for us microseconds. */
void calib_sleep(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0)
        ;
}
