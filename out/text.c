/* text.c - bytes from the target made into text (see text.h). */
#include "out/text.h"

#include <string.h>

int text__utf8_len(const unsigned char *s)
{
    int n;
    unsigned min, c = s[0];
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, min = 0x80, c &= 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, min = 0x800, c &= 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, min = 0x10000, c &= 0x07;
    else
        return 0;
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0; /* (a NUL ends the string here, before a read past it) */
        c = c << 6 | (s[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    return n;
}

int text__char(const unsigned char *s, bool *bad)
{
    int n = text__utf8_len(s);
    *bad = n == 0 || (n == 1 && (*s < 0x20 || *s == 0x7f)) ||
           (n == 2 && s[0] == 0xc2 && s[1] < 0xa0) ||                /* C1 controls */
           (n == 3 && s[0] == 0xef && s[1] == 0xbf && s[2] >= 0xbe); /* U+FFFE, U+FFFF */
    return n ? n : 1;
}

void text__clean(char *str)
{
    unsigned char *r = (unsigned char *)str, *w = r;
    while (*r) {
        bool bad;
        int n = text__char(r, &bad);
        if (bad) {
            *w++ = '?';
        } else {
            memmove(w, r, (size_t)n);
            w += n;
        }
        r += n;
    }
    *w = 0;
}

void text__json(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    fputc('"', f);
    while (*s) {
        int n = text__utf8_len(s);
        if (*s == '"' || *s == '\\') {
            fputc('\\', f);
            fputc(*s, f);
        } else if (*s < 0x20) {
            fprintf(f, "\\u%04x", *s);
        } else if (n) {
            fwrite(s, 1, (size_t)n, f);
        } else {
            fputs("\\ufffd", f);
        }
        s += n ? n : 1;
    }
    fputc('"', f);
}
