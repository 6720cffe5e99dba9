/* demangle.c - C++ names through libstdc++'s __cxa_demangle, loaded on first
 * use: hsspy is C and needs no C++ runtime unless a profile has C++ in it.
 *
 * A name comes from the target's files: untrusted. Its back-references (S_,
 * S0_, T_, ...) each stand for a type already written, however long, and
 * nested ones multiply: 24 of them in a name of 255 bytes made the
 * demangler take 7 s and write a gigabyte, and some more would take hsspy's
 * memory. A name with few is demangled here (its output at most some
 * twenty times its length); one with more, in a child process with limits
 * on its memory and CPU time, and left mangled if the child cannot. */
#include "symbolizer/demangle.h"

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef char *(*cxa_demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);

static cxa_demangle_fn cxa_demangle;
static pthread_once_t loaded = PTHREAD_ONCE_INIT;

/* Back-references a name may have and still be demangled in hsspy. (The
 * names of LLVM's and libstdc++'s libraries have up to 40 by this count,
 * 97% of them at most 8.) */
#define DEMANGLE_INLINE_REFS 8
/* The child's allowance, over what hsspy had mapped when it forked. */
#define DEMANGLE_CHILD_BYTES (256u << 20)
#define DEMANGLE_CHILD_MS 2000
/* Children that gave no name, after which no more are tried: a file full
 * of such names costs a few seconds, not one a name. */
#define DEMANGLE_CHILD_FAILURES 8

static unsigned child_failures;

/* The names demangled apart lately, and how: a function's every sampled
 * address has its name, and a child is a fork. (A failure is remembered
 * as an empty name.) */
#define DEMANGLE_APART_KEPT 16
static struct {
    uint64_t hash;
    char name[600];
} apart[DEMANGLE_APART_KEPT];
static unsigned apart_next;

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h | 1; /* (0: an empty slot) */
}

static void load(void)
{
    void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
    if (h)
        *(void **)&cxa_demangle = dlsym(h, "__cxa_demangle");
}

bool demangle__available(void)
{
    pthread_once(&loaded, load);
    return cxa_demangle != NULL;
}

size_t demangle__backrefs(const char *sym)
{
    /* S<seq-id>_ and T<param>_, over-counted where a source name in the
     * mangling has such letters (which only sends it to the child). */
    size_t n = 0;
    for (const char *p = sym; *p; p++) {
        if (*p != 'S' && *p != 'T')
            continue;
        const char *q = p + 1;
        while ((*q >= '0' && *q <= '9') || (*q >= 'A' && *q <= 'Z'))
            q++;
        n += *q == '_';
    }
    return n;
}

static bool demangle_here(const char *sym, char *out, size_t size)
{
    int status = -1;
    char *d = cxa_demangle(sym, NULL, NULL, &status);
    if (!d || status != 0) {
        free(d);
        return false;
    }
    snprintf(out, size, "%s", d);
    free(d);
    return true;
}

static unsigned long mapped_bytes(void)
{
    unsigned long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%lu", &pages) != 1)
            pages = 0;
        fclose(f);
    }
    return pages * (unsigned long)sysconf(_SC_PAGESIZE);
}

static uint64_t ms_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* In a child: its address space capped at what hsspy has mapped plus
 * DEMANGLE_CHILD_BYTES, its CPU at a second (then SIGKILL), its answer
 * through a pipe, and killed if none came in DEMANGLE_CHILD_MS. */
static bool demangle_child(const char *sym, char *out, size_t size)
{
    int fds[2];
    unsigned long have = mapped_bytes();
    if (size < 2 || pipe(fds) < 0)
        return false;
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return false;
    }
    if (pid == 0) {
        struct rlimit as = {have + DEMANGLE_CHILD_BYTES, have + DEMANGLE_CHILD_BYTES};
        struct rlimit cpu = {1, 1};
        close(fds[0]);
        if (setrlimit(RLIMIT_AS, &as) == 0 && setrlimit(RLIMIT_CPU, &cpu) == 0 &&
            demangle_here(sym, out, size)) {
            size_t len = strlen(out);
            if (write(fds[1], out, len) != (ssize_t)len)
                _exit(1);
        }
        _exit(0);
    }
    close(fds[1]);
    size_t got = 0;
    uint64_t end = ms_now() + DEMANGLE_CHILD_MS;
    bool eof = false;
    while (!eof) {
        uint64_t now = ms_now();
        struct pollfd p = {fds[0], POLLIN, 0};
        if (now >= end)
            break;
        int r = poll(&p, 1, (int)(end - now));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        char spare[256]; /* (the child writes no more than size - 1) */
        bool room = got < size - 1;
        ssize_t n = room ? read(fds[0], out + got, size - 1 - got) : read(fds[0], spare, sizeof spare);
        if (n < 0 && errno == EINTR)
            continue;
        eof = n == 0;
        if (n < 0)
            break;
        if (room)
            got += (size_t)n;
    }
    close(fds[0]);
    if (!eof)
        kill(pid, SIGKILL); /* out of time */
    int status = 0;
    pid_t w;
    do
        w = waitpid(pid, &status, 0);
    while (w < 0 && errno == EINTR);
    if (w != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        got = 0;
    out[got] = '\0';
    return got > 0;
}

bool demangle__cxx(const char *sym, char *out, size_t size)
{
    if (!sym || strncmp(sym, "_Z", 2) != 0 || !size || !demangle__available())
        return false;
    if (demangle__backrefs(sym) <= DEMANGLE_INLINE_REFS)
        return demangle_here(sym, out, size);
    uint64_t h = fnv1a(sym);
    for (unsigned i = 0; i < DEMANGLE_APART_KEPT; i++)
        if (apart[i].hash == h) {
            if (!apart[i].name[0])
                return false;
            snprintf(out, size, "%s", apart[i].name);
            return true;
        }
    char buf[4096];
    if (child_failures >= DEMANGLE_CHILD_FAILURES)
        return false;
    bool ok = demangle_child(sym, buf, sizeof buf);
    child_failures += !ok;
    unsigned k = apart_next++ % DEMANGLE_APART_KEPT;
    apart[k].hash = h;
    size_t len = ok ? strnlen(buf, sizeof apart[k].name - 1) : 0;
    memcpy(apart[k].name, buf, len);
    apart[k].name[len] = '\0';
    if (ok)
        snprintf(out, size, "%s", buf);
    return ok;
}
