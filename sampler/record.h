/* record.h - `hsspy record`: attach or launch, sample, detach, write. */
#ifndef HSSPY_RECORD_H
#define HSSPY_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "out/writer.h"

/* What a GHC sample's Haskell part is (--stack). */
enum stack_mode {
    STACK_STG, /* the STG stack's frames (the default) */
    STACK_CCS, /* the current cost-centre stack (a -prof program) */
};

/* What a live consumer wants the recording loop to do next. */
enum live_action {
    LIVE_GO,      /* carry on */
    LIVE_REFRESH, /* call refresh now (a key changed the view) */
    LIVE_STOP,    /* end the recording: detach, the target runs on */
};

/* A live consumer of the recording (hsspy top). Its hooks run in the
 * recording loop between ticks, never while a thread of the target is
 * stopped. With one, record__run writes no output and keeps no samples:
 * each batch is handed to refresh once, then dropped. */
struct record_live {
    void *arg;
    uint64_t refresh_ns; /* how often refresh is called */
    /* The target is attached, its runtime known, p's header filled in
     * (pid, command line, GHC version, rate); sampling starts next.
     * Returns 0, or -1 to give up (record__run detaches and returns 1). */
    int (*start)(void *arg, const struct profile *p);
    /* About every refresh_ns, and when poll asks: the samples taken since
     * the last call are the samples p holds, every frame named
     * (profile__symbolize_new), threads' names and, for a GHC program,
     * roles as of these samples. now_ns counts from the start of sampling,
     * as sample times do. */
    enum live_action (*refresh)(void *arg, const struct profile *p, uint64_t now_ns);
    /* About every 50 ms, whatever the rate: look at the user's input. */
    enum live_action (*poll)(void *arg);
    /* Sampling has ended (the user, a signal, the target exited), before
     * detaching; called exactly once if start succeeded. */
    void (*stop)(void *arg);
    /* hsspy stops for job control (SIGTSTP): called with stopping true just
     * before, then false once continued: true to go on, false if it cannot
     * (continued in the background: hsspy stops again, as for SIGTTOU, and
     * asks again when continued). */
    bool (*job)(void *arg, bool stopping);
};

struct record_opts {
    double rate_hz;     /* -F */
    double duration_s;  /* -d, 0 = until Ctrl-C or exit */
    const char *output; /* -o, NULL = stdout */
    const char *format; /* -f */
    bool threads;       /* --threads */
    bool idle;          /* --idle */
    enum out_sort sort; /* --sort (-f calls) */
    pid_t pid;          /* -p */
    char **argv;        /* -- CMD ARGS */
    size_t stack_bytes; /* C stack copied per thread per sample */
    bool snapshot;      /* one sample of every thread, exact stacks (dump) */
    const char *save_dir; /* --save-captures: raw captures for the fuzzer */
    bool realtime;        /* --realtime: sample at SCHED_FIFO priority */
    bool nice_given;      /* --nice N: sample at nice N ... */
    int nice;             /* ... (else -10 where allowed, if started at 0) */
    bool no_perf_events;  /* --no-perf-events: /proc tells which threads ran */
    bool per_thread_events; /* --per-thread-events: a ring per thread tells, not
                             * per-CPU events */
    bool nonblocking;     /* --nonblocking: running threads from perf samples, not stops */
    enum stack_mode stack; /* --stack */
    const struct record_live *live; /* hsspy top: no output, see record_live */
    /* The command launched (-- CMD) called exec: pid is it, now another
     * program, which this recording attaches to as its launcher's. */
    const char *launched; /* the command given (NULL: not so) */
    int execs;            /* execs followed so far */
    /* ... still traced, held at its exec (tracee__hand_over): taken over
     * (tracee__take_over), never let go; 0: attached to afresh. */
    pid_t held;
};

/* Run a recording; returns the process exit code (0 on success). */
int record__run(const struct record_opts *o);

#endif
