/* C side of nap.hs: one short sleep, two known C frames down. */
#include <sys/epoll.h>
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

/* Waits in epoll_wait (nothing to wait for) for us, in one call; a stop
 * would make it fail with EINTR. */
__attribute__((noinline)) static long nap_wait(long us)
{
    static int fd = -1;
    struct epoll_event ev;
    if (fd < 0)
        fd = epoll_create1(0);
    return epoll_wait(fd, &ev, 1, (int)(us / 1000));
}

long nap_epoll(long us)
{
    long r = nap_wait(us);
    __asm__ volatile("" ::: "memory"); /* not a tail call */
    return r < 0 ? 0 : us;
}

long nap_ready(void)
{
    return write(1, "ready\n", 6) == 6;
}
