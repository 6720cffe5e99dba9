/* stg_walk.h - walking a Haskell (STG) stack, frame by frame.
 *
 * GHC keeps each Haskell thread's stack in heap objects (StgStack chunks);
 * Sp points at the innermost frame, and with tables-next-to-code every
 * frame's first word is an info pointer: the code address of its
 * continuation, with the info table (frame type, size bitmap) just before
 * it. The walk reads the captured chunk, sizes each frame from its info table
 * (read from the executable file), follows underflow frames into older
 * chunks, and ends at the stop frame.
 *
 * Every word is untrusted: an info pointer must point into a GHC module with
 * a frame type at info-8, the frame must fit its chunk, chunks and steps are
 * capped. A walk that goes wrong ends with an FK_INVALID frame and an error
 * code, never a crash. Consecutive repeats of one frame, or of a cycle of
 * up to STG_FOLD_PERIOD frames (recursion), are written once.
 *
 *   struct stg_walk w = { rts, img, modset, 0, false };
 *   stg_walk__run(&w, sp, stack_obj, STG_SCAN_TOP, frames, max, &res);
 */
#ifndef HSSPY_STG_WALK_H
#define HSSPY_STG_WALK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "haskell-stack/rts.h"
#include "sampler/sample.h"

/* What the info tables say, cached across walks: whether an address is an
 * info pointer of a GHC module, its closure type and, but for RET_FUN (whose
 * frames carry their size), its frame size. Info tables are in the
 * executable's read-only segments and never change, so entries stay true
 * until the module set is re-read (then the cache empties itself). A walk
 * visits hundreds of frames of a few dozen kinds: looking each kind up in
 * the modules' segments every time was most of its cost. Fixed size, no
 * allocation: a full bucket evicts. Zeroed memory is an empty cache. */
#define STG_INFO_CACHE_SIZE 4096 /* a power of two */
struct stg_info_fact {
    uint64_t info;   /* 0: empty */
    uint32_t type;   /* closure type */
    uint32_t size;   /* frame size in words; 0: not a frame (or RET_FUN) */
    bool haskell;    /* in a GHC module */
    bool typed;      /* type could be read */
    bool laid;       /* layout word could be read (and info is aligned) */
};
struct stg_info_cache {
    unsigned long gen; /* the modset's refreshes when filled */
    unsigned long hits, misses;
    struct stg_info_fact e[STG_INFO_CACHE_SIZE];
};

struct stg_walk {
    const struct rts *rts;
    const struct memimg *img;
    struct modset *ms;
    pid_t live_pid; /* >0: read a thunk's header from the live process when the
                     * capture lacks it (names update frames); 0: never */
    bool exact;     /* every frame as it is (for dumps): no folding of
                     * recursion, RET_FUN frames kept */
    struct stg_info_cache *cache; /* NULL: look every info table up */
};

struct stg_result {
    int n;                 /* frames written */
    enum walk_error err;   /* WE_NONE if the walk reached the stop frame */
    bool truncated;        /* hit a cap (frames, steps or chunks) */
    int skipped_words;     /* words skipped at the top before the first frame */
    int folded;            /* frames not written: repeats of those before (recursion) */
};

/* The longest cycle of frames folded: a lazy fold's stack alternates an
 * update frame and the return frame of the function its thunk applies
 * ([thunk];integerAdd;[thunk];integerAdd;...), a mutual recursion of
 * three functions repeats three frames. */
#define STG_FOLD_PERIOD 4

/* out[0..*n) ends with a cycle of p <= STG_FOLD_PERIOD frames repeated
 * (the last p equal to the p before them, the shortest such p): drop the
 * last p, a level of recursion. Returns p, or 0 when there is none. Called
 * after each frame written, so no stack shows a cycle twice in a row. */
int stg_walk__fold(struct raw_frame *out, int *n);

/* How sure we are that sp points at a frame. A thread stopped in the middle
 * of Haskell code, or in C called from it, may have spill slots or
 * arguments above its first frame; a thread suspended in a safe call has its
 * saved sp exactly at one. */
enum stg_start { STG_EXACT, STG_SCAN_TOP };

/* Walk from sp in the chunk `stack` (an StgStack address), writing at most
 * max frames innermost first. */
void stg_walk__run(const struct stg_walk *w, uint64_t sp, uint64_t stack, enum stg_start start,
                   struct raw_frame *out, int max, struct stg_result *res);

/* Is regs[k] a copying loop's index, not its end (see
 * stg_walk__restored_sp): a count of words below another register's from
 * which the frames are whole (ends[j]: the loop's bound), and, give or
 * take a header, the distance between two registers (the source pointer
 * and the closure's payload)? */
bool stg_walk__copy_index(const uint64_t *regs, int nregs, int k, const bool *ends);

/* The most registers stg_walk__restored_sp looks at (rax to r15 but rbp
 * and rsp). */
#define STG_RESTORE_REGS 14

/* A thread in the entry code of an AP_STACK, a computation an asynchronous
 * exception suspended (raiseAsync) now resumed, has lowered Sp by the
 * size of the frames it froze and copies them back one word at a time,
 * from Sp up: until the copy is done, the words above those copied are
 * what was there before (frames popped long ago, or nothing), and a walk
 * from Sp runs into them. The stack is whole from the copy's end: Sp plus
 * the copy's size, which the copying loop keeps in a register, as it
 * keeps the closure. With update_frame (stg_AP_STACK_info), the end is an
 * update frame for a closure a register holds, pushed before the copy;
 * without (stg_AP_STACK_NOUPD_info), an end a register gives from which
 * the frames are whole to the stop frame, other than the loop's index
 * (stg_walk__copy_index); where several do, the deepest, if the frames
 * from each other one lead to it. Returns that Sp, or 0 if no register
 * gives one (Sp not lowered yet: the stack is whole from Sp) or, without
 * an update frame, the ends disagree. (Just after the copy it is still
 * where the frames put back end: they are then left out.) */
uint64_t stg_walk__restored_sp(const struct stg_walk *w, uint64_t sp, uint64_t stack,
                               const uint64_t *regs, int nregs, bool update_frame);

/* Could sp be the stack pointer of the chunk `stack`: inside it, and the
 * start of a chain of valid frames? (To pick Sp among candidates.) */
bool stg_walk__plausible_sp(const struct stg_walk *w, uint64_t sp, uint64_t stack);

/* Size in words of the frame whose info pointer is info, with its first
 * word at frame; 0 if it is not a valid frame. *type gets the closure type. */
uint64_t stg_walk__frame_size(const struct stg_walk *w, uint64_t info, uint64_t frame,
                              uint32_t *type);

#endif
