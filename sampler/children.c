/* children.c - the processes the target started: see children.h. */
#include "sampler/children.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sampler/proc.h"

/* /proc/.../children files read in one look, at most: the target's
 * threads (a window that moves from look to look over many threads) and
 * its descendants' threads. */
#define LOOK_READS 96
#define LOOK_NS 1000000000u
/* ... the first 0.1 s after the start, then twice as long each time up to
 * LOOK_NS. */
#define FIRST_LOOK_NS 100000000u

static bool stat_of(pid_t pid, uint64_t *own, uint64_t *reaped, uint64_t *started)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    return proc__read(path, buf, sizeof buf) > 0 &&
           proc__stat_cpu(buf, own, reaped, started) == 0;
}

static struct child *tracked(struct children *k, pid_t pid)
{
    for (size_t i = 0; i < k->n; i++)
        if (k->c[i].pid == pid && !k->c[i].gone)
            return &k->c[i];
    return NULL;
}

/* Its command line, or its name if it has none (a zombie). Read at every
 * look: a child seen between its fork and its exec has its parent's. */
static void name(struct child *c)
{
    char cmd[sizeof c->cmd], comm[16];
    proc__cmdline(c->pid, cmd, sizeof cmd);
    if (cmd[0]) {
        memcpy(c->cmd, cmd, sizeof cmd);
    } else if (!c->cmd[0]) {
        proc__comm(c->pid, 0, comm, sizeof comm);
        snprintf(c->cmd, sizeof c->cmd, "%s", comm);
    }
}

static uint64_t since(uint64_t now, uint64_t then) { return now > then ? now - then : 0; }

/* When all are taken (a program that starts child after child): the slot
 * of one gone that counts for nothing but its own time (born since the
 * start: in its parent's time now), the one that used the least of those
 * but the busiest. NULL if none. */
static struct child *room(struct children *k)
{
    struct child *victim = NULL, *busiest = NULL;
    for (size_t i = 0; i < k->n; i++) {
        struct child *c = &k->c[i];
        if (!busiest || since(c->cpu, c->cpu0) > since(busiest->cpu, busiest->cpu0))
            busiest = c;
    }
    for (size_t i = 0; i < k->n; i++) {
        struct child *c = &k->c[i];
        if (c->gone && !c->at_start && c != busiest && (!victim || c->cpu < victim->cpu))
            victim = c;
    }
    return victim;
}

/* A child seen at this look: followed from now on (if there is room). */
static void seen(struct children *k, pid_t pid, pid_t parent, bool start)
{
    uint64_t cpu, reaped, started;
    if (pid == k->pid || tracked(k, pid))
        return;
    if (!stat_of(pid, &cpu, &reaped, &started))
        return; /* (gone already: its time is its parent's now) */
    struct child *c = k->n < CHILDREN_MAX ? &k->c[k->n] : room(k);
    if (!c)
        return; /* (its time is counted all the same once it is waited for) */
    if (c == &k->c[k->n])
        k->n++;
    *c = (struct child){.pid = pid, .parent = parent, .started = started, .at_start = start,
                        .cpu = cpu, .reaped = reaped};
    if (start) {
        c->cpu0 = cpu;
        c->reaped0 = reaped;
    }
    name(c);
}

/* The children of every thread of pid (up to *budget reads); from, for the
 * target, the thread to begin at. */
static void children_of(struct children *k, pid_t pid, const pid_t *tids, size_t ntids,
                        size_t from, int *budget, bool start)
{
    pid_t kids[64];
    for (size_t j = 0; j < ntids && *budget > 0; j++, (*budget)--) {
        int n = proc__children(pid, tids[(from + j) % ntids], kids, 64);
        for (int i = 0; i < n && i < 64; i++)
            seen(k, kids[i], pid, start);
    }
}

static void look(struct children *k, const pid_t *tids, size_t ntids, bool start)
{
    /* Descendants first, then the target: what a descendant's parent waits
     * for between the two reads is then in the parent's time, not lost.
     * Kept only if the target is still there (else the last look stands:
     * a descendant it waited for would be gone from both). */
    struct {
        uint64_t cpu, reaped;
        bool gone;
    } now[CHILDREN_MAX];
    for (size_t i = 0; i < k->n; i++) {
        struct child *c = &k->c[i];
        uint64_t st;
        now[i].gone = c->gone || !stat_of(c->pid, &now[i].cpu, &now[i].reaped, &st) ||
                      st != c->started;
    }
    uint64_t own, reaped, started;
    if (!stat_of(k->pid, &own, &reaped, &started))
        return;
    for (size_t i = 0; i < k->n; i++) {
        struct child *c = &k->c[i];
        if (now[i].gone) {
            c->gone = true;
        } else {
            c->cpu = now[i].cpu;
            c->reaped = now[i].reaped;
            name(c);
        }
    }
    if (start) {
        k->own0 = own;
        k->reaped0 = reaped;
    } else {
        k->ok = true;
    }
    k->own = own;
    k->reaped = reaped;
    int budget = LOOK_READS;
    if (ntids) {
        k->next_tid %= ntids;
        children_of(k, k->pid, tids, ntids, k->next_tid, &budget, start);
        k->next_tid += ntids < LOOK_READS ? ntids : LOOK_READS;
    }
    /* (Those found here are followed too: their children, and so on.) */
    for (size_t i = 0; i < k->n && budget > 0; i++) {
        pid_t *ctids = NULL;
        size_t cn = 0;
        if (k->c[i].gone || proc__tasks(k->c[i].pid, &ctids, &cn) < 0)
            continue;
        children_of(k, k->c[i].pid, ctids, cn, 0, &budget, start);
        free(ctids);
    }
}

