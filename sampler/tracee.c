/* tracee.c - attaching, interrupting, resuming and detaching threads, and
 * the one place every waitpid() status is interpreted. */
#define _GNU_SOURCE
#include "sampler/tracee.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sampler/log.h"
#include "sampler/proc.h"
#include "sampler/remote.h"

uint64_t tracee__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void tracee__signal_set(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGCHLD);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGHUP);
    sigaddset(set, SIGTSTP);
    sigaddset(set, SIGTTIN);
    sigaddset(set, SIGTTOU);
}

/* hsspy's own files come first: the program's objects it reads for names
 * and unwind tables, the /proc files it opens for a moment, its output. A
 * thread's kept files (three in /proc and a perf event: what spares it
 * stops) only while more than FD_SPARE stay free. Files are numbered lowest
 * free first, so a number that high means that few are free. Returns fd,
 * or -1 having closed it. */
#define FD_SPARE 128

long tracee__fd_limit(void)
{
    static long limit;
    struct rlimit r;
    if (!limit)
        limit = getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur != RLIM_INFINITY &&
                        r.rlim_cur < (rlim_t)1 << 30
                    ? (long)r.rlim_cur
                    : 1L << 30;
    return limit;
}

static int spare_fd(struct tracee *t, struct tthread *th, int fd)
{
    if (fd < 0 || fd < tracee__fd_limit() - FD_SPARE)
        return fd;
    close(fd);
    t->st.fd_short += !th->fd_short;
    th->fd_short = true;
    return -1;
}

static struct tthread *find(struct tracee *t, pid_t tid)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->th[i].tid == tid && t->th[i].run != TT_GONE)
            return &t->th[i];
    return NULL;
}

static size_t tid_slot(pid_t tid, size_t cap)
{
    return (size_t)(((uint32_t)tid * 2654435761u) >> 7) & (cap - 1);
}

/* (Re)build t->tid_idx; false if out of memory (find is used then). */
static bool index_tids(struct tracee *t)
{
    size_t cap = 64;
    while (cap < 2 * t->n)
        cap *= 2;
    if (cap != t->tid_cap) {
        uint32_t *idx = realloc(t->tid_idx, cap * sizeof *idx);
        if (!idx)
            return false;
        t->tid_idx = idx;
        t->tid_cap = cap;
    }
    memset(t->tid_idx, 0, t->tid_cap * sizeof *t->tid_idx);
    for (size_t i = 0; i < t->n; i++) {
        if (t->th[i].run == TT_GONE)
            continue;
        size_t h = tid_slot(t->th[i].tid, cap);
        while (t->tid_idx[h])
            h = (h + 1) & (cap - 1);
        t->tid_idx[h] = (uint32_t)i + 1;
    }
    t->tid_stale = false;
    return true;
}

/* find, by the index: for each switch record and each wait status. */
static struct tthread *find_indexed(struct tracee *t, pid_t tid)
{
    if ((t->tid_stale || !t->tid_idx) && !index_tids(t))
        return find(t, tid);
    for (size_t h = tid_slot(tid, t->tid_cap); t->tid_idx[h]; h = (h + 1) & (t->tid_cap - 1)) {
        struct tthread *th = &t->th[t->tid_idx[h] - 1];
        if (th->tid == tid && th->run != TT_GONE)
            return th;
    }
    return NULL;
}

static struct tthread *add(struct tracee *t, pid_t tid)
{
    struct tthread *th = find(t, tid);
    if (th)
        return th;
    /* Reuse a slot of an exited thread before growing. */
    for (size_t i = 0; i < t->n; i++)
        if (t->th[i].run == TT_GONE) {
            th = &t->th[i];
            break;
        }
    if (!th) {
        if (t->n == t->cap) {
            size_t nc = t->cap ? 2 * t->cap : 32;
            struct tthread *nt = realloc(t->th, nc * sizeof *nt);
            if (!nt)
                return NULL;
            t->th = nt;
            t->cap = nc;
        }
        th = &t->th[t->n++];
    }
    memset(th, 0, sizeof *th);
    t->tid_stale = true;
    th->tid = tid;
    th->run = TT_RUNNING;
    th->state = '?';
    th->cs.fd = -1;
    th->stat_fd = spare_fd(t, th, proc__open_stat(t->pid, tid));
    th->sched_fd = spare_fd(t, th, proc__open_schedstat(t->pid, tid));
    th->sys_fd = spare_fd(t, th, proc__open_syscall(t->pid, tid));
    t->st.threads_seen++;
    return th;
}

static void close_fds(struct tthread *th)
{
    if (th->stat_fd >= 0)
        close(th->stat_fd);
    if (th->sched_fd >= 0)
        close(th->sched_fd);
    if (th->sys_fd >= 0)
        close(th->sys_fd);
    th->stat_fd = th->sched_fd = th->sys_fd = -1;
    cswitch__close(&th->cs);
    free(th->hit_stack);
    th->hit_stack = NULL;
    th->hit.copy = NULL;
    th->hit_new = false;
}

/* Whether a thread's context switches are known this tick: from its own
 * ring, or from the per-CPU events' records. */
static bool switches_known(const struct tracee *t, const struct tthread *th)
{
    return th->cs.fd >= 0 || (t->sw && !t->sw_lost);
}

/* A sample of th's switch off a CPU (r), or the record of such a switch:
 * the registers an interrupted thread left its CPU with, after the
 * interrupt, are those of its stop once the switch's record shows it left
 * to sleep (the record follows the sample, on the same CPU). Whether the
 * tick's read or a peek meets them (tracee__stop_regs). */
static void note_stop_regs(struct tthread *th, const struct psample_rec *r)
{
    if (r->type == PERF_RECORD_SAMPLE) {
        if ((th->want || th->run == TT_HELD) && r->t_ns > th->t_interrupt_ns &&
            r->t_ns >= th->stop_regs_ns) {
            th->stop_regs = r->hit.regs;
            th->stop_regs_ns = r->t_ns;
            th->stop_regs_ok = false;
        }
    } else if (!r->in && !r->preempted && th->stop_regs_ns > th->t_interrupt_ns &&
               r->t_ns >= th->stop_regs_ns) {
        th->stop_regs_ok = true;
    }
}

/* A record written since the tick's read of t->sw (psample_set__peek):
 * a thread given a CPU since, or leaving one (when), or records lost. */
static void peek_record(void *arg, const struct psample_rec *r)
{
    struct tracee *t = arg;
    if (r->type == PERF_RECORD_LOST) {
        t->sw_peek_lost = true;
        return;
    }
    struct tthread *th;
    if ((r->type != PERF_RECORD_SAMPLE && r->type != PERF_RECORD_SWITCH_CPU_WIDE) ||
        r->pid != t->pid || !(th = find_indexed(t, r->tid)))
        return;
    note_stop_regs(th, r);
    if (r->type == PERF_RECORD_SWITCH_CPU_WIDE) {
        if (r->in)
            th->ins_peeked++;
        else if (r->t_ns > th->out_peeked_ns)
            th->out_peeked_ns = r->t_ns;
    }
}

/* Where a thread's scheduler counters stand: from its context-switch
 * records if it has them (the times it was given a CPU; run_ns
 * UINT64_MAX, which no schedstat gives, so counters of the two kinds never
 * compare equal), else /proc's schedstat (time run, times scheduled in).
 * As of now, or with per-CPU records as of the tick's read (at_read: the
 * tick's picture of every thread, without looking at the records written
 * since for each). 0 or -1. */
static int counters_as(struct tracee *t, struct tthread *th, uint64_t *run_ns, uint64_t *slices,
                       bool at_read)
{
    unsigned long losses = th->cs.losses;
    if (cswitch__update(&th->cs)) {
        t->st.cs_losses += th->cs.losses - losses;
        *run_ns = UINT64_MAX;
        *slices = th->cs.ins;
        return 0;
    }
    if (switches_known(t, th)) {
        if (!at_read)
            psample_set__peek(t->sw, peek_record, t);
        if (!t->sw_peek_lost) {
            *run_ns = UINT64_MAX;
            *slices = th->cs.ins + th->ins_peeked;
            return 0;
        }
        /* Records lost since the tick's read (many threads switching
         * often): /proc tells, as when the tick's read lost some, until
         * the next tick. (Those counters never equal the records': a
         * thread compared across the loss has "run".) */
    }
    return proc__schedstat(th->sched_fd, run_ns, slices);
}

static int counters(struct tracee *t, struct tthread *th, uint64_t *run_ns, uint64_t *slices)
{
    return counters_as(t, th, run_ns, slices, false);
}

/* Whether a thread's ring is worth its cost. Each context switch of a
 * thread with a perf event costs it about 1.3 us in and 1.3 us out on a
 * 2-CPU VM (measured: a pipe ping-pong between two threads, four switches
 * a round trip, 37 us alone, 41 with a dummy event on each thread, 42.3
 * with its records), most
 * of it the kernel's perf context switch, not the record; a read of /proc
 * costs hsspy 1 to 3 us, and a ring spares a thread one to three of them a
 * tick. So a thread given a CPU more than about once a tick (smoothed over
 * some 16 ticks, its stops for samples included) loses its ring, and gets
 * it back once it stays quiet for longer. count: the ring's or, without
 * one, schedstat's times given a CPU. */
