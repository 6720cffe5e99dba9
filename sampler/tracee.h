/* tracee.h - the set of OS threads hsspy traces, and every ptrace event.
 *
 * Each thread is PTRACE_SEIZEd once (new ones arrive through
 * PTRACE_O_TRACECLONE); a sample PTRACE_INTERRUPTs the running threads and
 * captures and PTRACE_CONTs each one the moment it has stopped, so a thread
 * is stopped only for its own capture, never while others are being stopped. All waitpid()
 * statuses go through tracee__handle(), which keeps three promises:
 *
 *  - a signal the target receives is re-injected exactly once (a
 *    signal-delivery-stop is never answered with a bare PTRACE_CONT);
 *  - a job-control stop is honoured with PTRACE_LISTEN: the thread stays
 *    stopped until SIGCONT, and the sampler does not wait for it;
 *  - a stop nobody asked for (a late interrupt, a new thread's first stop) is
 *    resumed at once, so no thread is ever left stopped; but for a thread's
 *    stop on its way out, held while the samples before are walked (see
 *    tracee__release_exits), which the sampling loop never waits long on.
 *
 * If hsspy dies, the kernel detaches every tracee and resumes it, so the
 * target keeps running whatever happens to us.
 */
#ifndef HSSPY_TRACEE_H
#define HSSPY_TRACEE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <poll.h>
#include <signal.h>
#include <time.h>

#include "sampler/cswitch.h"
#include "sampler/proc.h"
#include "sampler/psample.h"

enum tthread_run {
    TT_RUNNING,   /* resumed by us (it may be sleeping in the kernel) */
    TT_HELD,      /* stopped for the current sample, to be resumed */
    TT_LISTENING, /* in a job-control (group) stop */
    TT_EXITING,   /* let go on its way out (its exit status follows) */
    TT_GONE,
};

