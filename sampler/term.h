/* term.h - the terminal of an interactive view (hsspy top).
 *
 *   if (term__usable() < 0) return 2;      // one line said why
 *   term__enter();                         // cbreak, alternate screen
 *   term__draw(screen, rows);              // each refresh
 *   int k = term__key();                   // each poll; -1: none
 *   term__leave();                         // everything as it was
 *
 * While the view is up, standard error goes to a temporary file (a message
 * would tear the screen); term__leave prints what was held back. If hsspy
 * dies of a signal meanwhile (SIGSEGV, SIGABRT, SIGQUIT from Ctrl-\ ...),
 * the terminal is put back before it dies. Ctrl-C stays a signal (SIGINT),
 * which the recording loop takes as the end; Ctrl-Z is disabled while the
 * view is up, since a stopped hsspy would leave the terminal in its modes.
 */
#ifndef HSSPY_TERM_H
#define HSSPY_TERM_H

/* Can the view run here: standard input and output a terminal, hsspy in
 * its foreground, TERM not "dumb"? 0, or -1 after one line saying why. */
int term__usable(void);

/* Take the terminal over: no echo, keys without Enter, the alternate
 * screen, no cursor. 0, or -1 after one line saying why (nothing changed). */
int term__enter(void);

/* Put everything back as term__enter found it (idempotent), and print the
 * messages held back meanwhile. */
void term__leave(void);

/* The terminal's size now (24x80 if it cannot say). */
void term__size(int *rows, int *cols);

/* The next key pressed, or -1 if none (never blocks). Escape sequences
 * (arrows, function keys) are skipped whole. */
int term__key(void);

/* Draw a screen of rows rows: lines separated by '\n' (at most rows, none
 * wider than the screen), each at its row from the top; rows below the last
 * line cleared. */
void term__draw(const char *screen, int rows);

#endif
