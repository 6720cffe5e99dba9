/* live.h - `hsspy top`: a live view of a running process in the terminal,
 * refreshed every second (the recording loop's live hooks, drawing
 * out/top.c's screen with sampler/term.c). */
#ifndef HSSPY_LIVE_H
#define HSSPY_LIVE_H

#include <stdbool.h>
#include <sys/types.h>

struct live_opts {
    pid_t pid;      /* -p */
    double rate_hz; /* -F */
    bool idle;      /* --idle */
    bool nonblocking; /* --nonblocking (see record) */
};

/* Half-life of the recent window, and the refresh interval, in seconds. */
#define LIVE_HALF_LIFE_S 1.0
#define LIVE_REFRESH_S 1.0

/* Run the view until q, Ctrl-C, SIGTERM/SIGHUP or the target's exit;
 * returns the exit code (0 on success, 2 if there is no terminal, 1 on
 * other errors, 3 for a GHC program whose Haskell side could not be read). */
int live__run(const struct live_opts *o);

#endif
