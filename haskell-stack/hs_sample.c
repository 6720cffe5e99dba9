/* hs_sample.c - classifying a GHC thread's sample and merging its stacks.
 *
 * The decision, in order (ghc-rts-notes.md, "What the RTS state says"):
 *   the ticker           idle (by its name: ghc_ticker);
 *   nonmoving marking    gc, or idle in its wait for a mark (9.8 on);
 *   a worker let go of   rts, or idle (its Task freed);
 *   a Task, and only     the runtime's thread ending: rts, or idle;
 *     the C library
 *   a Task not its own   likewise (freed under it);
 *   no Task, in a start  the runtime's thread starting: rts, or idle;
 *     routine of the RTS
 *   no Task              a thread the RTS does not know;
 *   a Task, no InCall    likewise: C code started it, and it has come
 *                        back from every call into Haskell it made;
 *   C stack in the GC    gc;
 *   holds its cap        in_haskell: haskell (pc in Haskell code) or
 *                        unsafe-ffi (pc in C); otherwise rts, or idle when
 *                        the scheduler waits for events (non-threaded RTS);
 *   suspended TSO        safe-ffi, or idle for the IO/timer manager's wait
 *                        (first, outside suspendThread and resumeThread:
 *                        the non-threaded RTS keeps its one capability);
 *   a callback waiting   safe-ffi (still in the call it is nested in);
 *     for a capability
 *   otherwise            idle (a worker waiting for work or a capability);
 * and rts, whatever else, in one of the runtime's signal handlers (but the
 * collector's).
 *
 * A callback (C code called from Haskell through a safe call, calling
 * Haskell again on the same OS thread) joins each call's stacks: its own
 * Haskell frames, the C frames between the scheduler and the Haskell code
 * that made the call it is nested in, that code's Haskell frames, and so
 * on (outer_calls).
 */
#include "haskell-stack/hs_sample.h"

#include <string.h>

static bool frame_in(const struct raw_frame *f, const struct code_ranges *c)
{
    if (f->kind != FK_PC && f->kind != FK_RET)
        return false;
    return code_ranges__has(c, f->kind == FK_RET ? f->addr - 1 : f->addr);
}

/* The index of the innermost of the n frames in c, or -1. */
static int first_frame_in(const struct raw_frame *f, int n, const struct code_ranges *c)
{
    for (int i = 0; i < n; i++)
        if (frame_in(&f[i], c))
            return i;
    return -1;
}

static bool any_frame_in(const struct raw_frame *f, int n, const struct code_ranges *c)
{
    return first_frame_in(f, n, c) >= 0;
}

/* The STG Sp at the Haskell frame. Normally the unwound rbp; but C code
 * without CFI (GMP's assembly) may have used rbp after saving it in its own
 * frame, which the stack scan delimited: look there for the saved value. */
static uint64_t find_sp(struct rts *r, struct unwinder *uw, const struct memimg *img,
                        const struct unwind_result *ur, uint64_t stack)
{
    struct stg_walk w = {r, img, uw->ms, 0, false, r->walk_cache};
    if (!ur->scanned || stg_walk__plausible_sp(&w, ur->hs_sp, stack))
        return ur->hs_sp;
    for (uint64_t a = ur->scan_lo; a < ur->scan_hi; a += 8) {
        uint64_t cand;
        if (memimg__read_u64(img, a, &cand) == 0 && stg_walk__plausible_sp(&w, cand, stack))
            return cand;
    }
    return ur->hs_sp;
}

static bool sleeping(char state) { return state == 'S' || state == 'D'; }

/* In the non-threaded runtime my_task is one global, not a thread's own:
 * every OS thread reads the Task of the one thread the runtime runs on.
 * A thread is that one only while its C stack shows it: Haskell code, or
 * the runtime's scheduler or collector (entered through hs_main,
 * rts_evalLazyIO, rts_inCall, ...: every way into the runtime is there).
 * A thread whose whole C stack, unwound to its start without a fault,
 * shows neither was started by C code (a C library's, or a C main
 * program's that runs Haskell code on another thread) and the runtime
 * knows nothing of it: not in Haskell or an unsafe call, as that Task
 * would say. */
static bool foreign_single(const struct rts *r, const struct raw_frame *out,
                           const struct unwind_result *ur)
{
    return !r->threaded && !ur->reached_haskell && !ur->error && !ur->truncated &&
           !any_frame_in(out, ur->n, &r->sched) && !any_frame_in(out, ur->n, &r->gc);
}

