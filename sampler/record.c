/* record.c - the recording loop.
 *
 * Each tick: interrupt every thread, capture registers and stack bytes,
 * resume (the target is stopped only for this part), then unwind and walk the
 * captures into raw stacks while the target runs. At the end: detach, name
 * the frames, write the chosen format. A live view (hsspy top) instead has
 * the frames new since its last look named and the samples handed to it
 * about once a second, between ticks, and is polled for input meanwhile.
 */
#define _GNU_SOURCE
#include "sampler/record.h"

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "out/profile.h"
#include "out/raw.h"
#include "out/text.h"
#include "out/writer.h"
#include "sampler/capfile.h"
#include "sampler/capture.h"
#include "sampler/children.h"
#include "sampler/launch.h"
#include "sampler/log.h"
#include "sampler/output.h"
#include "sampler/perfring.h"
#include "sampler/proc.h"
#include "sampler/remote.h"
#include "sampler/tracee.h"
#include "haskell-stack/green.h"
#include "haskell-stack/hs_sample.h"
#include "haskell-stack/rts.h"
#include "symbolizer/modset.h"
#include "symbolizer/unwind.h"

/* A sample, to repeat. */
struct last_sample {
    bool valid;
    uint32_t stack;
    uint8_t tag;
    uint8_t role;
    int16_t cap;
    uint8_t flags; /* SAMPLE_BOUND: what of its flags a repeat keeps */
};

/* What is kept of a thread's samples: its last, to repeat while the
 * thread has not run since (it is not even stopped then); and the places
 * where, blocked in a call, its samples taken without a stop found it idle
 * (a hash of its /proc syscall line: the call, its six arguments, its
 * stack pointer and pc), each with its sample, newest last. Blocked in one
 * of them again, a GHC program's thread is idle there again (idle_again):
 * the runtime's threads wait for work or events in a few places, each of
 * its own (a worker on its own condition variable, whose futex alternates
 * between two words), while a thread in a foreign call or in the
 * collector is not idle, and is read in full wherever it blocks. (Two
 * callers at the same depth could reach one wait alike, to the
 * arguments: the stack shown with --idle is then the one seen first.) */
#define IDLE_PLACES 4

/* A dump's Haskell threads, at most; and how many times it looks, when
 * it finds the runtime in the middle of a garbage collection (or a list
 * of them in the middle of a change). */
#define DUMP_TSOS 20000
#define DUMP_TRIES 20

struct kept {
    struct last_sample last;
    uint8_t nidle;
    uint64_t idle_where[IDLE_PLACES];
    struct last_sample idle[IDLE_PLACES];
};

struct recorder {
    const struct record_opts *o;
    struct tracee t;
    struct capture cap;
    struct modset ms;
    struct unwinder uw;
    struct rts rts;
    struct ccs_walk ccs; /* --stack ccs */
    struct profile p;
    struct raw_frame frames[MAX_FRAMES];
    struct kept *kept; /* per profile thread */
    size_t nkept;
    uint64_t t0_ns;
    uint64_t cpu0_ns; /* hsspy's CPU time as the loop began */
    uint64_t handler_entries; /* see before_handler */
    /* The sampling loop runs ahead of other programs (--realtime, or a
     * nice value below the one hsspy was started at): no more than half a
     * CPU, then (loop). */
    bool capped;
    bool progress; /* show progress on stderr (a terminal, output to a file) */
    unsigned saved; /* captures written by --save-captures */
    /* --nonblocking: the per-CPU sampling events (psample.h), and the
     * ticks until their instants take a new phase. */
    struct psample_set pss;
    unsigned rephase_in;
    /* Without --nonblocking: per-CPU events that only record context
     * switches, where allowed (root, CAP_PERFMON, perf_event_paranoid <=
     * 0); else a ring per thread. */
    struct psample_set sws;
    uint64_t tp_looked_ns; /* when learn_thread_pointers last read the Tasks */
    bool stopped; /* by a signal, or by the live view */
    int stop_sig; /* ... that signal (0: none, or the view) */
    /* --stack ccs on a launched command not (yet) GHC's, which may be a
     * launcher (env, nice, a script): when it must have exec'd one by
     * (CLOCK_MONOTONIC), else it is refused (ccs_refused). */
    uint64_t exec_by_ns;
    bool ccs_refused;
    /* The target's child processes, which are not sampled: their CPU time
     * against its own (record and top; a dump only names them). The
     * target's tids for their looks. */
    bool watch_children;
    bool kids_at_exit; /* (looked at as the main thread exits) */
    struct children kids;
    pid_t *kid_tids;
    size_t kid_cap;
};

/* xorshift: jitter needs no quality, only independence from the target. */
static uint64_t rng_state;
static double jitter(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / (double)(1ull << 53); /* [0,1) */
}

/* --nonblocking: every 8 to 23 ticks, the per-CPU sampling instants take
 * a new phase, and a period within 10% of the mean tick: no workload can
 * keep meeting them at the same point of its cycle (psample.h). Each time
 * costs a system call per CPU, which interrupts that CPU. */
static void rephase(struct recorder *r)
{
    if (r->rephase_in-- > 0)
        return;
    psample_set__rephase(&r->pss, (uint64_t)((0.9 + 0.2 * jitter()) * 1e9 / r->o->rate_hz));
    r->rephase_in = 8 + (unsigned)(16 * jitter());
}

/* --nonblocking refused: what to do about it, in one line. */
static void log_nonblocking_refused(int err)
{
    char paranoid[16] = "?";
    if (proc__read("/proc/sys/kernel/perf_event_paranoid", paranoid, sizeof paranoid) <= 0)
        snprintf(paranoid, sizeof paranoid, "?");
    paranoid[strcspn(paranoid, "\n")] = 0;
    if (err == -PERFRING_ELOCKED)
        log__error("--nonblocking: the perf events' rings need locked memory, and this user's "
                   "is used up (perf_event_mlock_kb, ulimit -l): raise it, run as root, or "
                   "leave --nonblocking out to stop threads instead");
    else if (err == -EACCES || err == -EPERM)
        log__error("--nonblocking samples every CPU by perf events, which needs root, "
                   "CAP_PERFMON or perf_event_paranoid <= 0 (it is %s here): run as root, "
                   "or leave --nonblocking out to stop threads instead", paranoid);
    else
        log__error("--nonblocking: perf events cannot sample every CPU here (%s): "
                   "leave --nonblocking out to stop threads instead", strerror(-err));
}

/* The profile's thread for a traced thread (th, if still known, keeps it
 * so that per-sample lookups need no search). */
static int thread_index(struct recorder *r, struct tthread *th, pid_t tid)
{
    if (th && th->user_index) {
        int ti = (int)th->user_index - 1;
        /* A thread is often named by its creator just after it starts
         * (pthread_setname_np after pthread_create: "chains-worker"), and
         * may be sampled before: its name is read again at its 2nd, 4th,
         * ... 64th look, while it is alive (finish_threads reads the names
         * of those still alive at the end). */
        uint32_t k = ++th->name_looks;
        if (k <= 64 && (k & (k - 1)) == 0) {
            char comm[16];
            proc__comm(r->t.pid, tid, comm, sizeof comm);
            if (strcmp(comm, "?") != 0)
                memcpy(r->p.threads[ti].comm, comm, sizeof comm);
        }
        return ti;
    }
    int ti = -1;
    for (size_t i = r->p.nthreads; i-- > 0 && ti < 0;)
        if (r->p.threads[i].tid == tid)
            ti = (int)i;
    if (ti < 0) {
        char comm[16];
        proc__comm(r->t.pid, tid, comm, sizeof comm);
        ti = profile__thread(&r->p, tid, comm);
    }
    if (th && ti >= 0)
        th->user_index = (uint32_t)ti + 1;
    return ti;
}

static struct kept *kept_of(struct recorder *r, int ti)
{
    if ((size_t)ti >= r->nkept) {
        size_t n = (size_t)ti * 2 + 16;
        struct kept *v = realloc(r->kept, n * sizeof *v);
        if (!v)
            return NULL;
        memset(v + r->nkept, 0, (n - r->nkept) * sizeof *v);
        r->kept = v;
        r->nkept = n;
    }
    return &r->kept[ti];
}

/* The sample kept of idle place `where`, or NULL. */
static const struct last_sample *idle_at(const struct kept *k, uint64_t where)
{
    for (size_t i = 0; i < k->nidle; i++)
        if (k->idle_where[i] == where)
            return &k->idle[i];
    return NULL;
}

/* Keep ls as the sample of idle place `where`, the newest; the oldest
 * place goes when full. */
static void keep_idle(struct kept *k, uint64_t where, struct last_sample ls)
{
    size_t i = 0;
    while (i < k->nidle && k->idle_where[i] != where)
        i++;
    if (i == IDLE_PLACES)
        i = 0; /* full: the oldest goes */
    else if (i == k->nidle)
        k->nidle++;
    size_t after = k->nidle - 1 - i;
    memmove(k->idle_where + i, k->idle_where + i + 1, after * sizeof *k->idle_where);
    memmove(k->idle + i, k->idle + i + 1, after * sizeof *k->idle);
    k->idle_where[k->nidle - 1] = where;
    k->idle[k->nidle - 1] = ls;
}

static bool idle_state(char state) { return state == 'S' || state == 'D'; }

/* How much C stack to copy next time, of a stack pointer no unwind has
 * read the stack above (see the capture's stack_want, which copies to
 * where unwinds ended, next_stack_top and tthread.hs_end): a few KB; twice
 * as much as we had, or what this unwind read with room to spare, if it
 * had to read beyond the copy. */
static uint32_t next_stack_want(const struct unwind_result *ur, uint64_t had, size_t max)
{
    uint64_t want = 4096;
    if (ur->live_reads) {
        want = ur->stack_used + ur->stack_used / 2 + 1024;
        if (want < had * 2)
            want = had * 2;
    }
    if (want > max)
        want = max;
    return (uint32_t)((want + 511) & ~(uint64_t)511);
}

/* Where a thread's C stack ends, by this unwind (rsp: the capture's), as far
 * as any unwind of it on the same stack read (before): one that read less
 * (a sample in Haskell code reads none of it, an error ends one early)
 * leaves the end found before. A stack far from that one (more than max
 * bytes apart: a signal's alternate stack) has its own end. */
static uint64_t next_stack_top(const struct unwind_result *ur, uint64_t rsp, uint64_t before,
                               size_t max)
{
    uint64_t top = rsp + ur->stack_used;
    if (!ur->stack_used || (before > top && before - top <= max))
        return before;
    return top;
}

