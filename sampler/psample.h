/* psample.h - a thread's registers and C stack, sampled by the kernel
 * without stopping it (--nonblocking).
 *
 * For each thread hsspy opens a perf event on the thread's own CPU clock
 * (PERF_COUNT_SW_TASK_CLOCK), one sample per tick period of CPU time, each
 * with the thread's user registers (PERF_SAMPLE_REGS_USER) and the top of
 * its C stack (PERF_SAMPLE_STACK_USER), which the kernel writes into a small
 * ring mapped into hsspy. At a tick, a running thread's newest sample is
 * what a stop would have given, taken up to a period earlier: its Haskell
 * stack and the runtime's state are then read while it runs on, so they
 * may have moved on since (the walkers check everything they read). Per
 * sample the thread pays the copy of its registers and stack (a few
 * microseconds) and no context switch.
 *
 * Only user mode is sampled (exclude_kernel: allowed up to
 * perf_event_paranoid 2): a thread in the kernel when its period ends is
 * not sampled then.
 */
#ifndef HSSPY_PSAMPLE_H
#define HSSPY_PSAMPLE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

/* C stack bytes each sample copies: a GHC thread's C stack under Haskell
 * code is the scheduler's few frames; an unwind that needs more reads the
 * rest from the running thread (its older frames). */
#define PSAMPLE_STACK 8192
/* Data pages of a ring: room for three samples, read every tick. */
#define PSAMPLE_PAGES 8

struct psample {
    int fd;        /* the perf event, -1 if none */
    void *ring;    /* its mapping: the control page, then the data pages */
    uint64_t tail; /* how far the records have been read */
    size_t pages;  /* data pages of the ring */
    unsigned long samples; /* samples seen (the newest of a tick is used) */
    unsigned long lost;    /* samples the kernel could not write (ring full) */
};

/* The newest sample found in a ring. */
struct psample_hit {
    const struct psample *src; /* the ring its stack bytes are in */
    uint64_t t_ns; /* CLOCK_MONOTONIC, when the kernel took it */
    struct user_regs_struct regs; /* the general registers; no fs_base */
    uint64_t stack_pos;  /* where its stack bytes start in the ring's data */
    uint32_t stack_len;  /* how many were copied (from regs.rsp up) */
};

/* Open thread tid's sampling event: a sample per period_ns of its CPU
 * time. 0, or -errno (p->fd stays -1). */
int psample__open(struct psample *p, pid_t tid, uint64_t period_ns);

void psample__close(struct psample *p);

/* The newest sample written since the last psample__release, if any:
 * 1 (in *hit), 0 (none), -1 (no ring). Its stack stays in the ring, for
 * psample__copy_stack, until psample__release. */
int psample__newest(struct psample *p, struct psample_hit *hit);

/* Copy the hit's stack bytes (hit->stack_len) to dst, from its ring. */
void psample__copy_stack(const struct psample_hit *hit, void *dst);

/* Let the kernel reuse the records read so far. */
void psample__release(struct psample *p);

/* The newest sample among the records of data (a ring of size bytes, a
 * power of two) from *tail up to head, with hsspy's sample layout; *tail
 * moves to head. Counts samples and LOST records into *samples and *lost.
 * 1 (in *hit), or 0 if no well-formed sample. Pure: for the unit tests. */
int psample__scan(const uint8_t *data, uint64_t size, uint64_t *tail, uint64_t head,
                  struct psample_hit *hit, unsigned long *samples, unsigned long *lost);

/* A launched program's events (hsspy record --nonblocking -- CMD): one per
 * CPU, opened on the command before it execs and inherited by every thread
 * it creates, each CPU's ring holding the samples and context-switch
 * records of whichever of its threads ran there. Why not one per thread,
 * as for a program attached to: when the kernel switches between two
 * threads whose events were all inherited from one parent, it swaps their
 * perf contexts and leaves the events running; events opened thread by
 * thread are each stopped and started at every switch (for a clock event,
 * a timer cancelled and armed: measured on a 2-CPU VM, the bench workload
 * pinned to one CPU, 5-7% slower with events per thread, 1.5-2% with
 * inherited ones). */
#define PSAMPLE_SET_PAGES 16

struct psample_set {
    struct psample *cpu; /* one per CPU (fd -1 where it could not open) */
    int n;
};

/* One record of a ring, as psample__each reads it. */
struct psample_rec {
    uint32_t type; /* PERF_RECORD_SAMPLE (hit), _SWITCH (misc), _LOST (lost) */
    pid_t tid;     /* the thread it is about (not for LOST) */
    uint16_t misc;
    uint64_t lost;
    struct psample_hit hit;
};
typedef void (*psample_fn)(void *ctx, const struct psample_rec *rec);

/* Open the events of a launched command, stopped before its exec (they
 * start at the exec). 0, or -errno (nothing left open). */
int psample_set__open(struct psample_set *s, pid_t pid, uint64_t period_ns);
void psample_set__close(struct psample_set *s);

/* Every record written since the last psample_set__release, ring after
 * ring, to fn. A sample's stack stays in its ring until the release. */
void psample_set__read(struct psample_set *s, psample_fn fn, void *ctx);
void psample_set__release(struct psample_set *s);

/* The records of data (a ring of size bytes, a power of two) from *tail up
 * to head, with the set's layout (sample_id_all: a switch or lost record
 * ends with the thread's pid, tid and time), to fn; *tail moves to head.
 * src is what the hits' stacks are to be copied from. Pure: for the unit
 * tests. */
void psample__each(const uint8_t *data, uint64_t size, uint64_t *tail, uint64_t head,
                   const struct psample *src, psample_fn fn, void *ctx);

/* Copy len bytes at position pos of a ring of size bytes (a power of
 * two), wrapping at its end. */
void psample__ring_copy(const uint8_t *data, uint64_t size, uint64_t pos, void *dst, size_t len);

#endif
