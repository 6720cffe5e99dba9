/* C side of deepffi.hs: 12 KB of stack, written, then worked on for some
 * tens of microseconds. */
#include <string.h>

__attribute__((noinline)) static void deep_work(volatile char *buf, unsigned long len)
{
    for (int round = 0; round < 60; round++)
        for (unsigned long i = 0; i < len; i += 64)
            buf[i] = (char)(buf[i] + round);
}

__attribute__((noinline)) long deep_frame(long n)
{
    volatile char buf[12 * 1024];
    memset((char *)buf, (int)(n & 0x7f), sizeof buf);
    deep_work(buf, sizeof buf);
    return buf[n & 0xfff];
}