/* Turn one thread's capture into a sample. Runs after the target resumed. */
static void walk_thread(struct recorder *r, const struct thread_capture *tc)
{
    struct prof_sample s = {0};
    struct unwind_result ur;
    int n = 0;
    struct tthread *th = tracee__find(&r->t, tc->tid);
    int ti = thread_index(r, th, tc->tid);
    bool walked = false;
    bool clean = false; /* the runtime says idle, and the walk had no error */
    bool failed = false; /* the walk ended in an error */
    bool gc_wait = false; /* waiting for its capability, which a collection holds */
    /* (Errors are counted in samples: a capture that stands for ticks the
     * thread took to stop counts for each, as its sample does.) */
    uint32_t weight = tc->weight ? tc->weight : 1;

    if (ti < 0)
        return;
    s.t_ns = tc->t_stop_ns > r->t0_ns ? tc->t_stop_ns - r->t0_ns : 0;
    s.thread = (uint32_t)ti;
    s.state = tc->state;
    if (tc->waiting && tc->state == 'R')
        s.flags |= SAMPLE_WAITING; /* (preempted, not on a CPU since) */
    s.cap = -1;
    s.tag = TAG_NONE;

    if (tc->err) {
        r->frames[n++] = (struct raw_frame){WE_NO_REGS, FK_INVALID, 0};
        r->p.errors[WE_NO_REGS] += weight;
        if (idle_state(tc->state))
            s.flags |= SAMPLE_IDLE;
    } else if (r->rts.usable) {
        /* A GHC program: the RTS state decides the tag, and the tag (not
         * the /proc state) decides what is idle. */
        struct hs_sample hs;
        hs_sample__build(&r->rts, &r->uw, tc, r->p.threads[ti].comm, &r->cap.img, r->frames,
                         MAX_FRAMES, &hs);
        n = hs.n;
        ur = hs.ur;
        walked = true;
        if (hs.c_error)
            r->p.errors[WE_C_UNWIND] += weight;
        if (hs.err != WE_NONE)
            r->p.errors[hs.err] += weight;
        failed = hs.c_error || hs.err != WE_NONE;
        clean = !failed && !ur.missing_regs && hs.tag == TAG_IDLE;
        s.tag = (uint8_t)hs.tag;
        s.role = (uint8_t)hs.role;
        s.cap = (int16_t)hs.cap;
        if (hs.cap_collected)
            s.flags |= SAMPLE_CAP_COLLECTED;
        if (hs.v.bound && r->rts.threaded)
            s.flags |= SAMPLE_BOUND; /* (in the other, my_task is the main thread's for all) */
        gc_wait = hs.v.gc_sync;
        r->p.threads[ti].tso = hs.v.tso;
        r->p.threads[ti].stack = hs.v.stack;
        r->p.threads[ti].stack_sp = hs.v.saved_sp;
        r->p.threads[ti].stack_end = hs.v.stack_end;
        if (!tc->soft)
            rts__saw_stack(&r->rts, &hs.v);
        if (hs.tag == TAG_IDLE || (hs.tag == TAG_NONE && idle_state(tc->state)))
            s.flags |= SAMPLE_IDLE;
    } else {
        if (idle_state(tc->state))
            s.flags |= SAMPLE_IDLE;
        if (!(s.flags & SAMPLE_IDLE) || r->o->idle) {
            unwind__stack(&r->uw, &tc->regs, tc->partial, &r->cap.img, r->frames, MAX_FRAMES,
                          &ur);
            n = ur.n;
            walked = true;
            if (ur.error)
                r->p.errors[WE_C_UNWIND] += weight;
            failed = ur.error;
            if (ur.reached_haskell && n < MAX_FRAMES)
                r->frames[n++] =
                    (struct raw_frame){ur.hs_pc, ur.hs_is_leaf ? FK_PC : FK_RET, 0};
        }
        if (r->rts.pending)
            s.tag = (uint8_t)hs_sample__before_runtime(&r->rts, r->frames, n, tc->state);
    }
    if (walked && th) {
        th->stack_want = next_stack_want(&ur, tc->stack_len, r->cap.stack_bytes);
        if (ur.reached_haskell) {
            uint64_t end = tc->regs.rsp + ur.stack_used;
            th->hs_end = end > ur.hs_rsp ? end : ur.hs_rsp;
        } else {
            th->stack_top = next_stack_top(&ur, tc->regs.rsp, th->stack_top, r->cap.stack_bytes);
        }
    }
    if (th && tc->stack_short)
        th->stack_end = tc->regs.rsp + tc->stack_len;
    if (walked && ur.live_reads)
        r->p.beyond_copy += weight;
    if (walked && th && tc->partial && ur.missing_regs) {
        /* Its frames there need registers only a stop gives. */
        tracee__soft_refuse(th, tc->regs.rip);
        r->p.soft_short++;
    }
    int64_t stack = profile__stack(&r->p, r->frames, n);
    if (stack < 0)
        return;
    s.stack = (uint32_t)stack;
    for (uint32_t w = 0; w < weight; w++)
        profile__add(&r->p, &s);
    struct kept *k = kept_of(r, ti);
    if (!k || !th)
        return;
    /* An idle sample taken without --idle and without a walk has no stack:
     * not worth repeating for a thread that wakes up busy. Nor is a walk
     * that failed: what it failed on may be gone by the next tick, when a
     * thread that has not run would repeat it (a thread asleep in a safe
     * call while a compacting collection moves its stack: its error, once
     * counted, then its [invalid] sample for as long as it slept). Nor is
     * one taken before the runtime could be read (its Task, its role: a C
     * main asleep then was the runtime starting up, for good). Left
     * unsettled, it is read again. */
    bool complete = !tc->err && !failed && (walked || (s.flags & SAMPLE_IDLE)) && !r->rts.pending;
    k->last = (struct last_sample){complete && walked, s.stack, s.tag,
                                   s.role, s.cap,     (uint8_t)(s.flags & SAMPLE_BOUND)};
    tracee__repeatable(th, k->last.valid);
    if (tc->soft && complete && walked && clean && (s.flags & SAMPLE_IDLE))
        keep_idle(k, tc->where, k->last);
    if (complete)
        tracee__settled(&r->t, th);
    /* Waiting for a collection: the next tick looks at it again, not
     * repeat this while it sleeps on, as it would where the collection
     * ended and it was not given its capability back. */
    if (gc_wait)
        tracee__unsettle(th);
}

/* A thread that has not run since its last sample is where it was: repeat
 * that sample (with its current /proc state) instead of stopping it. So
 * too, with --nonblocking, a thread with no new perf sample (stale); and a
 * thread idle again (idle_again), the sample of the place it is blocked
 * in, or in a program not GHC's an idle sample with no stack, as
 * walk_thread makes of a blocked thread's capture without --idle. */
static void repeat_thread(struct recorder *r, struct tthread *th)
{
    int ti = thread_index(r, th, th->tid);
    struct kept *k = ti < 0 ? NULL : kept_of(r, ti);
    const struct last_sample *ls = k ? &k->last : NULL;
    struct last_sample none = {0};
    if (k && th->idle_again && r->rts.ghc) {
        ls = idle_at(k, th->soft_where);
        if (ls)
            k->last = *ls; /* (what it repeats while it does not run) */
    } else if (k && th->idle_again) {
        int64_t empty = profile__stack(&r->p, r->frames, 0);
        none = (struct last_sample){empty >= 0, (uint32_t)empty, TAG_NONE, ROLE_NONE, -1, 0};
        ls = &none;
        k->last = (struct last_sample){0}; /* (as walk_thread keeps of such a sample) */
    }
    if (k && th->idle_again)
        tracee__repeatable(th, k->last.valid);
    if (!ls || !ls->valid)
        return;
    struct prof_sample s = {
        .t_ns = r->cap.t_ns > r->t0_ns ? r->cap.t_ns - r->t0_ns : 0,
        .thread = (uint32_t)ti,
        .stack = ls->stack,
        .tag = ls->tag,
        .role = ls->role,
        .state = th->state,
        .cap = ls->cap,
        .flags = ls->flags,
    };
    if (s.tag == TAG_IDLE || (s.tag == TAG_NONE && idle_state(th->state)))
        s.flags |= SAMPLE_IDLE;
    if (th->state == 'R')
        s.flags |= SAMPLE_WAITING; /* (runnable, and it did not run) */
    profile__add(&r->p, &s);
    if (th->stale)
        r->t.st.ps_stale++;
    else if (!th->idle_again)
        r->p.repeated++;
}

/* Is th, blocked in a call (soft), idle there, as far as where it is
 * blocked shows? In a GHC program, if it is blocked in one of its idle
 * places (struct kept). In another, a thread asleep in a call is idle, and
 * without --idle nothing looks at its stack: always then, and never with
 * --idle, which shows each stack as it is. Never in a dump either, nor
 * while saving captures (--save-captures: what is read is what is kept). */
static bool idle_again(struct recorder *r, struct tthread *th)
{
    if (r->o->snapshot || r->o->save_dir)
        return false;
    if (!r->rts.ghc)
        return !r->o->idle;
    int ti = thread_index(r, th, th->tid);
    const struct kept *k = ti < 0 ? NULL : kept_of(r, ti);
    const struct last_sample *ls = k ? idle_at(k, th->soft_where) : NULL;
    /* (A worker waiting for its capability waits where an idle one does,
     * for the same condition, whether it has nothing to do or a
     * collection holds its capability: it is read each time, see
     * rts_view.gc_sync.) */
    return ls && ls->valid && !(r->rts.threaded && ls->role == ROLE_IDLE_WORKER);
}

/* Called while one thread is stopped: capture it; the tracee resumes it
 * right after. The resume time is taken here, a syscall early. */
static void capture_rts(struct recorder *r, struct thread_capture *tc)
{
    if (!tc->err && r->rts.usable && tc->regs.fs_base)
        rts__capture_thread(&r->rts, r->t.pid, tc->tid, &tc->regs, &r->cap.img);
}

/* Called while one thread is stopped, with its registers: where its STG
 * stack chunk is, to read with its C stack. */
static size_t guess_stack(void *arg, const struct user_regs_struct *regs,
                          struct memimg_note *out, size_t max)
{
    const struct recorder *r = arg;
    return regs->fs_base ? rts__guess_stack(&r->rts, regs, out, max) : 0;
}

/* Called while a stopped thread's registers are awaited. */
static void prefetch(void *arg, struct tthread *th)
{
    struct recorder *r = arg;
    capture__prefetch(&r->cap, r->t.pid, th);
}

/* struct sigcontext's words (x86-64), and where it is in the signal frame
 * a handler starts with at rsp: the restorer's address (pretcode), then
 * the ucontext, whose uc_flags, uc_link and 24-byte uc_stack come first. */
enum { SC_R8, SC_R9, SC_R10, SC_R11, SC_R12, SC_R13, SC_R14, SC_R15, SC_RDI, SC_RSI, SC_RBP,
       SC_RBX, SC_RDX, SC_RAX, SC_RCX, SC_RSP, SC_RIP, SC_EFLAGS, SC__WORDS };
#define SIGFRAME_MCONTEXT 48

/* A thread every signal of which stops it (ptrace's signal-delivery-stop)
 * until hsspy passes the signal on: if a tick's interrupt follows closely,
 * the thread stops as it leaves the kernel, at its handler's first
 * instruction, the signal frame just built (its first word, on top of the
 * stack, the restorer, __restore_rt). A tick close after a signal is no
 * rare event: hsspy is woken by that stop, and its tick follows; a program
 * signalled every half millisecond had 13-18% of its samples in a handler
 * of a few instructions at 1 kHz, a non-threaded GHC 9.0 program a few
 * percent in the runtime's handle_tick (up to 36% for a -prof build on a
 * loaded machine), where perf shows none. The thread has not run an
 * instruction since the signal came: it is taken where the signal
 * interrupted it, from the registers the frame saved, if the stack copy
 * holds them and the stack there. */
