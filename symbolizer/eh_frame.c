/* eh_frame.c - an index of a .eh_frame section (see eh_frame.h).
 *
 * A record is a length (4 bytes, or 0xffffffff and 8), then an id (4
 * bytes; 8 after a 64-bit length): 0 for a CIE, else the distance back
 * from the id to the FDE's CIE. Only these are read: from a CIE, the
 * encoding of its FDEs' addresses (the 'R' of a "z" augmentation;
 * absolute without one), and from an FDE, its function's first address in
 * that encoding and its length (the same encoding's size, no base).
 * libunwind parses the rest when it unwinds through the function.
 */
#include "symbolizer/eh_frame.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define ENC_OMIT 0xff
#define ENC_PCREL 0x10

struct rd {
    const uint8_t *p;
    size_t end; /* the record's end: no read goes past it */
    size_t pos;
    bool bad;
};

static uint64_t rd_fixed(struct rd *r, size_t n)
{
    uint64_t v = 0;
    if (r->bad || n > r->end - r->pos) {
        r->bad = true;
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)r->p[r->pos + i] << (8 * i);
    r->pos += n;
    return v;
}

/* An LEB128 number, sign-extended if sign (SLEB128). */
static uint64_t rd_leb(struct rd *r, bool sign)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        uint8_t b = (uint8_t)rd_fixed(r, 1);
        if (r->bad)
            return 0;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            if (sign && shift + 7 < 64 && (b & 0x40))
                v |= ~0ull << (shift + 7);
            return v;
        }
    }
    r->bad = true; /* longer than any 64-bit value */
    return 0;
}

/* A pointer in encoding enc (DW_EH_PE_*), the field's runtime address
 * being `at`; false for one linkers do not emit in .eh_frame (relative to
 * data, text or the function, indirect) or that does not fit. */
static bool rd_pointer(struct rd *r, uint8_t enc, uint64_t at, int64_t bias, uint64_t *out)
{
    uint64_t v;
    switch (enc & 0x0f) {
    case 0x00: v = rd_fixed(r, 8); break;                             /* absptr */
    case 0x01: v = rd_leb(r, false); break;                           /* uleb128 */
    case 0x02: v = rd_fixed(r, 2); break;                             /* udata2 */
    case 0x03: v = rd_fixed(r, 4); break;                             /* udata4 */
    case 0x04: v = rd_fixed(r, 8); break;                             /* udata8 */
    case 0x09: v = rd_leb(r, true); break;                            /* sleb128 */
    case 0x0a: v = (uint64_t)(int64_t)(int16_t)rd_fixed(r, 2); break; /* sdata2 */
    case 0x0b: v = (uint64_t)(int64_t)(int32_t)rd_fixed(r, 4); break; /* sdata4 */
    case 0x0c: v = rd_fixed(r, 8); break;                             /* sdata8 */
    default: r->bad = true; return false;
    }
    if (r->bad || (enc & 0x80))
        return false;
    switch (enc & 0x70) {
    case 0x00: *out = v + (uint64_t)bias; return true;
    case ENC_PCREL: *out = v + at; return true;
    default: return false;
    }
}

/* The extent of the record at off: its id's position in *body, the id's
 * width in *idw (4; 8 after a 64-bit length, as libunwind reads it), its
 * end in *end. 0, 1 at the terminator (a zero length), -1 if it runs off. */
static int record_at(const uint8_t *sec, size_t len, size_t off, size_t *body, size_t *end,
                     size_t *idw)
{
    struct rd r = {sec, len, off, false};
    uint64_t n = rd_fixed(&r, 4);
    *idw = 4;
    if (!r.bad && n == 0xffffffffu) {
        n = rd_fixed(&r, 8);
        *idw = 8;
    }
    if (r.bad)
        return -1;
    if (n == 0)
        return 1;
    if (n > len - r.pos || n < *idw)
        return -1;
    *body = r.pos;
    *end = r.pos + (size_t)n;
    return 0;
}

/* The encoding of the addresses of the FDEs of the CIE at off, or
 * ENC_OMIT if it cannot be read. */
