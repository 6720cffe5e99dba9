/* output.c - opening the output of a command. */
#include "sampler/output.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sampler/log.h"

bool output__refused(const char *path, const struct writer *w)
{
    if (w->text || (path && strcmp(path, "-") != 0) || !isatty(STDOUT_FILENO))
        return false;
    log__error("the %s format is not for a terminal: write it to a file with -o FILE (or "
               "redirect standard output)",
               w->name);
    return true;
}

/* The file output__open opened (one at a time), and whether it made it. */
static struct {
    FILE *f;
    char path[4096];
    bool created;
} opened;

FILE *output__open(const char *path, const struct writer *w)
{
    if (!path || strcmp(path, "-") == 0) {
        /* (Closed, or open only for reading: said before the target is
         * touched, not once the recording is over.) */
        int fl = fcntl(STDOUT_FILENO, F_GETFL);
        if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY) {
            log__error("standard output is %s: give -o FILE, or a writable standard output",
                       fl < 0 ? "closed" : "open only for reading");
            return NULL;
        }
        return output__refused(path, w) ? NULL : stdout;
    }
    /* Not truncated yet: a recording that fails (no such process, not
     * allowed to trace it) must not cost the file it would have replaced;
     * but whether it can be written is known before the target is
     * touched. */
    bool created = true;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno == EEXIST) {
        created = false;
        fd = open(path, O_WRONLY | O_CLOEXEC);
    }
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        log__error("cannot write %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    opened.f = f;
    snprintf(opened.path, sizeof opened.path, "%s", path);
    opened.created = created;
    return f;
}

void output__start(FILE *f)
{
    struct stat st;
    if (f && f != stdout && fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode))
        (void)ftruncate(fileno(f), 0);
    if (f == opened.f)
        opened.f = NULL; /* written: kept whatever happens next */
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
        /* Nothing was written: a file made for it goes again. */
        if (opened.created)
            unlink(opened.path);
        opened.f = NULL;
    }
    fclose(f);
}
