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
    return capture__reserve(c, 16, 0, 0);
}

void capture__free(struct capture *c)
{
    free(c->th);
    memimg__free(&c->img);
    memset(c, 0, sizeof *c);
}

int capture__reserve(struct capture *c, size_t threads, size_t extra, size_t extra_regions)
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
    if (want > c->img.size || threads * (2 + 2 * TT_READ_AHEAD) + 64 + extra_regions > c->img.cap) {
        struct memimg img;
        size_t t2 = threads * 2;
        /* Regions per thread: its stack, what it reads ahead, what the
         * RTS reader then finds missing. */
        if (memimg__init(&img, t2 * c->stack_bytes + extra * 2,
                         t2 * (2 + 2 * TT_READ_AHEAD) + 256 + extra_regions) < 0)
            return -ENOMEM;
        memimg__free(&c->img);
        c->img = img;
    }
    return 0;
}

void capture__begin(struct capture *c)
{
    c->n = 0;
    c->pre.tid = 0;
    c->pre_floor = 0;
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
    tc->first_note = c->img.nnotes;
    /* (Its prefetch, if any, began its capture.) */
    if (c->pre_floor != th->tid)
        memimg__set_floor(&c->img, c->img.n);
    c->pre_floor = 0;
    tc->first_region = c->img.floor;
    return tc;
}

/* A range this long or longer is a live stack chunk, which grows down (and
 * so is one that held the thread's STG Sp): read it ahead from a little
 * lower, so that the frames pushed since the last capture still fall
 * inside it. */
#define AHEAD_SLACK 1024

/* Add a range to the batch unless the image has it already (a shared
 * Capability, or a guess the read-ahead covers). False when the image is
 * full. */
static bool add_range(struct capture *c, uint64_t a, size_t len, struct remote_req *req,
                      size_t *reg, size_t *n)
{
    if (memimg__ptr_own(&c->img, a, len))
        return true;
    uint8_t *p = memimg__add(&c->img, a, len);
    if (!p)
        return false;
    req[*n] = (struct remote_req){a, p, len, 0};
    reg[(*n)++] = c->img.n - 1;
    return true;
}

/* Bytes above the end of the C stack an unwind of th read to copy too: the
 * words about its outermost frame, or a C call's return into Haskell code
 * (whose rsp may be a few words off StgRun's, to align it for the call). */
#define STACK_END_SLACK 256

/* How much C stack to read for th from rsp up: th->stack_want, and at least
 * to the end its unwinds read from about there, when rsp is within the most
 * bytes a capture copies below it (on the same stack: not a signal's
 * alternate one). So a call deeper than the samples before it (a printf's
 * 8 KB buffer, a library's temporaries) is copied whole the first time it
 * is sampled, not read from the program after it ran on, as a want grown
 * from this sample's unwind would have it. Below where unwinds reached
 * Haskell code (th->hs_end), a C call from it: up to there. At that rsp,
 * Haskell code: what th->stack_want says (not StgRun's 16 KB of spare C
 * stack above it, nor the scheduler's frames). Above it, or in a thread
 * never seen in Haskell code: to the end of the stack its unwinds read
 * (th->stack_top), or before any did, to the end of its mapping. */
static size_t stack_want(const struct capture *c, const struct tthread *th, uint64_t rsp)
{
    size_t want = th->stack_want ? th->stack_want : c->stack_bytes;
    uint64_t end = th->stack_top ? th->stack_top + STACK_END_SLACK : th->stack_end;
    if (th->hs_end && rsp < th->hs_end)
        end = th->hs_end + STACK_END_SLACK;
    else if (th->hs_end && rsp - th->hs_end <= STACK_END_SLACK)
        end = 0;
    if (end > rsp && end - rsp <= c->stack_bytes && end - rsp > want)
        want = (size_t)(end - rsp);
    return want > c->stack_bytes ? c->stack_bytes : want;
}

