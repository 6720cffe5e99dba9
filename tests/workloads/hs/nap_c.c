/* C side of nap.hs: one short sleep, two known C frames down. */
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) static void nap_sleep(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

long nap_c(long us)
{
    nap_sleep(us);
    __asm__ volatile("" ::: "memory"); /* not a tail call: nap_c stays on the stack */
    return us;
}

long nap_ready(void)
{
    return write(1, "ready\n", 6) == 6;
}