#define CS_BUSY (3 * 256 / 2) /* close above 1.5 a tick */
#define CS_QUIET (256 / 2)    /* reopen below 0.5 a tick */

static void switch_rate(struct tracee *t, struct tthread *th, uint64_t count)
{
    bool ring = th->cs.fd >= 0;
    if (ring == th->cs_seen_ring && count >= th->cs_seen) {
        uint64_t d = count - th->cs_seen;
        th->cs_rate = th->cs_rate - th->cs_rate / 16 + (uint32_t)(d < 64 ? d : 64) * 16;
    }
    th->cs_seen = count;
    th->cs_seen_ring = ring;
    if (ring && th->cs_rate > CS_BUSY) {
        cswitch__close(&th->cs);
        th->cs_busy = true;
        t->st.cs_busy += !th->cs_was_busy;
        th->cs_was_busy = true;
    } else if (!ring && th->cs_busy && th->cs_rate < CS_QUIET) {
        th->cs_busy = false;
        th->cs_tried = false; /* opened again at the next tick */
    }
}

/* A thread's first tick with t->switch_records: open its ring. */
static void open_ring(struct tracee *t, struct tthread *th)
{
    th->cs_tried = true;
    int err = cswitch__open(&th->cs, th->tid);
    if (err == 0 && spare_fd(t, th, th->cs.fd) < 0) {
        th->cs.fd = -1; /* (closed) */
        cswitch__close(&th->cs);
        err = -EMFILE;
    }
    if (err == 0) {
        t->st.cs_threads += !th->cs_was_busy; /* (counted at its first opening) */
    } else if (err != -ESRCH && !th->cs_was_busy) {
        if (!t->st.cs_refused)
            t->st.cs_errno = -err;
        t->st.cs_refused++;
    }
}

/* One record of t->sw (t->pss, or events that only record switches): the
 * newest sample of each of the program's threads, and their context
 * switches (other programs' are skipped). */
static void take_sample(void *arg, const struct psample_rec *r)
{
    struct tracee *t = arg;
    if (r->type == PERF_RECORD_LOST) {
        t->st.ps_lost += t->pss ? r->lost : 0;
        t->sw_lost = true;
        return;
    }
    if ((r->type != PERF_RECORD_SAMPLE && r->type != PERF_RECORD_SWITCH_CPU_WIDE) ||
        r->pid != t->pid)
        return;
    struct tthread *th = find_indexed(t, r->tid);
    if (!th)
        return;
    if (t->sw->switch_samples)
        note_stop_regs(th, r); /* (a late stop's, read before it is seen) */
    if (r->type == PERF_RECORD_SWITCH_CPU_WIDE) {
        th->cs.ins += r->in;
        if (r->in && r->t_ns > th->in_t_ns)
            th->in_t_ns = r->t_ns;
        /* (The rings are read one CPU after another: a thread that moved
         * left one CPU before it was given the other.) */
        if (th->waking && !r->in && !r->preempted && !th->back_ns && r->t_ns >= th->resumed_ns)
            th->back_ns = r->t_ns; /* back to sleep after our stop woke it */
        if (r->t_ns >= th->sw_t_ns) {
            th->sw_t_ns = r->t_ns;
            th->cs.where = r->in ? CS_ON_CPU : r->preempted ? CS_PREEMPTED : CS_ASLEEP;
            th->preempted_by_tracer = r->preempted && r->next_pid == t->self;
        }
        return;
    }
    if (!th->hit_new || r->hit.t_ns >= th->hit.t_ns)
        th->hit = r->hit;
    th->hit_new = true;
}

static void gone(struct tracee *t, struct tthread *th)
{
    t->tid_stale = true;
    close_fds(th);
    th->run = TT_GONE;
    th->want = false;
    t->st.threads_exited++;
    remote__forget(th->tid);
    if (t->leaderless) {
        /* No exit status of the leader will come (not ours to reap): the
         * process is over when its last thread is. */
        size_t left = 0;
        for (size_t i = 0; i < t->n; i++)
            left += t->th[i].run != TT_GONE;
        if (!left) {
            t->exited = true;
            t->exit_status = -1; /* (not known) */
        }
    }
}

static void resume(struct tracee *t, struct tthread *th)
{
    if (th->group_stopped && !th->pending_sig) {
        /* Back into its job-control stop, which SIGCONT still ends. */
        th->want = false;
        th->held_born = false;
        th->run = TT_LISTENING;
        if (ptrace(PTRACE_LISTEN, th->tid, 0, 0) < 0 && errno != ESRCH)
            t->st.ptrace_errors++;
        return;
    }
    int sig = th->pending_sig;
    th->pending_sig = 0;
    th->signalled = sig;
    th->group_stopped = false; /* (running on: never to be put back listening) */
    th->want = false;
    th->held_born = false;
    th->resumed_ns = tracee__now_ns();
    if (ptrace(PTRACE_CONT, th->tid, 0, (void *)(long)sig) < 0) {
        if (errno == ESRCH) {
            /* Died while stopped (SIGKILL): its exit status follows. */
            th->run = th->exiting ? TT_EXITING : TT_RUNNING;
            return;
        }
        t->st.ptrace_errors++;
    }
    if (sig)
        t->st.signals_forwarded++;
    th->run = th->exiting ? TT_EXITING : TT_RUNNING;
}

/* Is a signal pending (and not blocked) for the thread? Then it, not our
 * stop, may have interrupted the call. */
static bool signal_pending(pid_t pid, pid_t tid)
{
    char path[96], buf[4096];
    unsigned long long pnd = 0, shd = 0, blk = 0;
    const char *p;
    snprintf(path, sizeof path, "/proc/%d/task/%d/status", (int)pid, (int)tid);
    if (proc__read(path, buf, sizeof buf) <= 0)
        return true; /* cannot tell: do not touch it */
    if ((p = strstr(buf, "\nSigPnd:")))
        pnd = strtoull(p + 8, NULL, 16);
    if ((p = strstr(buf, "\nShdPnd:")))
        shd = strtoull(p + 8, NULL, 16);
    if ((p = strstr(buf, "\nSigBlk:")))
        blk = strtoull(p + 8, NULL, 16);
    return ((pnd | shd) & ~blk) != 0;
}

/* A thread that entered epoll_wait (or semop, sigtimedwait) between our
 * look at /proc and our interrupt had that call fail with EINTR because of
 * the stop, not because of any signal. Undo it the way the kernel restarts
 * a call: back to the syscall instruction with the call number in rax. */
static void restart_broken_call(struct tracee *t, struct tthread *th,
                                const struct user_regs_struct *regs)
{
    struct user_regs_struct r;
    if (!regs || (long long)regs->rax != -EINTR || !proc__syscall_breaks_on_stop((long)regs->orig_rax) ||
        th->pending_sig || signal_pending(t->pid, th->tid))
        return;
    r = *regs;
    r.rax = r.orig_rax;
    r.rip -= 2; /* the length of `syscall` */
    if (ptrace(PTRACE_SETREGS, th->tid, 0, &r) == 0)
        t->st.restarted++;
}

/* A thread we interrupted has stopped: capture it now, then let it go
 * (one on its way out: once released, see tracee__release_exits). */
static void held(struct tracee *t, struct tthread *th, bool exiting)
{
    th->want = false;
    th->run = TT_HELD;
    if (!t->on_stop)
        return; /* held until the caller resumes it */
    if (!t->collecting)
        t->st.late_stops++;
    const struct user_regs_struct *regs = t->on_stop(t->stop_arg, th);
    th->owed = 0;
    if (exiting) {
        t->exits_held++;
        return;
    }
    if (!th->group_stopped)
        restart_broken_call(t, th, regs);
    resume(t, th);
}

void tracee__on_stop(struct tracee *t, tracee_stop_fn fn, void *arg)
{
    t->on_stop = fn;
    t->stop_arg = arg;
}