struct tthread {
    pid_t tid;
    enum tthread_run run;
    bool want;       /* interrupted for the current sample, stop not seen yet */
    bool deferred;   /* to be interrupted for it once fewer are (t->send_cap) */
    int pending_sig; /* signal to re-inject when it is resumed */
    int signalled;   /* the signal given when last resumed (its handler next), or 0 */
    bool group_stopped; /* in a job-control stop: let go with PTRACE_LISTEN */
    int stat_fd;     /* /proc/PID/task/TID/stat, kept open */
    int sched_fd;    /* /proc/PID/task/TID/schedstat, kept open */
    int sys_fd;      /* /proc/PID/task/TID/syscall, kept open */
    /* Its context-switch records (t->switch_records), opened at its first
     * tick: what its schedstat and syscall files tell, read from memory.
     * Only while it switches less than about once a tick (cs_rate): each
     * switch costs the program more with a ring than a read costs hsspy. */
    struct cswitch cs;
    /* --nonblocking (t->pss), this tick: it was on a CPU at that CPU's
     * sampling instant since the last tick (`sampled`, from its newest
     * such sample, `hit`, whose stack stays in the ring until the tick's
     * release, or is copied to hit_stack if the ring is read between
     * ticks); or it ran but was not on a CPU at such an instant, or is
     * in a call /proc cannot sample (`stale`: its last sample repeated,
     * not stopped). Only once its thread pointer is known (fs_base), and
     * for stale, only with a sample to repeat (`repeatable`, told by the
     * caller, tracee__repeatable): else it is stopped, as without
     * --nonblocking (its first sample, or its last failed: a C stack
     * that, blocked where it is, needs the registers of a stop). */
    bool sampled, stale, repeatable;
    struct psample_hit hit;
    bool hit_new; /* hit is a sample of the records since the last tick */
    uint8_t *hit_stack; /* PSAMPLE_STACK bytes, once needed (see hit) */
    /* Waiting for a CPU since it was preempted (t->sw's records), which a
     * sample of its registers as it left the CPU shows (`hit`, from events
     * that sample switches): this tick it is captured from those, nothing
     * stopped, if its copy holds (tracee__soft_held_still); else stopped
     * after all (tracee__interrupt_late). */
    bool preempt;
    /* ... by hsspy itself, woken for the tick: on its CPU until then */
    bool preempted_by_tracer;
    uint64_t sw_t_ns; /* t->sw: when the switch that set cs.where was */
    uint64_t in_t_ns; /* t->sw: when it was last given a CPU */
    uint32_t ins_peeked; /* t->sw: times given a CPU since the tick's read */
    uint64_t out_peeked_ns; /* ... and when it last left one, as peeked */
    /* Interrupted: the user registers of its switch off its CPU since the
     * interrupt, as peeked (t->sw's samples of switches), and when; valid
     * (stop_regs_ok) once that switch's record shows it left to sleep,
     * which is the stop (tracee__stop_regs). */
    struct user_regs_struct stop_regs;
    uint64_t stop_regs_ns;
    bool stop_regs_ok;
    bool fd_short;    /* some of its kept files were not opened: see tracee__fd_limit */
    bool cs_tried;    /* opened, or refused (not tried again) */
    bool cs_busy;     /* closed for switching too often: reopened once quiet */
    bool cs_was_busy; /* ... at least once */
    bool cs_seen_ring; /* cs_seen is a ring's count (else schedstat's) */
    uint64_t cs_seen; /* times given a CPU, as last seen */
    uint32_t cs_rate; /* ... per tick, smoothed, times 256 */
    /* Its state just before the interrupt: R (running or runnable), S
     * (blocked in a system call), or another /proc stat letter. */
    char state;
    uint64_t t_interrupt_ns; /* when the interrupt was sent (for pause figures) */
    bool sent_on_cpu;        /* ... when its records said it was on a CPU */
    /* Scheduler counters when the thread last settled after a sample; if
     * they have not moved, it has not run since and need not be stopped.
     * From its context-switch ring if it has one (run_ns UINT64_MAX, slices
     * the times it was given a CPU), else from /proc schedstat. */
    bool has_base;
    uint64_t base_run_ns, base_slices;
    /* Its counters read while it was stopped (tracee__stopped_base), for a
     * thread that was running, or blocked in a call: see tracee__settled. */
    bool stop_base;
    uint64_t stop_run_ns, stop_slices;
    bool stop_asleep; /* ... read for a thread blocked in a call (state S) */
    /* Stopped while blocked in a call, which our stop woke it from: on its
     * way back to the call until it has been given a CPU once since the
     * stop (its counters then: waking_slices) and left it (tracee__look). */
    bool waking;
    uint64_t waking_slices;
    uint64_t back_ns;    /* waking: when it left its CPU to sleep since (0: not yet) */
    uint64_t resumed_ns; /* when it was last resumed from a stop (CLOCK_MONOTONIC) */
    bool unchanged;   /* this tick: skipped because it has not run */
    uint32_t stack_want; /* C stack bytes to capture next time (0: default) */
    /* Where the C stack its unwinds read ends (0: none has yet): of those
     * that reached Haskell code, the last one's (hs_end, about the rsp
     * StgRun keeps for Haskell code), of the others as far as any read
     * (stack_top, where its outermost frame is, which stays put while rsp
     * moves); and the end of the stack's mapping, where a copy of it came
     * back short (stack_end; 0: none has). */
    uint64_t hs_end, stack_top, stack_end;
    /* The ranges beyond its C stack that its last capture needed (its
     * runtime's structures, its Haskell stack chunk): read ahead next time
     * in the same system call as the stack (see capture__thread). */
#define TT_READ_AHEAD 16
    struct { uint64_t addr; uint32_t len; } ahead[TT_READ_AHEAD];
    uint8_t nahead;
    /* Its stack pointer at that capture (0: none), and at the last one
     * before that found it elsewhere, out of capture__prefetch's reach of
     * last_rsp (a thread that comes and goes between two depths). */
    uint64_t last_rsp, other_rsp;
    uint64_t last_rbp; /* ... and its rbp then (in Haskell code, the STG Sp) */
    uint64_t last_pc;  /* ... and its pc (0: that capture failed) */
    /* Blocked in a system call: this tick it is sampled without stopping
     * it, from the pc and sp /proc/PID/task/TID/syscall gives (or the
     * registers of its switch to sleep, where they name the call), if its
     * capture holds (tracee__soft_held_still); else it is stopped after all
     * (tracee__interrupt_late). Not if the call is one a stop would make
     * fail with EINTR (epoll_wait, semop, sigtimedwait: soft_breaks): such
     * a thread is never stopped in it. */
    bool soft, soft_breaks;
    uint64_t soft_pc, soft_sp;
    /* ... and with them all its registers (hit.regs: the per-CPU events'
     * sample of its switch to sleep, which it has not run since): rbp
     * too, so a thread blocked in an unsafe foreign call, whose Haskell
     * Sp is there, or in a frame found from rbp, needs no stop. */
    bool soft_full;
    long soft_nr; /* the call, from the same read (-1: none) */
    uint64_t soft_where; /* ... and a hash of that read's line (proc__syscall_fd) */
    /* The calls it was found blocked in, by the registers it left its CPU
     * with (t->sw's samples of switches): met again, no read of its
     * syscall file (proc.h). */
    struct proc_calls calls;
    /* This tick: blocked where an earlier sample found it idle (or, in a
     * program not GHC's without --idle, in any call), so idle there:
     * sampled from that, nothing read (record.c's idle_again). */
    bool idle_again;
    /* This tick: marked soft, but its capture did not hold; interrupted
     * once every blocked thread has been read (record.c's capture_blocked),
     * not held stopped while the others are. */
    bool soft_late;
    bool soft_counted;               /* its counters, read before the syscall file: */
    uint64_t soft_run, soft_slices;
    /* Where it was blocked when a capture without a stop lacked registers
     * its unwind needed (tracee__soft_refuse): stopped there from then on. */
#define TT_HARD_PCS 4
    uint64_t hard_pc[TT_HARD_PCS];
    uint8_t nhard;
    uint64_t fs_base; /* its thread pointer, once seen in a stop (0: unknown) */
    bool born;        /* a new thread (clone child) whose first stop is to come */
    bool held_born;   /* held at that first stop (t->hold_born): nothing to capture */
    bool held_exec;   /* held at its exec (t->hold_exec), for tracee__hand_over */
    bool exiting;     /* stopped on its way out (PTRACE_EVENT_EXIT) */
    /* Ticks that went by while the thread was interrupted but had not
     * stopped yet (waiting for a CPU). It cannot have run in between, so its
     * stop, when it comes, stands for those ticks too: without that weight
     * a thread often kept waiting would be under-sampled. */
    uint32_t owed;
    /* Its index among the profile's threads, plus one (0: not given one
     * yet): the caller's, so that a sample needs no search by tid. */
    uint32_t user_index;
    uint32_t name_looks; /* times the user looked it up (record.c: its name again) */
};

