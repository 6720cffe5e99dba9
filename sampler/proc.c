/* proc.c - small, allocation-light readers of /proc/PID files. */
#include "sampler/proc.h"
#include "out/text.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
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

/* A task's /proc file, kept open to be read again and again. */
static int open_task_file(pid_t pid, pid_t tid, const char *file)
{
    char path[96];
    stat_path(path, sizeof path, pid, tid, file);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

/* Read an open /proc file afresh, as one NUL-terminated string. */
static bool reread(int fd, char *buf, size_t size)
{
    if (fd < 0 || size < 2)
        return false;
    ssize_t n = pread(fd, buf, size - 1, 0);
    if (n <= 0)
        return false;
    buf[n] = 0;
    return true;
}

char proc__state(pid_t pid, pid_t tid)
{
    char path[96], buf[512];
    stat_path(path, sizeof path, pid, tid, "stat");
    if (proc__read(path, buf, sizeof buf) <= 0)
        return '?';
    return proc__stat_state(buf);
}

bool proc__is_kthread(pid_t pid)
{
    char path[96], buf[512];
    stat_path(path, sizeof path, pid, 0, "stat");
    if (proc__read(path, buf, sizeof buf) <= 0)
        return false;
    /* After "pid (comm) ": state ppid pgrp session tty_nr tpgid flags. */
    const char *p = strrchr(buf, ')');
    unsigned long flags = 0;
    if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
        return false;
    return (flags & 0x00200000ul) != 0; /* PF_KTHREAD */
}

bool proc__not_dumpable(pid_t pid)
{
    char path[96], buf[2048];
    struct stat st;
    unsigned long ruid, euid;
    /* (A process's /proc files belong to root once it is not dumpable,
     * whoever it runs as; its directory does not.) */
    stat_path(path, sizeof path, pid, 0, "status");
    if (stat(path, &st) < 0 || st.st_uid != 0 || proc__read(path, buf, sizeof buf) <= 0)
        return false;
    const char *u = strstr(buf, "\nUid:");
    return u && sscanf(u + 5, "%lu %lu", &ruid, &euid) == 2 && euid != 0;
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
    text__clean(buf); /* the program names its threads as it likes */
}

void proc__cmdline(pid_t pid, char *buf, size_t size)
{
    char path[64];
    ssize_t n;
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    n = proc__read(path, buf, size);
    if (n == 0) {
        /* A process whose first thread has exited (a main that ends in
         * pthread_exit) shows none there: its other threads, the same
         * memory, do. */
        DIR *d;
        struct dirent *de;
        snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
        if ((d = opendir(path)) != NULL) {
            char tpath[96];
            while (n <= 0 && (de = readdir(d)) != NULL)
                if (de->d_name[0] >= '1' && de->d_name[0] <= '9') {
                    snprintf(tpath, sizeof tpath, "/proc/%d/task/%.16s/cmdline", (int)pid,
                             de->d_name);
                    n = proc__read(tpath, buf, size);
                }
            closedir(d);
        }
    }
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
    text__clean(buf); /* arguments are any bytes */
}

/* A number field of /proc/PID/status ("\nName:"): -errno if none. */
static int status_field(pid_t pid, const char *name)
{
    char path[64], buf[4096];
    const char *p;
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    ssize_t n = proc__read(path, buf, sizeof buf);
    if (n < 0)
        return (int)n;
    p = strstr(buf, name);
    if (!p)
        return -ENOENT;
    return atoi(p + strlen(name));
}

int proc__tracer(pid_t pid) { return status_field(pid, "\nTracerPid:"); }

int proc__tgid(pid_t tid) { return status_field(tid, "\nTgid:"); }

int proc__open_stat(pid_t pid, pid_t tid) { return open_task_file(pid, tid, "stat"); }

char proc__stat_fd_state(int fd)
{
    char buf[512];
    return reread(fd, buf, sizeof buf) ? proc__stat_state(buf) : '?';
}

int proc__open_schedstat(pid_t pid, pid_t tid) { return open_task_file(pid, tid, "schedstat"); }

/* A decimal (base 10) or hex (base 16) number at *p, then one space or
 * the end; false if there is none. Faster than sscanf, which this file
 * would otherwise run for every thread at every tick. */
static bool number(const char **p, int base, uint64_t *out)
{
    const char *s = *p;
    uint64_t v = 0;
    int digits = 0;
    if (base == 16 && s[0] == '0' && s[1] == 'x')
        s += 2;
    for (;; s++, digits++) {
        unsigned d;
        if (*s >= '0' && *s <= '9')
            d = (unsigned)(*s - '0');
        else if (base == 16 && *s >= 'a' && *s <= 'f')
            d = (unsigned)(*s - 'a' + 10);
        else
            break;
        v = v * (unsigned)base + d;
    }
    if (!digits || (*s && *s != ' ' && *s != '\n'))
        return false;
    *out = v;
    *p = *s == ' ' ? s + 1 : s;
    return true;
}

int proc__schedstat(int fd, uint64_t *run_ns, uint64_t *slices)
{
    char buf[128];
    uint64_t run, wait, cnt;
    if (!reread(fd, buf, sizeof buf))
        return -1;
    const char *p = buf;
    if (!number(&p, 10, &run) || !number(&p, 10, &wait) || !number(&p, 10, &cnt))
        return -1;
    *run_ns = run;
    *slices = cnt;
    return 0;
}

int proc__open_syscall(pid_t pid, pid_t tid) { return open_task_file(pid, tid, "syscall"); }

/* FNV-1a, 64 bits: a line's fingerprint, not a defence against anyone. */
static uint64_t hash_line(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s && *s != '\n'; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    return h;
}

/* The text is "running", "-1 SP PC" (blocked, not in a system call), or
 * "NR A1 A2 A3 A4 A5 A6 SP PC" with the numbers in hex after NR. */
int proc__syscall_fd(int fd, long *nr, uint64_t *sp, uint64_t *pc, uint64_t *where)
{
    char buf[256];
    if (!reread(fd, buf, sizeof buf))
        return -1;
    if (strncmp(buf, "running", 7) == 0)
        return PROC_RUNNING;
    if (where)
        *where = hash_line(buf);
    const char *p = buf;
    uint64_t v[8];
    if (p[0] == '-' && p[1] == '1' && p[2] == ' ') {
        p += 3;
        if (!number(&p, 16, &v[0]) || !number(&p, 16, &v[1]))
            return -1;
        *nr = -1;
        *sp = v[0];
        *pc = v[1];
        return PROC_BLOCKED;
    }
    uint64_t call;
    if (!number(&p, 10, &call))
        return -1;
    for (int i = 0; i < 8; i++)
        if (!number(&p, 16, &v[i]))
            return -1;
    *nr = (long)call;
    *sp = v[6];
    *pc = v[7];
    return PROC_BLOCKED;
}

uint64_t proc__syscall_where(long nr, const uint64_t args[6], uint64_t sp, uint64_t pc)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%ld 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx", nr,
             (unsigned long long)args[0], (unsigned long long)args[1],
             (unsigned long long)args[2], (unsigned long long)args[3],
             (unsigned long long)args[4], (unsigned long long)args[5], (unsigned long long)sp,
             (unsigned long long)pc);
    return hash_line(buf);
}

