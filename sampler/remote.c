/* remote.c - batched process_vm_readv. */
#define _GNU_SOURCE
#include "sampler/remote.h"

#include <errno.h>
#include <limits.h>
#include <sys/uio.h>

#ifndef IOV_MAX
#define IOV_MAX 1024
#endif

static unsigned long calls;

unsigned long remote__calls(void) { return calls; }

/* process_vm_readv stops at the first remote range it cannot read completely
 * and reports the bytes moved so far; this attributes them to requests and
 * says where to carry on. */
static size_t account(struct remote_req *reqs, size_t n, size_t bytes)
{
    size_t i = 0;
    for (; i < n && bytes > 0; i++) {
        size_t take = reqs[i].len < bytes ? reqs[i].len : bytes;
        reqs[i].got = take;
        bytes -= take;
        if (take < reqs[i].len)
            return i + 1; /* short: the next call resumes after it */
    }
    return i;
}

size_t remote__batch(pid_t pid, struct remote_req *reqs, size_t n)
{
    struct iovec local[64], remote[64];
    size_t done = 0, full = 0;

    for (size_t i = 0; i < n; i++)
        reqs[i].got = 0;
    if (pid <= 0)
        return 0; /* no process (a saved capture): nothing live to read */
    while (done < n) {
        size_t k = n - done;
        if (k > 64)
            k = 64;
        for (size_t i = 0; i < k; i++) {
            local[i].iov_base = reqs[done + i].buf;
            local[i].iov_len = reqs[done + i].len;
            remote[i].iov_base = (void *)(uintptr_t)reqs[done + i].addr;
            remote[i].iov_len = reqs[done + i].len;
        }
        calls++;
        ssize_t r = process_vm_readv(pid, local, k, remote, k, 0);
        if (r < 0) {
            if (errno == ESRCH)
                break;
            /* The first range is unreadable: skip it, try the rest. */
            done++;
            continue;
        }
        size_t used = account(reqs + done, k, (size_t)r);
        if (used == 0)
            used = 1; /* zero bytes: the first range was unreadable */
        done += used;
    }
    for (size_t i = 0; i < n; i++)
        if (reqs[i].got == reqs[i].len)
            full++;
    return full;
}

int remote__read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
    if (pid <= 0)
        return -ESRCH;
    struct iovec l = {buf, len}, r = {(void *)(uintptr_t)addr, len};
    calls++;
    ssize_t got = process_vm_readv(pid, &l, 1, &r, 1, 0);
    if (got < 0)
        return errno == ESRCH ? -ESRCH : -EFAULT;
    return (size_t)got == len ? 0 : -EFAULT;
}
