/* C side of callback.hs: calls the Haskell callback it is given, n times,
 * spinning in C after each call. */
#include <stdint.h>

static volatile uint64_t sink;

__attribute__((noinline)) void cb_spin(long n)
{
    for (long i = 0; i < n; i++)
        sink += (uint64_t)i;
}

int cb_drive(int (*f)(int), int n)
{
    int s = 0;
    for (int i = 0; i < n; i++) {
        s += f(i);
        cb_spin(300000);
    }
    return s;
}