static bool is_stop_signal(int sig)
{
    return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

void tracee__handle(struct tracee *t, pid_t tid, int status)
{
    struct tthread *th = find_indexed(t, tid);

    if (WIFEXITED(status) || WIFSIGNALED(status)) {
        if (th) {
            t->st.lost += th->want;
            gone(t, th);
        }
        if (tid == t->pid) {
            t->exited = true;
            t->exit_status = status;
        }
        return;
    }
    if (!WIFSTOPPED(status))
        return;
    if (!th) {
        /* A new thread's first stop can arrive before its parent's
         * PTRACE_EVENT_CLONE; it is traced already (auto-attached). */
        th = add(t, tid);
        if (!th) {
            ptrace(PTRACE_CONT, tid, 0, 0);
            return;
        }
        th->born = true;
    }

    int sig = WSTOPSIG(status);
    int event = (unsigned)status >> 16;

    switch (event) {
    case 0:
        /* Signal-delivery-stop: the target was sent `sig`. It must be
         * re-injected exactly once, when this thread resumes. (Not in a
         * group stop, then.) */
        th->pending_sig = sig;
        th->group_stopped = false;
        if (th->want)
            held(t, th, false);
        else
            resume(t, th);
        return;
    case PTRACE_EVENT_CLONE: {
        unsigned long child = 0;
        struct tthread *c;
        if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &child) == 0 && child &&
            (c = add(t, (pid_t)child)) && !c->want)
            c->born = true;
        th = find(t, tid); /* add() may have moved the array */
        break;
    }
    case PTRACE_EVENT_EXEC: {
        /* Done by another thread than the leader, the thread that did it
         * has taken the leader's tid, after the leader's way out (which
         * stopped it here, as exiting): this tid's thread lives on. The
         * thread's former tid is gone without a word. */
        unsigned long former = 0;
        struct tthread *f;
        th->exiting = false;
        if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &former) == 0 && former &&
            (pid_t)former != tid && (f = find(t, (pid_t)former)) && f->run != TT_GONE)
            gone(t, f);
        t->execed = true;
        if (t->hold_exec) {
            th->want = false;
            th->run = TT_HELD;
            th->held_exec = true;
            return;
        }
        break;
    }
    case PTRACE_EVENT_EXIT:
        th->exiting = true; /* (never interrupted again) */
        /* On its way out (exit, exit_group, or killed with the others),
         * the program's memory still whole: while sampling, held until
         * the samples taken so far have been walked (see
         * tracee__release_exits), since what their copies lack is read
         * from the program then, and once its last thread has gone on
         * there is nothing to read. Sampled here if we asked for it:
         * this is where it is. */
        if (th->want) {
            held(t, th, true);
            return;
        }
        if (t->on_stop) {
            th->run = TT_HELD;
            t->exits_held++;
            return;
        }
        break;
    case PTRACE_EVENT_STOP:
        if (is_stop_signal(sig)) {
            /* Group-stop (job control): keep it stopped, but listening, so
             * SIGCONT still wakes it. Sampled while stopped only by a dump
             * (sample_stopped), which interrupted it: then held (what it
             * was doing when stopped), and put back listening (resume). */
            th->group_stopped = true;
            if (th->want && t->sample_stopped) {
                held(t, th, false);
                return;
            }
            th->want = false;
            th->run = TT_LISTENING;
            t->st.group_stops++;
            if (ptrace(PTRACE_LISTEN, tid, 0, 0) < 0 && errno != ESRCH)
                t->st.ptrace_errors++;
            return;
        }
        if (th->born) {
            /* A new thread's first stop: it has not run a single
             * instruction of its own, so there is nothing to sample. (Its
             * stack holds its start arguments; unwinding them is noise.) */
            th->born = false;
            th->want = false;
            if (t->hold_born) {
                th->run = TT_HELD;
                th->held_born = true;
                return;
            }
            resume(t, th);
            return;
        }
        /* An interrupt, or the end of a group stop (after PTRACE_LISTEN). */
        th->group_stopped = false;
        break;
    default:
        break;
    }

    if (th->want) {
        held(t, th, false);
        return;
    }
    /* Nobody waits for this stop: a late interrupt, a new thread's first
     * stop, the end of a group stop, or a clone/exec event. */
    if (event == PTRACE_EVENT_STOP && th->run == TT_RUNNING)
        t->st.stray_stops++;
    resume(t, th);
}

int tracee__drain(struct tracee *t)
{
    int n = 0, status;
    pid_t tid;
    while ((tid = waitpid(-1, &status, WNOHANG | __WALL)) > 0) {
        tracee__handle(t, tid, status);
        n++;
    }
    t->reaped = tid == 0;
    return n;
}

/* sigtimedwait for the signals of tracee__signal_set, noting a SIGCHLD
 * taken (see t->reaped), and a job-control stop asked of hsspy (t->job_stop),
 * which it waits on past. */
static int wait_signal(struct tracee *t, const sigset_t *set, uint64_t left_ns)
{
    uint64_t end = tracee__now_ns() + left_ns;
    for (;;) {
        struct timespec ts = {(time_t)(left_ns / 1000000000u), (long)(left_ns % 1000000000u)};
        int sig = sigtimedwait(set, NULL, &ts);
        if (sig == SIGCHLD)
            t->reaped = false;
        if (sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU)
            return sig;
        t->job_stop = sig;
        uint64_t now = tracee__now_ns();
        if (now >= end) {
            errno = EAGAIN;
            return -1;
        }
        left_ns = end - now;
    }
}

/* A wait between ticks at least this long also watches the switch events'
 * rings: a shorter one ends before a ring sized by the tick fills (see
 * psample__switch_pages), and its poll would cost more than a sleep. */
#define TT_DRAIN_WAIT_NS 20000000u
/* ... and any wait, for this many ticks after one whose read found
 * records lost: the rings are too small for how often the threads
 * switch. */
#define TT_LOSSY_TICKS 100

/* The records of t->sw since its last read, folded into each thread (the
 * peeked ones counted again now), and their room freed where they hold
 * no sample's stack (switches only). */
static void read_switches(struct tracee *t)
{
    for (size_t i = 0; i < t->n; i++)
        t->th[i].ins_peeked = 0;
    psample_set__read(t->sw, take_sample, t);
    if (t->sw != t->pss)
        psample_set__release(t->sw);
}

void tracee__read_switches(struct tracee *t) { read_switches(t); }

/* --nonblocking's rings are to be read between ticks: each thread's
 * newest sample read so far (hit_new) gets its stack copied out of its
 * ring, which can then be released. False where a buffer for it cannot be
 * had: then nothing is released, and the ring fills up to the tick. */
static bool keep_hits(struct tracee *t)
{
    for (size_t i = 0; i < t->n; i++) {
        struct tthread *th = &t->th[i];
        if (th->run == TT_GONE || !th->hit_new || !th->hit.src ||
            th->hit.stack_len > PSAMPLE_STACK)
            continue;
        if (!th->hit_stack && !(th->hit_stack = malloc(PSAMPLE_STACK)))
            return false;
        psample__copy_stack(&th->hit, th->hit_stack);
        th->hit.copy = th->hit_stack;
        th->hit.src = NULL;
    }
    return true;
}

/* A ring of t->sw half full between ticks: its records folded now, as
 * the tick's read would, which frees their room (with --nonblocking, once
 * the newest sample of each thread is copied out). (Not while stops are
 * collected: the tick's picture of each thread, the records up to its
 * read and those peeked since, must hold until it is over.) */
static void drain_switches(struct tracee *t)
{
    bool lost = t->sw_lost;
    t->sw_lost = false;
    read_switches(t);
    if (t->sw == t->pss) {
        if (keep_hits(t))
            psample_set__release(t->sw);
        else
            t->no_drain = true;
    }
    t->sw_drain_lost |= t->sw_lost;
    t->sw_lost = lost;
    t->st.sw_drains++;
}

/* wait_signal, which in a long wait also reads a ring of the per-CPU
 * events once it is half full: then 0, no signal taken. A ring read only
 * at the tick would lose records, on a program that switches enough, at a
 * rate low enough for rings to fill between ticks whatever their size. */
static int wait_or_drain(struct tracee *t, const sigset_t *set, uint64_t left_ns)
{
    struct psample_set *s = t->sw;
    if (!s || t->no_drain || (left_ns < TT_DRAIN_WAIT_NS && !t->sw_lossy))
        return wait_signal(t, set, left_ns);
    if (t->sig_fd == 0) {
        t->sig_fd = signalfd(-1, set, SFD_CLOEXEC | SFD_NONBLOCK);
        if (t->sig_fd >= 0 && !(t->pfd = calloc((size_t)s->n + 1, sizeof *t->pfd))) {
            close(t->sig_fd);
            t->sig_fd = -1;
        }
        if (t->sig_fd < 0)
            t->sig_fd = -1;
    }
    if (t->sig_fd < 0)
        return wait_signal(t, set, left_ns);
    nfds_t n = 0;
    t->pfd[n++] = (struct pollfd){.fd = t->sig_fd, .events = POLLIN};
    for (int i = 0; i < s->n; i++)
        if (s->cpu[i].fd >= 0)
            t->pfd[n++] = (struct pollfd){.fd = s->cpu[i].fd, .events = POLLIN};
    struct timespec ts = {(time_t)(left_ns / 1000000000u), (long)(left_ns % 1000000000u)};
    int got = ppoll(t->pfd, n, &ts, NULL);
    if (got == 0) {
        errno = EAGAIN;
        return -1;
    }
    if (got < 0) {
        t->no_drain = true;
        return wait_signal(t, set, left_ns);
    }
    bool full = false;
    for (nfds_t k = 1; k < n; k++) {
        if (t->pfd[k].revents & (POLLERR | POLLHUP | POLLNVAL))
            t->no_drain = true; /* (never readable again: no more polls) */
        else if (t->pfd[k].revents & POLLIN)
            full = true;
    }
    if (full)
        drain_switches(t);
    if (!(t->pfd[0].revents & POLLIN))
        return 0;
    int sig = wait_signal(t, set, 0);
    return sig < 0 ? 0 : sig;
}

