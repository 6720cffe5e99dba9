/* proc.c - small, allocation-light readers of /proc/PID files. */
#include "sampler/proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

ssize_t proc__read(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    size_t got = 0;

    if (size == 0)
        return -EINVAL;
    if (fd < 0)
        return -errno;
    while (got < size - 1) {
        ssize_t r = read(fd, buf + got, size - 1 - got);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            close(fd);
            return -e;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = 0;
    return (ssize_t)got;
}

int proc__tasks(pid_t pid, pid_t **tids, size_t *n)
{
    char path[64];
    DIR *d;
    struct dirent *e;
    size_t cap = 16, cnt = 0;
    pid_t *v;

    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    d = opendir(path);
    if (!d)
        return -errno;
    v = malloc(cap * sizeof *v);
    if (!v) {
        closedir(d);
        return -ENOMEM;
    }
    while ((e = readdir(d)) != NULL) {
        char *end;
        long t = strtol(e->d_name, &end, 10);
        if (*end || t <= 0)
            continue;
        if (cnt == cap) {
            pid_t *nv = realloc(v, 2 * cap * sizeof *v);
            if (!nv) {
                free(v);
                closedir(d);
                return -ENOMEM;
            }
            v = nv;
            cap *= 2;
        }
        v[cnt++] = (pid_t)t;
    }
    closedir(d);
    *tids = v;
    *n = cnt;
    return 0;
}

char proc__stat_state(const char *s)
{
    const char *p = strrchr(s, ')');
    if (!p || p[1] != ' ' || !p[2])
        return '?';
    return p[2];
}

static void stat_path(char *buf, size_t size, pid_t pid, pid_t tid, const char *file)
{
    if (tid)
        snprintf(buf, size, "/proc/%d/task/%d/%s", (int)pid, (int)tid, file);
    else
        snprintf(buf, size, "/proc/%d/%s", (int)pid, file);
}

char proc__state(pid_t pid, pid_t tid)
{
    char path[96], buf[512];
    stat_path(path, sizeof path, pid, tid, "stat");
    if (proc__read(path, buf, sizeof buf) <= 0)
        return '?';
    return proc__stat_state(buf);
}

void proc__comm(pid_t pid, pid_t tid, char *buf, size_t size)
{
    char path[96];
    ssize_t n;
    stat_path(path, sizeof path, pid, tid, "comm");
    n = proc__read(path, buf, size);
    if (n <= 0) {
        snprintf(buf, size, "?");
        return;
    }
    if (buf[n - 1] == '\n')
        buf[n - 1] = 0;
}

void proc__cmdline(pid_t pid, char *buf, size_t size)
{
    char path[64];
    ssize_t n;
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    n = proc__read(path, buf, size);
    if (n <= 0) {
        if (size)
            buf[0] = 0;
        return;
    }
    /* Arguments are NUL-separated; the last NUL is the terminator. */
    while (n > 0 && buf[n - 1] == 0)
        n--;
    for (ssize_t i = 0; i < n; i++)
        if (buf[i] == 0)
            buf[i] = ' ';
    buf[n] = 0;
}

int proc__tracer(pid_t pid)
{
    char path[64], buf[4096];
    const char *p;
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    ssize_t n = proc__read(path, buf, sizeof buf);
    if (n < 0)
        return (int)n;
    p = strstr(buf, "\nTracerPid:");
    if (!p)
        return -ENOENT;
    return atoi(p + strlen("\nTracerPid:"));
}

int proc__open_stat(pid_t pid, pid_t tid)
{
    char path[96];
    int fd;
    stat_path(path, sizeof path, pid, tid, "stat");
    fd = open(path, O_RDONLY | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

char proc__stat_fd_state(int fd)
{
    char buf[512];
    ssize_t n;
    if (fd < 0)
        return '?';
    n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return '?';
    buf[n] = 0;
    return proc__stat_state(buf);
}

int proc__open_schedstat(pid_t pid, pid_t tid)
{
    char path[96];
    int fd;
    stat_path(path, sizeof path, pid, tid, "schedstat");
    fd = open(path, O_RDONLY | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

int proc__schedstat(int fd, uint64_t *run_ns, uint64_t *slices)
{
    char buf[128];
    unsigned long long run, wait, cnt;
    ssize_t n;
    if (fd < 0)
        return -1;
    n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    if (sscanf(buf, "%llu %llu %llu", &run, &wait, &cnt) != 3)
        return -1;
    *run_ns = run;
    *slices = cnt;
    return 0;
}

int proc__syscall(pid_t pid, pid_t tid, long *nr, uint64_t *sp, uint64_t *pc)
{
    char path[96], buf[256];
    unsigned long long a[6], s, p;
    long n;
    stat_path(path, sizeof path, pid, tid, "syscall");
    if (proc__read(path, buf, sizeof buf) <= 0)
        return -1;
    if (sscanf(buf, "%ld %llx %llx %llx %llx %llx %llx %llx %llx", &n, &a[0], &a[1], &a[2],
               &a[3], &a[4], &a[5], &s, &p) != 9)
        return -1; /* "running", or "-1 sp pc" outside a system call */
    *nr = n;
    *sp = s;
    *pc = p;
    return 0;
}

bool proc__syscall_breaks_on_stop(long nr)
{
    switch (nr) {
    case 232: /* epoll_wait */
    case 281: /* epoll_pwait */
    case 441: /* epoll_pwait2 */
    case 65:  /* semop */
    case 220: /* semtimedop */
    case 128: /* rt_sigtimedwait (sigtimedwait, sigwaitinfo) */
        return true;
    default:
        return false;
    }
}