static void before_handler(struct recorder *r, struct tthread *th, struct thread_capture *tc)
{
    int given = th->signalled;
    uint64_t top, sc[SC__WORDS];
    th->signalled = 0;
    /* The kernel enters a handler with the signal's number in rdi and the
     * frame's ucontext in rdx: that of the signal passed on, not of another
     * handler the thread is at the start of (one it returned to from the
     * signal's: gdb parks a thread at generic_handler's first instruction
     * in the tests, and the runtime's tick lands on it). */
    if (!given || tc->err || tc->regs.rdi != (unsigned long long)given ||
        tc->regs.rdx != tc->regs.rsp + 8 ||
        memimg__read_u64(&r->cap.img, tc->regs.rsp, &top) < 0 ||
        memimg__read(&r->cap.img, tc->regs.rsp + SIGFRAME_MCONTEXT, sc, sizeof sc) < 0 ||
        sc[SC_RSP] < tc->regs.rsp || !memimg__ptr(&r->cap.img, sc[SC_RSP], 8) ||
        !modset__is_sigreturn(&r->ms, top))
        return;
    struct user_regs_struct *g = &tc->regs;
    g->r8 = sc[SC_R8], g->r9 = sc[SC_R9], g->r10 = sc[SC_R10], g->r11 = sc[SC_R11];
    g->r12 = sc[SC_R12], g->r13 = sc[SC_R13], g->r14 = sc[SC_R14], g->r15 = sc[SC_R15];
    g->rdi = sc[SC_RDI], g->rsi = sc[SC_RSI], g->rbp = sc[SC_RBP], g->rbx = sc[SC_RBX];
    g->rdx = sc[SC_RDX], g->rax = sc[SC_RAX], g->rcx = sc[SC_RCX], g->rsp = sc[SC_RSP];
    g->rip = sc[SC_RIP], g->eflags = sc[SC_EFLAGS];
    /* (in no system call: so the registers returned to the tracee never
     * look like a call a stop broke, to be restarted with them) */
    g->orig_rax = (unsigned long long)-1;
    r->handler_entries++;
}

/* Called while one thread is stopped: capture it; the tracee resumes it
 * right after (also for a thread that stops after its tick was over: it was
 * waiting for a CPU, so its stack is still the one it had then). */
static const struct user_regs_struct *on_stop(void *arg, struct tthread *th)
{
    struct recorder *r = arg;
    unsigned long reads = remote__calls();
    struct user_regs_struct regs;
    bool known = tracee__stop_regs(&r->t, th, &regs, prefetch, r);
    unsigned long waiting = remote__calls() - reads;
    capture__thread(&r->cap, r->t.pid, th, known ? &regs : NULL, guess_stack, r);
    if (r->cap.n == 0 || r->cap.th[r->cap.n - 1].tid != th->tid)
        return NULL;
    struct thread_capture *tc = &r->cap.th[r->cap.n - 1];
    if (!tc->err)
        th->fs_base = tc->regs.fs_base; /* for samples taken without a stop */
    before_handler(r, th, tc);
    capture_rts(r, tc);
    capture__remember(&r->cap, th, tc);
    if (!tc->err)
        tracee__stopped_base(&r->t, th);
    /* (Its switch off its CPU is peeked by stopped_base.) */
    uint64_t began = tracee__stop_began(th, tc->t_stop_ns);
    tc->stop_switched = began != tc->t_stop_ns;
    tc->t_stop_ns = began;
    tc->reads = (uint32_t)(remote__calls() - reads);
    tc->reads_waiting = (uint32_t)waiting;
    tc->t_resume_ns = tracee__now_ns();
    return tc->err ? NULL : &tc->regs;
}

/* --save-captures: keep up to 200 raw captures as the walkers see them. */
static void save_capture(struct recorder *r, const struct thread_capture *tc)
{
    char path[4200], comm[16];
    if (!r->o->save_dir || r->saved >= 200 || tc->err)
        return;
    proc__comm(r->t.pid, tc->tid, comm, sizeof comm);
    snprintf(path, sizeof path, "%s/cap-%05u.bin", r->o->save_dir, r->saved);
    if (capfile__write(path, &r->ms, r->t.pid, tc->tid, comm, tc->state, tc->partial, &tc->regs,
                       &r->cap.img) == 0)
        r->saved++;
}

/* Turn every capture taken so far into samples, then start afresh; then
 * let the threads stopped on their way out go on: what a copy lacks is
 * read from the program as it is walked, and the program's memory is
 * there while they are held. */
static void walk_captures(struct recorder *r)
{
    for (size_t i = 0; i < r->cap.img.n; i++)
        r->p.copied_bytes += r->cap.img.reg[i].len;
    r->p.copied_threads += r->cap.n;
    for (size_t i = 0; i < r->cap.n; i++) {
        const struct thread_capture *tc = &r->cap.th[i];
        /* (What the captures after it read is of later moments.) */
        memimg__set_limit(&r->cap.img, i + 1 < r->cap.n ? r->cap.th[i + 1].first_region : SIZE_MAX);
        save_capture(r, tc);
        if (!tc->soft && !tc->sampled && !tc->switched) {
            r->p.stop_reads += tc->reads;
            r->p.stop_reads_waiting += tc->reads_waiting;
            hist__add(&r->p.pause, tc->t_resume_ns - tc->t_stop_ns);
            hist__add(&r->p.stop_latency, tc->t_stop_ns - tc->t_interrupt_ns);
            r->p.pause_switched += tc->stop_switched;
        }
        walk_thread(r, tc);
    }
    memimg__set_limit(&r->cap.img, SIZE_MAX);
    capture__begin(&r->cap);
    tracee__release_exits(&r->t);
}

/* The threads tracee__interrupt marked soft (blocked in a system call),
 * captured without a stop while the others are on their way to theirs. A
 * capture that does not hold is dropped and its thread stopped after all:
 * one that ran while it was read, or whose STG stack pointer is in a
 * register (an unsafe foreign call that blocks), which /proc does not give.
 * Not a thread in a call a stop would break: it keeps its capture as is.
 * One that ran while it was read but is asleep in a call again is read
 * again (tracee__soft_again), up to SOFT_TRIES times more, before it is
 * stopped, once all are read. Returns how many threads were interrupted
 * late. */
#define SOFT_TRIES 2
/* The threads interrupted before (tracee__send) stop meanwhile: those
 * that have are captured and resumed between two blocked threads, once
 * this long has passed since the last look for them (a look costs a call
 * per thread waited for; one read can take longer), not held stopped
 * until all are read (200 threads blocked in safe calls: 3 ms a tick). */
#define SOFT_TAKE_NS 20000u
static int capture_blocked(struct recorder *r)
{
    int late = 0;
    uint64_t took = tracee__now_ns();
    for (size_t i = 0; i < r->t.n; i++) {
        struct tthread *th = &r->t.th[i];
        if (!th->soft)
            continue;
        uint64_t now = tracee__now_ns();
        if (now - took >= SOFT_TAKE_NS) {
            r->t.st.stops_between += (unsigned long)tracee__take_stopped(&r->t);
            took = now;
            th = &r->t.th[i]; /* (a stop may have brought a new thread) */
        }
        if (idle_again(r, th)) {
            /* (Sampled in tick, from where it is blocked alone.) */
            th->idle_again = true;
            tracee__settled_soft(th);
            r->t.st.soft_samples++;
            r->t.st.soft_idle++;
            r->t.st.soft_breaking += th->soft_breaks;
            continue;
        }
        struct memimg_mark mark;
        struct thread_capture *tc;
        bool still = false;
        for (int tries = 0;; tries++) {
            mark = memimg__mark(&r->cap.img);
            if (!(tc = capture__soft(&r->cap, r->t.pid, th)))
                break;
            capture_rts(r, tc);
            still = tracee__soft_held_still(&r->t, th);
            if (still || th->soft_breaks || tries == SOFT_TRIES || !tracee__soft_again(&r->t, th))
                break;
            capture__drop_last(&r->cap, mark); /* (asleep in a call again: read again) */
        }
        if (!tc)
            continue;
        /* (What the runtime says is worth reading only from a copy that
         * holds.) */
        bool sp_reg = still && tc->partial && r->rts.usable &&
                      rts__sp_in_register(&r->rts, &tc->regs, &r->cap.img);
        if (!th->soft_breaks && (!still || sp_reg)) {
            if (sp_reg) /* an unsafe call that blocks: it will again, there */
                tracee__soft_refuse(th, th->soft_pc);
            capture__drop_last(&r->cap, mark);
            r->t.st.soft_refused++;
            if (r->t.pss && th->fs_base) {
                th->stale = true; /* --nonblocking: no stop */
                continue;
            }
            th->soft_late = true;
            continue;
        }
        capture__remember(&r->cap, th, tc);
        r->t.st.soft_samples++;
        r->t.st.soft_breaking += th->soft_breaks;
    }
    /* Those that did not hold, stopped now: a thread interrupted as soon
     * as it was found to have run stopped at once, and then waited
     * stopped while the rest were read (200 threads blocked in safe
     * calls: 1.2 ms, median). */
    for (size_t i = 0; i < r->t.n; i++) {
        struct tthread *th = &r->t.th[i];
        if (th->soft_late) {
            th->soft_late = false;
            late += tracee__interrupt_late(&r->t, th);
        }
    }
    return late;
}

/* The threads tracee__interrupt marked preempt (waiting for a CPU since a
 * switch whose sample has their registers), captured without a stop. A
 * capture that does not hold (the thread was given a CPU while it was
 * read) is dropped and its thread stopped after all. Returns how many
 * threads were interrupted late. */
static int capture_preempted(struct recorder *r)
{
    int late = 0;
    for (size_t i = 0; i < r->t.n; i++) {
        struct tthread *th = &r->t.th[i];
        if (!th->preempt)
            continue;
        struct memimg_mark mark = memimg__mark(&r->cap.img);
        struct thread_capture *tc = capture__switched(&r->cap, r->t.pid, th, guess_stack, r);
        if (!tc)
            continue;
        capture_rts(r, tc);
        if (!tracee__soft_held_still(&r->t, th)) {
            capture__drop_last(&r->cap, mark);
            r->t.st.preempt_refused++;
            late += tracee__interrupt_late(&r->t, th);
            continue;
        }
        capture__remember(&r->cap, th, tc);
        r->t.st.preempt_samples++;
    }
    return late;
}

/* --nonblocking: the threads with a perf sample since the last tick, each
 * from its newest, read while it runs on. */
