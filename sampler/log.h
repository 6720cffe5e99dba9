/* log.h - the one place hsspy talks to the user on stderr.
 *
 * A root cause is logged once, unprefixed, by the code that knows what was
 * being attempted ("hsspy: cannot trace pid 42: ..."); consequences logged
 * further up use log__more(), which prefixes "> " so the first line stays the
 * one to read.
 */
#ifndef HSSPY_LOG_H
#define HSSPY_LOG_H

#include <stdbool.h>

void log__error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log__warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log__more(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log__info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* -q silences info and warnings; errors always print. */
void log__set_quiet(bool quiet);
bool log__quiet(void);

#endif
