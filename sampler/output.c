/* output.c - opening the output of a command.
 *
 * A profile written to a file goes to a temporary file beside it, renamed
 * over it once the whole profile is written: a write that fails (a full
 * disk) or is cut short (Ctrl-C while writing, hsspy killed) leaves the
 * file as it was, never a profile cut in two. Where no file can be made
 * beside it (a directory hsspy may not write in), or the output is not a
 * regular file (a device, a pipe), it is written in place.
 */
#define _GNU_SOURCE
#include "sampler/output.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sampler/log.h"

static bool std_closed[3]; /* standard input, output, error: closed at the start */

void output__guard_std_fds(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
            continue;
        int n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
        if (n >= 0 && n != fd) {
            dup2(n, fd);
            close(n);
        }
        std_closed[fd] = true;
    }
}

void output__unguard_std_fds(void)
{
    for (int fd = 0; fd <= 2; fd++)
        if (std_closed[fd])
            close(fd);
}

bool output__refused(const char *path, const struct writer *w)
{
    if (w->text || (path && strcmp(path, "-") != 0) || !isatty(STDOUT_FILENO))
        return false;
    log__error("the %s format is not for a terminal: write it to a file with -o FILE (or "
               "redirect standard output)",
               w->name);
    return true;
}

/* The file output__open opened (one at a time): the path the profile goes
 * to, and the temporary file it is written to first (tmp[0] if none). */
static struct {
    FILE *f;
    char path[PATH_MAX];
    char tmp[PATH_MAX + 32];
    bool created; /* written in place, and made by output__open */
    bool started;
    pid_t owner;
} opened;

static const int cut_signals[] = {SIGINT, SIGTERM, SIGHUP};
static struct sigaction cut_old[sizeof cut_signals / sizeof cut_signals[0]];

/* A signal that ends hsspy while a temporary file exists: the file goes
 * first (async-signal-safe: unlink, sigaction, raise). Not in a child
 * forked before its exec. */
