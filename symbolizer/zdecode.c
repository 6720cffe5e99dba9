/* zdecode.c - decoding GHC's Z-encoded linker symbols.
 *
 * Owns the inverse of GHC's zEncodeString (compiler/GHC/Utils/Encoding.hs in
 * GHC 9.0.2) and the split of a code-generator label into unit, module, name
 * and label flavour (pprCLbl / ppIdFlavor in compiler/GHC/Cmm/CLabel.hs).
 *
 * The decoder is deliberately stricter than GHC's own zDecodeString, which
 * passes unknown escapes through: the profiler uses "does it decode?" to tell
 * Haskell bindings from C and Cmm symbols, so everything the encoder can never
 * produce is rejected.
 */
#include "symbolizer/zdecode.h"

#include <limits.h>
#include <string.h>

/* A symbol has at most unit, module, name and a two-part flavour. */
#define ZDECODE_MAX_PARTS 5

/* Bounds the tuple arity we parse so the digit loop cannot overflow; GHC
 * itself stops at 62 (mAX_TUPLE_SIZE) but that has changed across versions. */
#define ZDECODE_MAX_TUPLE 1024

struct zbuf {
    char *out;
    size_t outsz;
    size_t len;
    bool overflow;
};

static void zbuf_put(struct zbuf *b, const char *s, size_t n)
{
    /* Keep one byte for the NUL so a full buffer is always terminated. */
    if (b->overflow || n >= b->outsz - b->len) {
        b->overflow = true;
        return;
    }
    memcpy(b->out + b->len, s, n);
    b->len += n;
}

static void zbuf_putc(struct zbuf *b, char c)
{
    zbuf_put(b, &c, 1);
}

