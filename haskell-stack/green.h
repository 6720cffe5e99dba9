/* green.h - every Haskell (green) thread of a program, not only those a
 * capability is running: for dumps of hung or deadlocked programs.
 *
 * Every live TSO is on one generation's thread list (generations[g].threads,
 * linked by global_link; during a collection, old_threads, or the nonmoving
 * collector's lists). With every OS thread stopped, green__capture walks
 * those lists and copies each TSO and its stack into the capture (and, for a
 * thread blocked on a black hole, what it takes to name the owner); after
 * the target has resumed, green__read says what each thread is blocked on
 * and walks its STG stack from the image.
 */
#ifndef HSSPY_GREEN_H
#define HSSPY_GREEN_H

#include <stdint.h>

#include "haskell-stack/rts.h"
#include "haskell-stack/stg_walk.h"

struct green_thread {
    uint64_t tso;
    uint64_t id;          /* the ThreadId number */
    uint32_t why_blocked; /* tso.why_blocked */
    uint32_t what_next;   /* tso.what_next */
    uint64_t block_info;  /* the MVar, the black hole message, ... */
    uint64_t owner_id;    /* blocked on a black hole: the thread evaluating it */
    char label[64];       /* the thread's label, where the RTS keeps one */
    uint64_t stack, sp;   /* its current stack chunk and saved sp */
};

/* Why a capture may lack some Haskell threads. */
enum green_short {
    GREEN_WHOLE,   /* it does not */
    GREEN_IN_GC,   /* a copying collection was under way: worth another try */
    GREEN_NO_ROOM, /* the image is full */
    GREEN_MAX,     /* max of them found */
    GREEN_BROKEN,  /* a list led to something not a TSO, or round in a
                    * cycle: worth another try too */
};

/* With all OS threads stopped: copy every Haskell thread into img. Returns
 * how many TSO addresses were written to tsos (at most max), and in *why
 * whether that may not be all; 0 if the RTS gives no way to find them. */
size_t green__capture(const struct rts *r, pid_t pid, struct memimg *img, uint64_t *tsos,
                      size_t max, enum green_short *why);

/* Why, in words ("" for GREEN_WHOLE). */
const char *green__short_str(enum green_short why);

/* Read one captured thread back, and walk its stack (every frame, as it
 * is) into out. Returns the number of frames. */
int green__read(const struct rts *r, struct modset *ms, const struct memimg *img, uint64_t tso,
                struct green_thread *g, struct raw_frame *out, int max);

/* "blocked on an MVar", "running", ... for tso.why_blocked/what_next. */
const char *green__status(const struct rts *r, uint32_t why_blocked, uint32_t what_next);

#endif
