/* replay.h - `hsspy report FILE`: name and write a saved raw recording. */
#ifndef HSSPY_REPLAY_H
#define HSSPY_REPLAY_H

#include <stdbool.h>

#include "out/writer.h"

struct replay_opts {
    const char *input;  /* the raw file */
    const char *output; /* NULL = stdout */
    const char *format;
    bool threads, idle;
    enum out_sort sort;
};

/* Returns the process exit code. */
int replay__run(const struct replay_opts *o);

#endif
