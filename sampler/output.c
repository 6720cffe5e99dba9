/* output.c - opening the output of a command. */
#include "sampler/output.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "sampler/log.h"

FILE *output__open(const char *path, const struct writer *w)
{
    FILE *f;
    if (!path || strcmp(path, "-") == 0) {
        if (!w->text && isatty(STDOUT_FILENO)) {
            log__error("the %s format is binary: give -o FILE or redirect standard output",
                       w->name);
            return NULL;
        }
        return stdout;
    }
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