int tracee__wait(struct tracee *t, uint64_t deadline_ns)
{
    sigset_t set;
    tracee__signal_set(&set);
    for (;;) {
        if (!t->reaped)
            tracee__drain(t);
        uint64_t now = tracee__now_ns();
        if (now >= deadline_ns || t->exited || t->exits_held)
            return 0; /* (threads held on their way out: see tracee__release_exits) */
        int sig = wait_or_drain(t, &set, deadline_ns - now);
        if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP)
            return sig;
        if (sig < 0 && errno == EAGAIN)
            return 0; /* the deadline, and no SIGCHLD: nothing to drain */
    }
}

static const char *attach_hint(void)
{
    char buf[16];
    bool yama = proc__read("/proc/sys/kernel/yama/ptrace_scope", buf, sizeof buf) > 0;
    if (yama && buf[0] == '3')
        return "kernel.yama.ptrace_scope is 3, which allows no tracing at all until the "
               "machine reboots";
    if (geteuid() == 0)
        return "even root may not: a security module (SELinux, AppArmor) or a lockdown "
               "forbids it";
    if (yama && buf[0] != '0')
        return "run hsspy as root (or with CAP_SYS_PTRACE), or allow it with "
               "'sysctl kernel.yama.ptrace_scope=0'";
    return "run hsspy as the same user as the target, or as root (or with CAP_SYS_PTRACE)";
}

/* Explain why PTRACE_SEIZE of the main thread failed, in one line. */
static void explain_attach_error(pid_t pid, int err)
{
    char comm[32];
    int tracer;

    if (err == ESRCH) {
        log__error("no process with pid %d (has it exited?)", (int)pid);
        return;
    }
    tracer = proc__tracer(pid);
    if (tracer > 0) {
        proc__comm(tracer, 0, comm, sizeof comm);
        log__error("pid %d is already traced by pid %d (%s); detach that debugger or "
                   "profiler first",
                   (int)pid, tracer, comm);
        return;
    }
    if (err == EPERM && proc__is_kthread(pid)) {
        proc__comm(pid, 0, comm, sizeof comm);
        log__error("pid %d (%s) is a kernel thread: it runs no program for hsspy to profile "
                   "('perf record -g -p %d' samples it in the kernel)",
                   (int)pid, comm, (int)pid);
        return;
    }
    if (err == EPERM && geteuid() != 0 && proc__not_dumpable(pid)) {
        log__error("not allowed to trace pid %d: it is " PROC_UNDUMPABLE_WHY
                   "; run hsspy as root (or with CAP_SYS_PTRACE)",
                   (int)pid);
        return;
    }
    if (err == EPERM) {
        log__error("not allowed to trace pid %d: %s", (int)pid, attach_hint());
        return;
    }
    log__error("cannot trace pid %d: %s", (int)pid, strerror(err));
}

int tracee__adopt(struct tracee *t, pid_t pid)
{
    memset(t, 0, sizeof *t);
    t->pid = pid;
    t->self = getpid();
    return add(t, pid) ? 0 : -ENOMEM;
}

/* A thread of pid's other than its leader that has not exited (0: none). */
static pid_t live_thread(pid_t pid)
{
    pid_t *tids, found = 0;
    size_t n;
    if (proc__tasks(pid, &tids, &n) < 0)
        return 0;
    for (size_t i = 0; i < n && !found; i++) {
        char st = tids[i] == pid ? 'Z' : proc__state(pid, tids[i]);
        if (st != 'Z' && st != 'X' && st != '?')
            found = tids[i];
    }
    free(tids);
    return found;
}

int tracee__attach(struct tracee *t, pid_t pid)
{
    char st;
    pid_t first = pid; /* the thread seized first */

    memset(t, 0, sizeof *t);
    t->pid = pid;
    t->self = getpid();

    if (pid <= 0) {
        log__error("invalid pid %d", (int)pid);
        return -EINVAL;
    }
    int tgid = proc__tgid(pid);
    if (tgid > 0 && tgid != pid) {
        /* A thread's tid (as top -H or a log shows them): its process. */
        log__info("%d is a thread of pid %d: profiling that process", (int)pid, tgid);
        t->pid = pid = tgid;
    }
    st = proc__state(pid, 0);
    if (st == '?') {
        log__error("no process with pid %d (has it exited?)", (int)pid);
        return -ESRCH;
    }
    if ((st == 'Z' || st == 'X') && !(first = live_thread(pid))) {
        log__error("pid %d is a zombie: it has exited and only waits for its parent to "
                   "reap it; there is nothing to profile",
                   (int)pid);
        return -ESRCH;
    }
    /* A zombie leader with threads running on (a main() that ended in
     * pthread_exit): they are the process, to the end of the last. Its
     * memory is read through one of them (remote__mm_pid). */
    t->leaderless = first != pid;
    if (pid == getpid()) {
        log__error("hsspy cannot profile itself");
        return -EINVAL;
    }
    if (ptrace(PTRACE_SEIZE, first, 0, (void *)(long)TRACEE_OPTIONS) < 0) {
        int e = errno;
        explain_attach_error(first, e);
        return -e;
    }
    add(t, first);

    /* Threads created by a thread we have not seized yet are not followed by
     * PTRACE_O_TRACECLONE, so list again until nothing new appears. */
    for (int round = 0; round < 100; round++) {
        pid_t *tids;
        size_t n, added = 0;
        if (proc__tasks(pid, &tids, &n) < 0)
            break;
        for (size_t i = 0; i < n; i++) {
            if (find(t, tids[i]))
                continue;
            if (ptrace(PTRACE_SEIZE, tids[i], 0, (void *)(long)TRACEE_OPTIONS) == 0) {
                add(t, tids[i]);
                added++;
            } else if (errno != ESRCH && errno != EPERM) {
                t->st.ptrace_errors++;
            }
            /* EPERM here: it is traced already (auto-attached as a clone
             * child whose event we have not read yet) or exiting. */
        }
        free(tids);
        tracee__drain(t);
        if (!added)
            break;
    }
    return 0;
}

struct tthread *tracee__find(struct tracee *t, pid_t tid) { return find(t, tid); }

/* How long tracee__stop_regs waits for the switch of a thread seen
 * stopped: its sample came 5 to 20 us after the stop was seen, polling, on
 * the PVM guest (the bench workload at 1 kHz; 99% within this wait);
 * PTRACE_GETREGS would wait for the switch too. */
#define TT_STOP_REGS_SPIN_NS 40000u

bool tracee__stop_regs(struct tracee *t, struct tthread *th, struct user_regs_struct *out,
                       tracee_wait_fn while_waiting, void *ctx)
{
    /* (Only the events that sample switches have registers; a thread's
     * thread pointer, which they lack, comes from an earlier stop.) */
    if (!t->sw || t->sw == t->pss || !t->sw->switch_samples || !th->fs_base || t->sw_lost)
        return false;
    uint64_t from = 0;
    for (;;) {
        psample_set__peek(t->sw, peek_record, t);
        if (t->sw_peek_lost)
            break;
        if (th->stop_regs_ok && th->stop_regs_ns > th->t_interrupt_ns) {
            /* In a system call, rax is its number until it returns (-ENOSYS
             * at the entry) and its return value after: a call our stop
             * broke (-EINTR) is restarted from orig_rax, which only
             * PTRACE_GETREGS gives. */
            long long ax = (long long)th->stop_regs.rax;
            if (ax == -EINTR || ax == -ENOSYS)
                break;
            *out = th->stop_regs;
            out->fs_base = th->fs_base;
            t->st.stop_regs_ring++;
            return true;
        }
        uint64_t now = tracee__now_ns();
        if (!from) {
            from = now;
            if (while_waiting)
                while_waiting(ctx, th);
        } else if (now - from > TT_STOP_REGS_SPIN_NS)
            break;
        __builtin_ia32_pause();
    }
    return false;
}

uint64_t tracee__stop_began(const struct tthread *th, uint64_t seen_ns)
{
    uint64_t out = th->out_peeked_ns;
    return out > th->t_interrupt_ns && out < seen_ns + 1000000u ? out : seen_ns;
}

void tracee__stopped_base(struct tracee *t, struct tthread *th)
{
    bool ok = (th->state == 'R' || th->state == 'S') &&
              counters(t, th, &th->stop_run_ns, &th->stop_slices) == 0;
    th->stop_base = ok && th->state == 'R';
    th->stop_asleep = ok && th->state == 'S';
}

