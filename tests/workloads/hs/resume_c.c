/* C side of resume.hs: a safe call that runs a major collection. */
#include "HsFFI.h"

int rs_collect(int i)
{
    hs_perform_gc();
    return i % 7;
}
