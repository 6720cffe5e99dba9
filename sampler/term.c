/* term.c - the terminal of an interactive view (see term.h). */
#define _GNU_SOURCE
#include "sampler/term.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
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
static bool installed;        /* the fatal signals' handlers */
static bool suspended;        /* between term__suspend and term__resume */

/* hsspy must never block on the terminal (a slow link, a stuck pane):
 * while it waits, a new thread of the target or a signal to it waits for
 * hsspy. So the screen goes out through a non-blocking descriptor of its
 * own (the shell's, shared with standard output, stays as it is), and
 * what the terminal does not take at once is finished later; a frame that
 * comes while the last one is still going out is skipped. */
static int out_fd = -1;
static char *pending;
static size_t pending_len, pending_off;

static const int fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGQUIT, SIGTRAP};
static struct sigaction fatal_old[sizeof fatal / sizeof *fatal];

/* Write what the terminal takes now; true once nothing is left. */
static bool flush_pending(void)
{
    while (pending_off < pending_len) {
        ssize_t w = write(out_fd, pending + pending_off, pending_len - pending_off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN)
            return false;
        if (w <= 0) {
            pending_off = pending_len; /* the terminal is gone: nothing to draw on */
            break;
        }
        pending_off += (size_t)w;
    }
    free(pending);
    pending = NULL;
    pending_len = pending_off = 0;
    return true;
}