/* Append the Haskell side: the frame of the code that is running or made the
 * call, then the STG stack from sp. regs: the registers of the running code
 * when they are the thread's own (not the saved ones of a call), else NULL. */
static void haskell_frames(struct rts *r, struct unwinder *uw, const struct memimg *img,
                           uint64_t pc, bool leaf, const struct user_regs_struct *regs,
                           uint64_t sp, uint64_t stack, enum stg_start start,
                           struct raw_frame *out, int max, struct hs_sample *res)
{
    struct stg_walk w = {r, img, uw->ms, r->pid, r->exact_stacks, r->walk_cache};
    struct stg_result sr;

    if (res->n >= max)
        return;
    out[res->n++] = (struct raw_frame){pc, leaf ? FK_PC : FK_RET, 0};
    if (leaf && pc >= r->stg_stop_info && pc < r->stg_stop_end)
        return; /* a thread's last code: its stop frame gone, Sp in flux */
    if (!stack) {
        if (res->n < max)
            out[res->n++] = (struct raw_frame){WE_NO_SP, FK_INVALID, 0};
        res->err = WE_NO_SP;
        return;
    }
    for (int k = 0; regs && k < 2; k++) {
        /* Copying a suspended computation's frames back onto the stack:
         * walked from where the copy ends (stg_walk__restored_sp), not
         * through what the copy has not yet written over. */
        if (pc < r->ap_stack[k].lo || pc >= r->ap_stack[k].hi)
            continue;
        const uint64_t gp[] = {regs->rax, regs->rbx, regs->rcx, regs->rdx, regs->rsi,
                               regs->rdi, regs->r8,  regs->r9,  regs->r10, regs->r11,
                               regs->r12, regs->r13, regs->r14, regs->r15};
        uint64_t end = stg_walk__restored_sp(&w, sp, stack, gp, STG_RESTORE_REGS, k == 0);
        if (end) {
            sp = end;
            start = STG_EXACT;
        }
    }
    stg_walk__run(&w, sp, stack, start, out + res->n, max - res->n, &sr);
    res->n += sr.n;
    if (sr.err != WE_NONE && res->err == WE_NONE)
        res->err = sr.err;
}

/* --stack ccs: the Haskell side is the thread's cost-centre stack instead,
 * innermost cost centre first. It needs no Sp, but is added only where the
 * STG frames would be: a C stack that never reached Haskell is an error
 * sample either way. */
static void ccs_frames(struct rts *r, const struct rts_view *v, struct raw_frame *out, int max,
                       struct hs_sample *res)
{
    enum walk_error err = WE_NONE;
    if (res->n >= max)
        return;
    if (v->cccs_missing) {
        out[res->n++] = (struct raw_frame){WE_CCS, FK_INVALID, 0};
        err = WE_CCS;
    } else {
        res->n += ccs_walk__run(r->ccs, v->cccs, out + res->n, max - res->n, &err);
    }
    if (err != WE_NONE && res->err == WE_NONE)
        res->err = err;
}

/* The Haskell side of a thread whose Sp is the one saved in its chunk (a
 * safe call, or the runtime's C code between the two halves of one): from
 * the frame of the code at pc, or its cost-centre stack. */
static void saved_sp_frames(struct rts *r, struct unwinder *uw, const struct memimg *img,
                            const struct rts_view *v, uint64_t pc, bool leaf,
                            struct raw_frame *out, int max, struct hs_sample *res)
{
    if (r->ccs) {
        ccs_frames(r, v, out, max, res);
        return;
    }
    if (v->tso_moving) {
        if (res->n < max)
            out[res->n++] = (struct raw_frame){pc, leaf ? FK_PC : FK_RET, 0};
        if (res->n < max)
            out[res->n++] = (struct raw_frame){WE_GC_MOVING, FK_INVALID, 0};
        if (res->err == WE_NONE)
            res->err = WE_GC_MOVING;
        return;
    }
    enum walk_error before = res->err;
    haskell_frames(r, uw, img, pc, leaf, NULL, v->saved_sp, v->stack, STG_EXACT, out, max, res);
    if (v->tso_in_gc && before == WE_NONE && res->err != WE_NONE) {
        /* (what it failed on is the collector's doing) */
        res->err = WE_GC_MOVING;
        if (res->n > 0 && out[res->n - 1].kind == FK_INVALID)
            out[res->n - 1].addr = WE_GC_MOVING;
    }
}

