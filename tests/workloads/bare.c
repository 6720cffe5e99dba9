/* bare - a thread spinning in an assembly routine without unwind
 * information (no FDE covers it, as glibc's clone3 at its system call),
 * called from C:
 *
 *   main -> bare_caller -> bare_spin
 *
 * bare_spin counts rdi down and returns, never touching its stack: its
 * return address is at rsp. Usage: bare SECONDS. Prints "main TID", then
 * spins for SECONDS and exits 0. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void bare_spin(unsigned long n);
__asm__(".text\n"
        ".globl bare_spin\n"
        ".type bare_spin, @function\n"
        "bare_spin:\n"
        "1:\tdec %rdi\n"
        "\tjnz 1b\n"
        "\tret\n"
        ".size bare_spin, .-bare_spin\n");

static volatile unsigned long sink;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void bare_caller(double until)
{
    while (now() < until)
        bare_spin(1000000);
    sink++;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 5;
    printf("main %ld\n", (long)syscall(SYS_gettid));
    fflush(stdout);
    bare_caller(now() + seconds);
    return 0;
}