struct tracee_stats {
    unsigned long signals_forwarded;
    unsigned long group_stops;
    unsigned long stray_stops;   /* stops nobody asked for, resumed at once */
    unsigned long threads_seen;
    unsigned long threads_exited;
    unsigned long late_stops;   /* stopped after its tick was over: captured then */
    unsigned long stops_between; /* captured and resumed between reads of blocked threads */
    unsigned long deferred;      /* interrupts deferred by t->send_cap */
    unsigned long lost;         /* interrupted, but exited before it stopped */
    unsigned long soft_samples; /* sampled without a stop (see tthread.soft) */
    unsigned long soft_breaking; /* ... of them in calls a stop would break */
    unsigned long soft_idle;     /* ... of them idle again, nothing read (idle_again) */
    unsigned long soft_refused;  /* marked soft, but stopped after all */
    unsigned long soft_again;    /* ... read again instead: asleep in a call again */
    unsigned long calls_known;   /* looks at a blocked thread whose call the
                                  * registers of its switch to sleep named
                                  * (proc_calls), its syscall file not read */
    unsigned long preempt_samples; /* sampled without a stop (see tthread.preempt) */
    unsigned long preempt_refused; /* marked preempt, but stopped after all */
    unsigned long restarted;    /* calls our stop broke (EINTR), restarted */
    unsigned long ptrace_errors;
    unsigned long cs_threads;   /* threads given a context-switch ring */
    unsigned long cs_refused;   /* threads that could not have one: /proc told */
    int cs_errno;               /* why the first of those could not */
    unsigned long cs_losses;    /* times a ring lost records (then /proc told);
                                 * with t->sw: ticks the per-CPU events did */
    unsigned long fd_short;     /* threads some of whose kept files were not
                                 * opened, to keep FD_SPARE free */
    unsigned long ps_samples;   /* samples taken from perf samples, no stop (--nonblocking) */
    unsigned long ps_stale;     /* ... repeated: no perf sample since the last tick */
    unsigned long ps_lost;      /* perf samples the kernel dropped (ring full) */
    unsigned long cs_busy;      /* threads whose ring was closed at least once
                                 * for switching often (/proc told then) */
    unsigned long sw_drains;    /* reads of t->sw's rings between ticks, half full */
    unsigned long stop_regs_ring; /* stops whose registers came from the sample
                                   * of their switch off the CPU (no PTRACE_GETREGS) */
};

