/* zombie - leaves a zombie behind: forks a child that exits at once and
 * never reaps it. Prints the zombie's pid, then sleeps SECONDS (default 30). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    pid_t child = fork();
    if (child == 0)
        _exit(0);
    printf("%d\n", (int)child);
    fflush(stdout);
    sleep(argc > 1 ? (unsigned)atoi(argv[1]) : 30);
    return 0;
}
