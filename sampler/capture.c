/* capture.c - registers and stack bytes of the stopped threads. */
#include "sampler/capture.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "sampler/remote.h"

int capture__init(struct capture *c, size_t stack_bytes)
{
    memset(c, 0, sizeof *c);
    c->stack_bytes = stack_bytes;
    return capture__reserve(c, 16, 0);
}

void capture__free(struct capture *c)
{
    free(c->th);
    memimg__free(&c->img);
    memset(c, 0, sizeof *c);
}

int capture__reserve(struct capture *c, size_t threads, size_t extra)
{
    if (threads > c->cap) {
        size_t nc = threads * 2;
        struct thread_capture *nt = realloc(c->th, nc * sizeof *nt);
        if (!nt)
            return -ENOMEM;
        c->th = nt;
        c->cap = nc;
    }
    size_t want = threads * c->stack_bytes + extra;
    if (want > c->img.size || threads * 4 + 64 > c->img.cap) {
        struct memimg img;
        size_t t2 = threads * 2;
        if (memimg__init(&img, t2 * c->stack_bytes + extra * 2, t2 * 4 + 256) < 0)
            return -ENOMEM;
        memimg__free(&c->img);
        c->img = img;
    }
    return 0;
}

void capture__begin(struct capture *c)
{
    c->n = 0;
    memimg__reset(&c->img);
}

static struct thread_capture *start(struct capture *c, const struct tthread *th)
{
    if (c->n == c->cap)
        return NULL; /* capture__reserve sized us for every live thread */
    struct thread_capture *tc = &c->th[c->n++];
    memset(tc, 0, sizeof *tc);
    tc->tid = th->tid;
    tc->state = th->state;
    tc->t_interrupt_ns = th->t_interrupt_ns;
    tc->t_stop_ns = tracee__now_ns();
    tc->weight = 1 + th->owed;
    return tc;
}

static void read_stack(struct capture *c, pid_t pid, const struct tthread *th,
                       struct thread_capture *tc)
{
    size_t want = th->stack_want ? th->stack_want : c->stack_bytes;
    if (want > c->stack_bytes)
        want = c->stack_bytes;
    uint8_t *buf = memimg__add(&c->img, tc->regs.rsp, want);
    if (!buf)
        return;
    struct remote_req req = {tc->regs.rsp, buf, want, 0};
    remote__batch(pid, &req, 1);
    /* A stack shorter than `want` ends at the top of its mapping. */
    memimg__set_len(&c->img, req.addr, req.got);
    tc->stack_len = req.got;
    c->short_stacks += req.got < want;
}

void capture__thread(struct capture *c, pid_t pid, const struct tthread *th)
{
    struct thread_capture *tc = start(c, th);
    if (!tc)
        return;
    tc->err = ptrace(PTRACE_GETREGS, th->tid, 0, &tc->regs) < 0 ? -errno : 0;
    if (!tc->err)
        read_stack(c, pid, th, tc);
}

void capture__soft(struct capture *c, pid_t pid, const struct tthread *th)
{
    struct thread_capture *tc = start(c, th);
    if (!tc)
        return;
    tc->soft = true;
    tc->regs.rip = th->soft_pc;
    tc->regs.rsp = th->soft_sp;
    tc->regs.fs_base = th->fs_base;
    read_stack(c, pid, th, tc);
    tc->t_resume_ns = tc->t_stop_ns;
}
