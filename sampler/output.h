/* output.h - where a writer's bytes go: a file, or standard output. */
#ifndef HSSPY_OUTPUT_H
#define HSSPY_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "out/writer.h"

/* Would w go to a terminal (path NULL or "-", standard output a terminal)
 * while it is not text (raw, svg, pprof)? Then logs one line saying so. */
bool output__refused(const char *path, const struct writer *w);

/* Open path for w (NULL or "-": standard output), not truncating it yet.
 * Logs one line and returns NULL on failure (including output__refused). */
FILE *output__open(const char *path, const struct writer *w);

/* About to write: the file is truncated now (a regular one). */
void output__start(FILE *f);

/* Writing w's output failed (errno says why): logs one line and returns
 * the exit status, 1; but output cut short by its reader (a pipe into head:
 * EPIPE) is no error to tell, and returns 128 + SIGPIPE quietly, the status
 * of a command the signal would have ended. */
int output__failed(const struct writer *w);

/* Close unless it is standard output. If output__start was not called, the
 * file is left as it was: removed if output__open created it. */
void output__close(FILE *f);

#endif
