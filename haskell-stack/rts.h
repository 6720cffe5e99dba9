/* rts.h - finding and reading a GHC program's runtime system from outside.
 *
 * At attach time (rts__attach) the RTS is located from the executable's
 * symbol table: capabilities, tasks, the TLS slot my_task that maps an OS
 * thread to its Task, and a few info tables and code ranges. The GHC version
 * comes from the ELF .comment ("GHC 9.0.2"); the struct layouts are the
 * generated table for that version and RTS variant (rts_layout.h), never
 * guessed. The layout is validated against the live process (every
 * capability's `no` is its index, a running capability's current TSO has
 * stg_TSO_info as its info pointer, a Task's id is its thread's pthread_t)
 * before any sample is trusted; on a mismatch hsspy says so and profiles
 * C stacks only.
 *
 * While a thread is stopped, rts__capture_thread copies the few RTS words its
 * sample needs into the capture's memory image: its Task, InCall and
 * Capability, the TSO whose stack matters (not needed for a thread running
 * Haskell code whose registers name its chunk), and that stack's live
 * chunks (and with them, in a -prof program, the current cost-centre stack
 * pointer: the Capability's register table and the TSO hold it). Once the
 * thread runs again, rts__view reads them back from the image only.
 */
#ifndef HSSPY_RTS_H
#define HSSPY_RTS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "haskell-stack/ccs_walk.h"
#include "haskell-stack/rts_layout.h"

struct stg_info_cache;
#include "sampler/memimg.h"
#include "symbolizer/modset.h"

/* At most this much of a thread's STG stack is copied while it is stopped,
 * from its Sp on, through the chunks it continues in: a walk that goes
 * further (a deep recursion, a chunk made bigger by +RTS -kc or by a big
 * frame) ends in [truncated] rather than copying megabytes each sample. */
#define RTS_STACK_CAPTURE_BYTES (256 * 1024)
/* The biggest stack chunk believed, in words (a chunk's size is read from
 * the program, and untrusted). */
#define RTS_MAX_CHUNK_WORDS (1u << 24)
/* The thunks of at most this many update frames, the nearest Sp, have
 * their headers copied while the thread is stopped (one process_vm_readv,
 * or none when the thread's last capture found the same ones: read ahead
 * with its stack): a thunk is updated, blackholed or moved by the
 * collector within microseconds of the thread running on, and then names
 * no code. The walk reads the others' from the live program. */
#define RTS_UPDATEE_CAPTURE 16
#define RTS_UPDATEE_SCAN (32 * 1024) /* bytes of stack looked through for them */
/* Threads whose outermost call is known to be the runtime's own by its C
 * frames (rts__saw_own_call): a slot each, by tid (another thread's in the
 * same slot takes it, and the first is unwound again). */
#define RTS_OWN_CALLS 64

struct code_range {
    uint64_t lo, hi;
};

struct code_ranges {
    struct code_range *r;
    size_t n;
};

bool code_ranges__has(const struct code_ranges *c, uint64_t addr);

struct rts {
    bool ghc;     /* a GHC program (its executable says so) */
    bool pending; /* layout found, waiting for the RTS to start (launch mode) */
    bool usable;  /* layout found and validated: Haskell stacks and tags on */
    uint64_t pending_since_ns;
    char version[16];
    bool threaded, profiled;
    const struct rts_layout *L;
    struct modset *ms;
    struct module *mod; /* the module holding the RTS */
    pid_t pid;