/* Did the Haskell side just appended (from frame `from`) reach the bottom of
 * its stack, with nothing missing? */
static bool walked_to_bottom(const struct raw_frame *out, int from, const struct hs_sample *res)
{
    return res->err == WE_NONE && res->n > from && out[res->n - 1].kind != FK_TRUNCATED &&
           out[res->n - 1].kind != FK_INVALID;
}

/* Below the Haskell frames of the outermost call into Haskell (v's, which
 * reached the bottom of its stack from frame `from`; its code's rsp is
 * rsp), the C frames under it (from StgRun's frame, the scheduler's, the
 * runtime's way in, the C function GHC wrote for the foreign export, the C
 * code that called it, to the thread's start), as a [gc] sample of the
 * thread shows them: unless the call is the runtime's own (rts__own_call;
 * or the frames reach one of its start routines: a forkOS thread), which
 * keeps a Haskell program's profile as it was. A step that cannot be made
 * (the words not captured, a frame that is not the scheduler's where
 * StgRun returns, a C caller deeper than what was captured) ends the
 * stack in [truncated]. */
static void outermost_callers(struct rts *r, struct unwinder *uw,
                              const struct thread_capture *tc, const struct memimg *img,
                              const struct rts_view *v, uint64_t rsp, struct raw_frame *out,
                              int max, struct hs_sample *res)
{
    struct unwind_result below;
    int from = res->n;
    if (!v->incall || rts__own_call(r, img, v->task, v->incall, tc->tid) || from >= max - 2)
        return;
    if (unwind__below_stg(uw, &tc->regs, rsp, img, out + from, max - from - 1, &below)) {
        if (below.stack_used > res->ur.stack_used)
            res->ur.stack_used = below.stack_used;
        res->ur.live_reads += below.live_reads;
        if (below.n >= 1 && frame_in(&out[from], &r->sched) && !below.reached_haskell &&
            !below.error && !below.live_reads) {
            if (any_frame_in(out + from, below.n, &r->own_entry)) {
                rts__saw_own_call(r, tc->tid, v->incall);
                return;
            }
            res->n = from + below.n;
            if (below.bottom || (res->n > 0 && out[res->n - 1].kind == FK_TRUNCATED))
                return;
        }
    }
    out[res->n++] = (struct raw_frame){0, FK_TRUNCATED, 0};
}

/* A callback's sample (C code called from Haskell through a safe call,
 * calling Haskell again: see rts__outer): below the Haskell frames of the
 * inner call, which end at the bottom of its own TSO's stack, the C frames
 * between its way in from the scheduler and the Haskell code that made
 * the outer call (found under StgRun's frame, where rsp was in the inner
 * call's Haskell code), then that code's Haskell frames from the TSO it
 * left; and so on for each call it is nested in. in: the inner call's
 * view; its Haskell frames begin at frame `from` (nothing is added unless
 * they reached the bottom of its stack). A step that cannot be made (the
 * RTS_OUTER_CALLS-th done, a word not captured, a frame that is not the
 * scheduler's where StgRun returns) ends the stack there in [truncated]:
 * the stack goes on, and its last frame is no caller of the program's.
 * (Not for --stack ccs: a cost-centre stack is a thread's own.) */
static void outer_calls(struct rts *r, struct unwinder *uw, const struct thread_capture *tc,
                        const struct memimg *img, const struct rts_view *in, int from,
                        uint64_t rsp, struct raw_frame *out, int max, struct hs_sample *res)
{
    struct rts_view inner = *in, outer;
    if (r->ccs)
        return;
    for (int depth = 0;; depth++) {
        struct unwind_result below;
        if (!walked_to_bottom(out, from, res))
            return;
        if (!rts__nested(r, img, &inner)) {
            outermost_callers(r, uw, tc, img, &inner, rsp, out, max, res);
            return;
        }
        from = res->n;
        if (depth == RTS_OUTER_CALLS || from >= max - 2 || !rts__outer(r, img, &inner, &outer) ||
            !unwind__below_stg(uw, &tc->regs, rsp, img, out + from, max - from, &below))
            break;
        if (below.stack_used > res->ur.stack_used)
            res->ur.stack_used = below.stack_used;
        res->ur.live_reads += below.live_reads;
        /* (Words read from the running thread are of another moment: the
         * frames written are dropped.) */
        if (below.n < 1 || !frame_in(&out[from], &r->sched) || !below.reached_haskell ||
            below.error || below.truncated || below.live_reads)
            break;
        res->n = from + below.n;
        from = res->n;
        saved_sp_frames(r, uw, img, &outer, below.hs_pc, false, out, max, res);
        rsp = below.hs_rsp;
        inner = outer;
    }
    if (from < max)
        out[res->n++] = (struct raw_frame){0, FK_TRUNCATED, 0};
}

