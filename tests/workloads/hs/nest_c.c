/* C side of nest.hs: spins, then calls the Haskell callback it is given. */
#include <stdint.h>

static volatile uint64_t sink;

__attribute__((noinline)) void nest_spin(long n)
{
    for (long i = 0; i < n; i++)
        sink += (uint64_t)i;
}

int nest_drive(int (*f)(int), int n)
{
    nest_spin(60000);
    return f(n) + (int)(sink & 1);
}
