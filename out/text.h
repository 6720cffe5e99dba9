/* text.h - strings that come from the target (symbol names, source paths,
 * thread names, command lines, Haskell thread labels) are bytes, not text:
 * a name can hold bytes that are not UTF-8, an escape sequence for the
 * terminal a report is read on, or a newline that would split a line of
 * any output. Each is cleaned where it enters hsspy (text__clean) and
 * every writer prints the result as its format needs.
 */
#ifndef HSSPY_TEXT_H
#define HSSPY_TEXT_H

#include <stdbool.h>
#include <stdio.h>

/* The length of the character at s: 1 for ASCII, 2 to 4 for a
 * well-formed UTF-8 sequence (no overlong form, surrogate or code point
 * past U+10FFFF), 0 if it is not one. */
int text__utf8_len(const unsigned char *s);

/* The length of the character at s (1 for a byte that is not UTF-8), and
 * in *bad whether it is one text__clean replaces. */
int text__char(const unsigned char *s, bool *bad);

/* Make s printable text, in place (it never grows): each byte that is not
 * part of well-formed UTF-8, each control character (C0, DEL, C1) and each
 * of U+FFFE and U+FFFF (which XML cannot hold) becomes one '?'. */
void text__clean(char *s);

/* s as a JSON string, quotes included: '"' and '\\' escaped, control
 * characters as \u00XX, what is not UTF-8 as U+FFFD (a file any JSON
 * parser accepts, whatever s holds). */
void text__json(FILE *f, const char *s);

#endif
