/* psample.h - threads' registers and C stacks, sampled by the kernel
 * without stopping them (--nonblocking).
 *
 * hsspy opens one perf event per CPU (pid -1: whatever runs there), on
 * that CPU's clock (PERF_COUNT_SW_CPU_CLOCK), one sample per period of
 * wall time, each with the running thread's user registers
 * (PERF_SAMPLE_REGS_USER: where it is in user code, or where it entered
 * the kernel) and the top of its C stack (PERF_SAMPLE_STACK_USER), which
 * the kernel writes into a small ring mapped into hsspy. At a tick, each
 * of the program's threads that was on a CPU at its CPU's last sampling
 * instant has its sample there; samples of other programs are skipped.
 * Its Haskell stack and the runtime's state are then read while it runs
 * on, so they may have moved on since (the walkers check what they read).
 * Per sample the thread pays an interrupt and the copy of its registers
 * and stack, and no context switch.
 *
 * The same events record every context switch on their CPU
 * (PERF_RECORD_SWITCH_CPU_WIDE: which thread left the CPU, preempted or to
 * sleep, and which was given it), so that whether each of the program's
 * threads has run since the last tick, and whether it is on a CPU now, is
 * read from memory too: no /proc read, and no perf event on each thread
 * (whose context switch costs the thread about a microsecond more each
 * way: see tracee.c). The records cost whatever switches, whichever
 * program it is of: about a microsecond a switch on a 2-CPU PVM guest,
 * and the events of psample_set__open_switches (which also sample the
 * registers of the program's threads as they leave a CPU) about as much
 * again (README, "Usage").
 *
 * Why every CPU and not every thread: a clock event per thread counts that
 * thread's CPU time, so its samples fall at fixed points of its work,
 * period after period; a program whose work repeats in a multiple of the
 * period is then seen at the same points of its cycle every time (on a
 * loop of 7 ms of one kind of work, 5 of another, 6 of a third and 4 of
 * sleep, 499 Hz showed the first 4 points short and the second 4 over, a
 * different way each run). The per-CPU events' instants are wall time,
 * and psample_set__rephase moves them to a new random phase every few
 * ticks (per thread that could not be done: an inherited event cannot be
 * changed). They also cost the program nothing when its threads switch,
 * which events opened on each thread do (a timer stopped and armed at
 * every switch). They need the right to watch every CPU: root,
 * CAP_PERFMON, or perf_event_paranoid at most 0.
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
/* Data pages of a CPU's ring, read every tick: room for seven samples,
 * or for one and some 900 context switches (two records each); with
 * psample_set__open_switches, some 270 switches (two records and a
 * sample of registers each). */
#define PSAMPLE_PAGES 16
/* A ring with fewer bytes free than this is full: no room for a switch's
 * record, which may have been dropped (psample_set__read, __peek). */
#define PSAMPLE_FULL_FREE 512
/* The switch events' rings (and --nonblocking's) are read every tick
 * too, and a longer tick holds more switches: 16 pages for each
 * PSAMPLE_SWITCH_SPAN_NS of a tick (rounded up to a power of two), up to
 * PSAMPLE_MAX_PAGES a CPU and PSAMPLE_BUDGET_PAGES over all CPUs (but
 * never fewer than 16). On the bench workload at 20 Hz, 16 pages lost
 * records at 3 ticks of 160. */
#define PSAMPLE_SWITCH_SPAN_NS 10000000u
#define PSAMPLE_MAX_PAGES 128
#define PSAMPLE_BUDGET_PAGES 1024

/* One CPU's event. */
struct psample {
    int fd;        /* the perf event, -1 if none */
    void *ring;    /* its mapping: the control page, then the data pages */
    uint64_t tail; /* how far the records have been read */
    uint64_t peek; /* ... and looked at since (psample_set__peek) */
    bool regs_only; /* its samples have no stack bytes (switches' samples) */
    size_t pages;   /* data pages of its ring */
};

/* A sample found in a ring. */
struct psample_hit {
    const struct psample *src; /* the ring its stack bytes are in */
    uint64_t t_ns; /* CLOCK_MONOTONIC, when the kernel took it */
    struct user_regs_struct regs; /* the general registers; no fs_base */
    uint64_t stack_pos;  /* where its stack bytes start in the ring's data */
    uint32_t stack_len;  /* how many were copied (from regs.rsp up) */
    const uint8_t *copy; /* or, if set, where they were copied out of the
                          * ring to (a ring read between ticks) */
};

