/* tracee.h - the set of OS threads hsspy traces, and every ptrace event.
 *
 * Each thread is PTRACE_SEIZEd once (new ones arrive through
 * PTRACE_O_TRACECLONE); a sample PTRACE_INTERRUPTs the running threads, holds
 * them while the sampler captures, and PTRACE_CONTs them. All waitpid()
 * statuses go through tracee__handle(), which keeps three promises:
 *
 *  - a signal the target receives is re-injected exactly once (a
 *    signal-delivery-stop is never answered with a bare PTRACE_CONT);
 *  - a job-control stop is honoured with PTRACE_LISTEN: the thread stays
 *    stopped until SIGCONT, and the sampler does not wait for it;
 *  - a stop nobody asked for (a late interrupt, a new thread's first stop) is
 *    resumed at once, so no thread is ever left stopped.
 *
 * If hsspy dies, the kernel detaches every tracee and resumes it, so the
 * target keeps running whatever happens to us.
 */
#ifndef HSSPY_TRACEE_H
#define HSSPY_TRACEE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <signal.h>
#include <time.h>

enum tthread_run {
    TT_RUNNING,   /* resumed by us (it may be sleeping in the kernel) */
    TT_HELD,      /* stopped for the current sample, to be resumed */
    TT_LISTENING, /* in a job-control (group) stop */
    TT_GONE,
};

struct tthread {
    pid_t tid;
    enum tthread_run run;
    bool want;       /* interrupted for the current sample, stop not seen yet */
    int pending_sig; /* signal to re-inject when it is resumed */
    int stat_fd;     /* /proc/PID/task/TID/stat, kept open */
    char state;      /* its /proc state letter, read just before the interrupt */
    uint64_t t_interrupt_ns; /* when the interrupt was sent (for pause figures) */
};

struct tracee_stats {
    unsigned long signals_forwarded;
    unsigned long group_stops;
    unsigned long stray_stops;   /* stops nobody asked for, resumed at once */
    unsigned long threads_seen;
    unsigned long threads_exited;
    unsigned long interrupt_timeouts; /* a wanted thread did not stop in time */
    unsigned long ptrace_errors;
};

struct tracee {
    pid_t pid;
    struct tthread *th;
    size_t n, cap;
    bool exited;     /* the whole process is gone */
    int exit_status; /* its wait status, when exited and we saw it */
    bool execed;     /* it called execve: symbols no longer apply */
    struct tracee_stats st;
};

/* PTRACE_SEIZE every thread of pid (re-listing /proc/PID/task until no new
 * thread shows up). On failure nothing stays attached and one clear line has
 * been logged, except for own_child (a command hsspy launched), whose early
 * exit is no error: then -ESRCH and nothing logged. 0 or -errno. */
int tracee__attach(struct tracee *t, pid_t pid, bool own_child);

/* Handle one waitpid() status for tid. */
void tracee__handle(struct tracee *t, pid_t tid, int status);

/* Handle every status already waiting (waitpid WNOHANG). Returns how many. */
int tracee__drain(struct tracee *t);

/* Interrupt every running thread for a sample: reads each thread's /proc state
 * first, then PTRACE_INTERRUPT. Returns the number interrupted. */
int tracee__interrupt(struct tracee *t);

/* Wait (handling all events) until every interrupted thread has stopped or
 * the monotonic deadline passes. Returns the number of held threads. A
 * SIGINT/SIGTERM/SIGHUP arriving meanwhile is stored in *sig_out (if not NULL). */
int tracee__collect(struct tracee *t, uint64_t deadline_ns, int *sig_out);

/* Resume every held thread (re-injecting its pending signal). Threads that
 * never stopped are no longer wanted: their late stop will be resumed. */
void tracee__resume(struct tracee *t);

/* Detach from every thread, re-injecting pending signals and leaving
 * job-control-stopped threads stopped; gives up on a thread after timeout_ms
 * (the kernel detaches it when hsspy exits). */
void tracee__detach(struct tracee *t, int timeout_ms);

void tracee__free(struct tracee *t);

/* The signals hsspy waits for synchronously (SIGCHLD for ptrace events and
 * SIGINT/SIGTERM/SIGHUP to stop recording); blocked while recording. */
void tracee__signal_set(sigset_t *set);

/* Wait for events until deadline_ns (monotonic); returns early, with the
 * signal number, when SIGINT/SIGTERM/SIGHUP arrives, else 0. */
int tracee__wait(struct tracee *t, uint64_t deadline_ns);

uint64_t tracee__now_ns(void);

#endif