/* The C unwind of a callback's thread before its Haskell code runs (the
 * runtime taking a capability for it, making its TSO, scheduling it) ends
 * in the Haskell code that made the outer call, below the scheduler: its
 * Haskell frames, from the TSO that call left, and the calls around that.
 * False if the thread is in no callback. */
static bool outer_call_below(struct rts *r, struct unwinder *uw, const struct thread_capture *tc,
                             const struct memimg *img, const struct rts_view *v,
                             const struct unwind_result *ur, struct raw_frame *out, int max,
                             struct hs_sample *res)
{
    struct rts_view outer;
    if (r->ccs || !ur->reached_haskell || !rts__outer(r, img, v, &outer))
        return false;
    int from = res->n;
    saved_sp_frames(r, uw, img, &outer, ur->hs_pc, false, out, max, res);
    outer_calls(r, uw, tc, img, &outer, from, ur->hs_rsp, out, max, res);
    return true;
}

/* A thread ending (its start routine returned, glibc freeing its stack),
 * or the whole program (the runtime's exit called exit, which runs the C
 * library's handlers; tail calls leave no frame of the runtime above
 * _start): a C stack unwound to its outermost frame, all in one module that
 * holds no Haskell code (the C library) but for that frame. */
static bool thread_ending(struct unwinder *uw, const struct raw_frame *out,
                          const struct unwind_result *ur)
{
    if (ur->error || ur->truncated || ur->reached_haskell || !ur->bottom || ur->n < 1)
        return false;
    const struct module *lib = NULL;
    for (int i = 0; i < ur->n; i++) {
        if (out[i].kind != FK_PC && out[i].kind != FK_RET)
            return false;
        if (i > 0 && i == ur->n - 1)
            break; /* (_start, in the executable) */
        const struct module *m =
            modset__find(uw->ms, out[i].kind == FK_RET ? out[i].addr - 1 : out[i].addr);
        if (!m || m->is_haskell || (lib && m != lib))
            return false;
        lib = m;
    }
    return true;
}

static void build(struct rts *r, struct unwinder *uw, const struct thread_capture *tc,
                  const char *comm, const struct memimg *img, struct raw_frame *out, int max,
                  struct hs_sample *res)
{
    memset(res, 0, sizeof *res);
    res->cap = -1;
    res->tag = TAG_RTS;
    res->role = ROLE_NONE;

    unwind__stack(uw, &tc->regs, tc->partial, img, out, max, &res->ur);
    const struct unwind_result ur = res->ur;
    res->n = ur.n;
    res->c_error = ur.error;