/* Every tracee is seized with these: threads it creates are traced too,
 * its execve is seen, and each thread stops on its way out, while its
 * memory is still there to read (see tracee__release_exits). */
#define TRACEE_OPTIONS (PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT)

/* Called for each interrupted thread as soon as it has stopped; it is
 * resumed (its pending signal re-injected) right after the call returns
 * (one on its way out: once the captures are walked, see
 * tracee__release_exits). Returns the thread's registers if it read them
 * (NULL otherwise). */
struct tthread;
struct user_regs_struct;
typedef const struct user_regs_struct *(*tracee_stop_fn)(void *arg, struct tthread *th);

struct tracee {
    pid_t pid;
    pid_t self; /* hsspy's own pid */
    tracee_stop_fn on_stop; /* see tracee__on_stop */
    void *stop_arg;
    struct tthread *th;
    size_t n, cap;
    /* th's indices by tid, plus one (0: empty), open addressing over
     * tid_cap slots: every switch record on the machine is looked up.
     * Rebuilt when threads come or go (tid_stale). */
    uint32_t *tid_idx;
    size_t tid_cap;
    bool tid_stale;
    /* The threads tracee__collect asks for one by one (many tracees). */
    pid_t *ask;
    size_t ask_cap;
    bool exited;     /* the whole process is gone */
    bool leaderless; /* attached after its leader exited: see tracee__attach */
    int exit_status; /* its wait status, when exited and we saw it */
    bool execed;     /* it called execve: symbols no longer apply */
    /* Threads stopped on their way out (PTRACE_EVENT_EXIT), held while
     * the samples taken so far are walked: see tracee__release_exits. */
    unsigned exits_held;
    long runnable;   /* threads in state R at the last interrupt */
    int loadavg_fd;  /* /proc/loadavg, kept open (0: not yet opened) */
    long machine_running; /* threads running on the machine at the last interrupt
                           * (0: not read, the target's own took every CPU) */
    bool collecting; /* inside tracee__collect (stops then are on time) */
    /* A job-control stop asked of hsspy (SIGTSTP: Ctrl-Z; SIGTTIN,
     * SIGTTOU), taken once no thread is stopped for it: 0 if none. */
    int job_stop;
    /* Set by the caller for a dump: a thread born while the others are
     * held is held at its first stop too (until tracee__resume_held), not
     * let run alone through what the dump reads (the nonmoving
     * collector's mark thread, started by a collection just before the
     * stop, moves the runtime's threads from list to list). */
    bool hold_born;
    /* Set by the caller: at most this many threads interrupted and not yet
     * stopped at once (0: no limit); tracee__send defers the others, each
     * interrupted as one stops (see tracee__collect). */
    unsigned send_cap;
    uint64_t send_ns; /* when the tick's tracee__send began */
    /* Set by the caller (a command hsspy launched, to be followed through
     * its exec): the thread that execs is held at that stop, not resumed,
     * so that the next program can be handed over without running a single
     * instruction untraced (tracee__hand_over). */
    bool hold_exec;
    /* A wait for any tracee has found nothing since the last SIGCHLD was
     * taken: every event since has its SIGCHLD still pending, so a wait
     * for events may sleep without looking first (each look is a system
     * call, a few microseconds on a VM). False until the first such wait. */
    bool reaped;
    /* Set by the caller: sample a thread blocked in any system call
     * without a stop (otherwise only those in calls a stop would break). */
    bool sample_blocked;
    /* Set by the caller (a dump): interrupt threads in a job-control stop
     * too (SIGSTOP, Ctrl-Z), and put them back in it once captured. */
    bool sample_stopped;
    /* Set by the caller: tell whether threads have run, and whether they
     * are on a CPU, from context-switch records (cswitch.h) where the
     * kernel allows them, rather than /proc reads. */
    bool switch_records;
    /* Set by the caller (--nonblocking): the per-CPU sampling events
     * (psample.h). A running thread whose thread pointer is known is then
     * never stopped: it is `sampled` or `stale`. */
    struct psample_set *pss;
    /* Set by the caller: per-CPU events whose context-switch records tell,
     * for every thread, what its own ring would (its cs's ins and where):
     * pss itself, or events without sampling (psample_set__open_switches);
     * unless records were lost since the last tick (sw_lost: /proc tells
     * then). NULL: a ring per thread (switch_records), or /proc. */
    struct psample_set *sw;
    bool sw_lost, sw_peek_lost; /* (at the read; since) */
    /* A long wait between ticks (tracee__wait) also polls t->sw's rings
     * (switches only) and reads one that is half full then: pfd, the
     * signals' descriptor (signalfd, sig_fd: 0 until opened, -1 if
     * refused) and the events'; sw_drain_lost, records lost by such a
     * read, kept for the tick's; no_drain, polling given up (an event
     * in error). */
    struct pollfd *pfd;
    int sig_fd;
    bool sw_drain_lost, no_drain;
    /* Ticks left to poll in every wait, however short: set when a tick's
     * read found records lost (threads switching faster than the rings,
     * sized by the tick, hold), so that a ring is read once half full. */
    uint32_t sw_lossy;
    struct tracee_stats st;
};

