/* rtsline - a C program whose read-only data holds the first line of a GHC
 * runtime's +RTS --info table (as hsspy's own does, which looks for it),
 * spinning in rtsline_spin for SECONDS (default 1). It is no GHC program:
 * it has a symbol table, and no runtime symbols in it. */
#include <stdlib.h>
#include <time.h>

const char rtsline_info[] = "[(\"GHC RTS\", \"YES\")\n ,(\"GHC version\", \"9.0.2\")]";
static volatile unsigned long sink;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void rtsline_spin(double secs)
{
    double end = now() + secs;
    while (now() < end)
        for (int i = 0; i < 10000; i++)
            sink += (unsigned long)i ^ (unsigned long)rtsline_info[i % sizeof rtsline_info];
}

int main(int argc, char **argv)
{
    rtsline_spin(argc > 1 ? atof(argv[1]) : 1);
    return 0;
}