void tracee__settled(struct tracee *t, struct tthread *th)
{
    th->waking = false;
    if (th->sampled) {
        /* Captured as of a sampling instant, which may be most of a tick
         * ago: it may have run since (and gone to sleep, say), so the next
         * tick looks at it again rather than repeat this. */
        th->has_base = false;
        th->stop_base = false;
        th->stop_asleep = false;
        return;
    }
    bool asleep = th->stop_asleep;
    th->stop_asleep = false;
    th->waking = asleep;
    th->waking_slices = th->stop_slices;
    th->back_ns = 0;
    /* A running thread resumed runs on: counters read now would count
     * work done after the capture as seen. */
    if (th->stop_base) {
        th->base_run_ns = th->stop_run_ns;
        th->base_slices = th->stop_slices;
        th->has_base = true;
        th->stop_base = false;
        return;
    }
    th->has_base = counters(t, th, &th->base_run_ns, &th->base_slices) == 0;
    /* A thread /proc had blocked in a call when interrupted goes back to
     * sleep there once resumed, so counters read now are its base; unless
     * it was not blocked after all (a new thread that had not yet run
     * shows its parent's clone call), or is not back in its call yet (it
     * waits for a CPU since our stop woke it up): then the counters read
     * during its stop are its base, and the next tick looks at it again
     * only if it has been given a CPU since. (A thread woken only by our
     * stop would otherwise be found running at the next tick, stopped,
     * and sampled busy in its call.) */
    if (th->has_base && th->state == 'S' && th->soft_nr >= 0) {
        long nr = -1;
        uint64_t sp = 0, pc = 0;
        if (proc__syscall_fd(th->sys_fd, &nr, &sp, &pc, NULL) != PROC_BLOCKED ||
            nr != th->soft_nr || sp != th->soft_sp || pc != th->soft_pc) {
            th->has_base = asleep;
            th->base_run_ns = th->stop_run_ns;
            th->base_slices = th->stop_slices;
        }
    }
}

static bool is_hard_pc(const struct tthread *th, uint64_t pc)
{
    for (size_t i = 0; i < th->nhard; i++)
        if (th->hard_pc[i] == pc)
            return true;
    return false;
}

void tracee__soft_refuse(struct tthread *th, uint64_t pc)
{
    if (is_hard_pc(th, pc))
        return;
    /* The oldest goes when full: a thread blocks in few places. */
    if (th->nhard == TT_HARD_PCS) {
        memmove(th->hard_pc, th->hard_pc + 1, (TT_HARD_PCS - 1) * sizeof *th->hard_pc);
        th->nhard--;
    }
    th->hard_pc[th->nhard++] = pc;
}

bool tracee__soft_held_still(struct tracee *t, struct tthread *th)
{
    uint64_t run, slices;
    /* The count of times it was given a CPU moves the moment it is; the
     * run time, whenever it is taken off one. */
    if (!th->soft_counted || counters(t, th, &run, &slices) < 0 ||
        run != th->soft_run || slices != th->soft_slices)
        return false;
    th->stop_base = true;
    th->stop_run_ns = run;
    th->stop_slices = slices;
    return true;
}

/* Reading a blocked thread takes tens of microseconds, and a tick reads
 * them one after another: in a program of many threads that block for
 * short whiles, many run between the tick's look and their read, and
 * stopping each (its call cut short, two switches, hsspy's wait) costs
 * more than the reads. One that is asleep in a call again is looked at
 * afresh instead, as the tick's look would have: its counters first, then
 * its syscall file, so that if the counters still hold after the next
 * read, the thread did not run since either. */
bool tracee__soft_again(struct tracee *t, struct tthread *th)
{
    uint64_t run, slices, sp = 0, pc = 0, where = 0;
    long nr = -1;
    if (!th->soft || th->run != TT_RUNNING || th->want ||
        counters(t, th, &run, &slices) < 0 ||
        proc__syscall_fd(th->sys_fd, &nr, &sp, &pc, &where) != PROC_BLOCKED || nr < 0 ||
        is_hard_pc(th, pc))
        return false;
    th->soft_breaks = proc__syscall_breaks_on_stop(nr);
    th->soft_full = false; /* (what /proc gives) */
    th->soft_nr = nr;
    th->soft_sp = sp;
    th->soft_pc = pc;
    th->soft_where = where;
    th->soft_counted = true;
    th->soft_run = run;
    th->soft_slices = slices;
    t->st.soft_again++;
    return true;
}

void tracee__settled_soft(struct tthread *th)
{
    th->has_base = th->soft_counted;
    th->base_run_ns = th->soft_run;
    th->base_slices = th->soft_slices;
    th->stop_base = false;
}

void tracee__unsettle(struct tthread *th)
{
    th->has_base = false;
    th->waking = false;
}

void tracee__repeatable(struct tthread *th, bool repeatable)
{
    th->repeatable = repeatable;
}

static size_t awaited(const struct tracee *t);

bool tracee__interrupt_late(struct tracee *t, struct tthread *th)
{
    th->soft = false;
    th->preempt = false;
    th->has_base = false;
    th->stop_base = false;
    th->stop_asleep = false;
    if (th->run != TT_RUNNING || th->want)
        return false;
    if (t->send_cap && awaited(t) >= t->send_cap) {
        /* (A first tick's thousand threads asleep whose reads did not
         * hold, say: interrupted as those awaited stop, as tracee__send's.) */
        th->deferred = true;
        t->st.deferred++;
        return true;
    }
    if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) < 0) {
        if (errno != ESRCH)
            t->st.ptrace_errors++;
        return false;
    }
    th->want = true;
    th->t_interrupt_ns = tracee__now_ns();
    th->sent_on_cpu = false; /* (not known: it may wait for a CPU) */
    return true;
}

static long ncpus(void)
{
    static long n;
    if (!n)
        n = sysconf(_SC_NPROCESSORS_ONLN) > 0 ? sysconf(_SC_NPROCESSORS_ONLN) : 1;
    return n;
}

/* How long a thread our stop woke from a call may have been on a CPU
 * since, and still be on its way back into the call (a call restarted
 * takes microseconds): beyond, it is running. */
#define WAKING_ON_CPU_NS 500000u

/* Is (sp, pc) where th's stop found it? (The call the stop interrupted
 * is restarted: the kernel steps the pc back over the two bytes of its
 * `syscall`, the rsp as it was. A sample on its way back, or its syscall
 * file back in the call, shows either pc: the same place.) */
static bool at_stop(const struct tthread *th, uint64_t sp, uint64_t pc)
{
    return sp == th->last_rsp && (pc == th->last_pc || pc + 2 == th->last_pc);
}

/* A thread our stop woke from a call (waking): has it done anything else
 * since it was resumed? A sample since (of a switch, or with --nonblocking
 * of an instant) with other registers than the stop's shows it elsewhere
 * (a call that the stop ended, epoll_wait's EINTR, or that ended as the
 * stop came: the thread went on with its work, and maybe to sleep in
 * another call); so does a long time on a CPU. (The stop's pc and rsp are
 * those of its capture, capture__remember's.) */
static bool waking_away(const struct tthread *th, bool back, uint64_t now)
{
    if (!th->last_pc)
        return false; /* (not known: as before) */
    bool same = at_stop(th, th->hit.regs.rsp, th->hit.regs.rip);
    if (th->hit.t_ns > th->resumed_ns && !same)
        return true;
    return !back && th->cs.where == CS_ON_CPU && now > th->in_t_ns + WAKING_ON_CPU_NS;
}

/* A thread our stop woke from a call, asleep again: in that call, where
 * its stop found it, as its syscall file says? */
static bool asleep_where_stopped(const struct tthread *th)
{
    long nr = -1;
    uint64_t sp = 0, pc = 0;
    return th->last_pc &&
           proc__syscall_fd(th->sys_fd, &nr, &sp, &pc, NULL) == PROC_BLOCKED &&
           at_stop(th, sp, pc);
}