    if (strcmp(comm, "ghc_ticker") == 0) {
        /* The RTS's ticker runs no Haskell code: idle. (In the
         * non-threaded runtime, my_task is one global, the main thread's,
         * which a read from the ticker's registers would find too.) */
        res->role = ROLE_TICKER;
        res->tag = TAG_IDLE;
        return;
    }
    int mark = first_frame_in(out, ur.n, &r->mark);
    if (mark >= 0) {
        /* The nonmoving collector's mark thread (+RTS -xn) collects
         * garbage, Task or not (it has one only to sync with the
         * mutators), but for its wait for the next mark: idle there. */
        res->role = ROLE_MARK;
        res->tag = mark > 0 && frame_in(&out[mark - 1], &r->wait_cond) ? TAG_IDLE : TAG_GC;
        return;
    }
    if (r->threaded && any_frame_in(out, ur.n, &r->ending)) {
        /* A worker the runtime let go of, ending: its Task freed. */
        res->tag = sleeping(tc->state) ? TAG_IDLE : TAG_RTS;
        return;
    }
    if (r->my_task_is_tls && !tc->regs.fs_base) {
        /* Sampled without a stop before its thread pointer was ever seen:
         * no Task to read. The code it waits in still says a lot. */
        bool events = ur.reached_haskell && code_ranges__has(&r->events, ur.hs_pc - 1);
        res->tag = events || sleeping(tc->state) ? TAG_IDLE : TAG_SAFE_FFI;
        if (events)
            res->role = code_ranges__has(&r->epoll, ur.hs_pc - 1) ? ROLE_IO_MANAGER
                                                                  : ROLE_TIMER_MANAGER;
        /* (Its cost-centre stack is in its TSO, which is not known.) */
        if (ur.reached_haskell && res->n < max && !r->ccs)
            out[res->n++] = (struct raw_frame){ur.hs_pc, FK_RET, 0};
        return;
    }
    bool viewed = rts__view(r, &tc->regs, img, &res->v);
    if (res->v.task && r->threaded && thread_ending(uw, out, &ur)) {
        /* The runtime's thread ending: its thread pointer still leads to
         * the Task it had (freed, or whose InCall may still hold the TSO
         * of its last safe call). (A thread being born has no Task yet,
         * whoever started it: a foreign thread until its start routine
         * says otherwise; so too one whose Task the runtime let go of.) */
        res->tag = sleeping(tc->state) ? TAG_IDLE : TAG_RTS;
        return;
    }
    if (!viewed) {
        res->err = WE_RTS_STATE;
        res->tag = sleeping(tc->state) ? TAG_IDLE : TAG_RTS;
        return;
    }
    if (ur.reached_haskell && code_ranges__has(&r->resumed, ur.hs_pc))
        rts__view_resumed(r, img, &res->v); /* (under a signal handler) */
    const struct rts_view v = res->v;
    if (!rts__check_task(r, &tc->regs, img, &v)) {
        res->tag = TAG_NONE; /* the layout is not trusted any more */
        return;
    }

    if (v.task_stale || (!v.task && r->threaded && any_frame_in(out, ur.n, &r->starting))) {
        /* The runtime's thread with a Task freed under it (ending), or
         * none yet (starting). */
        res->tag = sleeping(tc->state) ? TAG_IDLE : TAG_RTS;
        return;
    }
    if (!v.task || foreign_single(r, out, &ur)) {
        /* A thread without a Task (but the ticker) was started by C code
         * and runs C code outside the runtime, which for the program is
         * like a safe foreign call. */
        res->role = ROLE_FOREIGN;
        res->tag = sleeping(tc->state) ? TAG_IDLE : TAG_SAFE_FFI;
        return;
    }
    if (r->threaded && !v.incall && !v.holds_cap) {
        /* A thread C started that has called Haskell (rts_lock made it a
         * Task, which it keeps) and has come back from every call (no
         * InCall left): it runs C code outside the runtime again, as it
         * did before its first call. (Before, idle, on the capability of
         * its last call.) */
        res->role = ROLE_FOREIGN;
        res->tag = sleeping(tc->state) ? TAG_IDLE : TAG_SAFE_FFI;
        return;
    }
    if (v.holds_cap)
        res->cap = v.cap_no;
    /* A capture from a perf sample (--nonblocking) has registers from
     * before the runtime's words were read, up to a tick: a pc in Haskell
     * code says it held its capability then, whatever they say now. */
    bool hs_then = tc->sampled && ur.reached_haskell && ur.hs_is_leaf && !v.holds_cap;