static uint8_t cie_encoding(const uint8_t *sec, size_t len, size_t off)
{
    size_t body, end, idw;
    if (record_at(sec, len, off, &body, &end, &idw) != 0)
        return ENC_OMIT;
    struct rd r = {sec, end, body, false};
    if (rd_fixed(&r, idw) != 0)
        return ENC_OMIT; /* not a CIE */
    uint8_t version = (uint8_t)rd_fixed(&r, 1);
    /* Augmentations are a few letters ("zPLR"); a longer one is not read
     * (else a file of FDEs taking turns between two CIEs with huge ones
     * would cost their length at every FDE). */
    const char *aug = (const char *)sec + r.pos;
    size_t alen = r.bad ? 0 : strnlen(aug, end - r.pos < 9 ? end - r.pos : 9);
    if (r.bad || alen == end - r.pos || alen > 8)
        return ENC_OMIT;
    r.pos += alen + 1;
    if (strstr(aug, "eh"))
        rd_fixed(&r, 8); /* an old GNU extension: a pointer to EH data */
    rd_leb(&r, false); /* code alignment */
    rd_leb(&r, true);  /* data alignment */
    if (version == 1)
        rd_fixed(&r, 1); /* return address register */
    else
        rd_leb(&r, false);
    if (r.bad)
        return ENC_OMIT;
    if (aug[0] != 'z')
        return 0x00; /* absptr: no augmentation data to say otherwise */
    rd_leb(&r, false); /* the augmentation data's length */
    for (size_t i = 1; i < alen && !r.bad; i++) {
        switch (aug[i]) {
        case 'R': {
            uint8_t enc = (uint8_t)rd_fixed(&r, 1);
            return r.bad ? ENC_OMIT : enc;
        }
        case 'L': /* the LSDA's encoding */
            rd_fixed(&r, 1);
            break;
        case 'P': { /* the personality routine: its encoding, then it */
            uint8_t enc = (uint8_t)rd_fixed(&r, 1);
            uint64_t ignored;
            if (!r.bad && !rd_pointer(&r, enc & 0x0f, 0, 0, &ignored))
                return ENC_OMIT;
            break;
        }
        case 'S': /* a signal frame */
        case 'B': /* AArch64's key */
        case 'G': /* memory tags */
            break;
        default:
            return ENC_OMIT; /* unknown: its data's size unknown */
        }
    }
    return r.bad ? ENC_OMIT : 0x00;
}

/* The FDE whose record is [off, end) (its id at body, idw wide): its
 * function's first address in *start and length in *size; false for a CIE
 * or an FDE that cannot be read. *cie_off and *cie_enc cache the last CIE
 * read (start them at (size_t)-1 and ENC_OMIT). */
static bool read_fde(const uint8_t *sec, size_t len, size_t body, size_t end, size_t idw,
                     uint64_t at, int64_t bias, size_t *cie_off, uint8_t *cie_enc,
                     uint64_t *start, uint64_t *size)
{
    struct rd r = {sec, end, body, false};
    uint64_t id = rd_fixed(&r, idw);
    if (r.bad || id == 0 || id > body)
        return false; /* a CIE; or an FDE whose CIE would be before the section */
    size_t cie = body - (size_t)id;
    if (cie != *cie_off) {
        *cie_off = cie;
        *cie_enc = cie_encoding(sec, len, cie);
    }
    if (*cie_enc == ENC_OMIT || !rd_pointer(&r, *cie_enc, at + r.pos, bias, start))
        return false;
    /* (the length: the encoding's format, not relative to anything) */
    return rd_pointer(&r, *cie_enc & 0x0f, 0, 0, size);
}

bool eh_frame__function(const uint8_t *sec, size_t len, size_t off, uint64_t at, int64_t bias,
                        uint64_t *start, uint64_t *size)
{
    size_t body, end, idw, cie_off = (size_t)-1;
    uint8_t cie_enc = ENC_OMIT;
    if (off >= len || record_at(sec, len, off, &body, &end, &idw) != 0)
        return false;
    return read_fde(sec, len, body, end, idw, at, bias, &cie_off, &cie_enc, start, size);
}

static int by_start(const void *a, const void *b)
{
    const struct eh_frame_entry *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

long eh_frame__index(const uint8_t *sec, size_t len, uint64_t at, int64_t bias, uint64_t lo,
                     uint64_t hi, struct eh_frame_entry **out)
{
    struct eh_frame_entry *e = NULL;
    size_t n = 0, cap = 0;
    size_t cie_off = (size_t)-1; /* the last CIE read, and its encoding */
    uint8_t cie_enc = ENC_OMIT;

    *out = NULL;
    if (len > INT32_MAX)
        len = INT32_MAX; /* offsets are int32s */
    for (size_t off = 0, body, end, idw; off < len; off = end) {
        int k = record_at(sec, len, off, &body, &end, &idw);
        if (k != 0)
            break;
        uint64_t start, size;
        if (!read_fde(sec, len, body, end, idw, at, bias, &cie_off, &cie_enc, &start, &size))
            continue;
        /* A function the linker discarded keeps its FDE with a start of 0
         * (or wherever its relocation left it): outside the file's code. */
        if (start < lo || start >= hi)
            continue;
        int64_t rel = (int64_t)(start - at);
        if (rel < INT32_MIN || rel > INT32_MAX)
            continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 256;
            struct eh_frame_entry *ne = realloc(e, ncap * sizeof *e);
            if (!ne) {
                free(e);
                return -ENOMEM;
            }
            e = ne;
            cap = ncap;
        }
        e[n].start = (int32_t)rel;
        e[n].fde = (int32_t)off;
        n++;
    }
    if (n)
        qsort(e, n, sizeof *e, by_start);
    else {
        free(e);
        e = NULL;
    }
    *out = e;
    return (long)n;
}
