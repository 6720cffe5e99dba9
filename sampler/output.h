/* output.h - where a writer's bytes go: a file, or standard output. */
#ifndef HSSPY_OUTPUT_H
#define HSSPY_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "out/writer.h"

/* Standard input, output and error each opened onto /dev/null if hsspy was
 * started with it closed (2>&-): else the first file hsspy opens takes its
 * number, and its messages, or a command's input, go into that file (an
 * output file then held them, and could not be read). Called first thing.
 * A closed standard output is still refused as the output (output__open). */
void output__guard_std_fds(void);

/* In a launched command's child, before its exec: those closed again, as
 * the command was given them. */
void output__unguard_std_fds(void);

/* Would w go to a terminal (path NULL or "-", standard output a terminal)
 * while it is not text (raw, svg, pprof)? Then logs one line saying so. */
bool output__refused(const char *path, const struct writer *w);

/* Open path for w (NULL or "-": standard output). A regular file (or a new
 * one) is written to a temporary file beside it, renamed over it by
 * output__commit; Ctrl-C, SIGTERM or SIGHUP before then remove that file.
 * Else the file is written in place, not truncated yet. Logs one line and
 * returns NULL on failure (including output__refused). */
FILE *output__open(const char *path, const struct writer *w);

/* Is f written to a temporary file? */
bool output__temporary(FILE *f);

/* Is path (what output__open was given) the file other? */
bool output__same_file(const char *path, const char *other);

/* About to write: a file written in place is truncated now (a regular
 * one). */
void output__start(FILE *f);

/* All written: flushed, and a temporary file renamed into place. Returns 0,
 * or -1 with errno set. */
int output__commit(FILE *f);

/* Writing w's output failed (errno says why): logs one line and returns
 * the exit status, 1; but output cut short by its reader (a pipe into head:
 * EPIPE) is no error to tell, and returns 128 + SIGPIPE quietly, the status
 * of a command the signal would have ended. */
int output__failed(const struct writer *w);

/* Close unless it is standard output. Not committed: a temporary file is
 * removed, the file left as it was; a file written in place that
 * output__start was not called for, left as it was, or removed if
 * output__open created it. */
void output__close(FILE *f);

#endif