static void capture_sampled(struct recorder *r)
{
    for (size_t i = 0; i < r->t.n; i++) {
        struct tthread *th = &r->t.th[i];
        if (!th->sampled)
            continue;
        struct thread_capture *tc =
            capture__sampled(&r->cap, r->t.pid, th, &th->hit, guess_stack, r);
        if (!tc) {
            th->stale = true;
            continue;
        }
        capture_rts(r, tc);
        capture__remember(&r->cap, th, tc);
        r->t.st.ps_samples++;
    }
}

/* A thread's thread pointer (fs_base) comes with the registers of a stop;
 * one never stopped (blocked since hsspy attached in a call a stop would
 * break: epoll_wait, semop, sigtimedwait) has none, and without it no Task
 * to read: a safe call blocked there would be its pc alone, tagged idle.
 * The runtime's Tasks tell it (rts__thread_pointers), read at most once a
 * second, and only while some thread lacks one. */
static void learn_thread_pointers(struct recorder *r, uint64_t now)
{
    struct rts_thread_pointer tp[256];
    bool lacking = false;
    for (size_t i = 0; i < r->t.n && !lacking; i++)
        lacking = r->t.th[i].run == TT_RUNNING && !r->t.th[i].fs_base;
    if (!lacking || !r->rts.usable || (r->tp_looked_ns && now - r->tp_looked_ns < 1000000000u))
        return;
    r->tp_looked_ns = now;
    size_t n = rts__thread_pointers(&r->rts, tp, sizeof tp / sizeof *tp);
    for (size_t k = 0; k < n; k++) {
        struct tthread *th = tracee__find(&r->t, tp[k].tid);
        if (th && th->run == TT_RUNNING && !th->fs_base)
            th->fs_base = tp[k].fs_base;
    }
}

/* A tick's stops at most awaited at once (tracee.send_cap): the first,
 * which stops every thread, would stop a thousand asleep together, and
 * each would wait stopped for the captures of those before it (3 to 45
 * ms). The others are interrupted as those stop, each captured and resumed
 * at once; a tick of only the running threads never has this many. */
#define SEND_CAP PROF_SEND_CAP

static void tick(struct recorder *r, int *sig, uint64_t collect_ns, uint64_t quiet_ns)
{
    /* Threads that stopped after the last tick was over. */
    walk_captures(r);
    if (r->rts.pending)
        rts__poll(&r->rts);
    size_t live = 0;
    for (size_t i = 0; i < r->t.n; i++)
        live += r->t.th[i].run != TT_GONE;
    /* Room for the Haskell side too: RTS structures, stack chunks and the
     * headers of their update frames' thunks. */
    if (capture__reserve(&r->cap, live + 1, r->rts.usable ? (live + 1) * 80 * 1024 : 0,
                         r->rts.usable ? (live + 1) * RTS_UPDATEE_CAPTURE : 0) < 0)
        return;

    uint64_t start = tracee__now_ns();
    r->cap.t_ns = start;
    /* Until the runtime's layout is validated, a GHC thread's registers
     * are all there is to go on. */
    r->t.sample_blocked = !r->rts.pending;
    learn_thread_pointers(r, start);
    tracee__look(&r->t, true);
    r->t.send_cap = SEND_CAP;
    int asked = capture_preempted(r);
    asked += tracee__send(&r->t);
    asked += capture_blocked(r);
    if (r->t.pss) {
        capture_sampled(r);
        psample_set__release(r->t.pss); /* (the stacks are copied) */
        rephase(r);
    }
    /* A thread that has not stopped by the deadline (waiting for a CPU, or
     * in an uninterruptible sleep) is captured whenever it does stop. */
    if (asked > 0)
        tracee__collect(&r->t, start + collect_ns, quiet_ns, sig);
    r->p.ticks++;
    walk_captures(r);
    for (size_t i = 0; i < r->t.n; i++) {
        struct tthread *th = &r->t.th[i];
        if ((th->unchanged || th->stale || th->idle_again) && th->run == TT_RUNNING)
            repeat_thread(r, th);
    }
}

/* The Haskell threads of a dump, captured while every OS thread was
 * stopped: what each is blocked on, and its STG stack. */
static void walk_green(struct recorder *r, const uint64_t *tsos, size_t n)
{
    r->p.green = calloc(n ? n : 1, sizeof *r->p.green);
    if (!r->p.green)
        return;
    for (size_t i = 0; i < n; i++) {
        struct green_thread g;
        int nf = green__read(&r->rts, &r->ms, &r->cap.img, tsos[i], &g, r->frames, MAX_FRAMES);
        int64_t st = profile__stack(&r->p, r->frames, nf);
        if (st < 0)
            break;
        struct prof_green *pg = &r->p.green[r->p.ngreen++];
        pg->id = g.id;
        pg->tso = tsos[i];
        snprintf(pg->status, sizeof pg->status, "%s",
                 green__status(&r->rts, g.why_blocked, g.what_next));
        if (g.why_blocked == (uint32_t)r->rts.L->why_blocked.BlockedOnMVar ||
            g.why_blocked == (uint32_t)r->rts.L->why_blocked.BlockedOnMVarRead)
            pg->blocked_on = g.block_info;
        pg->owner_id = g.owner_id;
        memcpy(pg->label, g.label, sizeof pg->label);
        text__clean(pg->label); /* labelThread's string, from the program's memory */
        pg->stack = (uint32_t)st;
    }
}

/* A dump: every thread stopped at once (for one consistent picture of the
 * runtime: its Haskell threads are read while no OS thread can change
 * them), captured, then all resumed; once the RTS, if any, has been
 * validated (a few quick looks, handling the target's events between). */
static void snapshot(struct recorder *r)
{
    int sig = 0;
    static uint64_t tsos[DUMP_TSOS];
    size_t ntsos = 0;
    enum green_short why = GREEN_WHOLE;

    for (int i = 0; i < 100 && r->rts.pending; i++) {
        rts__poll(&r->rts);
        if (r->rts.pending && tracee__wait(&r->t, tracee__now_ns() + 2000000u))
            return;
        tracee__release_exits(&r->t); /* (nothing captured yet) */
    }
    size_t live = 0;
    for (size_t i = 0; i < r->t.n; i++)
        live += r->t.th[i].run != TT_GONE;
    /* Room for every Haskell thread's stack too (a TSO, its chunk's
     * header and live part, a black hole's owner: about 4 ranges each; 6
     * for a chunk or two more; and its update frames' thunks' headers). */
    if (capture__reserve(&r->cap, live + 1,
                         r->rts.usable ? (live + 1) * 80 * 1024 + (64u << 20) : 0,
                         r->rts.usable ? (6 + RTS_UPDATEE_CAPTURE) * DUMP_TSOS : 0) < 0)
        return;
    tracee__on_stop(&r->t, NULL, NULL); /* hold each thread once stopped */
    /* (Every thread stopped, but for those in calls a stop would break;
     * those in a job-control stop too, put back in it after.) */
    r->t.sample_blocked = false;
    r->t.sample_stopped = true;
    for (unsigned attempt = 1;; attempt++) {
        capture__begin(&r->cap);
        r->cap.t_ns = tracee__now_ns();
        learn_thread_pointers(r, r->cap.t_ns);
        r->t.hold_born = true; /* (and each new thread, while the others are held) */
        r->t.send_cap = 0;     /* (all at once: one picture) */
        tracee__interrupt(&r->t, false);
        capture_blocked(r);
        tracee__collect(&r->t, tracee__now_ns() + 1000000000u, 1000000000u, &sig);
        for (size_t i = 0; i < r->t.n; i++)
            if (r->t.th[i].run == TT_HELD && !r->t.th[i].held_born)
                on_stop(r, &r->t.th[i]);
        if (r->rts.usable)
            ntsos = green__capture(&r->rts, r->t.pid, &r->cap.img, tsos, DUMP_TSOS, &why);
        tracee__resume_held(&r->t);
        r->t.hold_born = false;
        /* In the middle of a garbage collection the runtime's lists of its
         * threads are being rebuilt, and their stacks moved (or a list was
         * caught in the middle of a change): let it finish, and look
         * again. */
        if ((why != GREEN_IN_GC && why != GREEN_BROKEN) || sig || attempt == DUMP_TRIES)
            break;
        r->p.green_tries = attempt + 1;
        sig = tracee__wait(&r->t, tracee__now_ns() + 2000000u * attempt);
        tracee__release_exits(&r->t); /* (nothing walked yet: this capture goes) */
        if (sig || r->t.exited)
            break;
    }
    r->p.ticks++;
    if ((why == GREEN_IN_GC || why == GREEN_BROKEN) && r->p.green_tries > 1)
        snprintf(r->p.green_short, sizeof r->p.green_short, "%s, in each of %u looks",
                 green__short_str(why), r->p.green_tries);
    else
        snprintf(r->p.green_short, sizeof r->p.green_short, "%s", green__short_str(why));
    walk_green(r, tsos, ntsos); /* before walk_captures resets the image */
    walk_captures(r);
    /* A thread that never stopped (in an uninterruptible wait: a vfork's
     * parent, a disk read) is in the dump all the same: its state, and
     * why it has no stack. (It was left out, the thread section empty for
     * a one-thread program.) */
    for (size_t i = 0; i < r->t.n; i++) {
        struct tthread *th = &r->t.th[i];
        int ti = th->want && th->run != TT_GONE ? thread_index(r, th, th->tid) : -1;
        if (ti < 0)
            continue;
        r->frames[0] = (struct raw_frame){WE_NOT_STOPPED, FK_INVALID, 0};
        int64_t stack = profile__stack(&r->p, r->frames, 1);
        if (stack < 0)
            continue;
        struct prof_sample s = {
            .t_ns = r->cap.t_ns > r->t0_ns ? r->cap.t_ns - r->t0_ns : 0,
            .thread = (uint32_t)ti,
            .stack = (uint32_t)stack,
            .state = th->state,
            .cap = -1,
        };
        profile__add(&r->p, &s);
        r->p.errors[WE_NOT_STOPPED]++;
    }
}

/* The one-line live progress on a terminal's stderr, while the profile
 * goes to a file: samples, elapsed time, achieved rate. */
static void progress(struct recorder *r, uint64_t now, bool last)
{
    static uint64_t shown_ns;
    if (!r->progress || (!last && now - shown_ns < 250000000u))
        return;
    shown_ns = now;
    double secs = (double)(now - r->t0_ns) / 1e9;
    fprintf(stderr, "\rhsspy: %zu samples, %.1f s, %.1f Hz   %s", r->p.nsamples, secs,
            secs > 0 ? (double)r->p.ticks / secs : 0.0, last ? "\n" : "");
    fflush(stderr);
}

/* The target's threads, for a look at their child processes. */
static size_t target_tids(struct recorder *r)
{
    if (r->kid_cap < r->t.n) {
        pid_t *v = realloc(r->kid_tids, r->t.n * sizeof *v);
        if (!v)
            return 0;
        r->kid_tids = v;
        r->kid_cap = r->t.n;
    }
    for (size_t i = 0; i < r->t.n; i++)
        r->kid_tids[i] = r->t.th[i].tid;
    return r->t.n;
}

/* hsspy's own CPU time so far, all its threads (one system call). */
static uint64_t self_cpu_ns(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) < 0)
        return 0;
    return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000u +
           (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000u;
}

