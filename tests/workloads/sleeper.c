/* sleeper - a quiet target: sleeps SECONDS (default 30) in small steps and
 * exits 0; exits 3 if a sleep was cut short by EINTR (it must not be). */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 30;
    int steps = (int)(secs * 10);
    for (int i = 0; i < steps; i++) {
        struct timespec ts = {0, 100000000};
        if (nanosleep(&ts, NULL) < 0 && errno == EINTR)
            return 3;
    }
    return 0;
}
