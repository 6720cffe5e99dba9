/* launch.c - fork/exec with a close-on-exec pipe that reports exec failure.
 *
 * The child writes errno to the pipe only if execvp fails; a successful exec
 * closes the pipe, so the parent's read() returning 0 means "the new program
 * is running" and hsspy can seize it like any other process.
 */
#define _GNU_SOURCE
#include "sampler/launch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sampler/log.h"

int launch__start(char *const argv[], pid_t *pid)
{
    int fds[2], err = 0;
    pid_t child;
    ssize_t r;

    if (!argv || !argv[0]) {
        log__error("no command given after --");
        return -EINVAL;
    }
    if (pipe2(fds, O_CLOEXEC) < 0) {
        log__error("cannot run '%s': pipe: %s", argv[0], strerror(errno));
        return -errno;
    }
    child = fork();
    if (child < 0) {
        err = errno;
        close(fds[0]);
        close(fds[1]);
        log__error("cannot run '%s': fork: %s", argv[0], strerror(err));
        return -err;
    }
    if (child == 0) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);
        close(fds[0]);
        execvp(argv[0], argv);
        err = errno;
        if (write(fds[1], &err, sizeof err) < 0) {
            /* nothing more we can say */
        }
        _exit(127);
    }
    close(fds[1]);
    do
        r = read(fds[0], &err, sizeof err);
    while (r < 0 && errno == EINTR);
    close(fds[0]);
    if (r > 0) {
        waitpid(child, NULL, 0);
        log__error("cannot run '%s': %s", argv[0], strerror(err));
        return -err;
    }
    *pid = child;
    return 0;
}
