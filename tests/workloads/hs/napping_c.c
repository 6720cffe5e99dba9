/* napping_c.c - napping.hs's C side: a nap, and a loop to spin in. */
#include <unistd.h>

volatile double napping_sink;

void napping_nap(int us) { usleep((useconds_t)us); }

double napping_compute(int n)
{
    double x = 0;
    for (int i = 0; i < n; i++)
        x += i * 0.5;
    napping_sink = x;
    return x;
}