    /* runtime addresses of RTS globals */
    uint64_t n_capabilities, capabilities, main_capability;
    bool capabilities_is_array; /* Capability *capabilities[MAX] (9.6) */
    bool my_task_is_tls;
    int64_t my_task_tls_off; /* threaded: &my_task == fs_base + off */
    uint64_t my_task;        /* non-threaded: its address */
    uint64_t stg_TSO_info, stg_STACK_info, stg_underflow_info, stg_stop_info;
    /* stg_upd_frame_info, stg_marked_upd_frame_info, stg_bh_upd_frame_info
     * (0: not found): an update frame's first word, for the thunks'
     * headers copied at a stop (RTS_UPDATEE_CAPTURE). */
    uint64_t upd_frame_info[3];
    uint64_t stg_stop_end; /* the end of stg_stop_thread_info's code (0: not known) */
    /* The entry code of stg_AP_STACK_info [0] and stg_AP_STACK_NOUPD_info
     * [1], which copies a suspended computation's frames back onto the
     * stack (stg_walk__restored_sp); 0, 0: not known. */
    struct { uint64_t lo, hi; } ap_stack[2];
    uint64_t stg_return; /* StgReturn, for the C unwind (0: no symbol) */
    uint64_t stg_run;    /* StgRun, likewise */
    uint32_t c_reserved; /* the C stack StgRun leaves to Haskell code below its
                          * frame (RESERVED_C_STACK_BYTES, from StgReturn's
                          * first add to rsp; 0: unknown) */
    /* every Haskell thread is on one generation's thread list (0: unknown) */
    uint64_t generations, oldest_gen, end_tso_queue;
    uint64_t nonmoving_threads, nonmoving_old_threads; /* (0: none) */
    uint64_t all_tasks; /* the list of every Task (0: no symbol) */
    uint64_t pending_sync; /* the sync under way, a PendingSync * (0: no symbol) */
    uint64_t rts_shutdown; /* the RTS's bool, set by hs_exit (0: no symbol) */
    /* Where glibc keeps a thread's kernel id in its struct pthread (the
     * thread pointer), as it tells debuggers (_thread_db_pthread_tid): -1
     * not known (yet: looked for again when new modules are mapped). */
    int32_t pthread_tid_off;
    unsigned long pthread_tid_gen; /* the modset's refreshes when last looked for */

    /* code the tag is decided by */
    struct code_ranges gc;      /* GarbageCollect, gcWorkerThread, ... */
    struct code_ranges waiting; /* the RTS waiting for work (awaitEvent) */
    struct code_ranges sched;   /* the scheduler: schedule, scheduleWorker, ... */
    struct code_ranges events;  /* GHC.Event.*: the IO and timer managers */
    struct code_ranges epoll;   /* GHC.Event.EPoll.* (the IO manager's loop) */
    struct code_ranges handlers; /* the RTS's signal handlers (handle_tick, ...) */
    struct code_ranges cmm;     /* the RTS's Cmm code (stg_*): its C calls are the RTS's */
    struct code_ranges rts_calls; /* RTS functions a program's code calls: suspendThread, ... */
    struct code_ranges rts_work;  /* ... and as the runtime's work: dirty_MUT_VAR, newSpark, ... */
    struct code_ranges ending;    /* workerTaskStop, shutdownThread: a worker let go of */
    struct code_ranges starting;  /* workerStart, ...: the runtime's threads' start */
    struct code_ranges own_entry; /* hs_main and those start routines: the runtime's
                                   * own ways into Haskell code (see rts__own_call) */
    bool hs_main;                 /* the program has hs_main: a Haskell main */
    struct {                      /* rts__saw_own_call's, by tid (a slot each) */
        pid_t tid;
        uint64_t incall;
    } own_calls[RTS_OWN_CALLS];
    struct code_ranges init;      /* hs_init, hs_init_ghc, ...: the runtime starting */
    struct code_ranges mark;      /* the nonmoving collector's mark thread's own function */
    struct code_ranges wait_cond; /* waitCondition, where that thread waits for work (9.10) */
    struct code_ranges yield_cap; /* yieldCapability: a Task lets go of its capability */
    struct code_ranges gc_worker; /* gcWorkerThread: a parallel collection's worker */
    struct code_ranges resumed;   /* the program's code just after each `call resumeThread`,
                                   * up to the instruction that reloads Sp (rbp) from its
                                   * chunk: rbp, SpLim and CCCS are those from before the call */

    bool task_checked; /* a Task has been checked against its thread */
    unsigned stale_tasks; /* Tasks not their thread's seen before that */
    unsigned unsure;   /* validations that saw a capability mid-change */
    bool exact_stacks; /* walk every STG frame as it is (dump), no folding */
    struct stg_info_cache *walk_cache; /* info tables seen by the walks */
    uint64_t ccs_main; /* CCS_MAIN (profiled), the root of every cost-centre stack */
    struct ccs_walk *ccs; /* --stack ccs: a sample's Haskell part is its
                           * cost-centre stack, not its STG frames (NULL) */
    unsigned long validation_failures;
    /* The bytes (header included) of the last stack chunk a sample's walk
     * saw: how far rts__guess_stack reads from a running thread's SpLim
     * (0: none seen yet, GHC's default chunk size is taken). */
    uint32_t chunk_bytes;
};

/* Look at the target: is it a GHC program, which version and RTS, and can
 * its layout be trusted? Logs one warning when it is a GHC program whose
 * Haskell side cannot be read (unsupported version, stripped, -dynamic,
 * validation failed); the recording then carries on with C stacks only.
 * Returns 0, or -ENOMEM. r->usable says whether Haskell stacks are on;
 * r->pending that the RTS has not started yet (a program just launched):
 * call rts__poll until it has. */
