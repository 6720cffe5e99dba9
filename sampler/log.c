/* log.c - messages to the user, on stderr, one line each. */
#include "sampler/log.h"

#include <stdarg.h>
#include <stdio.h>

static bool quiet;

void log__set_quiet(bool q) { quiet = q; }
bool log__quiet(void) { return quiet; }

static void emit(const char *prefix, const char *fmt, va_list ap)
{
    fputs(prefix, stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void log__error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit("hsspy: ", fmt, ap);
    va_end(ap);
}

void log__warn(const char *fmt, ...)
{
    va_list ap;
    if (quiet)
        return;
    va_start(ap, fmt);
    emit("hsspy: warning: ", fmt, ap);
    va_end(ap);
}

void log__more(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit("> ", fmt, ap);
    va_end(ap);
}

void log__info(const char *fmt, ...)
{
    va_list ap;
    if (quiet)
        return;
    va_start(ap, fmt);
    emit("hsspy: ", fmt, ap);
    va_end(ap);
}