    /* (Not a Task asleep in yieldCapability above a collection's
     * function, requestSync: it asked for a collection while another's
     * was under way, let go of its capability, and waits to be given one
     * back, as a Task waiting for a collection does: see below.) */
    int gc_at = first_frame_in(out, ur.n, &r->gc), yield_at = first_frame_in(out, ur.n, &r->yield_cap);
    bool gc_frames = gc_at >= 0 && !(yield_at >= 0 && yield_at < gc_at && !v.holds_cap &&
                                     first_frame_in(out, yield_at, &r->wait_cond) >= 0);
    if (gc_frames) {
        /* (But a parallel collection's worker asleep on a condition in
         * gcWorkerThread, waiting for the others (GHC 9.2 on: before, it
         * spun), with no thread to run once it is over: [idle], as any
         * Task with nothing to do, whatever the collection does around
         * it.) */
        bool worker_asleep = frame_in(&out[gc_at], &r->gc_worker) &&
                             first_frame_in(out, gc_at, &r->wait_cond) >= 0 && sleeping(tc->state);
        res->tag = worker_asleep && !v.work_after ? TAG_IDLE : TAG_GC;
        res->role = v.holds_cap ? ROLE_CAP : ROLE_IDLE_WORKER;
        /* Collecting in a callback (the scheduler's, under C code called
         * back), or in a safe call's C code (System.Mem.performGC, C's
         * hs_perform_gc: a new InCall of the thread's Task): below the C
         * frames, the Haskell code that made the call. */
        outer_call_below(r, uw, tc, img, &v, &ur, out, max, res);
        return;
    }
    /* A safe call: a suspended TSO, outside the runtime's way out and back
     * in. The non-threaded runtime never lets go of its one capability, so
     * its Task still holds it then. */
    bool safe_call_out =
        v.suspended_tso && !v.in_haskell && !any_frame_in(out, ur.n, &r->rts_calls);
    if (hs_then || (v.holds_cap && !safe_call_out)) {
        res->role = ROLE_CAP;
        if (!hs_then && (!v.in_haskell || any_frame_in(out, ur.n, &r->sched))) {
            res->tag = any_frame_in(out, ur.n, &r->waiting) ? TAG_IDLE : TAG_RTS;
            /* resumeThread with its capability back but not yet in_haskell
             * (or suspendThread before it lets go of it): the Haskell side
             * of the call, while the TSO is still the suspended one.
             * resumeThread clears that a few instructions later and sets
             * rCurrentTSO only at its end: in between, the TSO is in a
             * register of its own and the call's rbp may be stale (a
             * collection during the call may have moved the chunk): no
             * Haskell stack pointer then. */
            if (ur.reached_haskell && any_frame_in(out, ur.n, &r->rts_calls)) {
                int from = res->n;
                saved_sp_frames(r, uw, img, &v, ur.hs_pc, false, out, max, res);
                outer_calls(r, uw, tc, img, &v, from, ur.hs_rsp, out, max, res);
            } else {
                /* Haskell code below the runtime's C code here is a
                 * callback's caller's: the runtime making the callback's
                 * TSO, scheduling it (below it the call it is in). */
                outer_call_below(r, uw, tc, img, &v, &ur, out, max, res);
            }
            return;
        }
        if (!ur.reached_haskell) {
            /* In Haskell for the RTS, but the C unwind never got there. */
            res->tag = any_frame_in(out, ur.n, &r->rts_calls) ||
                               any_frame_in(out, ur.n, &r->rts_work)
                           ? TAG_RTS
                           : TAG_UNSAFE_FFI;
            if (res->err == WE_NONE)
                res->err = ur.error ? WE_C_UNWIND : WE_NO_SP;
            return;
        }
        res->tag = ur.hs_is_leaf ? TAG_HASKELL : TAG_UNSAFE_FFI;
        /* C code the runtime's Cmm called (threadPaused on the way to the
         * scheduler, threadStackUnderflow, messageBlackHole, allocate...),
         * the runtime's side of a safe call, or the runtime's functions
         * compiled code calls (a write barrier, a spark, a cost centre):
         * the runtime's work. */
        bool safe_call = any_frame_in(out, ur.n, &r->rts_calls);
        bool cmm_call = !ur.hs_is_leaf && code_ranges__has(&r->cmm, ur.hs_pc - 1);
        if (safe_call || cmm_call || any_frame_in(out, ur.n, &r->rts_work))
            res->tag = TAG_RTS;
        if (r->ccs) {
            ccs_frames(r, &v, out, max, res);
            return;
        }
        /* Sp is rbp in Haskell code; inside C, the C frames' CFI restored
         * it (rbp is callee-saved) at the first Haskell frame. Around a
         * safe call, it was saved in the stack chunk before suspendThread,
         * and a collection while the call ran may have moved the chunk
         * since (its saved sp moved with it; rbp did not). The runtime's
         * Cmm saves it too before the calls that change chunks
         * (threadStackUnderflow: rbp is then in the chunk left), and its
         * way in from the scheduler (stg_returnToStackTop) loads Sp into
         * rbp from there; so does the code back from a safe call, a few
         * instructions after resumeThread returns (v.resumed until then). */
        uint64_t sp = safe_call || v.resumed ? 0 : find_sp(r, uw, img, &ur, v.stack);
        bool cmm_leaf = ur.hs_is_leaf && code_ranges__has(&r->cmm, ur.hs_pc);
        int from = res->n;
        if (safe_call || v.resumed ||
            ((cmm_call || cmm_leaf) && v.saved_sp && (sp < v.stack || sp >= v.stack_end)))
            saved_sp_frames(r, uw, img, &v, ur.hs_pc, cmm_leaf || (v.resumed && ur.hs_is_leaf),
                            out, max, res);
        else
            haskell_frames(r, uw, img, ur.hs_pc, ur.hs_is_leaf, ur.hs_is_leaf ? &tc->regs : NULL,
                           sp, v.stack, STG_SCAN_TOP, out, max, res);
        outer_calls(r, uw, tc, img, &v, from, ur.hs_rsp, out, max, res);
        return;
    }
    if (v.suspended_tso) {
        res->role = ROLE_SAFE_FFI;
        /* Back from the call, waiting in resumeThread for a capability
         * another thread holds: the runtime's scheduling, not foreign
         * code. */
        bool in_rts = any_frame_in(out, ur.n, &r->rts_calls);
        res->tag = in_rts ? TAG_RTS : TAG_SAFE_FFI;
        if (ur.reached_haskell && code_ranges__has(&r->events, ur.hs_pc - 1)) {
            /* GHC's IO or timer manager waiting in epoll/poll: the runtime
             * waiting for events, not the program working. (Back from
             * it, waiting for a capability: [rts], as any thread; before,
             * [idle], half a busy -N1 program's timer manager's samples.) */
            if (!in_rts)
                res->tag = TAG_IDLE;
            res->role = code_ranges__has(&r->epoll, ur.hs_pc - 1) ? ROLE_IO_MANAGER
                                                                  : ROLE_TIMER_MANAGER;
        }
        if (!ur.reached_haskell) {
            if (res->err == WE_NONE)
                res->err = ur.error ? WE_C_UNWIND : WE_NO_SP;
        } else {
            int from = res->n;
            saved_sp_frames(r, uw, img, &v, ur.hs_pc, false, out, max, res);
            outer_calls(r, uw, tc, img, &v, from, ur.hs_rsp, out, max, res);
        }
        return;
    }
    /* Neither holding a capability nor in a safe call: an idle worker; or a
     * callback waiting for a capability for its Haskell code (rts_lock),
     * its C stack down to the Haskell code that made the call it is in. */
    if (outer_call_below(r, uw, tc, img, &v, &ur, out, max, res)) {
        res->role = ROLE_SAFE_FFI;
        res->tag = TAG_SAFE_FFI;
        return;
    }
    res->role = ROLE_IDLE_WORKER;
    /* (Waiting for its capability, which a collection took: the time the
     * collection costs it; under +RTS -qg, or -qn, what the other
     * capabilities lose while one collects. Not asleep, it is the
     * runtime's code handing a capability over or waking to take one.) */
    res->tag = v.gc_sync ? TAG_GC : sleeping(tc->state) ? TAG_IDLE : TAG_RTS;
    if (v.cap_collected) {
        res->cap = v.cap_no;
        res->cap_collected = true;
    }
}

void hs_sample__build(struct rts *r, struct unwinder *uw, const struct thread_capture *tc,
                      const char *comm, const struct memimg *img, struct raw_frame *out,
                      int max, struct hs_sample *res)
{
    memimg__forget_hint(img);
    build(r, uw, tc, comm, img, out, max, res);
    /* One of the runtime's signal handlers on top of what the thread was
     * doing (Haskell code, a foreign call, a C thread's own work, a wait):
     * the runtime's work for now, its frames and the ones below kept. (Not
     * the collector's, whose tag says more; nor the ticker, idle by its
     * name.) */
    if ((res->tag == TAG_HASKELL || res->tag == TAG_UNSAFE_FFI || res->tag == TAG_SAFE_FFI ||
         res->tag == TAG_IDLE) &&
        res->role != ROLE_TICKER && any_frame_in(out, res->ur.n, &r->handlers))
        res->tag = TAG_RTS;
}

enum sample_tag hs_sample__before_runtime(const struct rts *r, const struct raw_frame *out,
                                          int n, char state)
{
    if (sleeping(state))
        return TAG_IDLE;
    return any_frame_in(out, n, &r->init) ? TAG_RTS : TAG_SAFE_FFI;
}