int rts__attach(struct rts *r, struct modset *ms, pid_t pid);

/* The thread pointer (fs_base) of each OS thread a Task of the threaded
 * runtime runs on, read from its list of Tasks: a Task's id is its
 * thread's pthread_t, which on x86_64 glibc is the thread pointer, and in
 * it, where glibc says, the thread's kernel id. For a thread never stopped
 * (blocked since hsspy attached in a call a stop would break), whose
 * registers give no thread pointer, and without one no Task to read.
 * Fills up to max pairs; returns how many (0: none, or not known here).
 * Reads the target's memory: call while capturing. */
struct rts_thread_pointer {
    pid_t tid;
    uint64_t fs_base;
};
size_t rts__thread_pointers(struct rts *r, struct rts_thread_pointer *out, size_t max);

/* While pending: has the RTS started (n_capabilities > 0)? Validates it
 * then (a capability caught changing hands is looked at again next time, up
 * to 50 times), and gives up with a warning if it has not started within
 * 10 s. Call before each sample until r->pending is false. */
void rts__poll(struct rts *r);
void rts__free(struct rts *r);

/* During a thread's stop: copy what its sample needs into img. */
void rts__capture_thread(const struct rts *r, pid_t pid, pid_t tid,
                         const struct user_regs_struct *regs, struct memimg *img);

/* Is the outermost call into Haskell of thread tid, whose Task is task and
 * that call's InCall incall, the runtime's own: a worker's (the scheduler's
 * loop it was started in), in a program with a Haskell main the first
 * thread's (hs_main's), or one whose C frames a walk found to reach one of
 * the runtime's start routines (a forkOS thread's: rts__saw_own_call)?
 * Those samples leave the C frames below the call out (the same few under
 * every sample); a call C code made (a foreign export called from a thread
 * of its own, or from a C main) shows its C callers. */
bool rts__own_call(const struct rts *r, const struct memimg *img, uint64_t task,
                   uint64_t incall, pid_t tid);

/* A walk found that the outermost call of thread tid, InCall incall, came
 * from one of the runtime's start routines: its later captures need not
 * copy the C stack below it, nor its walks unwind it, while that call
 * lasts (a forkOS thread's: its whole life). */
void rts__saw_own_call(struct rts *r, pid_t tid, uint64_t incall);

/* During a thread's stop, before anything is read: where its STG stack chunk
 * is, if it runs Haskell code, from its registers alone. SpLim (r15 on
 * x86_64) is the chunk's first word plus RESERVED_STACK_WORDS, and Sp (rbp)
 * lies above it, inside the chunk: out gets the chunk's header and its live
 * part, from Sp to the chunk's end, as far as r->chunk_bytes says (one
 * range when Sp is near the header). Returns how many ranges (0-2); 0 when
 * the registers do not look like a running Haskell thread's. A guess, read
 * ahead with the C stack: rts__capture_thread (which follows the Task and
 * its Capability first) takes the chunk the registers name only if the
 * header read there is a STACK's holding Sp, and then needs no TSO;
 * otherwise it follows the TSO, as rts__view does. */
size_t rts__guess_stack(const struct rts *r, const struct user_regs_struct *regs,
                        struct memimg_note *out, size_t max);

/* What the RTS says about one thread, read back from a capture. */
struct rts_view {
    uint64_t task;          /* 0: the RTS knows no Task for this thread */
    bool task_stale;        /* ... or that Task is not the thread's (its id
                             * is another's: freed, the thread ending);
                             * nothing else is read then */
    uint64_t cap;           /* the Task's capability (may be released) */
    int cap_no;             /* its number, -1 if unknown */
    bool holds_cap;         /* cap->running_task == task */
    bool in_haskell;        /* cap->in_haskell, when held */
    bool gc_sync;           /* not held: a Task that stopped every capability
                             * for a collection holds it (see gc_sync_holds),
                             * the thread waits for it to be given back, with
                             * work to take up then (see work_after) */
    bool work_after;        /* its capability has work for it once a collection
                             * is over (see work_after) */
    bool cap_collected;     /* ... and that Task holds it as one of several, its
                             * own capability another (no sample of its own
                             * says it holds this one) */
    uint64_t incall;
    bool bound;             /* its InCall runs a TSO of its own (incall->tso):
                             * a bound thread (main, forkOS, a call in from
                             * C), not a worker */
    uint64_t suspended_tso; /* in a safe foreign call: the TSO it left */
    uint64_t tso;           /* the TSO whose stack this sample walks, or 0 */
    uint64_t stack;         /* its current stack chunk (StgStack), or 0 */
    uint64_t saved_sp;      /* that chunk's saved sp (valid when suspended) */
    uint64_t stack_end;     /* the end of that chunk's words */
    uint64_t cccs;          /* -prof: the current cost-centre stack, of the
                             * capability while it runs the thread
                             * (cap->r.rCCCS), of the TSO while suspended
                             * (tso->prof.cccs); 0 if none */
    bool cccs_missing;      /* -prof, tso set, but the CCCS was not captured */
    bool resuming;          /* tso is the one resumeThread is resuming,
                             * found in a register (see rts.c) */
    bool resumed;           /* back in Haskell code from a safe call, before
                             * it reloads Sp: its chunk and saved sp are the
                             * TSO's, rbp may point to where the chunk was */
    bool tso_in_gc;         /* the suspended TSO's header is no TSO's: a
                             * collection is moving it (a copying one left
                             * its fields as they were; a compacting one
                             * may be rewriting them) */
    bool tso_moving;        /* the suspended TSO pointer leads to no TSO: a
                             * compacting collection has threaded it (it
                             * holds the TSO's header or the address of
                             * another pointer to it); tso is then 0 */
};