/* One record of a ring, as psample__each reads it. */
struct psample_rec {
    uint32_t type; /* PERF_RECORD_SAMPLE (hit), _LOST (lost),
                    * _SWITCH_CPU_WIDE, or 0: a sample without user
                    * registers or malformed */
    pid_t pid, tid; /* the thread a sample or switch is of, and its process */
    uint64_t lost;
    /* A switch: tid was given the CPU (in), or left it (!in), still
     * runnable (preempted) or not; at t_ns, CLOCK_MONOTONIC. */
    bool in, preempted;
    pid_t next_pid; /* a switch out: the process given the CPU */
    uint64_t t_ns;
    struct psample_hit hit; /* (a sample's only: stale in other records) */
};
typedef void (*psample_fn)(void *ctx, const struct psample_rec *rec);

struct psample_set {
    struct psample *cpu; /* one per CPU (fd -1 where it is offline) */
    int n;
    bool switch_samples; /* psample_set__open_switches: with samples of switches */
};

/* Open the events of every online CPU, a sample per period_ns, disabled,
 * each with a ring of `pages` data pages (a power of two, at least
 * PSAMPLE_PAGES; psample__switch_pages for the tick), readable to poll(2)
 * once half full, as with psample_set__open_switches. 0, or -errno
 * (nothing left open): -EACCES or -EPERM without the right. */
int psample_set__open(struct psample_set *s, uint64_t period_ns, size_t pages);
void psample_set__close(struct psample_set *s);

/* The same events without sampling at instants: each CPU's context-switch
 * records, for telling which threads ran while stopping them to sample,
 * and a sample of the user registers (no stack) of each of process pid's
 * threads as it leaves the CPU: a thread taken off its CPU while runnable
 * (preempted) is, until it gets a CPU again, where those registers say,
 * and need not be stopped to be sampled. Other programs' samples are
 * dropped before they reach the ring (a BPF program on the events), though
 * their switches still pay for the sample's preparation (about a
 * microsecond a switch on a 2-CPU PVM guest); where that filter cannot be
 * set (no CAP_BPF, or hsspy in a PID namespace of its own, where its
 * process ids are not the kernel's), the records alone, and
 * s->switch_samples is false. Same rights needed, same errors. Each
 * CPU's ring has `pages` data pages (a power of two; PSAMPLE_PAGES if
 * not), and its event (s->cpu[i].fd) is readable to poll(2) once half
 * full since it was last polled: then it is worth a read before the tick. */
int psample_set__open_switches(struct psample_set *s, pid_t pid, size_t pages);

/* The data pages a CPU's ring of switch events needs for ticks period_ns
 * apart, on a machine of ncpus CPUs (see PSAMPLE_SWITCH_SPAN_NS). */
size_t psample__switch_pages(uint64_t period_ns, long ncpus);

/* Start sampling. */
void psample_set__enable(struct psample_set *s);

/* Give every CPU's event the period period_ns, counted from now: the
 * sampling instants take a new phase. A system call per CPU (each an
 * interrupt of that CPU). */
void psample_set__rephase(struct psample_set *s, uint64_t period_ns);

/* Every record written since the last psample_set__release, ring after
 * ring, to fn. A sample's stack stays in its ring until the release. A
 * ring found full (PSAMPLE_FULL_FREE) is told as a PERF_RECORD_LOST of no
 * count after its records: the kernel's own comes only once it has room. */
void psample_set__read(struct psample_set *s, psample_fn fn, void *ctx);
void psample_set__release(struct psample_set *s);

/* The records written since the last psample_set__read or peek, to fn,
 * left for the next read too (which tells them again): for what a
 * thread did since the tick's read. A sample's stack may be released
 * before fn could copy it: fn is to take switches and losses only. A ring
 * full is a loss, as for a read. */
void psample_set__peek(struct psample_set *s, psample_fn fn, void *ctx);

/* Copy the hit's stack bytes (hit->stack_len) to dst, from its ring (or
 * where they were copied to: hit->copy). */
void psample__copy_stack(const struct psample_hit *hit, void *dst);

/* The records of data (a ring of size bytes, a power of two) from *tail up
 * to head, with the set's layout, to fn; *tail moves to head. src is what
 * the hits' stacks are to be copied from. Pure: for the unit tests. */
void psample__each(const uint8_t *data, uint64_t size, uint64_t *tail, uint64_t head,
                   const struct psample *src, psample_fn fn, void *ctx);

/* Copy len bytes at position pos of a ring of size bytes (a power of
 * two), wrapping at its end. */
void psample__ring_copy(const uint8_t *data, uint64_t size, uint64_t pos, void *dst, size_t len);

#endif
