/* output.c - opening the output of a command. */
#include "sampler/output.h"

#include <errno.h>
#include <string.h>
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

FILE *output__open(const char *path, const struct writer *w)
{
    FILE *f;
    if (!path || strcmp(path, "-") == 0)
        return output__refused(path, w) ? NULL : stdout;
    f = fopen(path, "we");
    if (!f)
        log__error("cannot write %s: %s", path, strerror(errno));
    return f;
}

void output__close(FILE *f)
{
    if (f && f != stdout)
        fclose(f);
}