/* Whether ptr, read from a field that points to an untagged object whose
 * info pointer is info (a TSO, a STACK), is what a compacting collection
 * leaves there while it runs: that object's header (the field was the
 * first in the object's chain) or the address of the chain's next field,
 * tagged 1 or 2. Such a field leads nowhere until the collection is over. */
bool rts__threaded(uint64_t ptr, uint64_t info);

/* Fill v from the capture; false if a word it needs was not captured (the
 * sample then counts as an RTS-state error). */
bool rts__view(const struct rts *r, const struct user_regs_struct *regs,
               const struct memimg *img, struct rts_view *v);

/* v is of a thread back in Haskell code from a safe call, before the code
 * reloads Sp (r->resumed), which its registers did not say (a signal
 * handler on top of that code): its chunk, saved sp and CCCS become its
 * TSO's. */
void rts__view_resumed(const struct rts *r, const struct memimg *img, struct rts_view *v);

/* Calls into Haskell nest: Haskell code calls C through a safe call, and
 * that C code calls Haskell again (a callback: a foreign export, a
 * "wrapper" FunPtr), on the same OS thread and Task, through a new InCall
 * whose prev_stack is the one left in its safe call. The outer call's view
 * of in (whose InCall is the inner one): false where there is none (or it
 * is not in a safe call, which an outer one always is). RTS_OUTER_CALLS
 * are followed at most (captured and walked). */
#define RTS_OUTER_CALLS 8
bool rts__outer(const struct rts *r, const struct memimg *img, const struct rts_view *in,
                struct rts_view *out);

/* Is in nested in another call (its InCall has a prev_stack), whether or
 * not the capture holds that call's words? */
bool rts__nested(const struct rts *r, const struct memimg *img, const struct rts_view *in);

/* After a sample's walk: what rts__guess_stack should expect next time. */
void rts__saw_stack(struct rts *r, const struct rts_view *v);

/* Whether a thread's STG stack pointer is in its registers: it holds its
 * capability and runs Haskell code or an unsafe foreign call (Sp is rbp,
 * or is restored into rbp by the C frames' CFI). A capture taken without
 * stopping the thread has no such register: such a thread must be stopped.
 * True also when the capture does not say. */
bool rts__sp_in_register(const struct rts *r, const struct user_regs_struct *regs,
                         const struct memimg *img);

/* Check a Task read back from a capture against its thread (threaded RTS:
 * Task.id is the thread's pthread_t, which glibc makes its fs_base; the
 * Task's capability is one of the capabilities). The first such check
 * decides whether the layout is trusted; a failure turns Haskell stacks off
 * with a warning. Returns r->usable. */
bool rts__check_task(struct rts *r, const struct user_regs_struct *regs,
                     const struct memimg *img, const struct rts_view *v);

/* Copy [addr, addr+len) of the target into img (unless already there);
 * true if all of it arrived. */
bool rts__grab(pid_t pid, struct memimg *img, uint64_t addr, size_t len);

/* Copy a TSO that is not running (suspended in a safe call, or waiting
 * for its turn), its stack chunk from its saved sp to its end, and the
 * chunks after it, into img. */
void rts__grab_stack(const struct rts *r, pid_t pid, struct memimg *img, uint64_t tso);

/* Read a field of a structure at base from img (size from the layout). */
bool rts__field(const struct memimg *img, uint64_t base, struct rts_layout__field f,
                uint64_t *out);

#endif
