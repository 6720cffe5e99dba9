/* holder - plays "another debugger": PTRACE_SEIZEs PID and holds it (without
 * stopping it) until killed. Prints "held" once attached. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    pid_t pid = (pid_t)atoi(argv[1]);
    if (ptrace(PTRACE_SEIZE, pid, 0, 0) < 0) {
        perror("holder: PTRACE_SEIZE");
        return 1;
    }
    printf("held\n");
    fflush(stdout);
    for (;;)
        pause();
}