static uint64_t cpu_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* How often a live view looks at its input, whatever the sampling rate. */
#define LIVE_POLL_NS 50000000u

/* Hand the samples taken since the last refresh to the live view, their
 * frames named (outside any stop: every thread has been resumed), then
 * drop them: a view that runs for hours keeps its own figures. */
static enum live_action live_refresh(struct recorder *r)
{
    struct profile *p = &r->p;
    if (profile__symbolize_new(p, &r->ms) < 0) {
        log__error("out of memory naming frames");
        return LIVE_STOP;
    }
    /* Threads name themselves after they start ("ghc_ticker", "prog:w"). */
    for (size_t i = 0; i < p->nthreads; i++) {
        const struct tthread *th = tracee__find(&r->t, p->threads[i].tid);
        p->threads[i].exited = !th || th->run == TT_GONE || th->run == TT_EXITING;
        if (th) {
            char comm[16];
            proc__comm(r->t.pid, p->threads[i].tid, comm, sizeof comm);
            if (strcmp(comm, "?") != 0)
                memcpy(p->threads[i].comm, comm, sizeof comm);
        }
    }
    if (r->rts.ghc)
        profile__name_roles(p);
    /* (Where the time goes instead, since the start: a launcher's children.) */
    if (!children__brief(&r->kids, p->children, sizeof p->children))
        p->children[0] = 0;
    text__clean(p->children); /* (cut to fit: maybe inside a character) */
    size_t live = 0, stopped = 0;
    for (size_t i = 0; i < r->t.n; i++) {
        live += r->t.th[i].run != TT_GONE && r->t.th[i].run != TT_EXITING;
        stopped += r->t.th[i].run == TT_LISTENING;
    }
    p->target_stopped = live && stopped == live;
    uint64_t now = tracee__now_ns();
    enum live_action a = r->o->live->refresh(r->o->live->arg, p, now - r->t0_ns);
    profile__drop_samples(p);
    return a;
}

/* A job-control stop asked of hsspy (Ctrl-Z), taken between ticks once no
 * thread of the program is stopped for it, or about to be (a stop asked of
 * a thread waiting for a CPU): stopped in the middle of a tick, hsspy held
 * them stopped as long as it was. The signal, blocked and taken by
 * sigtimedwait, is raised again and let through. */
/* Stop hsspy with sig, blocked while sampling (taken by sigtimedwait):
 * raised, then let through; returns once continued (SIGCONT). */
static void stop_self(int sig)
{
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    raise(sig);
    sigprocmask(SIG_UNBLOCK, &one, NULL); /* (stopped here until SIGCONT) */
    sigprocmask(SIG_BLOCK, &one, NULL);
}

static void job_stop(struct recorder *r)
{
    if (!r->t.job_stop)
        return;
    for (size_t i = 0; i < r->t.n; i++)
        if (r->t.th[i].want || r->t.th[i].run == TT_HELD)
            return;
    const struct record_live *lv = r->o->live;
    int sig = r->t.job_stop;
    r->t.job_stop = 0;
    if (lv && lv->job)
        lv->job(lv->arg, true);
    stop_self(sig);
    /* (Continued in the background, the view cannot go on: stopped until
     * continued in the foreground.) */
    while (lv && lv->job && !lv->job(lv->arg, false)) {
        stop_self(SIGTTOU);
        /* (An orphaned process group is not stopped: no shell would
         * continue it. Not a busy loop then, and Ctrl-C, SIGTERM or
         * SIGHUP still end the view: left pending for the loop.) */
        sigset_t ends;
        sigemptyset(&ends);
        sigaddset(&ends, SIGINT);
        sigaddset(&ends, SIGTERM);
        sigaddset(&ends, SIGHUP);
        struct timespec ts = {0, 50000000};
        int end = sigtimedwait(&ends, NULL, &ts);
        if (end > 0) {
            kill(getpid(), end);
            break;
        }
    }
}

/* Wait for the next tick, handling ptrace events meanwhile; a live view is
 * polled every LIVE_POLL_NS and refreshed when due. Returns a stopping
 * signal, or -1 when the live view ends the recording, else 0. */
static int wait_tick(struct recorder *r, uint64_t when, uint64_t *next_poll,
                     uint64_t *next_refresh)
{
    const struct record_live *lv = r->o->live;
    for (;;) {
        uint64_t until = lv && *next_poll < when ? *next_poll : when;
        int sig = tracee__wait(&r->t, until);
        if (r->t.exits_held) {
            /* The program's main thread on its way out: a last look at
             * its children's time while it can still be read. */
            const struct tthread *main_th = tracee__find(&r->t, r->t.pid);
            if (r->watch_children && !r->kids_at_exit && main_th && main_th->exiting) {
                children__end(&r->kids, r->kid_tids, target_tids(r));
                r->kids_at_exit = true;
            }
            walk_captures(r); /* the program's memory goes when they do */
        }
        job_stop(r);
        if (sig || r->t.exited || r->t.execed)
            return sig;
        uint64_t now = tracee__now_ns();
        if (!lv) {
            if (now >= when)
                return 0;
            continue;
        }
        if (now >= *next_poll) {
            *next_poll = now + LIVE_POLL_NS;
            enum live_action a = lv->poll(lv->arg);
            if (a == LIVE_STOP)
                return -1;
            if (a == LIVE_REFRESH)
                *next_refresh = now;
        }
        if (now >= *next_refresh) {
            if (live_refresh(r) == LIVE_STOP)
                return -1;
            *next_refresh = tracee__now_ns() + lv->refresh_ns;
        }
        if (now >= when)
            return 0;
    }
}

/* Ticks between two reads of hsspy's CPU clock, when capped (loop). */
#define CAP_TICKS 8

static void loop(struct recorder *r)
{
    const double period = 1e9 / r->o->rate_hz;
    uint64_t end = r->o->duration_s > 0 ? r->t0_ns + (uint64_t)(r->o->duration_s * 1e9) : 0;
    double next = (double)r->t0_ns;
    uint64_t not_before = 0;
    /* (When capped: hsspy's CPU clock as the ticks counted in cap_n began,
     * and when they began.) */
    uint64_t cpu_prev = r->capped ? cpu_now_ns() : 0, cap_from = tracee__now_ns();
    unsigned cap_n = 0;
    /* A live view is drawn at once (empty), then every refresh_ns. */
    uint64_t next_poll = r->t0_ns, next_refresh = r->t0_ns;

    if (r->t.sw)
        psample_set__enable(r->t.sw);
    for (;;) {
        /* Each interval is the period +-10%, so sampling cannot lock onto a
         * periodic pattern of the target; the mean rate stays exact. */
        next += period * (0.9 + 0.2 * jitter());
        uint64_t when = (uint64_t)next;
        if (when < not_before)
            when = not_before;
        if (end && when > end)
            when = end;
        int sig = wait_tick(r, when, &next_poll, &next_refresh);
        if (sig) {
            if (sig > 0)
                log__info("%s: stopping", strsignal(sig));
            r->stopped = true;
            r->stop_sig = sig > 0 ? sig : 0;
            return;
        }
        if (r->t.exited || r->t.execed)
            return;
        uint64_t now = tracee__now_ns();
        if (end && now >= end)
            return;
        if (r->exec_by_ns && now >= r->exec_by_ns) {
            r->ccs_refused = true;
            return;
        }
        if ((double)now > next + period) {
            /* We fell behind (a slow walk, a loaded machine): count the
             * ticks that will not happen rather than bursting to catch up. */
            uint64_t behind = (uint64_t)(((double)now - next) / period);
            r->p.missed_ticks += behind;
            next += (double)behind * period;
        }
        sig = 0;
        tick(r, &sig, 2000000u, 300000u);
        /* The first tick stops every thread and reads each in full (no
         * earlier sample to reuse, nothing to read ahead): counted apart,
         * so that the cost per tick is the steady one. */
        if (r->p.ticks == 1)
            r->p.first_tick_cpu_ns = self_cpu_ns() - r->cpu0_ns;
        if (r->capped && ++cap_n == CAP_TICKS) {
            /* At real-time priority nothing else gets hsspy's CPU while it
             * works, and at a raised one little else: never more than half
             * of it. When CAP_TICKS ticks (and the waits between) took d of
             * CPU since they began at cap_from, the next comes at cap_from +
             * 2d at the earliest (ticks that cannot come in time count as
             * missed). The clock is read once every CAP_TICKS ticks: it is a
             * system call (no vDSO for a thread's CPU clock). */
            uint64_t cpu = cpu_now_ns(), after = tracee__now_ns();
            not_before = cap_from + 2 * (cpu - cpu_prev);
            r->p.cap_held += not_before > after;
            cpu_prev = cpu;
            cap_from = not_before > after ? not_before : after;
            cap_n = 0;
        }
        progress(r, tracee__now_ns(), false);
        if (r->watch_children && tracee__now_ns() >= r->kids.next_look_ns)
            children__look(&r->kids, r->kid_tids, target_tids(r), tracee__now_ns());
        if (sig) {
            log__info("%s: stopping", strsignal(sig));
            r->stopped = true;
            r->stop_sig = sig;
            return;
        }
        if (r->t.exited || r->t.execed)
            return;
    }
}

/* Sample at real-time priority (SCHED_FIFO, the lowest level) if allowed:
 * at normal priority, on a machine whose CPUs are all busy, the scheduler
 * wakes hsspy a millisecond or more late often enough to miss a quarter of
 * the ticks at 1 kHz. It does not use more CPU this way, only gets it on
 * time; what it does between ticks is bounded (deadlines in
 * tracee__collect), and the kernel's real-time throttling caps it anyway.
 * Children do not inherit it (SCHED_RESET_ON_FORK); the target keeps its
 * own priority. Only the sampling loop runs so: naming frames and writing
 * the output, which can take seconds, run at the normal priority. */
static bool realtime(bool on)
{
    struct sched_param sp = {.sched_priority = on ? 1 : 0};
    return sched_setscheduler(0, on ? SCHED_FIFO | SCHED_RESET_ON_FORK : SCHED_OTHER, &sp) == 0;
}

/* At normal priority, ask for short scheduler slices: 0.1 ms instead of
 * the default (about 1.5 ms on two CPUs). On a machine whose CPUs are all
 * busy, the kernel's EEVDF scheduler lets a thread that wakes up run at
 * once only if its slice ends before the running one's; with the default,
 * hsspy waits for the end of a target thread's slice, often a millisecond
 * or more, and misses ticks at 1 kHz. A short slice does not give hsspy
 * more of the CPU (its share is its weight's, which stays), only gets it
 * the CPU on time. Any user may ask (sched_attr.sched_runtime, Linux 6.12
 * on; earlier kernels take the call and ignore it, so whether the slice
 * took is read back). The nice value stays what it was. */
struct slice_attr { /* struct sched_attr, as far as SCHED_OTHER needs */
    uint32_t size, policy;
    uint64_t flags;
    int32_t nice;
    uint32_t priority;
    uint64_t runtime, deadline, period;
};
#define SHORT_SLICE_NS 100000u