void children__start(struct children *k, pid_t pid, const pid_t *tids, size_t ntids,
                     uint64_t now_ns)
{
    memset(k, 0, sizeof *k);
    k->pid = pid;
    k->every_ns = FIRST_LOOK_NS;
    k->next_look_ns = now_ns + k->every_ns;
    look(k, tids, ntids, true);
}

void children__look(struct children *k, const pid_t *tids, size_t ntids, uint64_t now_ns)
{
    if (now_ns < k->next_look_ns)
        return;
    k->every_ns = k->every_ns * 2 < LOOK_NS ? k->every_ns * 2 : LOOK_NS;
    k->next_look_ns = now_ns + k->every_ns;
    look(k, tids, ntids, false);
}

void children__end(struct children *k, const pid_t *tids, size_t ntids)
{
    look(k, tids, ntids, false);
}

void children__totals(const struct children *k, uint64_t *own, uint64_t *kids,
                      const struct child **busiest)
{
    /* What the target waited for, and each descendant still there (or a
     * zombie): its own time and what it waited for. One that is gone was
     * waited for by its parent, in whose time it is, all of it: the part
     * from before the recording comes off. */
    uint64_t sum = since(k->reaped, k->reaped0), off = 0, best = 0;
    *busiest = NULL;
    for (size_t i = 0; i < k->n; i++) {
        const struct child *c = &k->c[i];
        uint64_t mine = since(c->cpu, c->cpu0);
        if (!c->gone)
            sum += mine + since(c->reaped, c->reaped0);
        else if (c->at_start)
            off += c->cpu0 + c->reaped0;
        if (mine > best) {
            best = mine;
            *busiest = c;
        }
    }
    *own = k->ok ? since(k->own, k->own0) : 0;
    *kids = k->ok ? since(sum, off) : 0;
}

/* Has c exited (gone at a look, or since: its pid is no more, or another
 * process's)? */
static bool exited(const struct child *c)
{
    uint64_t cpu, reaped, started;
    return c->gone || !stat_of(c->pid, &cpu, &reaped, &started) || started != c->started;
}

bool children__brief(const struct children *k, char *buf, size_t size)
{
    uint64_t own, kids;
    const struct child *b;
    long hz = sysconf(_SC_CLK_TCK);
    children__totals(k, &own, &kids, &b);
    if (hz <= 0 || kids <= own)
        return false;
    int n = snprintf(buf, size, "child processes %.2f s of CPU, pid %d itself %.2f s: not sampled",
                     (double)kids / (double)hz, (int)k->pid, (double)own / (double)hz);
    if (b && n >= 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, "; the busiest, pid %d%s: %s", (int)b->pid,
                 exited(b) ? " (exited)" : "", b->cmd);
    return true;
}

bool children__verdict(const struct children *k, uint64_t duration_ns, const char *comm,
                       char *buf, size_t size)
{
    uint64_t own, kids;
    const struct child *b;
    long hz = sysconf(_SC_CLK_TCK);
    children__totals(k, &own, &kids, &b);
    if (hz <= 0 || kids <= own || (double)kids / (double)hz * 10.0 < (double)duration_ns / 1e9)
        return false;
    int n = snprintf(buf, size,
                     "pid %d (%s) used %.2f s of CPU while recorded, its child processes "
                     "%.2f s, which hsspy does not sample",
                     (int)k->pid, comm, (double)own / (double)hz, (double)kids / (double)hz);
    if (n < 0 || (size_t)n >= size)
        return true;
    if (!b)
        snprintf(buf + n, size - (size_t)n,
                 "; profile the program they run directly (hsspy record -- PROGRAM ...), or "
                 "attach to one (-p PID)");
    else if (exited(b))
        snprintf(buf + n, size - (size_t)n,
                 ": the busiest, pid %d, has exited; profile it directly, "
                 "hsspy record -- %s",
                 (int)b->pid, b->cmd);
    else
        snprintf(buf + n, size - (size_t)n,
                 ": the busiest is pid %d (%s); profile it with hsspy record -p %d",
                 (int)b->pid, b->cmd, (int)b->pid);
    return true;
}
