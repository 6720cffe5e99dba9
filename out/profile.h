/* profile.h - everything a recording produced, ready for the writers.
 *
 * Frames (address + kind) and stacks (lists of frame ids, innermost first)
 * are interned, so a sample is a few integers: when, which thread, which
 * stack, which tag, which /proc state. After recording, profile__symbolize
 * names every distinct frame once; a live view (hsspy top) names the frames
 * that are new since its last look with profile__symbolize_new. Writers read
 * a profile and never touch the target.
 *
 * Samples are kept as a compact byte stream, each encoded against the
 * sample before it (its time) and the previous sample of its thread (its
 * stack and other fields): a sample of a thread that has not run since its
 * last one takes 2 or 3 bytes, a new one 5 to 10, instead of 24 for the
 * struct (10 minutes at 1 kHz of a dozen threads is millions of samples).
 * They are read back in the order they were added, with an iterator:
 *
 *   struct prof_iter it;
 *   struct prof_sample s;
 *   if (profile__iter(p, &it) < 0) return -1;
 *   while (profile__next(&it, &s)) ...
 *   profile__iter_free(&it);
 */
#ifndef HSSPY_PROFILE_H
#define HSSPY_PROFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sampler/sample.h"
#include "symbolizer/symbolize.h"

struct prof_thread {
    pid_t tid;
    char comm[16];
    char role[64];  /* "capability 0", "safe-FFI worker", ... ("" if unknown) */
    uint64_t samples; /* every sample taken of it, idle or not */
    uint64_t oncpu;   /* samples in /proc state R */
    uint64_t tags[TAG__COUNT];
    bool exited;      /* top: gone since (as of its last refresh) */
    /* Its Haskell thread at the last sample (for dumps): TSO, stack chunk
     * and that chunk's saved sp; 0 when none. */
    uint64_t tso, stack, stack_sp, stack_end;
};

/* The most threads a tick awaits the stops of at once (record.c). */
#define PROF_SEND_CAP 16

#define SAMPLE_IDLE 1 /* dropped unless --idle */
/* Runnable (state R) but known to be waiting for a CPU, not on one: taken
 * from the switch that preempted it, or repeated for a thread that has not
 * run since the tick before. Not counted on CPU. */
#define SAMPLE_WAITING 2
/* cap is not held by the thread: a collection holds it (one Task stopped
 * every capability, under +RTS -qg or -qn), and the thread waits for it. */
#define SAMPLE_CAP_COLLECTED 4
/* Of a bound thread (its Task's InCall runs a TSO of its own: main,
 * forkOS, a call in from C), not a worker. */
#define SAMPLE_BOUND 8

struct prof_sample {
    uint64_t t_ns;   /* since the recording started */
    uint32_t thread; /* index in threads */
    uint32_t stack;  /* stack id */
    uint8_t tag;     /* enum sample_tag */
    char state;      /* /proc state letter before the stop */
    uint8_t flags;   /* SAMPLE_IDLE, SAMPLE_WAITING, SAMPLE_CAP_COLLECTED, SAMPLE_BOUND */
    int16_t cap;     /* capability held (or, SAMPLE_CAP_COLLECTED, waited for),
                      * -1 if none/unknown */
    uint8_t role;    /* enum thread_role */
};

/* Distribution of a duration, in a log-scale histogram (µs resolution up to
 * ~1 s) so medians and p99s need no stored samples. */
#define HIST_BUCKETS 160
struct hist {
    uint64_t n, sum_ns, max_ns;
    uint32_t b[HIST_BUCKETS];
};
void hist__add(struct hist *h, uint64_t ns);
/* The q-quantile (0..1), in ns (upper bound of its bucket). */
uint64_t hist__quantile(const struct hist *h, double q);

/* An object file the recording's addresses point into, kept so that a saved
 * recording can be named later, elsewhere (hsspy report FILE). */
struct prof_module {
    char *path;
    uint64_t lo, hi; /* runtime span */
    int64_t bias;    /* runtime address = ELF vaddr + bias */
    uint8_t build_id[64];
    uint32_t build_id_len;
    uint8_t *blob;   /* the vDSO's bytes: it has no file to open later */
    size_t blob_len;
};

