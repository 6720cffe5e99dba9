/* stubs - a loop calling a short libc function, labs, through the
 * program's PLT, so that samples land in its stub, which no symbol covers
 * (crt's sizeless _init comes before it). labs is declared under another
 * name, which gcc does not know for a builtin to compute inline.
 * Usage: stubs SECONDS. Exits 0. */
#include <stdlib.h>
#include <time.h>

long libc_labs(long) __asm__("labs");

static volatile long sink;

__attribute__((noinline)) void spin(time_t end)
{
    while (time(NULL) < end)
        for (long i = 0; i < 1000000; i++)
            sink += libc_labs(i - 500000);
}

int main(int argc, char **argv)
{
    spin(time(NULL) + (argc > 1 ? atoi(argv[1]) : 2));
    return 0;
}