/* Add the ranges th's last capture needed (th->ahead) to the batch, but
 * those the image has. False when the image is full. */
static bool add_ahead(struct capture *c, const struct tthread *th, struct remote_req *req,
                      size_t *reg, size_t *n)
{
    bool room = true;
    for (size_t k = 0; k < th->nahead && room; k++) {
        uint64_t a = th->ahead[k].addr;
        size_t len = th->ahead[k].len;
        if (memimg__ptr_own(&c->img, a, len))
            continue; /* captured already at this stop */
        uint64_t sp = th->last_rbp;
        bool grows = len >= 2 * AHEAD_SLACK || (sp >= a && sp - a < len);
        if (grows && a >= AHEAD_SLACK) {
            a -= AHEAD_SLACK;
            len += AHEAD_SLACK;
        }
        room = add_range(c, a, len, req, reg, n);
    }
    return room;
}

/* The C stack from rsp up, as deep as th->stack_want says, and with it, in
 * the same process_vm_readv, the ranges the thread's last capture needed
 * beyond it (th->ahead): a GHC thread's Task, Capability, TSO and stack
 * chunk are mostly where they were. Then the ranges `guess` (if any) makes
 * of the registers, last, where a short read costs no extra call: a GHC
 * thread may run another Haskell thread, on another stack chunk, than last
 * time. Whatever turns out different is read afterwards by whoever needs it
 * (rts__grab finds the rest in the image), so a wrong guess costs only
 * bytes, and a right one saves a system call per range while the thread is
 * stopped. With have_stack (a perf sample's, or capture__prefetch's), the
 * image has the C stack already: the batch then has only the ranges beyond
 * it (of which a prefetch has read th->ahead too). */
static void read_stack(struct capture *c, pid_t pid, const struct tthread *th,
                       struct thread_capture *tc, capture_guess_fn guess, void *ctx,
                       bool have_stack)
{
    struct remote_req req[2 + TT_READ_AHEAD + CAPTURE_GUESSES];
    size_t reg[2 + TT_READ_AHEAD + CAPTURE_GUESSES], n = 0;
    size_t want = stack_want(c, th, tc->regs.rsp);
    if (!have_stack) {
        uint8_t *buf = memimg__add(&c->img, tc->regs.rsp, want);
        if (!buf)
            return;
        req[n] = (struct remote_req){tc->regs.rsp, buf, want, 0};
        reg[n++] = c->img.n - 1;
    }
    size_t first = n;
    bool room = add_ahead(c, th, req, reg, &n);
    size_t ahead = n - first;
    struct memimg_note g[CAPTURE_GUESSES];
    size_t ng = guess && room ? guess(ctx, &tc->regs, g, CAPTURE_GUESSES) : 0;
    for (size_t k = 0; k < ng && room; k++)
        room = add_range(c, g[k].addr, g[k].len, req, reg, &n);
    /* The red zone below rsp: a function's epilogue pops a register its
     * unwind information still says is saved there (glibc's, the RTS's:
     * gcc writes no restore rule for a popped rbp), and a leaf may keep
     * data there. (Last: if it is not mapped, only it is lost.) */
    if (room && tc->regs.rsp >= CAPTURE_RED_ZONE)
        add_range(c, tc->regs.rsp - CAPTURE_RED_ZONE, CAPTURE_RED_ZONE, req, reg, &n);
    remote__batch(pid, req, n);
    for (size_t i = 0; i < n; i++)
        memimg__set_len_at(&c->img, reg[i], req[i].got);
    c->read_ahead += ahead;
    if (have_stack)
        return;
    /* A stack shorter than `want` ends at the top of its mapping. */
    tc->stack_len = req[0].got;
    tc->stack_short = req[0].got < want;
    c->short_stacks += tc->stack_short;
}

/* Is rsp within capture__prefetch's reach of a range it reads at near? */
static bool near_rsp(uint64_t rsp, uint64_t near)
{
    return rsp + CAPTURE_PRE_BELOW >= near && rsp <= near + CAPTURE_PRE_ABOVE;
}

