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

/* Read a batch of stacks and record how much of each arrived. A stack
 * shorter than stack_bytes ends at the top of its mapping: the copy simply
 * stops there. */
static void flush(struct capture *c, pid_t pid, struct remote_req *reqs,
                  struct thread_capture **who, size_t n)
{
    remote__batch(pid, reqs, n);
    for (size_t k = 0; k < n; k++) {
        memimg__set_len(&c->img, reqs[k].addr, reqs[k].got);
        who[k]->stack_len = reqs[k].got;
        c->short_stacks += reqs[k].got < reqs[k].len;
    }
}

void capture__take(struct capture *c, struct tracee *t)
{
    struct remote_req reqs[64];
    struct thread_capture *who[64];
    size_t nreq = 0;

    c->n = 0;
    memimg__reset(&c->img);
    for (size_t i = 0; i < t->n && c->n < c->cap; i++) {
        struct tthread *th = &t->th[i];
        if (th->run != TT_HELD)
            continue;
        struct thread_capture *tc = &c->th[c->n++];
        tc->tid = th->tid;
        tc->state = th->state;
        tc->t_interrupt_ns = th->t_interrupt_ns;
        tc->stack_len = 0;
        tc->err = ptrace(PTRACE_GETREGS, th->tid, 0, &tc->regs) < 0 ? -errno : 0;
        if (tc->err)
            continue;
        uint8_t *buf = memimg__add(&c->img, tc->regs.rsp, c->stack_bytes);
        if (!buf)
            continue;
        if (nreq == sizeof reqs / sizeof reqs[0]) {
            flush(c, t->pid, reqs, who, nreq);
            nreq = 0;
        }
        who[nreq] = tc;
        reqs[nreq++] = (struct remote_req){tc->regs.rsp, buf, c->stack_bytes, 0};
    }
    flush(c, t->pid, reqs, who, nreq);
}
