/* C side of crowd.hs: a safe call that spins. */
#include <stdint.h>

static volatile uint64_t sink;

int crowd_spin(int n)
{
    for (int i = 0; i < n; i++)
        sink += (uint64_t)i;
    return (int)(sink & 0xff);
}
