/* hs_sample.h - one sample of one thread of a GHC program: its tag and its
 * merged stack.
 *
 * The tag says what the thread was doing for the RTS:
 *   haskell     holding a capability, executing Haskell code
 *   unsafe-ffi  holding a capability, in C called by an unsafe foreign call
 *   safe-ffi    in a safe foreign call (capability released), busy or blocked
 *   gc          collecting garbage, or stopping the world for it
 *   rts         holding a capability in the scheduler or other RTS code
 *   idle        a worker with nothing to do, the ticker, the IO and timer
 *               managers waiting for events
 * The merged stack, innermost first: the C frames from the leaf to the
 * foreign function (FFI samples), the Haskell code that made the call or is
 * running, then the STG frames out to the thread's first frame; with
 * --stack ccs (rts.ccs set), the thread's cost-centre stack instead of
 * these Haskell frames, from the innermost cost centre out. The RTS's own
 * frames below Haskell (StgRun, schedule, hs_main) are not included; samples
 * outside Haskell (gc, rts, idle) keep their whole C stack.
 */
#ifndef HSSPY_HS_SAMPLE_H
#define HSSPY_HS_SAMPLE_H

#include "haskell-stack/rts.h"
#include "haskell-stack/stg_walk.h"
#include "sampler/capture.h"
#include "symbolizer/unwind.h"

struct hs_sample {
    int n;                /* frames written */
    enum sample_tag tag;
    enum thread_role role;
    int cap;              /* capability held, -1 if none */
    bool cap_collected;   /* cap: not held by the thread but by a collection's
                           * Task, which it waits for */
    enum walk_error err;  /* the first thing that went wrong, WE_NONE if nothing */
    bool c_error;         /* the C unwind failed */
    struct unwind_result ur; /* how the C unwind went */
    struct rts_view v;       /* what the RTS said about the thread */
};

/* Build the sample of one captured thread (named comm) from its registers
 * and the capture's memory. pid: the target, for the main-thread role. */
void hs_sample__build(struct rts *r, struct unwinder *uw, const struct thread_capture *tc,
                      const char *comm, const struct memimg *img, struct raw_frame *out,
                      int max, struct hs_sample *res);

/* The tag of a sample of a GHC program taken before its runtime could be
 * read (r->pending: hsspy launched it, hs_init has not run), from its C
 * frames (out, n; none if it was not walked) and its /proc state: the
 * runtime starting up (hs_init on the stack) is its work, [rts]; any other
 * code then is the program's C code outside the runtime, [safe-ffi], as a
 * thread C code started is once it runs; a thread asleep is [idle]. */
enum sample_tag hs_sample__before_runtime(const struct rts *r, const struct raw_frame *out,
                                          int n, char state);

#endif
