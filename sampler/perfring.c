/* perfring.c - a perf event on one thread, with its ring buffer mapped. */
#define _GNU_SOURCE
#include "sampler/perfring.h"

#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

size_t perfring__page_size(void)
{
    static size_t ps;
    if (!ps) {
        long v = sysconf(_SC_PAGESIZE);
        ps = v > 0 ? (size_t)v : 4096;
    }
    return ps;
}

int perfring__open(struct perf_event_attr *a, pid_t tid, int cpu, size_t pages, int *fd,
                   void **ring)
{
    int f = (int)syscall(SYS_perf_event_open, a, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
    if (f < 0)
        return -errno;
    void *m = mmap(NULL, (1 + pages) * perfring__page_size(), PROT_READ | PROT_WRITE, MAP_SHARED,
                   f, 0);
    if (m == MAP_FAILED) {
        int e = errno == EPERM ? PERFRING_ELOCKED : errno;
        close(f);
        return -e;
    }
    *fd = f;
    *ring = m;
    return 0;
}

void perfring__close(int *fd, void **ring, size_t pages)
{
    if (*ring)
        munmap(*ring, (1 + pages) * perfring__page_size());
    if (*fd >= 0)
        close(*fd);
    *ring = NULL;
    *fd = -1;
}