/* A Haskell (green) thread, as a dump saw it. */
struct prof_green {
    uint64_t id;          /* ThreadId number */
    char status[96];      /* "blocked on an MVar (takeMVar/putMVar)", ... */
    uint64_t blocked_on;  /* the MVar's address, when that is what it waits for */
    uint64_t owner_id;    /* blocked on a black hole: the thread evaluating it */
    char label[64];
    uint32_t stack;       /* its STG frames (a stack id) */
    uint64_t tso;         /* its TSO's address (profile__green_runner) */
};

/* An object file that frames were found in, as it was mapped: for formats
 * that describe the mappings (pprof). */
struct prof_object {
    char *path;            /* as the target sees it, or "[vdso]" */
    uint64_t start, limit; /* runtime span of its mappings */
    uint64_t offset;       /* file offset mapped at start */
    char build_id[129];    /* hex, "" if none */
    bool main;             /* the executable */
};

#define PROF_MADE_IDLE 1    /* --idle: idle threads' stacks read, their samples kept */
#define PROF_MADE_THREADS 2 /* --threads */
#define PROF_MADE_CCS 4     /* --stack ccs */

struct profile {
    /* what was profiled */
    pid_t pid;
    char cmdline[1024];
    char ghc_version[16]; /* "" for a non-GHC program */
    bool launched;        /* hsspy started it (-- CMD) */
    int exit_status;      /* its wait status, if it exited while recorded */
    bool exited;

    /* how the sampling went */
    double rate_hz;       /* asked */
    uint64_t start_wall_ns; /* CLOCK_REALTIME at the start */
    uint64_t duration_ns;
    uint64_t ticks;        /* samples of the whole process taken */
    uint64_t missed_ticks; /* ticks skipped because hsspy ran late */
    struct hist pause;        /* per thread: from its stop to its resume */
    struct hist stop_latency; /* per thread: from interrupt to its stop */
    uint64_t pause_switched;  /* pauses timed from the thread's switch off its CPU
                               * (the others from when hsspy saw the stop) */
    uint64_t pause_regs_ring; /* stops whose registers came from the sample of that
                               * switch, not PTRACE_GETREGS */
    uint64_t pause_prefetched; /* stops whose C stack was read while their
                                * registers were awaited, near their last rsps */
    uint64_t pause_prefetch_missed; /* ... read, then again at the rsp they had */
    uint64_t pause_between;   /* stops captured and resumed between reads of blocked
                               * threads, not after them all */
    uint64_t handler_entries; /* stops at a signal handler's entry, right after the
                               * signal was passed on: sampled where it interrupted */
    uint64_t deferred;        /* interrupts deferred while the most threads a tick
                               * awaits at once were (a first tick's, of many) */
    uint64_t cap_held;        /* times hsspy, at half a CPU, put its next tick off */
    uint64_t cs_drains;       /* per-CPU switch rings read between ticks, half full */
    uint64_t errors[WE__COUNT];
    uint64_t lost_threads; /* interrupted but did not stop in time */
    uint64_t repeated;     /* samples of threads that had not run: not stopped */
    uint64_t soft;         /* samples of threads blocked in a system call: not stopped */
    uint64_t soft_breaking; /* ... of them in calls a stop would break (epoll_wait & co) */
    uint64_t soft_idle;    /* ... of them idle again where they were idle: nothing read */
    uint64_t soft_refused; /* blocked threads stopped after all (ran while read, or
                            * their Sp was in a register) */
    uint64_t soft_again;   /* times one that ran while read was read again instead,
                            * asleep in a call again */
    uint64_t soft_short;   /* samples without a stop whose unwind lacked registers */
    uint64_t beyond_copy;  /* samples whose C stack went deeper than the copy: the rest
                            * read from the program after it resumed */
    /* record's word on the target's child processes, when they used more
     * CPU than it (top's few words while it runs; "": no word). */
    char children[400];
    /* top, as of its last refresh: every thread of the target is in a
     * job-control stop (SIGSTOP, Ctrl-Z): nothing runs to sample. */
    bool target_stopped;
    uint64_t preempt;      /* samples of threads waiting for a CPU since they were
                            * preempted, from that switch's registers: not stopped */
    uint64_t preempt_refused; /* ... stopped after all (given a CPU while read) */
    uint64_t calls_known;  /* blocked threads whose call was named by the registers of
                            * their switch to sleep, not their /proc syscall file */
    uint64_t copied_bytes; /* of the target's memory, into captures */
    uint64_t copied_threads; /* captures (stopped or not) they went to */
    uint64_t stop_reads;   /* process_vm_readv calls made while threads were
                            * stopped (pause.n threads) */
    uint64_t stop_reads_waiting; /* ... of them while their registers were awaited */
    uint64_t late;         /* stops of threads after their tick, captured then */
    /* Whether threads ran was told by context-switch records (sampler/
     * cswitch.h) for cs_threads threads, by /proc for cs_refused (perf
     * events not allowed: cs_errno), by /proc too after each of cs_losses
     * losses of records, and while cs_busy of the cs_threads switched
     * more than about once a tick. */
    uint64_t cs_threads, cs_refused, cs_losses, cs_busy;
    uint32_t cs_errno; /* an errno, or PROF_CS_ELOCKED */
#define PROF_CS_ELOCKED 4096 /* rings without locked memory (PERFRING_ELOCKED) */
    /* ... records of per-CPU events (sampler/psample.h), for every thread;
     * cs_losses then counts the ticks after which records were lost. */
    bool cs_cpu_wide;
    /* Threads some of whose kept files (/proc, a perf event) hsspy did not
     * open, to keep files free for its own use, under a limit of fd_limit
     * open files (see tracee__fd_limit). */
    uint64_t fd_short, fd_limit;
    /* --nonblocking: running threads were sampled by perf events on
     * every CPU: ps_samples samples from those, ps_stale repeated (a thread
     * that ran but was on no CPU at a sampling instant), ps_lost dropped by
     * the kernel (ring full). */
    bool nonblocking;
    uint64_t ps_samples, ps_stale, ps_lost;
    uint64_t restarted;    /* calls a stop broke with EINTR, restarted by hsspy */
    uint64_t self_cpu_ns;  /* CPU time hsspy itself used while recording */
    uint64_t first_tick_cpu_ns; /* of which its first tick's (every thread's first
                                 * stop and full read; 0: not known) */
    bool realtime;         /* hsspy sampled at real-time priority */
    bool short_slices;     /* ... or at normal priority in 0.1 ms slices */
    int nice;              /* the nice value it sampled at (not real-time) */
    unsigned long signals_forwarded, live_reads;
    /* The options record was given that a report of its raw file takes as
     * its own (PROF_MADE_*), if the file says (made_known). */
    uint8_t made_with;
    bool made_known;

