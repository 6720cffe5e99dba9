/* ccfile - static structs shaped like GHC's CostCentre (rts/prof/CCS.h) for
 * tests/unit/test_cost_centre.c, which reads them from this file as hsspy
 * reads a -prof program's cost centres. Never run. */
#include <stddef.h>

struct cost_centre {
    long ccID;
    const char *label, *module, *srcloc;
    unsigned long long mem_alloc;
    unsigned long time_ticks;
    int is_caf;
    struct cost_centre *link;
};

struct cost_centre ccfile_fib = {7, "fib", "Main", "fib.hs:(5,1)-(7,30)", 0, 0, 0, NULL};
struct cost_centre ccfile_caf = {8, "CAF", "GHC.IO.Handle.FD", "<entire-module>", 0, 0, 1, NULL};
struct cost_centre ccfile_nolabel = {9, NULL, "Main", "x.hs:1:1", 0, 0, 0, NULL};
struct cost_centre ccfile_bss; /* no bytes in the file */

int main(void)
{
    return (int)(ccfile_fib.ccID + ccfile_caf.ccID + ccfile_nolabel.ccID + ccfile_bss.ccID);
}