static void cut_short(int sig)
{
    if (getpid() == opened.owner && opened.tmp[0])
        unlink(opened.tmp);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void watch_signals(bool on)
{
    for (size_t i = 0; i < sizeof cut_signals / sizeof cut_signals[0]; i++) {
        if (on) {
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = cut_short;
            sigemptyset(&sa.sa_mask);
            sigaction(cut_signals[i], &sa, &cut_old[i]);
        } else {
            sigaction(cut_signals[i], &cut_old[i], NULL);
        }
    }
}

/* A temporary file beside path (which exists as a regular file, old, or
 * does not), with path's mode (old's, or what a new file would get): its
 * descriptor, or -1 (then written in place). A symbolic link is followed:
 * the file it names is replaced, the link kept. */
static int make_temporary(const char *path, const struct stat *old)
{
    char real[PATH_MAX], dir[PATH_MAX], base[PATH_MAX];
    if (old) {
        if (!realpath(path, real))
            return -1;
    } else if (snprintf(real, sizeof real, "%s", path) >= (int)sizeof real) {
        return -1;
    }
    snprintf(dir, sizeof dir, "%s", real);
    snprintf(base, sizeof base, "%s", real);
    int n = snprintf(opened.tmp, sizeof opened.tmp, "%s/.%s.hsspy-XXXXXX", dirname(dir),
                     basename(base));
    if (n < 0 || n >= (int)sizeof opened.tmp) {
        opened.tmp[0] = 0;
        return -1;
    }
    int fd = mkostemp(opened.tmp, O_CLOEXEC);
    if (fd < 0) {
        opened.tmp[0] = 0;
        return -1;
    }
    mode_t mode;
    if (old) {
        mode = old->st_mode & 07777;
        /* (root writing another user's file: it stays theirs) */
        if (old->st_uid != geteuid() || old->st_gid != getegid())
            (void)fchown(fd, old->st_uid, old->st_gid);
    } else {
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    (void)fchmod(fd, mode);
    snprintf(opened.path, sizeof opened.path, "%s", real);
    opened.owner = getpid();
    watch_signals(true);
    return fd;
}

FILE *output__open(const char *path, const struct writer *w)
{
    if (!path || strcmp(path, "-") == 0) {
        /* (Closed, or open only for reading: said before the target is
         * touched, not once the recording is over.) */
        int fl = fcntl(STDOUT_FILENO, F_GETFL);
        bool closed = fl < 0 || std_closed[STDOUT_FILENO];
        if (closed || (fl & O_ACCMODE) == O_RDONLY) {
            log__error("standard output is %s: give -o FILE, or a writable standard output",
                       closed ? "closed" : "open only for reading");
            return NULL;
        }
        return output__refused(path, w) ? NULL : stdout;
    }
    /* Whether the file can be written is known before the target is
     * touched (opened for writing, not truncated: a recording that fails,
     * no such process, must not cost the file it would have replaced). */
    opened.tmp[0] = 0;
    opened.started = false;
    bool created = true;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno == EEXIST) {
        created = false;
        fd = open(path, O_WRONLY | O_CLOEXEC);
    }
    if (fd < 0) {
        log__error("cannot write %s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        int tfd;
        if (created) {
            close(fd); /* (only made to know it could be) */
            unlink(path);
            tfd = make_temporary(path, NULL);
        } else {
            tfd = make_temporary(path, &st);
        }
        if (tfd >= 0) {
            if (!created)
                close(fd);
            fd = tfd;
            created = false;
        } else if (created && (fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666)) < 0) {
            log__error("cannot write %s: %s", path, strerror(errno));
            return NULL;
        }
    }
    FILE *f = fdopen(fd, "w");
    if (!f) {
        log__error("cannot write %s: %s", path, strerror(errno));
        close(fd);
        if (opened.tmp[0]) {
            unlink(opened.tmp);
            opened.tmp[0] = 0;
            watch_signals(false);
        } else if (created) {
            unlink(path);
        }
        return NULL;
    }
    opened.f = f;
    if (!opened.tmp[0])
        snprintf(opened.path, sizeof opened.path, "%s", path);
    opened.created = created;
    return f;
}

bool output__temporary(FILE *f)
{
    return f && f == opened.f && opened.tmp[0];
}

bool output__same_file(const char *path, const char *other)
{
    struct stat a, b;
    if (!path || strcmp(path, "-") == 0 || stat(other, &b) < 0)
        return false;
    if (opened.f && opened.tmp[0])
        path = opened.path; /* (the file that will be replaced) */
    return stat(path, &a) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

void output__start(FILE *f)
{
    struct stat st;
    if (!f || f != opened.f)
        return;
    if (!opened.tmp[0] && fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode))
        (void)ftruncate(fileno(f), 0);
    opened.started = true;
}

int output__commit(FILE *f)
{
    if (fflush(f) != 0)
        return -1;
    if (f != opened.f || !opened.tmp[0])
        return 0;
    if (rename(opened.tmp, opened.path) < 0)
        return -1; /* (output__close removes it) */
    opened.tmp[0] = 0;
    opened.f = NULL; /* written: kept whatever happens next */
    watch_signals(false);
    return 0;
}

int output__failed(const struct writer *w)
{
    if (errno == EPIPE)
        return 128 + SIGPIPE;
    log__error("writing the %s output failed: %s", w->name, strerror(errno));
    return 1;
}

void output__close(FILE *f)
{
    if (!f || f == stdout)
        return;
    if (f == opened.f) {
        if (opened.tmp[0]) {
            /* Not all written: the file stays as it was. */
            unlink(opened.tmp);
            opened.tmp[0] = 0;
            watch_signals(false);
        } else if (opened.created && !opened.started) {
            /* Nothing was written: a file made for it goes again. */
            unlink(opened.path);
        }
        opened.f = NULL;
    }
    fclose(f);
}
