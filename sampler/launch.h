/* launch.h - starting the command of `hsspy record -- CMD ARGS`. */
#ifndef HSSPY_LAUNCH_H
#define HSSPY_LAUNCH_H

#include <stdbool.h>
#include <sys/types.h>

#include "sampler/tracee.h"

/* Fork and exec argv[0] (searched in PATH) with hsspy's own credentials,
 * a clean signal mask and default dispositions, traced from before its
 * exec: t is attached to it once it runs the new program. With
 * stdout_to_stderr, its standard output is hsspy's standard error (where
 * the profile goes to standard output, a file or a pipe, the command's
 * output would be mixed into it). Returns 0 with *pid set, or logs one line
 * ("cannot run 'x': ...") and returns -errno. */
int launch__start(char *const argv[], bool stdout_to_stderr, struct tracee *t, pid_t *pid);

/* Raise hsspy's soft limit of open files to its hard limit: it keeps up to
 * four files open per thread of the program (three in /proc and a perf
 * event), and 1024, the usual soft limit, is 256 threads. A command it
 * launches gets the limit hsspy was started with, as a program that uses
 * select(2) needs. */
void launch__raise_nofile(void);

#endif
