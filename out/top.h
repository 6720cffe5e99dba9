/* top.h - the model and the screen of `hsspy top`: which functions and
 * tags the recent samples show, as lines of text sized to a terminal.
 *
 * The recording hands its samples over in batches (about once a second,
 * their frames already named), and the view keeps, per function and per
 * tag, for all threads together and for each thread:
 *
 *  - a recent figure: each sample weighs 2^(t / half-life), t being when it
 *    was taken, so a sample half-life seconds old counts half as much as
 *    one taken now (an exponentially decayed window: with a half-life of
 *    1 s, the last 3 s carry seven eighths of the weight). Shares are
 *    ratios of such sums, so no weight is ever decayed in place; they are
 *    rescaled only to stay within a double's range;
 *  - an all-time count, since sampling began.
 *
 *   struct top *v = top__new(1.0, false);
 *   top__add(v, p, now_ns);                  // each batch
 *   char *screen = top__render(v, p, &opts, rows, cols);
 *
 * Nothing here touches the target or the terminal.
 */
#ifndef HSSPY_TOP_H
#define HSSPY_TOP_H

#include <stdbool.h>
#include <stdint.h>

#include "out/profile.h"

enum top_sort {
    TOP_SORT_OWN,   /* by samples with the function as the leaf */
    TOP_SORT_TOTAL, /* by samples with the function anywhere on the stack */
};

/* What the screen shows; the keys of hsspy top change it. */
struct top_opts {
    bool threads;       /* one section per thread instead of all merged */
    enum top_sort sort;
    bool all_time;      /* all-time counts instead of the recent window */
    const char *keys;   /* a reminder of the keys, for the header ("" none) */
    const char *options; /* the options that change what is seen (--idle ...), or "" */
};

struct top;

/* A view whose recent window has this half-life, in seconds; idle samples
 * count in the function lists only with idle (--idle), in the tag shares
 * always. NULL on ENOMEM. */
struct top *top__new(double half_life_s, bool idle);
void top__free(struct top *v);

/* Take in the batch of samples p holds (their frames named; t_ns
 * relative to the start of the recording, as is now_ns) and the ticks
 * since the last call. Each thread's role is taken from p->threads for
 * the threads this batch has samples of. 0 or -ENOMEM. */
int top__add(struct top *v, const struct profile *p, uint64_t now_ns);

/* The screen: at most rows lines, each at most cols columns wide (names
 * are cut), '\n' after each. malloc'ed; NULL on ENOMEM. */
char *top__render(const struct top *v, const struct profile *p, const struct top_opts *o,
                  int rows, int cols);

#endif