/* Queue bytes after what is pending; false on ENOMEM. */
static bool queue(const char *s, size_t n)
{
    char *np = realloc(pending, pending_len + n);
    if (!np)
        return false;
    memcpy(np + pending_len, s, n);
    pending = np;
    pending_len += n;
    return true;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Flush, waiting for the terminal up to ms milliseconds (the end). */
static void flush_within(int ms)
{
    uint64_t until = now_ms() + (uint64_t)ms;
    while (!flush_pending()) {
        uint64_t now = now_ms();
        if (now >= until) {
            free(pending); /* a terminal that stuck: give up on it */
            pending = NULL;
            pending_len = pending_off = 0;
            return;
        }
        struct pollfd pfd = {.fd = out_fd, .events = POLLOUT};
        poll(&pfd, 1, (int)(until - now));
    }
}

/* The part of term__leave a dying process can do (TCSANOW: TCSAFLUSH
 * would wait for the output to drain). */
static void restore(void)
{
    tcsetattr(STDIN_FILENO, TCSANOW, &saved);
    if (write(out_fd, LEAVE_SEQ, sizeof LEAVE_SEQ - 1) < 0) {
        /* nothing more a dying process can do */
    }
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
    if (saved_stderr >= 0)
        dup2(saved_stderr, STDERR_FILENO); /* its last words to the user */
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

/* The view's modes, from the terminal's as they are (orig). */
static struct termios view_modes(const struct termios *orig)
{
    struct termios t = *orig;
    /* Keys one by one, unechoed, no wait (reads return at once); Ctrl-C
     * still a signal. No Ctrl-S: output stopped by it would stop the view. */
    t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
    t.c_iflag &= ~(tcflag_t)IXON;
    t.c_cc[VMIN] = 0;
    t.c_cc[VTIME] = 0;
    t.c_cc[VSUSP] = _POSIX_VDISABLE;
    return t;
}

int term__enter(void)
{
    struct termios t;
    if (tcgetattr(STDIN_FILENO, &saved) < 0) {
        log__error("cannot read the terminal's modes: %s", strerror(errno));
        return -1;
    }
    t = view_modes(&saved);
    /* A descriptor of our own (a new open file description), so that
     * O_NONBLOCK does not reach the shell's standard output. */
    char path[64];
    out_fd = ttyname_r(STDOUT_FILENO, path, sizeof path) == 0
                 ? open(path, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
                 : -1;
    if (out_fd < 0) {
        log__error("cannot open the terminal for writing: %s", strerror(errno));
        return -1;
    }
    fflush(stderr);
    held = tmpfile();
    saved_stderr = held ? dup(STDERR_FILENO) : -1;
    for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++) {
        struct sigaction sa = {.sa_handler = on_fatal, .sa_flags = SA_RESETHAND};
        sigemptyset(&sa.sa_mask);
        sigaction(fatal[i], &sa, &fatal_old[i]);
    }
    installed = true;
    active = 1;
    if (tcsetattr(STDIN_FILENO, TCSANOW, &t) < 0) {
        int e = errno;
        term__release();
        log__error("cannot set the terminal's modes: %s", strerror(e));
        return -1;
    }
    tcflush(STDIN_FILENO, TCIFLUSH); /* keys typed before are not for us */
    if (queue(ENTER_SEQ, sizeof ENTER_SEQ - 1))
        flush_pending();
    if (saved_stderr >= 0)
        dup2(fileno(held), STDERR_FILENO);
    return 0;
}

void term__suspend(void)
{
    if (!active)
        return;
    if (queue(LEAVE_SEQ, sizeof LEAVE_SEQ - 1))
        flush_within(250);
    active = 0;
    suspended = true;
    tcsetattr(STDIN_FILENO, TCSANOW, &saved);
}

int term__resume(void)
{
    if (!suspended)
        return 1;
    if (tcgetpgrp(STDIN_FILENO) != getpgrp())
        return 0; /* continued in the background: the shell has the terminal */
    /* (The modes as the shell gives them back now: what the view leaves.) */
    struct termios t;
    if (tcgetattr(STDIN_FILENO, &t) == 0)
        saved = t;
    t = view_modes(&saved);
    suspended = false;
    active = 1;
    tcsetattr(STDIN_FILENO, TCSANOW, &t);
    if (queue(ENTER_SEQ, sizeof ENTER_SEQ - 1))
        flush_pending();
    return 1;
}

void term__leave(void)
{
    if (suspended) {
        suspended = false;
        close(out_fd);
        out_fd = -1;
    }
    if (!active)
        return;
    /* The frame going out, then the way back; a terminal that takes
     * neither within a moment is given up on. */
    if (queue(LEAVE_SEQ, sizeof LEAVE_SEQ - 1))
        flush_within(250);
    active = 0;
    tcsetattr(STDIN_FILENO, TCSANOW, &saved);
    close(out_fd);
    out_fd = -1;
}

void term__release(void)
{
    term__leave();
    if (!installed)
        return;
    installed = false;
    fflush(stderr);
    for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++)
        sigaction(fatal[i], &fatal_old[i], NULL);
    if (saved_stderr >= 0) {
        dup2(saved_stderr, STDERR_FILENO);
        close(saved_stderr);
        saved_stderr = -1;
    }
    if (held) {
        char buf[4096];
        size_t n;
        rewind(held);
        while ((n = fread(buf, 1, sizeof buf, held)) > 0 && fwrite(buf, 1, n, stderr) == n)
            ;
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
            /* An escape sequence (an arrow, a function key), which arrives
             * in one read, is skipped, and only it: a key after it in the
             * same read is a key (before: dropped, Up then q did not quit).
             * CSI: ESC [, parameters and intermediates, a final byte in
             * 0x40-0x7e; SS3: ESC O and one byte. ESC then another byte
             * (Esc, or Alt with a key): the ESC alone. */
            if (at < len && buf[at] == '[') {
                at++;
                while (at < len && (buf[at] < 0x40 || buf[at] > 0x7e))
                    at++;
                if (at < len)
                    at++;
            } else if (at < len && buf[at] == 'O') {
                at += at + 1 < len ? 2 : 1;
            }
            continue;
        }
        ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
        if (n <= 0)
            return -1; /* nothing (VMIN 0), or the terminal is gone */
        len = (size_t)n;
        at = 0;
    }
}

void term__flush(void)
{
    if (out_fd >= 0)
        flush_pending();
}

void term__draw(const char *screen, int rows)
{
    size_t cap = strlen(screen) + 4096, len = 0;
    char *out;
    int row = 1;
    if (out_fd < 0 || !flush_pending())
        return; /* the last frame is still going out: skip this one */
    if (!(out = malloc(cap)))
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
    pending = out;
    pending_len = len;
    pending_off = 0;
    flush_pending();
}