/* PTRACE_SEIZE every thread of pid (re-listing /proc/PID/task until no new
 * thread shows up). On failure nothing stays attached and one clear line has
 * been logged. 0 or -errno. */
int tracee__attach(struct tracee *t, pid_t pid);

/* How many files hsspy may open (RLIMIT_NOFILE, as raised at its start by
 * launch__raise_nofile). A thread's kept files (three in /proc, a perf
 * event) are opened only while 128 stay free for hsspy's own: past that,
 * the thread goes without (stopped at every tick, its state read with a
 * file opened for the moment), and st.fd_short counts it. */
long tracee__fd_limit(void);

/* Take over a single-threaded process already seized with our options (a
 * command hsspy launched, just past its exec). 0 or -ENOMEM. */
int tracee__adopt(struct tracee *t, pid_t pid);

/* Handle one waitpid() status for tid. */
void tracee__handle(struct tracee *t, pid_t tid, int status);

/* Handle every status already waiting (waitpid WNOHANG). Returns how many. */
int tracee__drain(struct tracee *t);

/* Interrupt the running threads for a sample. First, for every thread, if
 * skip_unchanged, its scheduler counters: a thread that has not run since
 * its last sample settled (tracee__settled) is not stopped at all and is
 * marked `unchanged` (its previous stack still holds); for the others,
 * whether it is running or blocked (its context-switch ring says it is on
 * a CPU or waiting for one: running), and if blocked in which system call
 * (one read of /proc/PID/task/TID/syscall, or none where the registers of
 * its switch to sleep name a call it was found in before, tthread.calls):
 * a thread blocked in a call a stop would
 * break is marked `soft`, and so, with t->sample_blocked, is one blocked
 * in any call whose thread pointer is known (seen in an earlier stop) and
 * whose pc is not one of its hard_pc. Then
 * with t->pss, a thread whose thread pointer is known is never stopped:
 * it is marked `sampled` if one of the per-CPU events sampled it since
 * the last tick (whatever else it did since), else, where it would be
 * stopped, `stale`. Without it, with t->sw's samples of switches, a
 * thread whose thread pointer is known and which is waiting for a CPU
 * since it was preempted, with the sample of that switch, is marked
 * `preempt`, not stopped. Then
 * PTRACE_INTERRUPT the rest in one tight loop; a thread still interrupted
 * from an earlier tick is not interrupted again. Returns the number
 * interrupted. */