static bool short_slices(bool on)
{
    struct slice_attr a = {.size = sizeof a, .policy = SCHED_OTHER};
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, 0);
    if (errno)
        return false;
    a.nice = nice;
    a.runtime = on ? SHORT_SLICE_NS : 0; /* 0: back to the default */
    if (syscall(SYS_sched_setattr, 0, &a, 0) != 0)
        return false;
    struct slice_attr got = {0};
    return on && syscall(SYS_sched_getattr, 0, &got, (unsigned)sizeof got, 0) == 0 &&
           got.policy == SCHED_OTHER && got.runtime == SHORT_SLICE_NS;
}

/* The nice value the sampling loop runs at, when not at real-time
 * priority: --nice N, else -10 where allowed if hsspy was started at the
 * default 0 (a user who started it niced keeps that). A short slice is not
 * enough on a machine whose CPUs are all busy: EEVDF lets a waking thread
 * run at once only if it is owed CPU, and a tick of 200 us on a CPU shared
 * with a few runnable threads of the program leaves hsspy owing, for the
 * scheduler, until about a millisecond later; a weight shortens that (nice
 * -10 weighs 9.3 times nice 0). hsspy gets no more CPU this way than its
 * ticks take (capped at half a CPU all the same: loop), only gets it on
 * time: in 10-second recordings of the bench workload at 1 kHz, 1.7-2.1%
 * of the ticks were missed at nice 0 and 0.2-0.5% at -10, and in 8
 * alternated runs the program's time was the same within the noise. A
 * lower nice value needs root or CAP_SYS_NICE (or RLIMIT_NICE); where
 * refused, hsspy samples at the one it was started at, and warns if --nice
 * asked for it. Naming and writing run at the one it was started at. */
#define DEFAULT_NICE (-10)

static int sampling_nice(const struct record_opts *o, int started)
{
    int want = o->nice_given ? o->nice : started == 0 ? DEFAULT_NICE : started;
    if (want == started)
        return started;
    if (setpriority(PRIO_PROCESS, 0, want) == 0) /* (this thread: the loop's) */
        return want;
    if (o->nice_given)
        log__warn("--nice %d is not allowed here (a nice value below %d needs root or "
                  "CAP_SYS_NICE): sampling at nice %d",
                  want, started, started);
    return started;
}

/* --stack ccs reads cost-centre stack nodes from the running target. */
static int read_live(void *ctx, uint64_t addr, void *out, size_t len)
{
    return remote__read(*(const pid_t *)ctx, addr, out, len);
}

/* The file execvp would run for cmd, into path; false if none. */
static bool find_command(const char *cmd, char *path, size_t size)
{
    if (strchr(cmd, '/'))
        return snprintf(path, size, "%s", cmd) < (int)size;
    const char *dirs = getenv("PATH");
    if (!dirs || !*dirs)
        dirs = "/bin:/usr/bin";
    for (const char *d = dirs; *d;) {
        size_t n = strcspn(d, ":");
        if (snprintf(path, size, "%.*s%s%s", (int)n, d, n ? "/" : "", cmd) < (int)size &&
            access(path, X_OK) == 0)
            return true;
        d += n;
        if (*d == ':')
            d++;
    }
    return false;
}

/* How the recorded process ended, said once it has (not if it runs on):
 * a death by a signal, or a launched command's failure, as a warning;
 * else as information, but for a launched command's success, which goes
 * without saying. The exit status hsspy passes on, as perf record and
 * time do: a launched command's own, or 128 + the signal that killed it;
 * 0 for a success or a process hsspy attached to. */
static int process_end(pid_t pid, const char *cmd, bool exited, int status)
{
    char who[320];
    if (!exited)
        return 0;
    if (cmd)
        snprintf(who, sizeof who, "'%s' (pid %d)", cmd, (int)pid);
    else
        snprintf(who, sizeof who, "pid %d", (int)pid);
    if (status == -1) { /* (its first thread had exited before: no status) */
        log__info("%s exited", who);
        return 0;
    }
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        const char *abbrev = sigabbrev_np(sig);
        log__warn("%s was killed by signal %d (SIG%s: %s)%s", who, sig, abbrev ? abbrev : "?",
                  strsignal(sig), WCOREDUMP(status) ? ", core dumped" : "");
        return cmd ? 128 + sig : 0;
    }
    if (!WIFEXITED(status))
        return 0;
    int code = WEXITSTATUS(status);
    if (code && cmd)
        log__warn("%s exited with status %d", who, code);
    else if (!cmd)
        log__info("%s exited with status %d", who, code);
    return cmd ? code : 0;
}

/* The wait for a launched command that is not a GHC program to exec one
 * (a launcher: env, nice, a script) under --stack ccs. */
#define CCS_EXEC_WAIT_NS 1000000000u

/* why: for a program not GHC's, what became of it (or ""). */
static void log_not_profiled(const char *prog, bool ghc, const char *why)
{
    if (ghc)
        log__error("--stack ccs needs a program built with -prof, and %s was not: rebuild it "
                   "with ghc -prof (cost centres come from -fprof-auto or {-# SCC #-} "
                   "annotations), or use --stack stg",
                   prog);
    else
        log__error("--stack ccs needs a GHC program built with -prof, and %s is not a GHC "
                   "program%s",
                   prog, why);
}

/* The program exec'd (traced) gives privileges hsspy's tracing took from
 * it: said. */
static void said_privileged_exec(pid_t pid)
{
    char link[64], exe[PATH_MAX];
    snprintf(link, sizeof link, "/proc/%d/exe", (int)pid);
    ssize_t n = readlink(link, exe, sizeof exe - 1);
    if (n <= 0)
        return;
    exe[n] = 0;
    const char *priv = proc__privileged_exe(exe);
    if (priv)
        log__warn("pid %d exec'd %s, which is %s: traced by hsspy, which lacks CAP_SYS_PTRACE, "
                  "it runs without those privileges",
                  (int)pid, exe, priv);
}

/* Before sampling, the recording cannot go on: the program is let go; one
 * hsspy launched, which has only just started, for this, is killed (not
 * left running on its own, orphaned). */
static void give_up(struct recorder *r)
{
    if (!r->p.launched) {
        tracee__detach(&r->t, 1000);
        return;
    }
    tracee__kill(&r->t, 3000);
}

/* A program not GHC's without a symbol table: its frames are unnamed. */
static void warn_stripped(struct recorder *r)
{
    if (!r->rts.ghc && r->ms.main &&
        (module__symbol(r->ms.main, r->ms.main->lo), r->ms.main->syms.from_symtab == 0))
        log__warn("%s has no symbol table (stripped?): its frames show as %s+0x...; "
                  "profile an unstripped build for names",
                  r->ms.main->path, r->ms.main->name);
}

/* The program a recording is of, as the user knows it: the command given
 * (a script, rather than its interpreter), but for a GHC program, which a
 * launcher given (env, a script) may have exec'd already. */
static const char *program_name(const struct record_opts *o, const struct recorder *r)
{
    if (r->ms.main && (r->rts.ghc || !o->argv))
        return r->ms.main->path;
    return o->argv ? o->argv[0] : "the program";
}

/* --stack ccs on a program that has no cost centres: one line, before
 * touching it. The executable (the command as execvp finds it, or
 * /proc/PID/exe) must be GHC code with CCS_MAIN, which only the profiled
 * RTS defines. -1 after the error; 0 if it is one, or if that cannot be
 * told from the file (unreadable, or stripped: rts__attach then says what
 * it can). */
static int check_profiled(const struct record_opts *o)
{
    char path[PATH_MAX + 32], shown[PATH_MAX];
    struct module m;
    GElf_Sym sym;

    if (o->argv) {
        if (!find_command(o->argv[0], path, sizeof path))
            return 0;
        snprintf(shown, sizeof shown, "%s", o->argv[0]);
    } else {
        snprintf(path, sizeof path, "/proc/%d/exe", (int)remote__mm_pid(o->pid));
        ssize_t n = readlink(path, shown, sizeof shown - 1);
        if (n <= 0)
            return 0;
        shown[n] = 0;
    }
    if (module__open_file(&m, path, 0, 0, 0) < 0)
        return 0;
    bool ghc = module__is_ghc(&m), prof = ghc && module__find_symbol(&m, "CCS_MAIN", &sym);
    bool stripped = ghc && !prof && !module__has_symtab(&m);
    module__close(&m);
    /* (A command launched, or exec'd since, that is not GHC's may be a
     * launcher of one: see exec_by_ns.) */
    if (prof || stripped || (!ghc && (o->argv || o->launched)))
        return 0;
    log_not_profiled(shown, ghc, "");
    return -1;
}

static void finish_threads(struct recorder *r)
{
    /* Threads name themselves after they start (GHC's "ghc_ticker", "prog:w");
     * take the final names of those still alive. */
    for (size_t i = 0; i < r->p.nthreads; i++) {
        char comm[16];
        proc__comm(r->t.pid, r->p.threads[i].tid, comm, sizeof comm);
        if (strcmp(comm, "?") != 0)
            memcpy(r->p.threads[i].comm, comm, sizeof comm);
    }
}

/* A process in a job-control stop (SIGSTOP, Ctrl-Z) all along runs
 * nothing: no sample, and no word why, until this. True if so (said). */
static bool said_stopped(const struct recorder *r, pid_t pid)
{
    bool stopped = r->t.st.group_stops && !r->p.nsamples;
    if (stopped && !r->o->snapshot)
        log__error("pid %d was stopped (SIGSTOP, or Ctrl-Z in its shell) all through the "
                   "recording: nothing ran to sample; continue it (kill -CONT %d) and record "
                   "again, or see its stacks with hsspy dump -p %d",
                   (int)pid, (int)pid, (int)pid);
    return stopped && !r->o->snapshot;
}

/* A file of the program's code that could not be read: its frames are
 * unnamed, and C stacks through it cut short. Says which, and why. */
static void said_unreadable(const struct recorder *r)
{
    const struct modset *ms = &r->ms;
    if (!ms->unreadable[0])
        return;
    const char *del = " (deleted)";
    size_t pl = strlen(ms->unreadable), dl = strlen(del);
    bool deleted = pl > dl && strcmp(ms->unreadable + pl - dl, del) == 0;
    log__warn("could not read %s (%s): its frames are unnamed%s", ms->unreadable,
              strerror(-ms->unreadable_err),
              deleted ? "; it was deleted or replaced since it was loaded, and only root can "
                        "read it then (through /proc/PID/map_files)"
                      : "");
}

/* A GHC program whose Haskell side could not be read got a C-only
 * profile: written, but not what was asked for. Says why. */
static void said_unread(const struct recorder *r, pid_t pid)
{
    const char *what = r->o->live ? "view showed" : "profile has";
    if (!r->rts.pending)
        return;
    if (r->rts.unsure)
        log__error("pid %d's GHC runtime could not be validated before the recording ended (its "
                   "capabilities kept changing); the %s C stacks only",
                   (int)pid, what);
    else if (r->t.exited)
        log__error("pid %d exited before its GHC runtime could be read (%.1f ms after the "
                   "recording began: too short for samples at %g Hz); the %s C stacks only",
                   (int)pid, (double)r->p.duration_ns / 1e6, r->o->rate_hz, what);
    else
        log__error("pid %d's GHC runtime could not be validated before the recording ended (it "
                   "had not started); the %s C stacks only",
                   (int)pid, what);
}