/* The call's registers as the syscall file shows them; false if regs are
 * not of a thread inside a call. */
static bool call_of(const struct user_regs_struct *regs, struct proc_call *c)
{
    if (regs->rax != (unsigned long long)-ENOSYS)
        return false;
    c->pc = regs->rip;
    c->sp = regs->rsp;
    c->args[0] = regs->rdi;
    c->args[1] = regs->rsi;
    c->args[2] = regs->rdx;
    c->args[3] = regs->r10;
    c->args[4] = regs->r8;
    c->args[5] = regs->r9;
    return true;
}

static bool same_call(const struct proc_call *a, const struct proc_call *b)
{
    return a->pc == b->pc && a->sp == b->sp && memcmp(a->args, b->args, sizeof a->args) == 0;
}

bool proc__calls_learn(struct proc_calls *cs, const struct user_regs_struct *regs, long nr,
                       uint64_t where)
{
    struct proc_call c;
    if (nr < 0 || !call_of(regs, &c) || proc__syscall_where(nr, c.args, c.sp, c.pc) != where)
        return false;
    c.nr = nr;
    c.where = where;
    for (size_t i = 0; i < cs->n; i++)
        if (same_call(&cs->c[i], &c)) {
            cs->c[i] = c;
            return true;
        }
    if (cs->n < PROC_CALLS) {
        cs->c[cs->n++] = c;
        return true;
    }
    cs->c[cs->next] = c;
    cs->next = (uint8_t)((cs->next + 1) % PROC_CALLS);
    return true;
}

bool proc__calls_find(const struct proc_calls *cs, const struct user_regs_struct *regs, long *nr,
                      uint64_t *where)
{
    struct proc_call c;
    if (!call_of(regs, &c))
        return false;
    for (size_t i = 0; i < cs->n; i++)
        if (same_call(&cs->c[i], &c)) {
            *nr = cs->c[i].nr;
            *where = cs->c[i].where;
            return true;
        }
    return false;
}