void tracee__look(struct tracee *t, bool skip_unchanged)
{
    /* Everything slow first, so the interrupts go out together and no
     * thread waits stopped while we read /proc for the others. */
    t->runnable = 0;
    if (t->sw) {
        /* (hit_new is left as it is: a sample read between ticks is one
         * of this tick's; it is cleared once the tick has looked.) */
        t->sw_lost = t->sw_drain_lost; /* (records lost by a read since the tick) */
        t->sw_drain_lost = t->sw_peek_lost = false;
        read_switches(t);
        if (t->sw_lossy)
            t->sw_lossy--;
        if (t->sw_lost) {
            /* Switches unknown since the last tick: each thread may have
             * run (as cswitch__fold counts a loss), and where it is, /proc
             * tells until its next record. */
            t->st.cs_losses++;
            t->sw_lossy = TT_LOSSY_TICKS;
            for (size_t i = 0; i < t->n; i++) {
                t->th[i].cs.ins++;
                t->th[i].cs.where = CS_UNKNOWN;
            }
        }
    }
    uint64_t now = tracee__now_ns();
    for (size_t i = 0; i < t->n; i++) {
        struct tthread *th = &t->th[i];
        bool hit_new = th->hit_new;
        th->hit_new = false;
        th->unchanged = false;
        th->soft = false;
        th->soft_full = false;
        th->sampled = false;
        th->stale = false;
        th->idle_again = false;
        th->preempt = false;
        if (th->run == TT_RUNNING && th->want)
            th->owed++;
        if (th->run != TT_RUNNING || th->want)
            continue;
        if (t->switch_records && !th->cs_tried)
            open_ring(t, th);
        /* On a CPU at a sampling instant since the last tick: it ran, and
         * that sample is its capture, whatever it did after (blocked in a
         * call since, it is still sampled at that instant: each tick shows
         * every thread as of one random instant, as far as it can). */
        /* (Not one taken before its last stop, on its way to it: the
         * capture of the stop is newer.) */
        bool hit = t->pss && hit_new && th->fs_base && th->hit.t_ns > th->resumed_ns;
        th->sampled = hit;
        /* A thread that has not run since its last sample keeps its state
         * and its stack: its ring, or one cheap schedstat read, decides.
         * That includes a runnable thread (state R) that has been waiting
         * for a CPU since (its counters were noted during its stop, so
         * unchanged means not one instruction since its capture): on a busy
         * machine many are, and stopping one costs it two context switches
         * and its turn on the CPU. */
        /* (Read before the syscall file: a thread sampled without a stop
         * must not have run since, see tracee__soft_held_still.) */
        uint64_t run = 0, slices = 0;
        bool counted = false;
        /* (A sampled thread ran: its schedstat is not worth a read.) */
        bool known = switches_known(t, th);
        if (((skip_unchanged && th->has_base) || t->sample_blocked || known) && !(hit && !known))
            counted = counters_as(t, th, &run, &slices, true) == 0;
        if (counted && t->switch_records)
            switch_rate(t, th, slices);
        /* Stopped while blocked in a call, which the stop woke it from:
         * until it is back in the call (asleep since its first switch to
         * sleep after the resume, back_ns), it does in the kernel what our
         * stop made it do, its user state the one the stop captured, where
         * without hsspy it would have slept all along. So a perf sample of
         * it on its way back is not its own, and while it is on its way
         * (given a CPU at most once since the stop, waiting for one or on
         * one: /proc cannot tell, a thread that waits for a CPU to restart
         * its call shows the call) or back and not given a CPU again, its
         * sample from the stop is repeated, without a stop. On a busy
         * machine the threads a first tick stopped can take ticks to get a
         * CPU for that, and were sampled running. Not a thread seen
         * elsewhere since (waking_away): its call ended, it went on, and
         * is looked at afresh. */
        bool waking = th->waking;
        th->waking = false;
        /* A ring of its own (--per-thread-events) says it was given a CPU
         * since the stop and sleeps again, not when it slept nor where:
         * back in its call, or elsewhere (the call ended while it was
         * stopped, and it went on and slept in another: then the stop's
         * sample, repeated, would stand for all that sleep)? Its syscall
         * file says, once. */
        bool ring_back = waking && counted && known && skip_unchanged && !th->back_ns &&
                         th->cs.fd >= 0 && th->cs.where == CS_ASLEEP &&
                         slices > th->waking_slices;
        if (waking && counted && known && skip_unchanged &&
            (waking_away(th, th->back_ns != 0, now) ||
             (ring_back && !asleep_where_stopped(th)))) {
            th->has_base = false; /* (its counters since the stop say nothing) */
        } else if (waking && counted && known && skip_unchanged) {
            bool back = th->back_ns != 0 || ring_back;
            if (hit && (!back || th->hit.t_ns < th->back_ns))
                hit = th->sampled = false;
            if ((!back && slices <= th->waking_slices + 1) ||
                (back && th->in_t_ns <= th->back_ns)) {
                th->waking = !back;
                th->has_base = true; /* (back: as the stop left it, since) */
                th->base_run_ns = run;
                th->base_slices = slices;
                th->unchanged = true;
                continue;
            }
        }
        /* (Not given a CPU since, and not on one all along.) */
        if (counted && skip_unchanged && th->has_base && !hit && run == th->base_run_ns &&
            slices == th->base_slices && !(known && th->cs.where == CS_ON_CPU)) {
            th->unchanged = true;
            continue;
        }
        if (hit) {
            th->state = 'R'; /* (as at its sampling instant) */
            t->runnable++;
            continue;
        }
        /* Preempted since it last ran, and waiting for a CPU since: where
         * it was taken off its CPU, as the sample of that switch shows (a
         * sample of no switch since it was last given a CPU). It does not
         * move until it gets a CPU again; stopping it would cost it that
         * turn and hsspy a wait for it. (With per-CPU events that sample
         * switches, after its first stop: its thread pointer is known.) */
        if (known && !t->pss && counted && th->fs_base && th->cs.where == CS_PREEMPTED &&
            th->hit.t_ns && th->hit.t_ns >= th->in_t_ns) {
            th->preempt = true;
            th->state = 'R';
            t->runnable++;
            th->soft_counted = true;
            th->soft_run = run;
            th->soft_slices = slices;
            continue;
        }
        /* Running, or blocked in which call? Some blocking calls fail with
         * EINTR when the thread is stopped, even without a signal handler
         * (signal(7)): a thread asleep in one is sampled without a stop,
         * from where /proc says it waits. */
        /* (On a CPU or waiting for one, says its ring: running, no
         * need to ask /proc.) */
        long nr = -1;
        bool on_cpu = known && (th->cs.where == CS_ON_CPU || th->cs.where == CS_PREEMPTED);
        /* Asleep since it last left a CPU, with a sample of that switch's
         * registers (the newest of its samples, and newer than its last
         * switch in): blocked in a call met before, if those registers
         * were (proc.h, proc_calls); else its syscall file tells, and is
         * learnt from. (Not with --nonblocking: its samples are of
         * instants, not switches.) */
        bool slept = known && !t->pss && t->sw && t->sw->switch_samples &&
                     th->cs.where == CS_ASLEEP && th->hit.t_ns && th->hit.t_ns >= th->in_t_ns &&
                     th->hit.t_ns > th->resumed_ns;
        int how;
        if (on_cpu) {
            how = PROC_RUNNING;
        } else if (slept && proc__calls_find(&th->calls, &th->hit.regs, &nr, &th->soft_where)) {
            how = PROC_BLOCKED;
            th->soft_sp = th->hit.regs.rsp;
            th->soft_pc = th->hit.regs.rip;
            th->soft_full = true;
            t->st.calls_known++;
        } else {
            how = proc__syscall_fd(th->sys_fd, &nr, &th->soft_sp, &th->soft_pc, &th->soft_where);
            if (slept && how == PROC_BLOCKED) {
                proc__calls_learn(&th->calls, &th->hit.regs, nr, th->soft_where);
                th->soft_full = th->soft_sp == th->hit.regs.rsp && th->soft_pc == th->hit.regs.rip;
            }
        }
        th->soft_nr = how == PROC_BLOCKED ? nr : -1;
        if (how == PROC_RUNNING)
            th->state = 'R';
        else if (how == PROC_BLOCKED && nr >= 0)
            th->state = 'S';
        else /* blocked outside a call (a page fault, a stop), or unreadable */
            th->state = th->stat_fd >= 0 ? proc__stat_fd_state(th->stat_fd)
                                         : proc__state(t->pid, th->tid); /* (see spare_fd) */
        t->runnable += th->state == 'R';
        /* Blocked in a call, a thread does not move: stopping it would
         * only wake it up (it takes a CPU from a running thread twice, to
         * stop and to go back to sleep) and show where it already is. */
        if (how == PROC_BLOCKED && nr >= 0) {
            th->soft_breaks = proc__syscall_breaks_on_stop(nr);
            th->soft = th->soft_breaks || (t->sample_blocked && counted && th->fs_base &&
                                           (th->soft_full || !is_hard_pc(th, th->soft_pc)));
            th->soft_counted = counted;
            th->soft_run = run;
            th->soft_slices = slices;
        }
    }
    /* Whether anything else takes the CPUs (see tracee__collect); not
     * worth a read when the target's own runnable threads take them all. */
    t->machine_running = 0;
    if (t->runnable < ncpus()) {
        if (t->loadavg_fd == 0)
            t->loadavg_fd = proc__open_loadavg();
        t->machine_running = proc__running(t->loadavg_fd);
    }
}

/* Interrupt th for this tick's sample; false if it is exiting. */
static bool interrupt_one(struct tracee *t, struct tthread *th, uint64_t now)
{
    bool stopped = th->run == TT_LISTENING && t->sample_stopped;
    th->has_base = false;
    th->stop_base = false;
    th->stop_asleep = false;
    if (stopped)
        th->state = 'T'; /* (as ps shows a job-control stop) */
    if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) < 0) {
        if (errno != ESRCH)
            t->st.ptrace_errors++;
        return false; /* exiting: its exit status follows */
    }
    th->want = true;
    th->t_interrupt_ns = now;
    th->sent_on_cpu = switches_known(t, th) && th->cs.where == CS_ON_CPU;
    return true;
}

