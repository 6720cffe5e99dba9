/* term.c - the terminal of an interactive view (see term.h). */
#define _GNU_SOURCE
#include "sampler/term.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "sampler/log.h"

/* Alternate screen on, cursor hidden; and back. */
#define ENTER_SEQ "\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J"
#define LEAVE_SEQ "\x1b[?25h\x1b[?1049l"

/* What term__enter changed, for term__leave and for the signal handler
 * (which may only use async-signal-safe calls: tcsetattr, write, dup2). */
static volatile sig_atomic_t active;
static struct termios saved;
static int saved_stderr = -1; /* the real standard error, while held back */
static FILE *held;            /* where messages go meanwhile */

static const int fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGQUIT, SIGTRAP};
static struct sigaction fatal_old[sizeof fatal / sizeof *fatal];

static void write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return; /* the terminal is gone: nothing to draw on */
        s += w;
        n -= (size_t)w;
    }
}

/* The part of term__leave a dying process can do. */
static void restore(void)
{
    tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved);
    write_all(STDOUT_FILENO, LEAVE_SEQ, sizeof LEAVE_SEQ - 1);
    if (saved_stderr >= 0)
        dup2(saved_stderr, STDERR_FILENO);
}

/* hsspy is dying: give the terminal back, then die the same way (the
 * handler was reset on entry; a fault happens again on return, any other
 * signal is raised again and delivered on return). */
static void on_fatal(int sig)
{
    if (active) {
        active = 0;
        restore();
    }
    raise(sig);
}

int term__usable(void)
{
    const char *term = getenv("TERM");
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        log__error("top is an interactive view: it needs a terminal on standard input and "
                   "output (hsspy record writes a profile to a file)");
        return -1;
    }
    if (tcgetpgrp(STDIN_FILENO) != getpgrp()) {
        log__error("top needs the terminal to itself: run it in the foreground");
        return -1;
    }
    if (!term || !term[0] || strcmp(term, "dumb") == 0) {
        log__error("top needs a terminal that understands ANSI escapes (TERM is '%s')",
                   term ? term : "");
        return -1;
    }
    return 0;
}

int term__enter(void)
{
    struct termios t;
    if (tcgetattr(STDIN_FILENO, &saved) < 0) {
        log__error("cannot read the terminal's modes: %s", strerror(errno));
        return -1;
    }
    t = saved;
    /* Keys one by one, unechoed, no wait (reads return at once); Ctrl-C
     * still a signal. */
    t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
    t.c_cc[VMIN] = 0;
    t.c_cc[VTIME] = 0;
    t.c_cc[VSUSP] = _POSIX_VDISABLE;
    fflush(stderr);
    held = tmpfile();
    saved_stderr = held ? dup(STDERR_FILENO) : -1;
    for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++) {
        struct sigaction sa = {.sa_handler = on_fatal, .sa_flags = SA_RESETHAND};
        sigemptyset(&sa.sa_mask);
        sigaction(fatal[i], &sa, &fatal_old[i]);
    }
    active = 1;
    if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &t) < 0) {
        int e = errno;
        term__leave();
        log__error("cannot set the terminal's modes: %s", strerror(e));
        return -1;
    }
    write_all(STDOUT_FILENO, ENTER_SEQ, sizeof ENTER_SEQ - 1);
    if (saved_stderr >= 0)
        dup2(fileno(held), STDERR_FILENO);
    return 0;
}

void term__leave(void)
{
    if (!active)
        return;
    fflush(stderr);
    active = 0;
    restore();
    for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++)
        sigaction(fatal[i], &fatal_old[i], NULL);
    if (saved_stderr >= 0) {
        close(saved_stderr);
        saved_stderr = -1;
    }
    if (held) {
        char buf[4096];
        size_t n;
        rewind(held);
        while ((n = fread(buf, 1, sizeof buf, held)) > 0)
            write_all(STDERR_FILENO, buf, n);
        fclose(held);
        held = NULL;
    }
}

void term__size(int *rows, int *cols)
{
    struct winsize ws;
    *rows = 24;
    *cols = 80;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0) {
        *rows = ws.ws_row;
        *cols = ws.ws_col;
    }
}

int term__key(void)
{
    static unsigned char buf[64];
    static size_t len, at;
    for (;;) {
        if (at < len) {
            unsigned char c = buf[at++];
            if (c != 0x1b)
                return c;
            /* An escape sequence arrives in one read: drop the rest. */
            at = len;
            continue;
        }
        ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
        if (n <= 0)
            return -1; /* nothing (VMIN 0), or the terminal is gone */
        len = (size_t)n;
        at = 0;
    }
}

void term__draw(const char *screen, int rows)
{
    size_t cap = strlen(screen) + 4096, len = 0;
    char *out = malloc(cap);
    int row = 1;
    if (!out)
        return;
    /* Each line: to its row, clear the row, the text (never wider than the
     * screen, so nothing wraps or scrolls). */
    for (const char *l = screen; *l; row++) {
        const char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l) : strlen(l);
        if (len + n + 32 > cap) {
            char *no = realloc(out, cap = (len + n + 32) * 2);
            if (!no) {
                free(out);
                return;
            }
            out = no;
        }
        len += (size_t)snprintf(out + len, cap - len, "\x1b[%d;1H\x1b[2K", row);
        memcpy(out + len, l, n);
        len += n;
        l = e ? e + 1 : l + n;
    }
    if (row <= rows) /* (at the last row, that would erase it) */
        len += (size_t)snprintf(out + len, cap - len, "\x1b[%d;1H\x1b[J", row);
    write_all(STDOUT_FILENO, out, len);
    free(out);
}