int proc__open_loadavg(void)
{
    int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

long proc__running(int fd)
{
    char buf[128];
    if (!reread(fd, buf, sizeof buf))
        return -1;
    /* "0.52 0.58 0.59 2/467 12345": the fourth field is running/total. */
    const char *p = buf;
    for (int field = 0; field < 3; field++) {
        p = strchr(p, ' ');
        if (!p)
            return -1;
        p++;
    }
    return strtol(p, NULL, 10);
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

/* Skip n fields of a stat line, from p at a field (or the spaces before
 * it) to the start of the field after them; false at the line's end. */
static bool stat_skip(const char **p, int n)
{
    for (; n > 0; n--) {
        while (**p == ' ')
            (*p)++;
        if (!**p)
            return false;
        while (**p && **p != ' ')
            (*p)++;
    }
    while (**p == ' ')
        (*p)++;
    return **p != 0;
}

int proc__stat_cpu(const char *s, uint64_t *own, uint64_t *reaped, uint64_t *started)
{
    const char *p = strrchr(s, ')');
    uint64_t v[4];
    if (!p)
        return -EINVAL;
    p++;
    /* After the comm: state (field 3) to field 13; utime (14), stime,
     * cutime, cstime; fields 18 to 21; starttime (22). */
    if (!stat_skip(&p, 11))
        return -EINVAL;
    for (int k = 0; k < 4; k++)
        if (!number(&p, 10, &v[k]))
            return -EINVAL;
    if (!stat_skip(&p, 4) || !number(&p, 10, started))
        return -EINVAL;
    *own = v[0] + v[1];
    *reaped = v[2] + v[3];
    return 0;
}

int proc__children(pid_t pid, pid_t tid, pid_t *out, size_t max)
{
    char path[96], buf[4096];
    stat_path(path, sizeof path, pid, tid ? tid : pid, "children");
    ssize_t n = proc__read(path, buf, sizeof buf);
    if (n < 0)
        return (int)n;
    if ((size_t)n == sizeof buf - 1) {
        /* (Full: the last number may be cut short.) */
        char *sp = strrchr(buf, ' ');
        if (sp)
            *sp = 0;
    }
    int cnt = 0;
    for (char *p = buf, *end; *p; p = end) {
        while (*p == ' ' || *p == '\n')
            p++;
        if (!*p)
            break;
        long c = strtol(p, &end, 10);
        if (end == p || c <= 0)
            break;
        if ((size_t)cnt < max)
            out[cnt] = (pid_t)c;
        cnt++;
    }
    return cnt;
}

bool proc__status_field(const char *status_text, const char *key, char *out, size_t size)
{
    size_t klen = strlen(key);
    for (const char *line = status_text; line && *line;) {
        const char *nl = strchr(line, '\n');
        if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
            const char *v = line + klen + 1;
            const char *end = nl ? nl : v + strlen(v);
            while (v < end && (*v == ' ' || *v == '\t'))
                v++;
            if (size) {
                size_t n = (size_t)(end - v) < size - 1 ? (size_t)(end - v) : size - 1;
                memcpy(out, v, n);
                out[n] = '\0';
            }
            return true;
        }
        line = nl ? nl + 1 : NULL;
    }
    return false;
}

bool proc__self_status_field(const char *key, char *out, size_t size)
{
    char text[4096]; /* (some 1.5 KiB on 6.x kernels) */
    return proc__read("/proc/self/status", text, sizeof text) > 0 &&
           proc__status_field(text, key, out, size);
}

/* Has hsspy capability cap in its effective set? */
static bool self_has_cap(int cap)
{
    char v[64];
    unsigned long long eff;
    return proc__self_status_field("CapEff", v, sizeof v) && sscanf(v, "%llx", &eff) == 1 &&
           ((eff >> cap) & 1);
}

const char *proc__privileged_exe(const char *path)
{
    struct stat st;
    if (self_has_cap(19)) /* CAP_SYS_PTRACE: the program keeps them */
        return NULL;
    struct statvfs vfs;
    if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
        return NULL;
    if (statvfs(path, &vfs) == 0 && (vfs.f_flag & ST_NOSUID))
        return NULL; /* (mounted nosuid: it gives none anyway) */
    if ((st.st_mode & S_ISUID) && st.st_uid != geteuid())
        return "set-user-ID";
    if ((st.st_mode & S_ISGID) && st.st_gid != getegid())
        return "set-group-ID";
    if (getxattr(path, "security.capability", NULL, 0) > 0)
        return "given file capabilities";
    return NULL;
}
