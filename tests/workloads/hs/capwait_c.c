/* capwait_c.c - capwait.hs's collection, asked for from C in a safe call
 * after a nap: by then the hog holds the capability (the nap let it go,
 * and a worker took it up for the hog), and the collection waits for it.
 * (Asked for at once from Haskell, as System.Mem's performMajorGC does, the
 * collection won the capability back before the worker woke up, on a VM
 * slow to wake one, nearly every time.) */
#include <unistd.h>

#include "HsFFI.h"

void capwait_gc(unsigned us)
{
    usleep(us);
    hs_perform_gc();
}
