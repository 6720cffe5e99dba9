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
};

struct capture {
    uint64_t t_ns; /* monotonic time of the stop */
    struct thread_capture *th;
    size_t n, cap;
    size_t stack_bytes; /* C stack bytes to copy per thread */
    struct memimg img;
    size_t img_threads; /* threads the image has room for */
    unsigned long short_stacks; /* stack copies that ended early (top of stack) */
};

int capture__init(struct capture *c, size_t stack_bytes);
void capture__free(struct capture *c);

/* Make room for `threads` threads plus `extra` bytes of other captures, so
 * that the stopped phase never allocates. Call before interrupting. */
int capture__reserve(struct capture *c, size_t threads, size_t extra);

/* Capture every held thread of t: registers (one PTRACE_GETREGS each) and
 * all C stacks in one batched process_vm_readv. */
void capture__take(struct capture *c, struct tracee *t);

#endif