static void zbuf_repeat(struct zbuf *b, char c, unsigned n)
{
    while (n-- > 0 && !b->overflow)
        zbuf_putc(b, c);
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_alnum(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_upper(char c)
{
    return c >= 'A' && c <= 'Z';
}

static bool is_nonascii(char c)
{
    return (unsigned char)c >= 0x80;
}

/* The characters after 'Z' the encoder emits, other than tuple digits. */
static char decode_upper(char c)
{
    switch (c) {
    case 'L': return '(';
    case 'R': return ')';
    case 'M': return '[';
    case 'N': return ']';
    case 'C': return ':';
    case 'Z': return 'Z';
    default: return 0;
    }
}

/* The characters after 'z' the encoder emits, other than hex escapes. */
static char decode_lower(char c)
{
    switch (c) {
    case 'z': return 'z';
    case 'a': return '&';
    case 'b': return '|';
    case 'c': return '^';
    case 'd': return '$';
    case 'e': return '=';
    case 'g': return '>';
    case 'h': return '#';
    case 'i': return '.';
    case 'l': return '<';
    case 'm': return '-';
    case 'n': return '!';
    case 'p': return '+';
    case 'q': return '\'';
    case 'r': return '\\';
    case 's': return '/';
    case 't': return '*';
    case 'u': return '_';
    case 'v': return '%';
    default: return 0;
    }
}

static void put_utf8(struct zbuf *b, unsigned long cp)
{
    char u[4];
    size_t n;

    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        u[0] = (char)(0xF0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    zbuf_put(b, u, n);
}

/* "z<hex>U", z[*i] being the first hex digit (always a decimal digit: the
 * encoder prefixes '0' when the hex would start with a letter, which is how
 * it stays distinguishable from "za".."zz").  Advances *i past the 'U'. */
static bool decode_hex_escape(const char *z, size_t zlen, size_t *i,
                              struct zbuf *b)
{
    unsigned long cp = 0;
    size_t j = *i;

    for (; j < zlen && z[j] != 'U'; j++) {
        char c = z[j];
        unsigned d;

        /* showHex writes lower case; "z7EU" is not something GHC emits. */
        if (is_digit(c))
            d = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = (unsigned)(c - 'a' + 10);
        else
            return false;
        cp = cp * 16 + d;
        if (cp > 0x10FFFF)
            return false;
    }
    if (j >= zlen)
        return false; /* truncated: no closing 'U' */
    /* NUL would truncate our C strings; surrogates are not characters GHC's
     * lexer accepts in identifiers and would make invalid UTF-8. */
    if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF))
        return false;
    put_utf8(b, cp);
    *i = j + 1;
    return true;
}

/* "Z<n>T" / "Z<n>H", z[*i] being the first digit.  Arity n means n
 * components: Z3T is "(,,)", Z0T is "()", Z1H is "(# #)", Z2H is "(#,#)".
 * The encoder never writes Z1T (no boxed 1-tuple) nor Z0H (no unboxed
 * 0-tuple) nor leading zeros. */
static bool decode_tuple(const char *z, size_t zlen, size_t *i, struct zbuf *b)
{
    unsigned n = 0;
    size_t j = *i;

    if (z[j] == '0' && j + 1 < zlen && is_digit(z[j + 1]))
        return false;
    for (; j < zlen && is_digit(z[j]); j++) {
        n = n * 10 + (unsigned)(z[j] - '0');
        if (n > ZDECODE_MAX_TUPLE)
            return false;
    }
    if (j >= zlen)
        return false;
    if (z[j] == 'T') {
        if (n == 1)
            return false;
        zbuf_putc(b, '(');
        if (n > 1)
            zbuf_repeat(b, ',', n - 1);
        zbuf_putc(b, ')');
    } else if (z[j] == 'H') {
        if (n == 0)
            return false;
        if (n == 1) {
            zbuf_put(b, "(# #)", 5);
        } else {
            zbuf_put(b, "(#", 2);
            zbuf_repeat(b, ',', n - 1);
            zbuf_put(b, "#)", 2);
        }
    } else {
        return false;
    }
    *i = j + 1;
    return true;
}

int zdecode__string(const char *z, size_t zlen, char *out, size_t outsz)
{
    struct zbuf b = {out, outsz, 0, false};
    size_t i = 0;

    if (!out || outsz == 0 || (!z && zlen > 0))
        return -1;
    /* The encoder escapes a leading digit (package "9pH" -> "z39UpH") so a
     * raw one cannot start a component. */
    if (zlen > 0 && is_digit(z[0]))
        return -1;

    while (i < zlen) {
        char c = z[i];

        if (c == 'Z' || c == 'z') {
            char d, dec;

            if (i + 1 >= zlen)
                return -1;
            d = z[i + 1];
            if (is_digit(d)) {
                i++;
                if (!(c == 'Z' ? decode_tuple(z, zlen, &i, &b)
                               : decode_hex_escape(z, zlen, &i, &b)))
                    return -1;
                continue;
            }
            dec = c == 'Z' ? decode_upper(d) : decode_lower(d);
            if (!dec)
                return -1;
            zbuf_putc(&b, dec);
            i += 2;
        } else if (is_alnum(c)) {
            zbuf_putc(&b, c);
            i++;
        } else {
            return -1; /* '_', '.', '$', '@', non-ASCII...: never encoded */
        }
        if (b.overflow)
            return -1;
    }
    if (b.overflow || b.len > INT_MAX)
        return -1;
    out[b.len] = '\0';
    return (int)b.len;
}

/* Unit ids are "base", "ghc-prim", "containers-0.6.4.1", "Cabal-3.4.1.0",
 * "foo-1.0-<hash>", "9pH-0.1" or, for Backpack instantiations, "<cid>+<hash>".
 * Cabal lets package names start with a digit or an upper-case letter, so
 * only the character set is checked. */
static bool valid_unit(const char *s)
{
    /* The RTS's Cmm objects are "stg_<NAME>_<NAME>_info" and would otherwise
     * read as unit "stg".  Only wired-in units lack a version, and neither
     * "stg" nor "rts" holds Haskell code, so rejecting both is safe. */
    if (strcmp(s, "stg") == 0 || strcmp(s, "rts") == 0)
        return false;
    if (!is_alnum(s[0]) && !is_nonascii(s[0]))
        return false;
    for (; *s; s++)
        if (!is_alnum(*s) && !is_nonascii(*s) && !strchr("-._+", *s))
            return false;
    return true;
}

/* modid = {conid .} conid.  ":Main" is the module GHC makes up for the
 * program's real entry point (ZCMain_main_info). */
static bool valid_module(const char *s)
{
    if (strcmp(s, ":Main") == 0)
        return true;
    for (;;) {
        if (!is_upper(*s) && !is_nonascii(*s))
            return false;
        for (s++; *s && *s != '.'; s++)
            if (!is_alnum(*s) && !is_nonascii(*s) && *s != '_' && *s != '\'')
                return false;
        if (!*s)
            return true;
        s++;
    }
}

/* Constructor info tables and closure tables belong to data constructors and
 * type constructors: Foo, :+:, [], (), (,,), or a non-ASCII upper-case
 * letter we cannot classify without Unicode tables. */
static bool looks_like_con(const char *s)
{
    return is_upper(s[0]) || s[0] == ':' || s[0] == '[' || s[0] == '(' ||
           is_nonascii(s[0]);
}

struct part {
    const char *p;
    size_t len;
};

static bool decode_part(struct part part, char *out, size_t outsz)
{
    return zdecode__string(part.p, part.len, out, outsz) > 0;
}

/* Try one reading of the symbol: nprefix parts (module+name or
 * unit+module+name) followed by the given flavour. */
static bool try_split(const struct part *parts, int nprefix,
                      const char *suffix, bool con, struct zdecoded *out)
{
    int m = 0;

    if (nprefix == 3) {
        if (!decode_part(parts[0], out->unit, sizeof out->unit) ||
            !valid_unit(out->unit))
            return false;
        m = 1;
    } else if (nprefix == 2) {
        out->unit[0] = '\0'; /* the main unit is never written in code */
    } else {
        return false;
    }
    if (!decode_part(parts[m], out->module, sizeof out->module) ||
        !valid_module(out->module))
        return false;
    if (!decode_part(parts[m + 1], out->name, sizeof out->name))
        return false;
    if (con && !looks_like_con(out->name))
        return false;
    if (strlen(suffix) >= sizeof out->suffix)
        return false;
    strcpy(out->suffix, suffix);
    return true;
}

static bool part_is(struct part part, const char *s)
{
    return strlen(s) == part.len && memcmp(part.p, s, part.len) == 0;
}

/* ppIdFlavor's label flavours for Haskell Ids (GHC 9.0.2).  "fast", "ret",
 * "srt", "str", "btm", "dsp" only ever follow RTS or unique-named labels, and
 * "static_info" died with GHC 7, so none of them is listed.  Two-part
 * flavours come first: "Foo_Bar_con_info" is constructor Bar's info table,
 * not unit Foo's binding "con". */
static const struct flavour {
    const char *first, *second; /* second is NULL for one-part flavours */
    const char *suffix;
    bool con;
} flavours[] = {
    {"con", "info", "con_info", true},
    {"con", "entry", "con_entry", true},
    {"closure", "tbl", "closure_tbl", true},
    {"info", NULL, "info", false},
    {"entry", NULL, "entry", false},
    {"closure", NULL, "closure", false},
    {"slow", NULL, "slow", false},
    {"bytes", NULL, "bytes", false},
    {"ct", NULL, "ct", false}, /* ticky counters, -ticky */
};

bool zdecode__symbol(const char *sym, struct zdecoded *out)
{
    struct part parts[ZDECODE_MAX_PARTS];
    int n = 0;
    const char *s;

    if (!sym || !out || !*sym)
        return false;
    for (s = sym;;) {
        const char *e = strchr(s, '_');
        size_t len = e ? (size_t)(e - s) : strlen(s);

        if (len == 0 || n == ZDECODE_MAX_PARTS)
            return false; /* "_hpc_...", "a__b", "x_", or too many parts */
        parts[n].p = s;
        parts[n].len = len;
        n++;
        if (!e)
            break;
        s = e + 1;
    }

    for (size_t f = 0; f < sizeof flavours / sizeof flavours[0]; f++) {
        const struct flavour *fl = &flavours[f];
        int nsuf = fl->second ? 2 : 1;

        if (n <= nsuf)
            continue;
        if (fl->second ? !(part_is(parts[n - 2], fl->first) &&
                           part_is(parts[n - 1], fl->second))
                       : !part_is(parts[n - 1], fl->first))
            continue;
        if (try_split(parts, n - nsuf, fl->suffix, fl->con, out))
            return true;
    }
    return false;
}

bool zdecode__display(const char *sym, char *out, size_t outsz)
{
    struct zdecoded z;
    size_t ml, nl;

    if (!out || !zdecode__symbol(sym, &z))
        return false;
    ml = strlen(z.module);
    nl = strlen(z.name);
    if (ml + 1 + nl >= outsz)
        return false;
    memcpy(out, z.module, ml);
    out[ml] = '.';
    memcpy(out + ml + 1, z.name, nl + 1);
    return true;
}

bool zdecode__wrapper(const char *sym, struct zdecoded *out)
{
    char d[700], zm[256];
    char *unit, *mod, *cname, *occ, *piece;

    if (!sym || !out || strncmp(sym, "zd", 2) != 0 ||
        zdecode__string(sym, strlen(sym), d, sizeof d) <= 0 || d[0] != '$')
        return false;
    unit = d + 1;
    if (!(mod = strchr(unit, '$')))
        return false;
    *mod++ = '\0';
    if (!(cname = strchr(mod, '$')))
        return false;
    *cname++ = '\0';
    /* cname: [zunit_]zmodule_zocc, each part Z-encoded in it */
    if (!(occ = strrchr(cname, '_')) || occ == cname || !occ[1])
        return false;
    *occ++ = '\0';
    piece = strrchr(cname, '_');
    piece = piece ? piece + 1 : cname;
    if (zdecode__string(piece, strlen(piece), zm, sizeof zm) <= 0 || strcmp(zm, mod) != 0 ||
        !valid_module(mod) || strlen(mod) >= sizeof out->module ||
        strlen(unit) >= sizeof out->unit)
        return false;
    if (zdecode__string(occ, strlen(occ), out->name, sizeof out->name) <= 0)
        return false;
    strcpy(out->module, mod);
    strcpy(out->unit, strcmp(unit, "main") == 0 ? "" : unit);
    strcpy(out->suffix, "wrapper");
    return true;
}

bool zdecode__foreign_export(const struct zdecoded *z, char *out, size_t outsz)
{
    static const char head[] = "$fstable";
    char d[sizeof z->name];
    const char *rest, *unit, *mod, *name;
    size_t n;

    if (!z || !out || strncmp(z->name, head, sizeof head - 1) != 0)
        return false;
    rest = z->name + sizeof head - 1;
    if (zdecode__string(rest, strlen(rest), d, sizeof d) <= 0 || d[0] != ':')
        return false;
    n = strspn(d + 1, "0123456789");
    unit = d + 1 + n;
    if (n == 0 || *unit != ':' || !(mod = strchr(unit + 1, ':')) || mod == unit + 1 ||
        !(name = strchr(mod + 1, ':')))
        return false;
    if ((size_t)(name - mod - 1) != strlen(z->module) ||
        strncmp(mod + 1, z->module, strlen(z->module)) != 0 || !name[1] ||
        strchr(name + 1, ':') || strlen(name + 1) >= outsz)
        return false;
    strcpy(out, name + 1);
    return true;
}