void capture__prefetch(struct capture *c, pid_t pid, const struct tthread *th)
{
    struct remote_req req[CAPTURE_PRE_AT + TT_READ_AHEAD];
    size_t reg[CAPTURE_PRE_AT + TT_READ_AHEAD], n = 0;
    struct capture_prefetch *p = &c->pre;
    p->tid = 0;
    p->n = 0;
    if (c->pre_floor != th->tid) {
        memimg__set_floor(&c->img, c->img.n);
        c->pre_floor = th->tid;
    }
    bool room = add_ahead(c, th, req, reg, &n);
    c->read_ahead += n;
    size_t first = n;
    /* The lower first: a range that comes back short (the stack's top)
     * ends the system call there, and one after it takes another. */
    uint64_t last = th->last_rsp, other = th->other_rsp;
    if (near_rsp(other, last))
        other = 0;
    uint64_t near[CAPTURE_PRE_AT] = {other < last ? other : last, other < last ? last : other};
    for (size_t k = 0; k < CAPTURE_PRE_AT && room; k++) {
        if (near[k] < CAPTURE_PRE_BELOW)
            continue;
        uint64_t a = near[k] - CAPTURE_PRE_BELOW;
        /* (as deep as a read at near[k] would be, and so at any rsp below
         * it: below where unwinds reached Haskell code, what is copied ends
         * there whatever the rsp) */
        size_t len = CAPTURE_PRE_BELOW + CAPTURE_PRE_ABOVE + stack_want(c, th, near[k]);
        uint8_t *buf = memimg__add(&c->img, a, len);
        if (!buf)
            break;
        req[n] = (struct remote_req){a, buf, len, 0};
        reg[n++] = c->img.n - 1;
        p->at[p->n].addr = a;
        p->at[p->n].len = len;
        p->at[p->n].reg = c->img.n - 1;
        p->n++;
    }
    remote__batch(pid, req, n);
    for (size_t i = 0; i < n; i++)
        memimg__set_len_at(&c->img, reg[i], req[i].got);
    for (size_t k = 0; k < p->n; k++)
        p->at[k].got = req[first + k].got;
    p->tid = p->n ? th->tid : 0;
}

/* Does a stack capture__prefetch read (c->pre) hold tc's, from its rsp up,
 * as deep as a read at rsp would have given? Then it is tc's C stack, and
 * the others are dropped; else all are. */
static bool use_prefetch(struct capture *c, const struct tthread *th, struct thread_capture *tc)
{
    struct capture_prefetch *p = &c->pre;
    if (p->tid != th->tid) {
        p->tid = 0;
        return false;
    }
    p->tid = 0;
    uint64_t rsp = tc->regs.rsp;
    size_t want = stack_want(c, th, rsp);
    size_t use = CAPTURE_PRE_AT, have = 0;
    for (size_t k = 0; k < p->n && !tc->err && use == CAPTURE_PRE_AT; k++) {
        /* (A read that came back short ends at the top of the stack's
         * mapping: one at rsp would end there too.) */
        if (rsp < p->at[k].addr || rsp - p->at[k].addr >= p->at[k].got)
            continue;
        have = p->at[k].got - (size_t)(rsp - p->at[k].addr);
        if (have >= want || p->at[k].got < p->at[k].len)
            use = k;
    }
    for (size_t k = p->n; k-- > 0;)
        if (k != use)
            memimg__set_len_at(&c->img, p->at[k].reg, 0); /* (the image's space too, if last) */
    if (use == CAPTURE_PRE_AT) {
        c->pre_missed += !tc->err;
        return false;
    }
    tc->stack_len = have < want ? have : want;
    tc->stack_short = have < want;
    c->short_stacks += tc->stack_short;
    c->pre_used++;
    return true;
}

