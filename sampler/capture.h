/* capture.h - the raw facts of one sample, taken while the threads are
 * stopped: registers, /proc state, and the bytes of each C stack from its
 * stack pointer up, all in one memory image. Nothing is interpreted here.
 */
#ifndef HSSPY_CAPTURE_H
#define HSSPY_CAPTURE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "sampler/memimg.h"
#include "sampler/tracee.h"

struct thread_capture {
    pid_t tid;
    char state;  /* /proc state letter, read before the thread was stopped */
    int err;     /* 0, or -errno if its registers could not be read */
    struct user_regs_struct regs;
    uint64_t stack_len; /* bytes of C stack captured at regs.rsp */
    bool stack_short;   /* ... fewer than asked: they end at the top of the
                         * stack's mapping */
    uint64_t t_interrupt_ns;
    bool soft;            /* not stopped: see capture__soft */
    bool partial;         /* ... its registers rip, rsp and fs_base only (those
                           * /proc gives), not all (tthread.soft_full) */
    uint64_t where;       /* ... blocked there (tthread.soft_where) */
    bool sampled;         /* not stopped: from a perf sample (capture__sampled) */
    bool switched;        /* not stopped: preempted, from the sample of that
                           * switch (capture__switched) */
    bool waiting;         /* ... by another thread than hsspy's: waiting for
                           * a CPU, not on one when the tick came */
    uint32_t weight;      /* ticks this capture stands for (see tthread.owed) */
    size_t first_note;    /* its first note in the image (memimg__note) */
    size_t first_region;  /* its first region in the image (its prefetch's
                           * included): a walk of an earlier thread sees none
                           * from here on */
    uint64_t t_stop_ns;   /* when its stop was seen (waitpid returned it), or
                           * began (stop_switched) */
    bool stop_switched;   /* ... when it left its CPU (tracee__stop_began) */
    uint64_t t_resume_ns; /* when it was let go again */
    uint32_t reads;       /* process_vm_readv calls made while it was stopped */
    uint32_t reads_waiting; /* ... of them while its registers were awaited */
};

/* What capture__prefetch read of a stopped thread before its registers
 * were known: the ranges of th->ahead, then its C stack about where it was
 * at its last captures (one range each). */
#define CAPTURE_PRE_AT 2
/* The x86-64 ABI's red zone: bytes below rsp a function may use, read
 * with a stopped thread's stack. */
#define CAPTURE_RED_ZONE 128
struct capture_prefetch {
    pid_t tid; /* 0: nothing prefetched */
    size_t n;
    struct {
        uint64_t addr;
        size_t len, got; /* asked, and arrived */
        size_t reg;      /* its region in the image */
    } at[CAPTURE_PRE_AT];
};

struct capture {
    uint64_t t_ns; /* monotonic time of the stop */
    struct thread_capture *th;
    size_t n, cap;
    size_t stack_bytes; /* most C stack bytes to copy per thread (each
                         * thread's tthread.stack_want, up to this) */
    struct memimg img;
    size_t img_threads; /* threads the image has room for */
    unsigned long short_stacks; /* stack copies that ended early (top of stack) */
    unsigned long read_ahead;   /* ranges read ahead with the stacks */
    struct capture_prefetch pre;
    pid_t pre_floor; /* the thread capture__prefetch began a capture of */
    unsigned long pre_used;   /* stops whose C stack the prefetch had */
    unsigned long pre_missed; /* ... that read it again (the thread elsewhere) */
};

int capture__init(struct capture *c, size_t stack_bytes);
void capture__free(struct capture *c);

/* Make room for `threads` threads plus `extra` bytes in `extra_regions`
 * ranges of other captures (a dump's Haskell threads), so that the
 * stopped phase never allocates. Call before interrupting. */
int capture__reserve(struct capture *c, size_t threads, size_t extra, size_t extra_regions);

/* Start a new sample (forget the previous one's threads and memory). */
void capture__begin(struct capture *c);

/* Ranges worth reading with a stopped thread's stack, guessed from its
 * registers (a GHC thread's STG stack chunk, from SpLim): up to max of them
 * into out; returns how many. */
typedef size_t (*capture_guess_fn)(void *ctx, const struct user_regs_struct *regs,
                                   struct memimg_note *out, size_t max);
#define CAPTURE_GUESSES 2

/* Capture one stopped thread: registers (regs if known, else
 * PTRACE_GETREGS) and its C stack from rsp up, as deep as th->stack_want
 * says, with the ranges its last capture needed beyond it (th->ahead) and
 * those guess (may be NULL) makes of its registers: one process_vm_readv. */
void capture__thread(struct capture *c, pid_t pid, const struct tthread *th,
                     const struct user_regs_struct *regs,
                     capture_guess_fn guess, void *ctx);

/* While a stopped thread's registers are still awaited (the sample of its
 * switch off its CPU: tracee__stop_regs), read what its capture will need
 * whatever they are, in one process_vm_readv: the ranges of th->ahead, and
 * its C stack about where it was at its last captures (th->last_rsp and
 * th->other_rsp), from CAPTURE_PRE_BELOW bytes below to CAPTURE_PRE_ABOVE
 * above as deep as th->stack_want says. capture__thread, which must come
 * next for the same thread, keeps the one that holds the registers' rsp with
 * as much above it as a read at rsp would give, and drops the others (and
 * reads the stack at rsp as usual if none does). Nothing for a thread
 * never captured. */
#define CAPTURE_PRE_BELOW 4096
#define CAPTURE_PRE_ABOVE 1024
void capture__prefetch(struct capture *c, pid_t pid, const struct tthread *th);

/* After the rest of a thread's capture (the RTS reader's, which notes the
 * ranges it needs in the image): keep those ranges in th->ahead for its
 * next capture. */
void capture__remember(struct capture *c, struct tthread *th, const struct thread_capture *tc);

/* Capture a thread blocked in the kernel without stopping it (th->soft):
 * only pc and sp (from /proc) and its thread pointer (if ever seen) are
 * known; its user stack does not move while it is blocked. Returns the
 * capture, or NULL when there is no room. */
struct thread_capture *capture__soft(struct capture *c, pid_t pid, const struct tthread *th);

/* Capture a running thread without stopping it, from its newest perf
 * sample (--nonblocking): the sample's registers (with the thread pointer
 * seen in an earlier stop) and C stack, then, read while it runs on, what
 * its last capture needed beyond (th->ahead) and what guess makes of the
 * registers: one process_vm_readv. The capture's time is the sample's.
 * Returns the capture, or NULL when there is no room. */
struct thread_capture *capture__sampled(struct capture *c, pid_t pid, const struct tthread *th,
                                        const struct psample_hit *hit,
                                        capture_guess_fn guess, void *ctx);

/* Capture a thread waiting for a CPU since it was preempted (th->preempt)
 * without stopping it: the registers of the sample of that switch
 * (th->hit, with the thread pointer seen in an earlier stop), then its C
 * stack and the ranges as for a stop (capture__thread), read while it
 * does not move. Returns the capture, or NULL when there is no room. */
struct thread_capture *capture__switched(struct capture *c, pid_t pid, const struct tthread *th,
                                         capture_guess_fn guess, void *ctx);

/* Forget the last thread's capture, and the memory it added since mark. */
void capture__drop_last(struct capture *c, struct memimg_mark mark);

#endif
