/* remote.c - batched process_vm_readv. */
#define _GNU_SOURCE
#include "sampler/remote.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef IOV_MAX
#define IOV_MAX 1024
#endif

static unsigned long calls;

unsigned long remote__calls(void) { return calls; }

/* The process whose leader has no memory left (mm_of), and the thread of
 * it that has (mm_via); see remote__mm_pid. */
static pid_t mm_of, mm_via;

static bool has_mm(pid_t tid)
{
    char path[64], link[16];
    snprintf(path, sizeof path, "/proc/%d/exe", (int)tid);
    return readlink(path, link, sizeof link) > 0; /* (none without memory) */
}

/* Find a thread of pid with memory other than the one already tried:
 * true if one is found (it is mm_via then). */
static bool reroute(pid_t pid)
{
    char path[64];
    pid_t tried = pid == mm_of ? mm_via : 0;
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return false; /* the process is gone */
    struct dirent *e;
    bool found = false;
    while (!found && (e = readdir(d))) {
        pid_t tid = (pid_t)strtol(e->d_name, NULL, 10);
        if (tid > 0 && tid != pid && tid != tried && has_mm(tid)) {
            mm_of = pid;
            mm_via = tid;
            found = true;
        }
    }
    closedir(d);
    return found;
}

pid_t remote__mm_pid(pid_t pid)
{
    if (pid <= 0)
        return pid;
    if (pid == mm_of)
        return mm_via;
    if (has_mm(pid) || !reroute(pid))
        return pid;
    return mm_via;
}

void remote__forget(pid_t tid)
{
    if (tid == mm_via)
        mm_of = mm_via = 0;
}

/* A read refused (EPERM): the process's memory is closed to hsspy (it
 * made itself non-dumpable since hsspy attached). */
static bool denied;

bool remote__denied(void) { return denied; }

/* process_vm_readv of pid's memory, through the thread that has it. */
static ssize_t readv_of(pid_t pid, const struct iovec *l, const struct iovec *r, size_t n)
{
    pid_t via = pid == mm_of ? mm_via : pid;
    calls++;
    ssize_t got = process_vm_readv(via, l, n, r, n, 0);
    if (got < 0 && errno == ESRCH && reroute(pid)) {
        calls++;
        got = process_vm_readv(mm_via, l, n, r, n, 0);
    }
    return got;
}

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
        ssize_t r = readv_of(pid, local, remote, k);
        if (r < 0) {
            if (errno == EPERM)
                denied = true; /* (no range is readable then) */
            if (errno == ESRCH || errno == EPERM)
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
    ssize_t got = readv_of(pid, &l, &r, 1);
    if (got < 0 && errno == EPERM)
        denied = true;
    if (got < 0)
        return errno == ESRCH ? -ESRCH : errno == EPERM ? -EPERM : -EFAULT;
    return (size_t)got == len ? 0 : -EFAULT;
}