/* One recording, of the program the process runs: *follow says whether
 * the launched command exec'd another, to record next as *next says
 * (returning with hsspy's signals still blocked: a Ctrl-C meanwhile stops
 * that recording). */
static int record_one(const struct record_opts *o, struct record_opts *next, bool *follow)
{
    struct recorder r;
    const struct writer *w = o->live ? NULL : writer__find(o->format);
    sigset_t set, old;
    FILE *out = NULL;
    int rc = 1, cmd_rc = 0;
    pid_t pid = o->pid;
    bool taken = false; /* o->held, taken over */

    memset(&r, 0, sizeof r);
    r.o = o;
    if (!w && !o->live) {
        log__error("unknown format '%s' (see hsspy record --help)", o->format);
        rc = 2;
        goto done;
    }
    /* A binary format would flood a terminal: refuse before touching the
     * target. */
    if (w && output__refused(o->output, w)) {
        rc = 2;
        goto done;
    }
    if (o->stack == STACK_CCS && check_profiled(o) < 0)
        goto done;
    rng_state = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32) ^ 0x9e3779b97f4a7c15ull;
    if (w && !(out = output__open(o->output, w)))
        goto done;
    if (profile__init(&r.p) < 0 || capture__init(&r.cap, o->stack_bytes) < 0) {
        log__error("out of memory");
        goto done;
    }
    /* (Before the program is touched: refused, nothing happened to it.) */
    if (o->nonblocking && !o->snapshot) {
        uint64_t tick_ns = (uint64_t)(1e9 / o->rate_hz);
        int err = psample_set__open(&r.pss, tick_ns,
                                    psample__switch_pages(tick_ns, sysconf(_SC_NPROCESSORS_CONF)));
        if (err < 0) {
            log_nonblocking_refused(err);
            goto done;
        }
    }

    /* ptrace events and Ctrl-C are taken synchronously with sigtimedwait. */
    tracee__signal_set(&set);
    sigprocmask(SIG_BLOCK, &set, &old);
    signal(SIGPIPE, SIG_IGN);

    if (o->argv) {
        /* (A profile written to standard output, not a terminal: the
         * command's own output is not mixed into it.) */
        bool mixed = w && (!o->output || strcmp(o->output, "-") == 0) && !isatty(STDOUT_FILENO);
        char path[PATH_MAX + 32];
        const char *priv;
        if (find_command(o->argv[0], path, sizeof path) && (priv = proc__privileged_exe(path)))
            log__warn("%s is %s: traced by hsspy, which lacks CAP_SYS_PTRACE, it runs without "
                      "those privileges (as root, it keeps them)",
                      o->argv[0], priv);
        if (launch__start(o->argv, mixed, &r.t, &pid) < 0)
            goto done_signals;
        r.p.launched = true;
    } else if (o->held) {
        /* (The program a launched command exec'd, held since its exec:
         * before, it was let go and attached to again, and one that had
         * already exited by then, env true, was refused as a zombie.) */
        int err = tracee__take_over(&r.t, o->held);
        taken = true;
        if (err < 0) {
            log__error("cannot follow pid %d through its exec: %s", (int)pid, strerror(-err));
            goto done_signals;
        }
        r.p.launched = true;
    } else if (tracee__attach(&r.t, pid) < 0) {
        goto done_signals;
    } else {
        pid = r.t.pid; /* (a thread's tid names its process) */
        r.p.launched = o->launched != NULL;
    }
    /* Which threads ran, told by per-CPU events' switch records where
     * hsspy may watch every CPU (--nonblocking's own, or events for that
     * alone): no event on each thread, whose every context switch would
     * cost it about a microsecond each way, and no /proc read for a
     * thread that switches too often for one. Else a ring per thread. */
    if (r.pss.n)
        r.t.pss = r.t.sw = &r.pss;
    else if (!o->no_perf_events && !o->per_thread_events && !o->snapshot &&
             psample_set__open_switches(
                 &r.sws, pid,
                 psample__switch_pages((uint64_t)(1e9 / o->rate_hz),
                                       sysconf(_SC_NPROCESSORS_CONF))) == 0)
        r.t.sw = &r.sws;
    r.t.switch_records = !o->no_perf_events && !o->snapshot && !r.t.sw;
    /* (A launched command is followed through its exec: see follow.) */
    r.t.hold_exec = r.p.launched && !o->live && !o->snapshot;
    r.p.pid = pid;
    r.p.rate_hz = o->rate_hz;
    proc__cmdline(pid, r.p.cmdline, sizeof r.p.cmdline);
    if (modset__init(&r.ms, pid) < 0 || unwind__init(&r.uw, &r.ms, pid) < 0) {
        if (proc__not_dumpable(pid))
            log__error("cannot read the memory map of pid %d: it is " PROC_UNDUMPABLE_WHY
                       "; run hsspy as root (or with CAP_SYS_PTRACE)%s",
                       (int)pid, r.p.launched ? "; the command was stopped" : "");
        else
            log__error("cannot read the memory map of pid %d%s", (int)pid,
                       r.p.launched ? "; the command was stopped" : "");
        give_up(&r);
        goto done_signals;
    }
    tracee__drain(&r.t); /* signals that arrived meanwhile: deliver them */
    if (rts__attach(&r.rts, &r.ms, pid) < 0) {
        give_up(&r);
        goto done_signals;
    }
    tracee__drain(&r.t);
    if (o->stack == STACK_CCS) {
        /* (Only if its file could not be read before: see check_profiled.
         * A GHC program whose RTS symbols are missing was warned about and
         * gets its C stacks, as with --stack stg.) */
        if (!r.rts.ghc && r.p.launched) {
            r.exec_by_ns = CCS_EXEC_WAIT_NS; /* (from the start: see below) */
        } else if (!r.rts.ghc || (r.rts.L && !r.rts.profiled)) {
            log_not_profiled(program_name(o, &r), r.rts.ghc, "");
            give_up(&r);
            goto done_signals;
        }
        if (r.rts.ghc) {
            ccs_walk__init(&r.ccs, r.rts.L, r.rts.ccs_main, read_live, &r.p.pid);
            r.rts.ccs = &r.ccs;
        }
    }
    if (r.rts.ghc)
        snprintf(r.p.ghc_version, sizeof r.p.ghc_version, "%s", r.rts.version);
    r.uw.ghc = r.rts.ghc;
    r.uw.stg_return = r.rts.stg_return;
    r.uw.stg_run = r.rts.stg_run;
    /* (A launched command's once it has run: it may be a launcher, env
     * or nice, whose exec leaves none of its frames.) */
    if (!r.p.launched)
        warn_stripped(&r);

    /* (Not while waiting for a launcher's exec under --stack ccs: that
     * program is not what is recorded; it is refused, or followed.) */
    if (!o->snapshot && !o->live && !r.exec_by_ns)
        log__info("sampling pid %d at %g Hz%s", (int)pid, o->rate_hz,
                  o->duration_s > 0 ? "" : "; Ctrl-C to stop");
    if (o->live && o->live->start(o->live->arg, &r.p) < 0) {
        give_up(&r);
        goto done_signals;
    }
    r.rts.exact_stacks = o->snapshot;
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    r.p.start_wall_ns = (uint64_t)wall.tv_sec * 1000000000u + (uint64_t)wall.tv_nsec;
    r.t0_ns = tracee__now_ns();
    if (r.exec_by_ns)
        r.exec_by_ns += r.t0_ns;
    tracee__on_stop(&r.t, on_stop, &r);
    /* (Not when the output itself goes to that terminal, at the end.) */
    bool to_file = (o->output && strcmp(o->output, "-") != 0) || !isatty(STDOUT_FILENO);
    r.progress = !o->snapshot && !log__quiet() && to_file && isatty(STDERR_FILENO);
    /* hsspy's own CPU while recording: the loop's, not attaching's (reading
     * the target's symbols, which at a low rate would count for more than
     * the sampling). */
    r.cpu0_ns = self_cpu_ns();
    r.watch_children = !o->snapshot;
    if (r.watch_children)
        children__start(&r.kids, pid, r.kid_tids, target_tids(&r), tracee__now_ns());
    if (o->snapshot) {
        snapshot(&r);
        /* Its child processes, which a dump leaves out: named. */
        children__start(&r.kids, pid, r.kid_tids, target_tids(&r), tracee__now_ns());
        for (size_t i = 0; i < r.kids.n && r.p.nkids < PROF_CHILDREN; i++) {
            struct prof_child *pc = &r.p.kids[r.p.nkids++];
            pc->pid = r.kids.c[i].pid;
            pc->parent = r.kids.c[i].parent;
            memcpy(pc->cmd, r.kids.c[i].cmd, sizeof pc->cmd);
        }
    } else {
        r.p.realtime = o->realtime && realtime(true);
        if (o->realtime && !r.p.realtime)
            log__warn("--realtime is not allowed here (it needs root or CAP_SYS_NICE): "
                      "sampling at the normal priority");
        r.p.short_slices = !r.p.realtime && short_slices(true);
        errno = 0;
        int started = getpriority(PRIO_PROCESS, 0);
        if (errno)
            started = 0;
        r.p.nice = r.p.realtime ? started : sampling_nice(o, started);
        r.capped = r.p.realtime || r.p.nice < started;
        loop(&r);
        if (r.p.realtime)
            realtime(false);
        if (r.p.short_slices)
            short_slices(false);
        if (r.p.nice != started)
            setpriority(PRIO_PROCESS, 0, started); /* (a higher value is always allowed) */
    }
    progress(&r, tracee__now_ns(), true);
    r.p.duration_ns = tracee__now_ns() - r.t0_ns;
    r.p.self_cpu_ns = self_cpu_ns() - r.cpu0_ns;
    if (o->live)
        o->live->stop(o->live->arg); /* the terminal back as soon as sampling ends */
    if (r.t.execed && r.p.launched && !r.stopped && !o->live && !o->snapshot &&
        !(o->duration_s > 0 && (double)r.p.duration_ns >= o->duration_s * 1e9)) {
        said_privileged_exec(pid);
        /* The command given became another program (a launcher, env or
         * nice, or a script's exec): follow it, from the start (its frames
         * are not those of the program before, whose samples go). */
        *next = *o;
        next->argv = NULL;
        next->pid = pid;
        next->launched = o->argv ? o->argv[0] : o->launched;
        next->execs = o->execs + 1;
        if (o->duration_s > 0)
            next->duration_s = o->duration_s - (double)r.p.duration_ns / 1e9;
        if (r.p.nsamples)
            log__info("pid %d called exec: following it, the %zu samples of the program "
                      "before dropped", (int)pid, r.p.nsamples);
        else
            log__info("pid %d called exec: following it", (int)pid);
        next->held = tracee__hand_over(&r.t, 1000);
        *follow = true;
        goto done;
    }
    if (r.exec_by_ns) {
        /* --stack ccs, and the command (or what it exec'd) is not a GHC
         * program, nor did it exec one: refused, and, launched for this,
         * stopped (killed) if still running. */
        log_not_profiled(program_name(o, &r), false,
                         r.t.exited ? " (it exited without exec'ing one)"
                         : r.ccs_refused ? " (nor did it exec one within a second: it was killed)"
                                         : " (nor did it exec one: it was killed)");
        if (r.t.exited)
            tracee__detach(&r.t, 1000);
        else
            give_up(&r);
        goto done_signals;
    }
    if (r.t.execed) {
        said_privileged_exec(pid);
        log__info("pid %d called exec: the program changed, %s here", (int)pid,
                  o->live ? "the view ends" : "recording stops");
    } else if (r.p.launched) {
        warn_stripped(&r);
    }
    if (r.watch_children)
        children__end(&r.kids, r.kid_tids, target_tids(&r));
    finish_threads(&r);
    walk_captures(&r); /* stops that came in after the last tick */
    tracee__detach(&r.t, 1000);
    r.p.nonblocking = r.t.pss != NULL;
    r.p.cs_cpu_wide = r.t.sw != NULL;
    r.p.made_with = (uint8_t)((o->idle ? PROF_MADE_IDLE : 0) | (o->threads ? PROF_MADE_THREADS : 0) |
                              (o->stack == STACK_CCS ? PROF_MADE_CCS : 0));
    r.p.made_known = true;
    r.t.pss = r.t.sw = NULL;
    psample_set__close(&r.pss); /* no more samples for us */
    psample_set__close(&r.sws);
    r.p.lost_threads = r.t.st.lost;
    r.p.soft = r.t.st.soft_samples;
    r.p.soft_breaking = r.t.st.soft_breaking;
    r.p.soft_idle = r.t.st.soft_idle;
    r.p.soft_refused = r.t.st.soft_refused;
    r.p.soft_again = r.t.st.soft_again;
    r.p.preempt = r.t.st.preempt_samples;
    r.p.preempt_refused = r.t.st.preempt_refused;
    r.p.calls_known = r.t.st.calls_known;
    r.p.late = r.t.st.late_stops;
    /* (Per-CPU events: every thread's switches were told.) */
    r.p.cs_threads = r.p.cs_cpu_wide ? r.t.st.threads_seen : r.t.st.cs_threads;
    r.p.cs_refused = r.t.st.cs_refused;
    _Static_assert(PROF_CS_ELOCKED == PERFRING_ELOCKED, "one code for rings without locked memory");
    r.p.cs_errno = (uint32_t)r.t.st.cs_errno;
    r.p.cs_losses = r.t.st.cs_losses;
    r.p.cs_drains = r.t.st.sw_drains;
    r.p.pause_regs_ring = r.t.st.stop_regs_ring;
    r.p.pause_between = r.t.st.stops_between;
    r.p.deferred = r.t.st.deferred;
    r.p.handler_entries = r.handler_entries;
    r.p.pause_prefetched = r.cap.pre_used;
    r.p.pause_prefetch_missed = r.cap.pre_missed;
    r.p.cs_busy = r.t.st.cs_busy;
    r.p.ps_samples = r.t.st.ps_samples;
    r.p.ps_stale = r.t.st.ps_stale;
    r.p.ps_lost = r.t.st.ps_lost;
    r.p.fd_short = r.t.st.fd_short;
    r.p.fd_limit = (uint64_t)tracee__fd_limit();
    r.p.restarted = r.t.st.restarted;
    r.p.exited = r.t.exited;
    r.p.exit_status = r.t.exit_status;
    r.p.signals_forwarded = r.t.st.signals_forwarded;
    r.p.live_reads = r.uw.st.live_reads;
    const char *launched = r.p.launched ? (o->argv ? o->argv[0] : o->launched) : NULL;
    if (o->live) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        cmd_rc = process_end(pid, launched, r.t.exited, r.t.exit_status);
        said_unreadable(&r);
        said_unread(&r, pid);
        goto verdict;
    }
    /* Where the time went instead: a launcher's children (named by its
     * command's first word: the target may be gone). */
    char prog[64];
    snprintf(prog, sizeof prog, "%.*s", (int)strcspn(r.p.cmdline, " "), r.p.cmdline);
    const char *base = strrchr(prog, '/');
    if (r.watch_children)
        children__verdict(&r.kids, r.p.duration_ns, base ? base + 1 : prog, r.p.children,
                          sizeof r.p.children);
    text__clean(r.p.children);
    /* Names are looked up in the files, with their debug information, while
     * the target's files can still be reached (a container's, through
     * /proc/PID/root): a raw file keeps addresses, but saves these names
     * for a report made where those files are not, after its samples (see
     * raw__write_names). */
    bool raw = strcmp(w->name, "raw") == 0;
    if (!raw)
        profile__symbolize(&r.p, &r.ms);
    if (r.rts.ghc)
        profile__name_roles(&r.p);
    if (profile__keep_modules(&r.p, &r.ms) < 0)
        log__warn("out of memory keeping the module list: a raw file would be unnamed");

    /* The target runs on its own now; a Ctrl-C from here on ends hsspy,
     * but a second one while a file is written (its temporary file) waits
     * until the recording is in it. */
    bool to_temporary = output__temporary(out);
    if (!to_temporary)
        sigprocmask(SIG_SETMASK, &old, NULL);
    struct out_opts oo = {o->threads, o->idle, o->sort};
    /* (Counted before a raw file's samples are dropped, for the last word.) */
    size_t written = r.p.nsamples, shown = 0;
    struct prof_iter it;
    struct prof_sample smp;
    if (!o->idle && profile__iter(&r.p, &it) == 0) {
        while (shown == 0 && profile__next(&it, &smp))
            shown += !(smp.flags & SAMPLE_IDLE);
        profile__iter_free(&it);
    } else {
        shown = written;
    }
    uint64_t threads = profile__threads_sampled(&r.p), errors = profile__walk_errors(&r.p);
    output__start(out);
    if ((raw ? raw__write_unnamed(&r.p, out) : w->write(&r.p, &oo, out)) < 0 || fflush(out) != 0) {
        rc = output__failed(w);
        goto done;
    }
    if (raw) {
        profile__drop_samples(&r.p); /* (written: their memory goes to naming) */
        if (profile__symbolize(&r.p, &r.ms) < 0)
            log__warn("out of memory naming the frames: the raw file saves no names");
        if (raw__write_names(&r.p, out) < 0) {
            rc = output__failed(w);
            goto done;
        }
    }
    if (output__commit(out) < 0) {
        rc = output__failed(w);
        goto done;
    }
    if (to_temporary) {
        /* (Signals that came while it was written: the recording was
         * over.) */
        struct timespec zero = {0, 0};
        sigset_t ends;
        sigemptyset(&ends);
        sigaddset(&ends, SIGINT);
        sigaddset(&ends, SIGTERM);
        sigaddset(&ends, SIGHUP);
        while (sigtimedwait(&ends, NULL, &zero) > 0)
            ;
        sigprocmask(SIG_SETMASK, &old, NULL);
    }
    if (r.p.children[0])
        log__warn("%s", r.p.children);
    cmd_rc = process_end(pid, launched, r.p.exited, r.p.exit_status);
    bool stopped_all = said_stopped(&r, pid);
    if (stopped_all)
        cmd_rc = 1;
    if (launched && !r.p.exited) {
        /* (Ended since the recording stopped: a Ctrl-C at the terminal
         * reaches it too. How, said and passed on, as if recorded.) */
        int st;
        pid_t ended = waitpid(pid, &st, WNOHANG);
        /* (Ctrl-C: the command's SIGINT, passed on as hsspy let it go, may
         * take a moment to end it on a busy machine: 200 ms was once too
         * little for a test beside another; up to a second.) */
        for (int i = 0; ended == 0 && r.stop_sig == SIGINT && i < 100; i++) {
            struct timespec ts = {0, 10000000};
            nanosleep(&ts, NULL);
            ended = waitpid(pid, &st, WNOHANG);
        }
        if (ended == 0)
            log__info("'%s' (pid %d) keeps running", launched, (int)pid);
        else if (ended == pid && !stopped_all)
            cmd_rc = process_end(pid, launched, true, st);
    }
    said_unreadable(&r);
    said_unread(&r, pid);
    if (remote__denied()) {
        log__error("pid %d's memory could not be read: it is " PROC_UNDUMPABLE_WHY
                   "; run hsspy as root (or with CAP_SYS_PTRACE)",
                   (int)pid);
        if (cmd_rc == 0)
            cmd_rc = 1;
    }
    /* A profile of nothing: every sample was of a thread asleep (or none
     * was taken), left out without --idle. (Not of a process stopped all
     * along: said so above.) */
    if (shown == 0 && !o->idle && r.p.ticks > 0 && !stopped_all)
        log__warn("no thread of pid %d ran at any sample%s: the profile is empty; --idle keeps "
                  "the stacks they sleep in",
                  (int)pid, written ? " (every one was asleep, idle)" : "");
    /* The last word, as py-spy and perf give it: what was written where. */
    log__info("recorded %zu samples of %" PRIu64 " thread%s (%" PRIu64 " walk errors%s); wrote "
              "the %s output to %s",
              written, threads, threads == 1 ? "" : "s", errors,
              errors ? ": -f report counts them by kind" : "", w->name,
              o->output && strcmp(o->output, "-") != 0 ? o->output : "standard output");
