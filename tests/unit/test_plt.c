/* The stubs of real files' PLTs against objdump's names for them: every
 * "<name@plt>" objdump labels is found at its address under that name, and
 * nothing else is; an ifunc's stub ("*ABS*+0x...@plt") gives its
 * resolver's address. Files: this test (.plt), the stubs workload (a stub
 * the suite samples), chains (.plt.got too), a non-PIE executable, and
 * the libc this test runs with (ifuncs). */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolizer/plt.h"
#include "tests/unit/unit.h"

/* The path of the libc mapped into this process. */
static bool libc_path(char *out, size_t size)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    bool found = false;
    while (f && !found && fgets(line, sizeof line, f)) {
        char *p = strchr(line, '/');
        if (p && strstr(p, "/libc.so.")) {
            p[strcspn(p, "\n")] = 0;
            snprintf(out, size, "%s", p);
            found = true;
        }
    }
    if (f)
        fclose(f);
    return found;
}

/* Compare plt__read's stubs of path with objdump's labels; how many
 * objdump labelled into *labels. */
static void compare(const char *path, size_t *labels)
{
    *labels = 0;
    if (access(path, R_OK) != 0)
        UNIT_FAIL("%s is missing (run make workloads)", path);
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    CHECK(elf != NULL);
    struct plt_stub *st;
    long n = plt__read(elf, &st);
    CHECK(n >= 0);

    char cmd[600], line[1024];
    snprintf(cmd, sizeof cmd,
             "objdump -d -j .plt -j .plt.sec -j .plt.got '%s' 2>/dev/null | grep '@plt>:$'",
             path);
    FILE *p = popen(cmd, "r");
    CHECK(p != NULL);
    size_t seen = 0;
    while (fgets(line, sizeof line, p)) {
        unsigned long long at;
        char name[512];
        if (sscanf(line, "%llx <%511[^>]>:", &at, name) != 2)
            continue;
        *name ? (void)(name[strlen(name) - 4] = 0) : (void)0; /* "@plt" off */
        const struct plt_stub *s = plt__lookup(st, (size_t)n, at);
        if (!s || s->addr != at)
            UNIT_FAIL("%s: no stub at %#llx, objdump's <%s@plt>", path, at, name);
        unsigned long long resolver;
        if (sscanf(name, "*ABS*+%llx", &resolver) == 1) {
            if (s->name || s->resolver != resolver)
                UNIT_FAIL("%s: the ifunc stub at %#llx: name %s, resolver %#llx; objdump %s",
                          path, at, s->name ? s->name : "(none)",
                          (unsigned long long)s->resolver, name);
        } else if (!s->name || strcmp(s->name, name) != 0) {
            UNIT_FAIL("%s: the stub at %#llx is %s, objdump's %s", path, at,
                      s->name ? s->name : "(none)", name);
        }
        /* and nothing is found in its last byte's neighbour */
        const struct plt_stub *next = plt__lookup(st, (size_t)n, at + s->size);
        CHECK(next == NULL || next->addr == at + s->size);
        seen++;
    }
    int rc = pclose(p);
    if (seen == 0 && rc != 0)
        UNIT_SKIP("objdump (binutils) is needed to check the PLT's stubs");
    if ((long)seen != n)
        UNIT_FAIL("%s: %ld stubs found, objdump labels %zu", path, n, seen);
    *labels = seen;
    free(st);
    elf_end(elf);
    close(fd);
}

TEST(this_binary)
{
    char self[512];
    size_t k;
    ssize_t l = readlink("/proc/self/exe", self, sizeof self - 1); /* (objdump's own, to it) */
    CHECK(l > 0);
    self[l] = 0;
    compare(self, &k);
    CHECK(k > 10);
}

TEST(stubs_workload)
{
    size_t k;
    compare("build/workloads/stubs", &k);
    CHECK(k >= 2); /* labs, time, ... */
}

TEST(plt_got)
{
    size_t k;
    compare("build/workloads/chains", &k);
    CHECK(k >= 2);
}

TEST(non_pie)
{
    size_t k;
    compare("build/workloads/symtest_nopie", &k);
    CHECK(k >= 2);
}

TEST(libc_ifuncs)
{
    char path[512];
    size_t k;
    if (!libc_path(path, sizeof path))
        UNIT_FAIL("no libc in /proc/self/maps");
    compare(path, &k);
    CHECK(k > 0);
}

/* Damaged: a file whose bytes are scrambled is read without a fault
 * (under the suite's valgrind run, without a read out of bounds). */
TEST(scrambled)
{
    int fd = open("/proc/self/exe", O_RDONLY);
    CHECK(fd >= 0);
    off_t len = lseek(fd, 0, SEEK_END);
    CHECK(len > 0 && len < (64 << 20));
    uint8_t *img = malloc((size_t)len);
    CHECK(img && pread(fd, img, (size_t)len, 0) == len);
    close(fd);
    elf_version(EV_CURRENT);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    uint8_t *copy = malloc((size_t)len);
    CHECK(copy != NULL);
    for (int round = 0; round < 40; round++) {
        memcpy(copy, img, (size_t)len);
        for (int k = 0; k < 200; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            /* past the ELF header, which must stay for libelf to read on */
            copy[64 + x % (uint64_t)(len - 64)] = (uint8_t)(x >> 32);
        }
        Elf *elf = elf_memory((char *)copy, (size_t)len);
        if (!elf)
            continue;
        struct plt_stub *st;
        long n = plt__read(elf, &st);
        CHECK(n >= 0);
        for (long i = 0; i < n; i++)
            CHECK(st[i].size == 8 || st[i].size == 16);
        free(st);
        elf_end(elf);
    }
    free(copy);
    free(img);
}

UNIT_MAIN()