    struct prof_module *modules;
    size_t nmodules;

    /* A dump's word on the process's child processes, which it does not
     * dump: each one's pid, parent and command. */
#define PROF_CHILDREN 16
    struct prof_child {
        pid_t pid, parent;
        char cmd[128];
    } kids[PROF_CHILDREN];
    size_t nkids;
    struct prof_green *green; /* every Haskell thread (dumps only) */
    size_t ngreen;
    char green_short[96];  /* ... why there may be more ("": there are not) */
    unsigned green_tries;  /* ... looks it took (0: one) */

    struct prof_thread *threads;
    size_t nthreads, cap_threads;
    size_t nsamples;
    /* The samples, encoded (see profile__add), in blocks that fill up one
     * after the other: never reallocated, so a long recording's memory is
     * what it holds, not twice that while an array moves. */
    struct prof_block {
        uint8_t *b;
        size_t len, cap;
    } *blocks;
    size_t nblocks, cap_blocks;
    size_t slen;          /* bytes of encoded samples in all blocks */
    uint64_t s_last_t;    /* the time of the last sample added */
    struct prof_sample *s_last; /* per thread: its last sample added */
    size_t cap_last;

    struct raw_frame *frames;
    size_t nframes, cap_frames;
    uint32_t *frame_hash;
    size_t frame_hash_size;
    /* Names of the frames, once naming has begun: room for every frame
     * (grown with frames), the first nnamed named, the others zero; and
     * per frame the object it is in (index + 1 into objects, 0 if none). */
    struct frame_sym *syms;
    uint32_t *frame_object;
    size_t nnamed, cap_syms;
    struct prof_object *objects; /* those the named frames are in */
    size_t nobjects, cap_objects;
    /* The names a raw file saved, one per frame (nsaved == nframes), as the
     * recording machine gave them: hsspy report keeps them for the frames
     * of files it cannot open or that changed since (profile__keep_saved). */
    struct frame_sym *saved;
    size_t nsaved;

    uint32_t *ids;      /* all stacks' frame ids, concatenated */
    size_t nids, cap_ids;
    struct prof_stack { uint32_t off, len; } *stacks;
    size_t nstacks, cap_stacks;
    uint32_t *stack_hash;
    size_t stack_hash_size;
};

