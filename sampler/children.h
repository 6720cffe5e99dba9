/* children.h - the processes the target started, which hsspy does not
 * sample.
 *
 * A launcher (`cabal run`, a shell script, make) leaves the work to a
 * child process: a recording of the launcher alone shows a process that
 * waits, and says nothing of where the time went. The CPU time of the
 * target and of its descendants over the recording tells when most of the
 * work was elsewhere, and which process did it.
 *
 * A look, once a second while recording (0.1, 0.3, 0.7 and 1.5 s after
 * the start first, when a launcher starts its children), lists the
 * children of the target's threads and theirs
 * (/proc/PID/task/TID/children) and reads each one's CPU time
 * (/proc/PID/stat). A child that exits and is waited
 * for adds its time to its parent's (cutime, cstime), so the time of
 * children too short-lived for any look is counted as well.
 */
#ifndef HSSPY_CHILDREN_H
#define HSSPY_CHILDREN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CHILDREN_MAX 16

struct child {
    pid_t pid, parent;
    uint64_t started;      /* its start time (with the pid, which process) */
    bool at_start;         /* there when the recording began: */
    uint64_t cpu0, reaped0; /* ... its CPU times then (else 0) */
    uint64_t cpu, reaped;  /* its own CPU time, its waited-for children's, at the last look */
    bool gone;             /* not there at a look since (waited for, or lost) */
    char cmd[128];         /* its command line (or name) */
};

struct children {
    pid_t pid;
    bool ok;                 /* the target's CPU times were read at least twice */
    uint64_t own0, reaped0;  /* the target's CPU times when the recording began */
    uint64_t own, reaped;    /* ... at the last look */
    struct child c[CHILDREN_MAX];
    size_t n;
    size_t next_tid;         /* where the next look begins among many threads */
    uint64_t next_look_ns, every_ns;
};

/* The first look, as the recording begins: tids are the target's threads. */
void children__start(struct children *k, pid_t pid, const pid_t *tids, size_t ntids,
                     uint64_t now_ns);

/* A look, if it is time for one (now_ns: CLOCK_MONOTONIC). */
void children__look(struct children *k, const pid_t *tids, size_t ntids, uint64_t now_ns);

/* The last look, as the recording ends (if the target is gone, the one
 * before stands). */
void children__end(struct children *k, const pid_t *tids, size_t ntids);

/* Over the recording, in clock ticks: the target's own CPU time, its
 * descendants', and the descendant that took the most of its own (NULL
 * if none seen took any: they were too short-lived for a look). */
void children__totals(const struct children *k, uint64_t *own, uint64_t *kids,
                      const struct child **busiest);

/* The line to say when the descendants took more CPU than the target and
 * at least a tenth of one CPU over duration_ns: written to buf, true;
 * else false. */
bool children__verdict(const struct children *k, uint64_t duration_ns, const char *comm,
                       char *buf, size_t size);

/* The same in a few words, for a line of top's header ("child processes
 * 3.18 s of CPU, pid 2282 itself 0.00 s: not sampled; the busiest, pid
 * 2283: ./ring"): true when the descendants used more CPU than the target
 * since the start, whatever the share. */
bool children__brief(const struct children *k, char *buf, size_t size);

#endif