void capture__remember(struct capture *c, struct tthread *th, const struct thread_capture *tc)
{
    if (!tc->err) {
        if (th->last_rsp && !near_rsp(tc->regs.rsp, th->last_rsp))
            th->other_rsp = th->last_rsp;
        th->last_rsp = tc->regs.rsp;
        th->last_rbp = tc->regs.rbp;
    }
    th->last_pc = tc->err ? 0 : tc->regs.rip;
    th->nahead = 0;
    for (size_t i = tc->first_note; i < c->img.nnotes && th->nahead < TT_READ_AHEAD; i++) {
        const struct memimg_note *nt = &c->img.notes[i];
        th->ahead[th->nahead].addr = nt->addr;
        th->ahead[th->nahead].len = nt->len;
        th->nahead++;
    }
    /* Kept now: the image's room for notes is the next capture's. (Room
     * for a few threads' notes, not a tick's: with 200 threads read in a
     * tick, all but the first 36 found theirs dropped, and read the
     * runtime's words in a system call each, seven for one.) */
    c->img.nnotes = tc->first_note;
}

void capture__thread(struct capture *c, pid_t pid, const struct tthread *th,
                     const struct user_regs_struct *regs, capture_guess_fn guess, void *ctx)
{
    struct thread_capture *tc = start(c, th);
    if (!tc) {
        c->pre.tid = 0;
        return;
    }
    if (regs)
        tc->regs = *regs;
    else
        tc->err = ptrace(PTRACE_GETREGS, th->tid, 0, &tc->regs) < 0 ? -errno : 0;
    bool have = use_prefetch(c, th, tc);
    if (!tc->err)
        read_stack(c, pid, th, tc, guess, ctx, have);
}

struct thread_capture *capture__soft(struct capture *c, pid_t pid, const struct tthread *th)
{
    struct thread_capture *tc = start(c, th);
    if (!tc)
        return NULL;
    tc->soft = true;
    tc->where = th->soft_where;
    if (th->soft_full)
        tc->regs = th->hit.regs;
    tc->partial = !th->soft_full;
    tc->regs.rip = th->soft_pc;
    tc->regs.rsp = th->soft_sp;
    tc->regs.fs_base = th->fs_base;
    read_stack(c, pid, th, tc, NULL, NULL, false);
    tc->t_resume_ns = tc->t_stop_ns;
    return tc;
}

struct thread_capture *capture__sampled(struct capture *c, pid_t pid, const struct tthread *th,
                                        const struct psample_hit *hit,
                                        capture_guess_fn guess, void *ctx)
{
    struct thread_capture *tc = start(c, th);
    if (!tc)
        return NULL;
    tc->sampled = true;
    tc->regs = hit->regs;
    tc->regs.fs_base = th->fs_base;
    tc->t_stop_ns = tc->t_resume_ns = hit->t_ns;
    if (hit->stack_len) {
        uint8_t *buf = memimg__add(&c->img, hit->regs.rsp, hit->stack_len);
        if (!buf)
            return tc; /* the image is full: a partial capture, as a stop's */
        psample__copy_stack(hit, buf);
        tc->stack_len = hit->stack_len;
    }
    read_stack(c, pid, th, tc, guess, ctx, true);
    return tc;
}

struct thread_capture *capture__switched(struct capture *c, pid_t pid, const struct tthread *th,
                                         capture_guess_fn guess, void *ctx)
{
    struct thread_capture *tc = start(c, th);
    if (!tc)
        return NULL;
    tc->switched = true;
    tc->waiting = !th->preempted_by_tracer;
    tc->regs = th->hit.regs;
    tc->regs.fs_base = th->fs_base;
    read_stack(c, pid, th, tc, guess, ctx, false);
    tc->t_resume_ns = tc->t_stop_ns;
    return tc;
}

void capture__drop_last(struct capture *c, struct memimg_mark mark)
{
    if (c->n > 0)
        c->n--;
    memimg__rewind(&c->img, mark);
}
