/* launch.h - starting the command of `hsspy record -- CMD ARGS`. */
#ifndef HSSPY_LAUNCH_H
#define HSSPY_LAUNCH_H

#include <sys/types.h>

#include "sampler/tracee.h"

/* Fork and exec argv[0] (searched in PATH) with hsspy's own credentials,
 * a clean signal mask and default dispositions, traced from before its
 * exec: t is attached to it once it runs the new program. Returns 0 with
 * *pid set, or logs one line ("cannot run 'x': ...") and returns -errno. */
int launch__start(char *const argv[], struct tracee *t, pid_t *pid);

/* Raise hsspy's soft limit of open files to its hard limit: it keeps up to
 * four files open per thread of the program (three in /proc and a perf
 * event), and 1024, the usual soft limit, is 256 threads. A command it
 * launches gets the limit hsspy was started with, as a program that uses
 * select(2) needs. */
void launch__raise_nofile(void);

#endif
