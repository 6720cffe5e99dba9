/* term.h - the terminal of an interactive view (hsspy top).
 *
 *   if (term__usable() < 0) return 2;      // one line said why
 *   term__enter();                         // cbreak, alternate screen
 *   term__draw(screen, rows);              // each refresh
 *   int k = term__key();                   // each poll; -1: none
 *   term__leave();                         // the terminal as it was
 *   term__release();                       // the messages held back
 *
 * From term__enter to term__release, standard error goes to a temporary
 * file (a message would tear the screen), then is printed: once the target
 * has been detached, since the terminal may not take it at once. If hsspy
 * dies of a signal meanwhile (SIGSEGV, SIGABRT, SIGQUIT from Ctrl-\ ...),
 * the terminal is put back before it dies. Ctrl-C stays a signal (SIGINT),
 * which the recording loop takes as the end. Ctrl-Z is disabled while the
 * view is up, and so is Ctrl-S, which would stop the view; a SIGTSTP sent
 * from outside stops hsspy with the terminal put back (term__suspend), and
 * the view takes it again once hsspy is continued in the foreground
 * (term__resume). hsspy never blocks on the
 * terminal while attached: the target's new threads and signals would
 * wait for it.
 */
#ifndef HSSPY_TERM_H
#define HSSPY_TERM_H

/* Can the view run here: standard input and output a terminal, hsspy in
 * its foreground, TERM not "dumb"? 0, or -1 after one line saying why. */
int term__usable(void);

/* Take the terminal over: no echo, keys without Enter, the alternate
 * screen, no cursor. 0, or -1 after one line saying why (nothing changed). */
int term__enter(void);

/* Put the terminal back as term__enter found it (idempotent): modes, the
 * main screen, the cursor. Never waits for the terminal more than a moment. */
void term__leave(void);

/* hsspy is about to stop (SIGTSTP from outside, as Ctrl-Z is disabled):
 * the terminal's modes and screen put back for the shell, as by
 * term__leave, until term__resume. */
void term__suspend(void);

/* hsspy continued after term__suspend: the view takes the terminal again
 * (its modes as the shell left them, then the view's) and returns 1; or,
 * continued in the background, where the shell has the terminal, returns
 * 0 and changes nothing (hsspy should stop again, as for SIGTTOU). */
int term__resume(void);

/* term__leave, then standard error back, and print the messages held back
 * since term__enter (idempotent). This may wait for the terminal. */
void term__release(void);

/* The terminal's size now (24x80 if it cannot say). */
void term__size(int *rows, int *cols);

/* The next key pressed, or -1 if none (never blocks). Escape sequences
 * (arrows, function keys) are skipped whole. */
int term__key(void);

/* Draw a screen of rows rows: lines separated by '\n' (at most rows, none
 * wider than the screen), each at its row from the top; rows below the last
 * line cleared. Never blocks: what the terminal does not take now goes out
 * with term__flush (and this frame is skipped if the last one has not gone
 * out yet). */
void term__draw(const char *screen, int rows);

/* Send more of a frame the terminal did not take at once; never blocks. */
void term__flush(void);

#endif