/* Make room for need elements of elem bytes in *v (capacity *cap),
 * doubling; new elements are zeroes. For the profile's arrays and the
 * writers' own tables. 0, or -ENOMEM (the array is left as it was). */
int profile__grow(void **v, size_t *cap, size_t need, size_t elem);

int profile__init(struct profile *p);
void profile__free(struct profile *p);

/* The thread's index, adding it on first sight. -1 on ENOMEM. */
int profile__thread(struct profile *p, pid_t tid, const char *comm);

/* Intern a stack of n raw frames (innermost first); its id, or -1 on ENOMEM. */
int64_t profile__stack(struct profile *p, const struct raw_frame *f, int n);

/* Record a sample (its thread must exist). 0 or -ENOMEM. */
int profile__add(struct profile *p, const struct prof_sample *s);

/* Was the sample's thread on a CPU: state R, not known to be waiting for
 * one (SAMPLE_WAITING)? */
static inline bool profile__on_cpu(const struct prof_sample *s)
{
    return s->state == 'R' && !(s->flags & SAMPLE_WAITING);
}

/* Reading the samples back, in the order they were added. */
struct prof_iter {
    const struct profile *p;
    size_t block, pos;         /* in p->blocks */
    size_t i;                  /* samples read */
    uint64_t t_ns;             /* the previous sample's time */
    struct prof_sample *last;  /* per thread: its previous sample */
};
/* Start at the first sample. 0 or -ENOMEM. */
int profile__iter(const struct profile *p, struct prof_iter *it);
/* The next sample into *s; false after the last. */
bool profile__next(struct prof_iter *it, struct prof_sample *s);
void profile__iter_free(struct prof_iter *it);

/* Forget the samples taken so far (a live view, after each look), keeping
 * threads, frames, stacks and their names. */
void profile__drop_samples(struct profile *p);

/* Name every frame not named yet, each once: after a recording, all of
 * them; in a live view, those new since the last call. A frame whose address
 * no known module covers makes ms re-read the process's maps first (once per
 * call), so a library loaded since the last look is named; and note the
 * object each is in. 0 or -ENOMEM. */
int profile__symbolize_new(struct profile *p, struct modset *ms);

/* Make a frame's names text (text__clean): what the target's files and
 * memory name it with can hold any byte. profile__symbolize_new does it
 * to every name it gives. */
void profile__clean_sym(struct frame_sym *fs);

/* Name every frame (once each): profile__symbolize_new, for a recording. */
int profile__symbolize(struct profile *p, struct modset *ms);

/* Keep the list of modules of ms in the profile (for raw files). */
int profile__keep_modules(struct profile *p, const struct modset *ms);

/* Frame ids of a stack, innermost first. */
static inline const uint32_t *profile__stack_ids(const struct profile *p, uint32_t stack,
                                                 uint32_t *n)
{
    *n = p->stacks[stack].len;
    return p->ids + p->stacks[stack].off;
}

/* After profile__symbolize from files: a frame whose address no module of
 * ms covers (its file missing or changed), or a cost centre when the
 * executable is missing, takes the name the recording saved, if any, and
 * the mapping it saved (for pprof's mappings). Returns how many frames took
 * a saved name. */
size_t profile__keep_saved(struct profile *p, const struct modset *ms);

/* The display name of a frame ("[unknown]" before symbolization). */
const char *profile__frame_name(const struct profile *p, uint32_t frame);

/* Name each thread's role from its samples (GHC programs): the main
 * thread (tid == pid) is "bound main thread", others their most frequent
 * role ("capability 2", "safe-FFI worker", "IO manager", ...). */
void profile__name_roles(struct profile *p);

/* Achieved rate: ticks per second of recording. */
double profile__achieved_hz(const struct profile *p);

/* Samples whose walk ended in an error, of every kind. */
uint64_t profile__walk_errors(const struct profile *p);

/* Threads with at least one sample. */
uint64_t profile__threads_sampled(const struct profile *p);

/* The OS thread a dump found running a Haskell thread (with its TSO,
 * tagged haskell, unsafe-ffi or rts: in its code, a foreign call that
 * keeps the capability, or the runtime's code it called), whose stack is
 * then that OS thread's: the one saved in the TSO is of when it last
 * stopped. 0 if none. */
pid_t profile__green_runner(const struct profile *p, const struct prof_green *g);

#endif
