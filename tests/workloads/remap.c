/* remap - a program that maps the page of its own executable holding one
 * of its functions a second time, elsewhere, and runs the function there
 * (as node maps V8's builtins again, away from its executable): that code
 * is the file's, at another address than the file's load bias says.
 * Usage: remap SECONDS. Prints "copy ADDR" (where the copy of remap_spin
 * runs), then spins in it and exits 0. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* A leaf that touches no global (its copy has no data next to it) and
 * calls nothing (nor a PLT it would reach relative to itself). */
__attribute__((noinline, aligned(4096))) unsigned long remap_spin(unsigned long n)
{
    unsigned long x = 1;
    for (unsigned long i = 0; i < n; i++)
        x = x * 2862933555777941757ul + i;
    return x;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 2;
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4096], self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    uintptr_t fn = (uintptr_t)remap_spin, lo, hi, off;
    unsigned long (*copy)(unsigned long) = NULL;
    if (!maps || len <= 0)
        return 1;
    self[len] = 0;
    while (!copy && fgets(line, sizeof line, maps)) {
        char perms[8], path[4096] = "";
        if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095s", &lo, &hi, perms, &off, path) < 4 ||
            fn < lo || fn >= hi || strcmp(path, self) != 0)
            continue;
        int fd = open(self, O_RDONLY);
        uintptr_t page = fn & ~(uintptr_t)4095;
        void *p = fd < 0 ? MAP_FAILED
                         : mmap(NULL, 8192, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd,
                                (off_t)(off + (page - lo)));
        if (p == MAP_FAILED)
            return 1;
        copy = (unsigned long (*)(unsigned long))((uintptr_t)p + (fn - page));
    }
    if (!copy)
        return 1;
    printf("copy %p\n", (void *)copy);
    fflush(stdout);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    volatile unsigned long sink = 0;
    do {
        sink += copy(1000000);
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
    return 0;
}