/* Threads interrupted since this tick's tracee__send and not stopped yet
 * (not those awaited since an earlier tick: a thread in an uninterruptible
 * sleep for seconds would keep the others waiting their turn). */
static size_t awaited(const struct tracee *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        n += t->th[i].want && t->th[i].t_interrupt_ns >= t->send_ns;
    return n;
}

int tracee__send(struct tracee *t)
{
    int n = 0;
    uint64_t now = tracee__now_ns();
    size_t inflight = 0;
    t->send_ns = now;
    for (size_t i = 0; i < t->n; i++) {
        struct tthread *th = &t->th[i];
        bool stopped = th->run == TT_LISTENING && t->sample_stopped;
        th->deferred = false;
        if ((th->run != TT_RUNNING && !stopped) || th->unchanged || th->soft || th->sampled ||
            th->preempt || th->want)
            continue;
        if (t->pss && th->fs_base && th->repeatable) {
            th->stale = true; /* --nonblocking: no stop, and no new sample */
            continue;
        }
        if (t->send_cap && inflight >= t->send_cap && !stopped) {
            /* Stopped together, a thousand threads would wait stopped for
             * the captures of those that stopped before them, each. */
            th->deferred = true;
            t->st.deferred++;
            n++;
            continue;
        }
        if (interrupt_one(t, th, now)) {
            inflight++;
            n++;
        }
    }
    return n;
}

/* Interrupt deferred threads while fewer than t->send_cap are awaited (all
 * of them with all); how many were interrupted. */
static size_t send_deferred_as(struct tracee *t, bool all)
{
    size_t sent = 0, inflight = awaited(t);
    uint64_t now = 0;
    for (size_t i = 0; i < t->n && (all || !t->send_cap || inflight < t->send_cap); i++) {
        struct tthread *th = &t->th[i];
        if (!th->deferred)
            continue;
        th->deferred = false;
        if (th->run != TT_RUNNING || th->want)
            continue; /* (gone meanwhile, or a new thread in its slot) */
        if (!now)
            now = tracee__now_ns();
        if (interrupt_one(t, th, now)) {
            inflight++;
            sent++;
        }
    }
    return sent;
}

static size_t send_deferred(struct tracee *t) { return send_deferred_as(t, false); }

static bool any_deferred(const struct tracee *t)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->th[i].deferred)
            return true;
    return false;
}

int tracee__interrupt(struct tracee *t, bool skip_unchanged)
{
    tracee__look(t, skip_unchanged);
    return tracee__send(t);
}

static size_t count_wanted(const struct tracee *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        n += t->th[i].want;
    return n;
}

/* A wait4 for any tracee walks the kernel's list of all of them, and one
 * that finds nothing walks it to the end: with a thousand threads, about
 * 100 us a call on a PVM guest, and collect made several a tick. Past this many
 * tracees per thread waited for, collect asks each of those threads
 * instead, in a call that looks at that thread alone. */
#define SCAN_PER_WANTED 32

/* Collect's wait4 for the threads it waits for, one by one (`tids`, the
 * ones still wanted): how many events it handled; -1 when a thread is no
 * longer ours to wait for (it went with an exec), so that only a wait for
 * any tracee can tell what became of it. */
static int poll_wanted(struct tracee *t, const pid_t *tids, size_t n)
{
    int got = 0;
    for (size_t i = 0; i < n; i++) {
        struct tthread *th = find_indexed(t, tids[i]);
        int status;
        if (!th || !th->want)
            continue;
        pid_t tid = waitpid(tids[i], &status, WNOHANG | __WALL);
        if (tid < 0 && errno == ECHILD)
            return -1;
        if (tid > 0) {
            tracee__handle(t, tid, status);
            got++;
        }
    }
    return got;
}

/* The tids of the threads still wanted, in t->ask (grown to hold them);
 * NULL if it cannot be. */
static pid_t *wanted_tids(struct tracee *t, size_t wanted, size_t *n)
{
    if (wanted > t->ask_cap) {
        pid_t *a = realloc(t->ask, 2 * wanted * sizeof *a);
        if (!a)
            return NULL;
        t->ask = a;
        t->ask_cap = 2 * wanted;
    }
    *n = 0;
    for (size_t i = 0; i < t->n && *n < wanted; i++)
        if (t->th[i].want)
            t->ask[(*n)++] = t->th[i].tid;
    return t->ask;
}

int tracee__take_stopped(struct tracee *t)
{
    size_t wanted = count_wanted(t), n;
    pid_t *tids = wanted > 0 ? wanted_tids(t, wanted, &n) : NULL;
    if (!tids)
        return 0;
    t->collecting = true; /* (on time: within their tick) */
    int got = poll_wanted(t, tids, n);
    t->collecting = false;
    if (got <= 0)
        return 0; /* (-1, gone with an exec: collect finds out) */
    send_deferred(t); /* (in their places) */
    return got;
}

/* While threads wait their turn to be interrupted (send_cap), collect
 * waits on for as long as stops keep coming: up to this long after the
 * last, and this long in all. */
#define DEFER_QUIET_NS 20000000u
#define DEFER_MAX_NS 1000000000u

int tracee__collect(struct tracee *t, uint64_t deadline_ns, uint64_t quiet_ns, int *sig_out)
{
    sigset_t set;
    uint64_t spin_from = tracee__now_ns();
    /* Poll only if a CPU is free: if every CPU is taken (by the target or
     * anything else), polling takes one from a thread that needs it. The
     * machine's count includes hsspy itself and the target's runnable
     * threads; when unknown, the target's alone decide. */
    bool spin = t->runnable < ncpus() &&
                (t->machine_running <= 0 || t->machine_running <= ncpus());
    /* Nor does polling take anything from threads that are all on a CPU
     * (another one: hsspy has this one), as their records said at the
     * interrupt: they stop within microseconds. A sleep instead costs the
     * thread hsspy took this CPU from two more context switches, and
     * hsspy its CPU for a millisecond or more when the stop comes as it
     * goes to sleep: woken before it slept, it is scheduled anew, and after
     * the tick's work the scheduler no longer counts it as owed CPU. */
    bool all_on_cpu = true;
    for (size_t i = 0; i < t->n && all_on_cpu; i++)
        all_on_cpu = !t->th[i].want || t->th[i].sent_on_cpu;
    spin = spin || all_on_cpu;
    size_t wanted = count_wanted(t);
    /* (Threads are wanted only by the interrupts before: the list of
     * them, for asking one by one, cannot grow while we collect.) */
    pid_t *tids = NULL;
    size_t ntids = 0;
    if (wanted > 0 && t->n > SCAN_PER_WANTED * wanted)
        tids = wanted_tids(t, wanted, &ntids);
    bool woken = false; /* by a SIGCHLD since the last look */
    /* An event handled that no SIGCHLD taken came with: its SIGCHLD is
     * most likely still pending. */
    bool chld_owed = false;
    /* The stops just asked for cannot all have come yet: when every event
     * so far has its SIGCHLD pending, sleep first (a SIGCHLD already there
     * ends the sleep at once), rather than look and find nothing. */
    bool sleep_first = t->reaped && !spin;

    uint64_t quiet_until = spin_from + quiet_ns;

    tracee__signal_set(&set);
    t->collecting = true;
    bool deferring = any_deferred(t);
    uint64_t began = spin_from, progress = spin_from;
    while (((wanted = count_wanted(t)) > 0 || deferring) && !t->exited) {
        int status, got;
        /* (What this look finds came with the SIGCHLD just taken.) */
        bool took = woken;
        woken = false;
        if (deferring) {
            /* Those deferred, in the places of those that stopped; the
             * list asked one by one made anew. */
            if (send_deferred(t) && tids)
                tids = wanted_tids(t, count_wanted(t), &ntids);
            deferring = any_deferred(t);
            if ((wanted = count_wanted(t)) == 0)
                break;
        }
        if (tids) {
            got = poll_wanted(t, tids, ntids);
            if (got < 0) {
                tids = NULL;
                continue; /* a wait for any tracee, from now on */
            }
            /* A SIGCHLD that none of them sent: another thread's event (a
             * signal it received, say), which should not wait for us. */
            if (took && got == 0)
                got = tracee__drain(t);
        } else if (sleep_first) {
            got = 0;
        } else {
            pid_t tid = waitpid(-1, &status, WNOHANG | __WALL);
            if (tid < 0 && errno == ECHILD)
                break; /* nothing traced any more */
            if (tid > 0)
                tracee__handle(t, tid, status);
            t->reaped = tid == 0;
            got = tid > 0;
        }
        sleep_first = false;
        chld_owed |= got > 0 && !took;
        if (got > 0) {
            progress = spin_from = tracee__now_ns();
            quiet_until = spin_from + quiet_ns;
            continue;
        }
        uint64_t now = tracee__now_ns(), until;
        if (deferring) {
            /* Threads waiting their turn (a first tick's): every one
             * sampled at this tick, as when all were interrupted at once,
             * for as long as stops keep coming; if they stop coming (those
             * awaited in an uninterruptible sleep, say), the rest are
             * interrupted all at once, each captured when it stops. */
            until = progress + DEFER_QUIET_NS;
            if (until > began + DEFER_MAX_NS)
                until = began + DEFER_MAX_NS;
            if (now >= until) {
                send_deferred_as(t, true);
                break;
            }
        } else {
            /* Threads that run stop within microseconds; when none has
             * stopped for a while, the rest are waiting for a CPU (or
             * sleeping uninterruptibly): stop waiting, they are captured
             * when they stop. */
            if (now >= deadline_ns || now >= quiet_until)
                break;
            if (quiet_until < deadline_ns)
                deadline_ns = quiet_until;
            until = deadline_ns;
        }
        /* A running thread stops within microseconds: poll for a moment
         * rather than sleep, since waking up from a sleep costs more than
         * the stop itself and the threads wait stopped meanwhile. Only with
         * a CPU to spare, or with the threads all on a CPU (see above):
         * otherwise polling takes the CPU that a target thread needs to
         * reach its stop. */
        if (spin && now - spin_from < 50000u)
            continue;
        int sig = wait_signal(t, &set, until - now);
        if ((sig == SIGINT || sig == SIGTERM || sig == SIGHUP) && sig_out)
            *sig_out = sig;
        woken = sig == SIGCHLD;
        spin_from = tracee__now_ns();
    }
    t->collecting = false;
    if (tids || chld_owed) {
        /* The SIGCHLD of the events handled by polling would end
         * tracee__wait's sleep at once, after its first look, only for it
         * to look again and find nothing (two system calls a tick, cold
         * ones at 100 Hz): take it now (any other event is then found by
         * that first look). One call: a SIGCHLD pending does not queue
         * another. */
        sigset_t chld;
        struct timespec zero = {0, 0};
        sigemptyset(&chld);
        sigaddset(&chld, SIGCHLD);
        sigtimedwait(&chld, NULL, &zero);
        t->reaped = false;
    }
    return (int)count_wanted(t);
}