int tracee__interrupt(struct tracee *t, bool skip_unchanged);

/* tracee__interrupt in two: everything it does before the interrupts go
 * out (look), so that the threads marked preempt are captured before a
 * stop frees a CPU for them; then the interrupts (send: returns the
 * number sent). */
void tracee__look(struct tracee *t, bool skip_unchanged);
int tracee__send(struct tracee *t);

/* After capturing a thread marked soft: true if it has not run since
 * before its pc and sp were read (its scheduler counters have not moved),
 * so that they and the memory read since are of one instant; its sample
 * then settles on those counters. */
bool tracee__soft_held_still(struct tracee *t, struct tthread *th);

/* A thread marked soft whose capture did not hold (it ran while it was
 * read): true if it is asleep in a call again, with its pc, sp and
 * counters as of now, to be read again (else it is to be stopped). */
bool tracee__soft_again(struct tracee *t, struct tthread *th);

/* A thread marked soft sampled from where it is blocked alone, nothing
 * read (idle_again): its counters, read before its syscall file, are its
 * base. */
void tracee__settled_soft(struct tthread *th);

/* A thread marked soft whose capture cannot be used: PTRACE_INTERRUPT it
 * now, to be captured when it stops like the others. Returns true if the
 * interrupt went out. */
bool tracee__interrupt_late(struct tracee *t, struct tthread *th);

/* A capture of th without a stop, blocked at pc, lacked registers its
 * unwind needed: stop it when it is blocked there again. */
void tracee__soft_refuse(struct tthread *th, uint64_t pc);

/* While a thread that was running (state R) is stopped for its sample: note
 * its scheduler counters. If they have not moved at the next tick, it has
 * not run a single instruction since its capture (a runnable thread kept
 * waiting for a CPU): its sample is repeated and it is not stopped. So too
 * for one blocked in a call (state S) that is not back in it when it
 * settles (tracee__settled). */
void tracee__stopped_base(struct tracee *t, struct tthread *th);

/* When th's stop, which hsspy saw at seen_ns, began: when the thread left
 * its CPU after its interrupt, as the switch records peeked while it is
 * stopped tell (that record is written before the stop is complete:
 * PTRACE_GETREGS waits for it, tracee__stop_regs for the sample of
 * registers just before it), so that the pause does not depend on
 * whether hsspy polled for the stop (seeing it a little before) or slept
 * (woken by its SIGCHLD long after); seen_ns without such a record, or
 * with one more than a millisecond after seen_ns (nonsense). */
uint64_t tracee__stop_began(const struct tthread *th, uint64_t seen_ns);

/* A thread just seen stopped, from an interrupt: its registers, from the
 * sample of its switch off its CPU for the stop (t->sw's events that
 * sample switches), into *out, its fs_base that of its earlier stops:
 * no PTRACE_GETREGS, which waits, spinning, until the thread is off its
 * CPU, and is a system call more. Waits for that sample a few tens of
 * microseconds at most. False where there are none (no such events, the
 * thread's first stop, records lost, the sample late) or where rax says
 * a call the stop broke (-EINTR), whose restart needs orig_rax, which
 * only PTRACE_GETREGS gives, or a call not returned yet (-ENOSYS).
 * If the sample is not there yet, while_waiting (may be NULL) is called
 * once, before the wait: the thread is stopped, so its memory can be read
 * then, only its registers are not known (capture__prefetch). Its time
 * counts in the wait. */
typedef void (*tracee_wait_fn)(void *ctx, struct tthread *th);
bool tracee__stop_regs(struct tracee *t, struct tthread *th, struct user_regs_struct *out,
                       tracee_wait_fn while_waiting, void *ctx);

/* The records of t->sw since they were last read, folded into each
 * thread, their room freed: what tracee__look does first, and a long
 * wait between ticks when a ring is half full. A stop's sample read so,
 * before the stop is seen (a thread that stops after its tick), still
 * serves tracee__stop_regs. */
