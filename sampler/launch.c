/* launch.c - fork and exec a command, traced from before its exec.
 *
 * The child waits before execvp for a byte on a pipe; the parent seizes it
 * while it waits, writes the byte, and waits for its PTRACE_EVENT_EXEC.
 * Seizing after the exec instead would race with it: a seize that lands
 * while execve is still running reports that very exec as an event, which
 * would read as the program replacing itself. Should hsspy die before it
 * writes, the pipe's end of file lets the command run all the same (it
 * stopped itself with SIGSTOP before, and stayed stopped for good when
 * hsspy was killed before its SIGCONT). If execvp fails, the child writes
 * errno to a close-on-exec pipe and exits 127.
 */
#define _GNU_SOURCE
#include "sampler/launch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sampler/log.h"
#include "sampler/output.h"

/* The limit of open files hsspy was started with, if it raised it. */
static struct rlimit nofile_given;
static bool nofile_raised;

void launch__raise_nofile(void)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_NOFILE, &r) < 0 || r.rlim_cur >= r.rlim_max)
        return;
    nofile_given = r;
    r.rlim_cur = r.rlim_max;
    nofile_raised = setrlimit(RLIMIT_NOFILE, &r) == 0;
}

static void child(char *const argv[], int errfd, int gofd, bool stdout_to_stderr)
{
    sigset_t none;
    int err;
    char go;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    if (nofile_raised)
        setrlimit(RLIMIT_NOFILE, &nofile_given);
    /* Wait here to be seized (a byte), or for hsspy's end (end of file). */
    while (read(gofd, &go, 1) < 0 && errno == EINTR)
        ;
    close(gofd);
    if (stdout_to_stderr)
        dup2(STDERR_FILENO, STDOUT_FILENO);
    output__unguard_std_fds();
    execvp(argv[0], argv);
    err = errno;
    if (write(errfd, &err, sizeof err) < 0) {
        /* nothing more we can say */
    }
    _exit(127);
}

/* execvp said ENOENT of cmd, a file that exists (a path): a script whose
 * #! line names an interpreter that does not exist? Then that, in interp. */
static bool missing_interpreter(const char *cmd, char *interp, size_t size)
{
    char line[256];
    if (!strchr(cmd, '/'))
        return false;
    int fd = open(cmd, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, line, sizeof line - 1);
    close(fd);
    if (n < 3 || line[0] != '#' || line[1] != '!')
        return false;
    line[n] = 0;
    char *s = line + 2;
    s += strspn(s, " \t");
    size_t len = strcspn(s, " \t\n");
    if (!len)
        return false;
    s[len] = 0;
    if (access(s, X_OK) == 0)
        return false;
    snprintf(interp, size, "%s", s);
    return true;
}

/* Follow the child from its seizure to its exec (or its death). 0 once it
 * runs the new program, else -errno (exec failed) or -ECHILD. */
static int follow_to_exec(pid_t pid, int errfd, const char *cmd)
{
    for (;;) {
        int st, err = 0;
        if (waitpid(pid, &st, __WALL) < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (WIFEXITED(st) || WIFSIGNALED(st)) {
            if (read(errfd, &err, sizeof err) != (ssize_t)sizeof err)
                err = ECHILD;
            char interp[256];
            if (err == ENOENT && missing_interpreter(cmd, interp, sizeof interp))
                log__error("cannot run '%s': its interpreter %s (its #! line) was not found",
                           cmd, interp);
            else
                log__error("cannot run '%s': %s", cmd, strerror(err));
            return -err;
        }
        if (!WIFSTOPPED(st))
            continue;
        int event = (unsigned)st >> 16, sig = WSTOPSIG(st);
        if (event == PTRACE_EVENT_EXEC) {
            ptrace(PTRACE_CONT, pid, 0, 0);
            return 0;
        }
        if (event == PTRACE_EVENT_STOP) {
            /* A group stop (the terminal's Ctrl-Z), or the notification
             * that it ended. */
            if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
                ptrace(PTRACE_LISTEN, pid, 0, 0);
            else
                ptrace(PTRACE_CONT, pid, 0, 0);
            continue;
        }
        /* A signal: deliver it. */
        ptrace(PTRACE_CONT, pid, 0, (void *)(long)(event ? 0 : sig));
    }
}

int launch__start(char *const argv[], bool stdout_to_stderr, struct tracee *t, pid_t *pid)
{
    int fds[2], go[2], err;
    pid_t c;

    if (!argv || !argv[0]) {
        log__error("no command given after --");
        return -EINVAL;
    }
    if (pipe2(fds, O_CLOEXEC) < 0 || pipe2(go, O_CLOEXEC) < 0) {
        err = errno;
        log__error("cannot run '%s': pipe: %s", argv[0], strerror(err));
        return -err;
    }
    c = fork();
    if (c < 0) {
        err = errno;
        close(fds[0]);
        close(fds[1]);
        close(go[0]);
        close(go[1]);
        log__error("cannot run '%s': fork: %s", argv[0], strerror(err));
        return -err;
    }
    if (c == 0) {
        close(fds[0]);
        close(go[1]);
        child(argv, fds[1], go[0], stdout_to_stderr);
    }
    close(fds[1]);
    close(go[0]);
    err = 0;
    if (ptrace(PTRACE_SEIZE, c, 0, (void *)(long)TRACEE_OPTIONS) < 0)
        err = errno;
    if (err) {
        kill(c, SIGKILL); /* never ran the command: nothing of the user's is lost */
        waitpid(c, NULL, 0);
        close(fds[0]);
        close(go[1]);
        log__error("cannot run '%s': %s", argv[0], strerror(err));
        return -err;
    }
    if (write(go[1], "g", 1) != 1) {
        /* (its end of file says go all the same) */
    }
    close(go[1]);
    err = follow_to_exec(c, fds[0], argv[0]);
    close(fds[0]);
    if (err < 0) {
        waitpid(c, NULL, WNOHANG);
        return err;
    }
    *pid = c;
    return tracee__adopt(t, c);
}