verdict:
    rc = r.rts.ghc && !r.rts.usable ? 3 : cmd_rc;
    goto done;
done_signals:
    sigprocmask(SIG_SETMASK, &old, NULL);
done:
    if (o->held && !taken) {
        /* Refused before it was taken over (--stack ccs on a program
         * without -prof, the output): launched for this, it goes, rather
         * than be let go from its exec with nothing to show for it. */
        struct tracee held;
        if (tracee__adopt(&held, o->held) == 0)
            tracee__kill(&held, 3000);
        tracee__free(&held);
    }
    output__close(out);
    rts__free(&r.rts);
    ccs_walk__free(&r.ccs);
    unwind__free(&r.uw);
    if (r.ms.pid)
        modset__free(&r.ms);
    tracee__free(&r.t);
    psample_set__close(&r.pss);
    psample_set__close(&r.sws);
    capture__free(&r.cap);
    profile__free(&r.p);
    free(r.kept);
    free(r.kid_tids);
    return rc;
}

/* A launched command followed through each exec (env, nice, a script's
 * exec; a program that execs itself over and over), one recording after
 * another, the last one written: a loop, not a recursion, however many. */
int record__run(const struct record_opts *o)
{
    struct record_opts next[2];
    sigset_t orig;
    bool follow = false;
    int k = 0;

    sigprocmask(SIG_SETMASK, NULL, &orig);
    int rc = record_one(o, &next[k], &follow);
    while (follow) {
        follow = false;
        rc = record_one(&next[k], &next[k ^ 1], &follow);
        k ^= 1;
    }
    sigprocmask(SIG_SETMASK, &orig, NULL);
    return rc;
}
