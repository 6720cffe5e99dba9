/* launch.h - starting the command of `hsspy record -- CMD ARGS`. */
#ifndef HSSPY_LAUNCH_H
#define HSSPY_LAUNCH_H

#include <sys/types.h>

/* Fork and exec argv[0] (searched in PATH) with hsspy's own credentials,
 * a clean signal mask and default dispositions. Returns once the exec has
 * succeeded (the child then runs the new program) with *pid set, or logs one
 * line ("cannot run 'x': ...") and returns -errno. */
int launch__start(char *const argv[], pid_t *pid);

#endif
