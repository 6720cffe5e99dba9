/* stdio - writes lines to /dev/null through stdio, opening and closing the
 * file each round, for a number of seconds: its samples are in glibc's
 * stdio (fopen, fprintf, fwrite, fclose), whose functions have a
 * personality routine in their CIE for the cleanup of their locks. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void round_of_lines(const char *path, int lines)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    for (int i = 0; i < lines; i++)
        fprintf(f, "line %d of %d: %s\n", i, lines, "some text to format");
    fclose(f);
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 1.0;
    double end = now() + secs;
    while (now() < end)
        round_of_lines("/dev/null", 200);
    return 0;
}
