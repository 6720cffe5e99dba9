/* writer.h - the one interface every output format implements.
 *
 * A writer turns a finished, symbolized profile into bytes on a FILE. The
 * sampler knows nothing of formats; adding one is adding a `struct writer`
 * to the table in out/writer.c.
 *
 * The displayed stack of a sample, outermost first, is the same for every
 * writer (out__path): an optional "tid N (comm)" root (--threads), the tag
 * in brackets for GHC programs ("[haskell]"), then the code frames
 * (out__frames). Formats with their own place for the thread and the tag
 * use it instead of pseudo-frames: pprof's labels, speedscope's profile
 * per thread.
 *
 * A writer whose output is binary has text = false; record refuses to send
 * it to a terminal.
 */
#ifndef HSSPY_WRITER_H
#define HSSPY_WRITER_H

#include <stdbool.h>
#include <stdio.h>

#include "out/profile.h"

/* The order of functions in -f calls (--sort), as fprof's {sort, acc|own}. */
enum out_sort {
    OUT_SORT_ACC, /* samples with the function anywhere on the stack (default) */
    OUT_SORT_OWN, /* samples with the function as the leaf */
};

struct out_opts {
    bool threads;       /* a root frame per OS thread */
    bool idle;          /* keep samples of idle threads */
    enum out_sort sort; /* --sort */
};

struct writer {
    const char *name;
    const char *help;
    bool text; /* may go to a terminal */
    int (*write)(const struct profile *p, const struct out_opts *o, FILE *f);
};

const struct writer *writer__find(const char *name);
/* NULL-terminated list of all writers. */
const struct writer *const *writer__all(void);

/* Is this sample shown under these options? */
bool out__visible(const struct profile *p, const struct prof_sample *s, const struct out_opts *o);

/* The displayed frames of a sample, outermost first, into names[0..max).
 * Pseudo-frames (tid root, tag) are formatted into scratch, which must hold
 * 128 bytes. Returns the count; *first_code is the index of the first code
 * frame (after the pseudo-frames). Every name but the tid root (in scratch)
 * lives as long as the profile, so writers may keep the pointers. */
int out__path(const struct profile *p, const struct prof_sample *s, const struct out_opts *o,
              const char **names, int max, char *scratch, int *first_code);

/* The code frames of a sample as displayed (the same rule as out__path),
 * outermost first, as frame ids into out[0..max): for writers that describe
 * frames by more than their name. Returns the count. */
int out__frames(const struct profile *p, const struct prof_sample *s, uint32_t *out, int max);

/* Visible samples that display alike, counted: same stack and tag, and,
 * if asked, same thread (OUT_BY_THREAD) and /proc state (OUT_BY_STATE).
 * For writers that name and count each distinct stack once, however long
 * the recording: memory grows with the distinct groups, not the samples.
 * *groups is malloc'ed (n may be 0), in no particular order; each holds
 * its first sample (thread 0 and state 0 unless grouped by them). Returns
 * the number of visible samples, or -1 on ENOMEM. */
#define OUT_BY_THREAD 1
#define OUT_BY_STATE 2
struct out_group {
    struct prof_sample s;
    uint64_t count;
};
int64_t out__groups(const struct profile *p, const struct out_opts *o, unsigned by,
                    struct out_group **groups, size_t *n);

/* The order threads are written in, busiest first: by samples on a CPU
 * (a thread blocked in a foreign call has as many samples as one that
 * computes, and sixty of them would hide the one that did), then by
 * samples shown, then by all samples, then by tid. For qsort of an array
 * of struct out_rank (figures as doubles: top's decay them). */
struct out_rank {
    size_t t; /* the thread's index */
    double oncpu, shown, all;
    pid_t tid;
};
int out__cmp_rank(const void *a, const void *b);

/* The threads of p in that order, by their samples (oncpu and all) and
 * shown[t], the samples of thread t shown: *ranks malloc'ed, p->nthreads
 * of them. 0, or -1 on ENOMEM. */
int out__rank_threads(const struct profile *p, const uint64_t *shown, struct out_rank **ranks);

/* The tag's pseudo-frame, "[haskell]"; NULL for TAG_NONE. */
const char *out__tag_frame(int tag);

/* How the sampling went, one item per line joined by sep: the samples
 * shown, rate asked and achieved, ticks and missed ticks, pause mean and
 * max, errors, duration. For formats that carry it as comments or a title. */
void out__health(const struct profile *p, const struct out_opts *o, char *buf, size_t size,
                 const char *sep);

#endif
