/* output.h - where a writer's bytes go: a file, or standard output. */
#ifndef HSSPY_OUTPUT_H
#define HSSPY_OUTPUT_H

#include <stdio.h>

#include "out/writer.h"

/* Open path for w (NULL or "-": standard output). A binary format is not
 * written to a terminal. Logs one line and returns NULL on failure. */
FILE *output__open(const char *path, const struct writer *w);

/* Close unless it is standard output. */
void output__close(FILE *f);

#endif