void tracee__read_switches(struct tracee *t);

/* Note where a thread's scheduler counters stand now that its sample is
 * done: those read during its stop for a running thread; for a blocked
 * one, those of now, when it is back to sleeping where it was (our own
 * stop and resume made it run). None for one captured from a perf sample
 * (`sampled`): it may have run since its sampling instant. */
void tracee__settled(struct tracee *t, struct tthread *th);

/* The next tick looks at th afresh, whether it ran or not: its sample is
 * not to be repeated, as unchanged nor as woken from its call by a stop
 * (a thread waiting for a collection, which may end without it running). */
void tracee__unsettle(struct tthread *th);

/* Whether th's last sample, as kept by the caller, can be repeated while
 * it is stale (see `stale`). */
void tracee__repeatable(struct tthread *th, bool repeatable);

/* The program exec'd (execed), its thread held at its exec (hold_exec):
 * every other thread let go, and that one kept traced and stopped, for
 * tracee__take_over in the next recording. Returns its tid, or 0 if none
 * was held (then all are let go, as by tracee__detach). */
pid_t tracee__hand_over(struct tracee *t, int timeout_ms);

/* A fresh tracee of the process whose thread tid tracee__hand_over kept:
 * resumed, followed from there. 0, or -errno. */
int tracee__take_over(struct tracee *t, pid_t tid);

/* End the process (one hsspy launched, which must not run on without it),
 * every thread of it reaped, within about timeout_ms. */
void tracee__kill(struct tracee *t, int timeout_ms);

struct tthread *tracee__find(struct tracee *t, pid_t tid);

/* From now on, capture every interrupted thread with fn the moment its
 * stop is seen, wherever that happens (while collecting, or later while
 * waiting for the next tick), and resume it right after. */
void tracee__on_stop(struct tracee *t, tracee_stop_fn fn, void *arg);

/* Handle every event until each interrupted thread has stopped (and been
 * captured and resumed), the monotonic deadline passes, or no thread has
 * stopped for quiet_ns (the others are waiting for a CPU, or in an
 * uninterruptible sleep). Threads not waited for are captured whenever
 * their stop comes. A SIGINT/SIGTERM/SIGHUP arriving meanwhile is stored in
 * *sig_out (if not NULL). Returns the number of interrupted threads not
 * stopped yet. */
int tracee__collect(struct tracee *t, uint64_t deadline_ns, uint64_t quiet_ns, int *sig_out);

/* Without waiting: capture and resume each interrupted thread that has
 * stopped by now, asking each by its tid (a wait for any tracee walks them
 * all). For work done while the stops come (record.c reads the blocked
 * threads then), so that a thread does not wait stopped until it is over.
 * Returns how many stopped. */
int tracee__take_stopped(struct tracee *t);

/* Resume every thread held (stopped with no on_stop capture set). */
void tracee__resume_held(struct tracee *t);

/* Let the threads stopped on their way out go on (they hold the program's
 * memory until then): call once the captures taken before have been
 * walked, and before waiting long. */
void tracee__release_exits(struct tracee *t);

/* Detach from every thread, re-injecting pending signals and leaving
 * job-control-stopped threads stopped; gives up on a thread after timeout_ms
 * (the kernel detaches it when hsspy exits). */
void tracee__detach(struct tracee *t, int timeout_ms);

void tracee__free(struct tracee *t);

/* The signals hsspy waits for synchronously (SIGCHLD for ptrace events and
 * SIGINT/SIGTERM/SIGHUP to stop recording); blocked while recording. The
 * caller of tracee__collect and tracee__wait must block them: SIGCHLD,
 * ignored by default, is otherwise discarded, and a wait that has found
 * nothing does not look again until one comes. */
void tracee__signal_set(sigset_t *set);

/* Wait for events until deadline_ns (monotonic); returns early, with the
 * signal number, when SIGINT/SIGTERM/SIGHUP arrives, else 0. */
int tracee__wait(struct tracee *t, uint64_t deadline_ns);

uint64_t tracee__now_ns(void);

#endif
