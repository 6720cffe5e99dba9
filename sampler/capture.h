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
    uint64_t t_interrupt_ns;
    bool soft;            /* not stopped: see capture__soft */
    uint64_t where;       /* ... blocked there (tthread.soft_where) */
    bool sampled;         /* not stopped: from a perf sample (capture__sampled) */
    bool switched;        /* not stopped: preempted, from the sample of that
                           * switch (capture__switched) */
    uint32_t weight;      /* ticks this capture stands for (see tthread.owed) */
    size_t first_note;    /* its first note in the image (memimg__note) */
    uint64_t t_stop_ns;   /* when its stop was seen (waitpid returned it), or
                           * began (stop_switched) */
    bool stop_switched;   /* ... when it left its CPU (tracee__stop_began) */
    uint64_t t_resume_ns; /* when it was let go again */
    uint32_t reads;       /* process_vm_readv calls made while it was stopped */
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
};

int capture__init(struct capture *c, size_t stack_bytes);
void capture__free(struct capture *c);

/* Make room for `threads` threads plus `extra` bytes of other captures, so
 * that the stopped phase never allocates. Call before interrupting. */
int capture__reserve(struct capture *c, size_t threads, size_t extra);

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
