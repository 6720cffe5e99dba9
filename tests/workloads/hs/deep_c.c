/* C side of deep.hs: say "ready" and block for a while. */
#include <time.h>
#include <unistd.h>

long deep_block(long secs)
{
    struct timespec ts = {secs, 0};
    if (write(1, "ready\n", 6) != 6)
        return -1;
    while (nanosleep(&ts, &ts) != 0)
        ;
    return 1;
}