void tracee__release_exits(struct tracee *t)
{
    if (t->exits_held)
        tracee__resume_held(t);
}

void tracee__resume_held(struct tracee *t)
{
    t->exits_held = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->th[i].run == TT_HELD && !t->th[i].held_exec)
            resume(t, &t->th[i]);
}

static void detach_one(struct tracee *t, struct tthread *th)
{
    int sig = th->pending_sig;
    th->pending_sig = 0;
    if (ptrace(PTRACE_DETACH, th->tid, 0, (void *)(long)sig) < 0 && errno != ESRCH)
        t->st.ptrace_errors++;
    if (sig)
        t->st.signals_forwarded++;
    close_fds(th);
    th->run = TT_GONE;
}

void tracee__detach(struct tracee *t, int timeout_ms)
{
    uint64_t deadline = tracee__now_ns() + (uint64_t)timeout_ms * 1000000u;
    sigset_t set;
    size_t left = 0;

    t->on_stop = NULL;
    /* (The rings first: the program no longer pays for their records.) */
    for (size_t i = 0; i < t->n; i++) {
        t->th[i].want = false;
        cswitch__close(&t->th[i].cs);
    }
    tracee__signal_set(&set);
    /* A thread must be in a ptrace-stop to be detached; a listening one is
     * interrupted too (PTRACE_DETACH refuses JOBCTL_LISTENING), and the
     * kernel puts it back into its group stop when we let go. */
    for (size_t i = 0; i < t->n; i++) {
        struct tthread *th = &t->th[i];
        if (th->run == TT_HELD) {
            detach_one(t, th);
        } else if (th->run == TT_RUNNING || th->run == TT_LISTENING) {
            if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) == 0) {
                th->want = true;
                left++;
            } else {
                th->run = TT_GONE;
            }
        }
    }
    /* Threads born during the detach whose first stop came before their
     * parent's clone event: let go already, not to be waited for when the
     * event names them (before: waited for until the timeout, and said not
     * to have stopped, in most recordings of a program starting a thousand
     * threads a second). */
    pid_t early[64];
    size_t nearly = 0;
    while (left > 0) {
        int status;
        pid_t tid = waitpid(-1, &status, WNOHANG | __WALL);
        if (tid > 0) {
            struct tthread *th = find(t, tid);
            if (!th) {
                /* A thread born during detach: detach it as it comes. */
                if (WIFSTOPPED(status) && ptrace(PTRACE_DETACH, tid, 0, 0) == 0 &&
                    nearly < sizeof early / sizeof early[0])
                    early[nearly++] = tid;
                continue;
            }
            if (WIFEXITED(status) || WIFSIGNALED(status)) {
                bool wanted = th->want;
                tracee__handle(t, tid, status);
                left -= wanted;
                continue;
            }
            if (!WIFSTOPPED(status))
                continue;
            int event = (unsigned)status >> 16;
            if (event == 0)
                th->pending_sig = WSTOPSIG(status); /* deliver it on detach */
            if (event == PTRACE_EVENT_CLONE) {
                unsigned long child = 0;
                bool gone = false;
                if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &child) == 0)
                    for (size_t k = 0; k < nearly && !gone; k++)
                        gone = early[k] == (pid_t)child;
                if (child && !gone) {
                    struct tthread *c = add(t, (pid_t)child);
                    if (c) {
                        c->want = true; /* its first stop comes; detach then */
                        left++;
                    }
                }
            }
            if (th->want)
                left--;
            th->want = false;
            detach_one(t, th);
            continue;
        }
        if (tid < 0 && errno == ECHILD)
            break;
        uint64_t now = tracee__now_ns();
        if (now >= deadline)
            break;
        uint64_t rem = deadline - now;
        struct timespec ts = {(time_t)(rem / 1000000000u), (long)(rem % 1000000000u)};
        sigtimedwait(&set, NULL, &ts);
    }
    if (left > 0) {
        char tids[96] = "";
        size_t len = 0, named = 0;
        for (size_t i = 0; i < t->n && named < 4 && len < sizeof tids; i++)
            if (t->th[i].want && t->th[i].run != TT_GONE) {
                len += (size_t)snprintf(tids + len, sizeof tids - len, "%s%d",
                                        named++ ? ", " : "", (int)t->th[i].tid);
            }
        log__warn("%zu thread%s (%s%s) did not stop to be detached in %d ms; the kernel lets "
                  "%s go when hsspy exits",
                  left, left == 1 ? "" : "s", named ? "tid " : "", named ? tids : "?",
                  timeout_ms, left == 1 ? "it" : "them");
    }
}

pid_t tracee__hand_over(struct tracee *t, int timeout_ms)
{
    pid_t kept = 0;
    for (size_t i = 0; i < t->n && !kept; i++) {
        struct tthread *th = &t->th[i];
        if (th->run == TT_HELD && th->held_exec) {
            kept = th->tid;
            close_fds(th);
            th->run = TT_GONE; /* (not this tracee's to let go) */
        }
    }
    tracee__detach(t, timeout_ms);
    return kept;
}

int tracee__take_over(struct tracee *t, pid_t tid)
{
    int err = tracee__adopt(t, tid);
    if (ptrace(PTRACE_CONT, tid, 0, 0) < 0 && errno != ESRCH)
        return -errno;
    return err;
}

void tracee__kill(struct tracee *t, int timeout_ms)
{
    uint64_t deadline = tracee__now_ns() + (uint64_t)timeout_ms * 1000000u;
    kill(t->pid, SIGKILL);
    /* Each thread reaped (__WALL: traced, the leader is not reaped before
     * the others); SIGKILL ends a thread in any stop, and one in an exit
     * stop is let go on. */
    for (;;) {
        int st;
        pid_t w = waitpid(-1, &st, WNOHANG | __WALL);
        if (w < 0 && errno != EINTR)
            break;
        if (w > 0 && WIFSTOPPED(st))
            ptrace(PTRACE_CONT, w, 0, 0);
        if (w > 0 && !WIFSTOPPED(st)) {
            struct tthread *th = find(t, w);
            if (th) {
                close_fds(th);
                th->run = TT_GONE;
            }
        }
        if (w == t->pid && (WIFEXITED(st) || WIFSIGNALED(st)))
            break;
        if (w <= 0) {
            if (tracee__now_ns() >= deadline)
                break;
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
    }
}

void tracee__free(struct tracee *t)
{
    if (t->loadavg_fd > 0)
        close(t->loadavg_fd);
    t->loadavg_fd = 0;
    if (t->sig_fd > 0)
        close(t->sig_fd);
    t->sig_fd = 0;
    free(t->pfd);
    t->pfd = NULL;
    for (size_t i = 0; i < t->n; i++)
        if (t->th[i].run != TT_GONE)
            close_fds(&t->th[i]);
    free(t->th);
    t->th = NULL;
    t->n = t->cap = 0;
    free(t->tid_idx);
    t->tid_idx = NULL;
    free(t->ask);
    t->ask = NULL;
    t->ask_cap = 0;
    t->tid_cap = 0;
}
