/* test_eh_frame.c - unit tests for symbolizer/eh_frame.c: the table of a
 * file without .eh_frame_hdr (a static executable) built from .eh_frame:
 * a hand-made section with every shape of record the index reads or skips;
 * the section of this very test binary, against the table the linker made
 * of it; and the hand-made section cut and scrambled, as a hostile file
 * would be, without a read out of it. */
#include "tests/unit/unit.h"
#include "symbolizer/eh_frame.h"

#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>

UNIT_MAIN()

#define AT 0x401000ull /* where the hand-made section sits */

struct sec {
    uint8_t b[1024];
    size_t n;
};

static void put(struct sec *s, uint64_t v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        s->b[s->n++] = (uint8_t)(v >> (8 * i));
}

static void put_str(struct sec *s, const char *str)
{
    size_t l = strlen(str) + 1;
    memcpy(s->b + s->n, str, l);
    s->n += l;
}

/* Patch the 4-byte length at off to cover up to the current end. */
static void close_record(struct sec *s, size_t off)
{
    uint32_t len = (uint32_t)(s->n - off - 4);
    memcpy(s->b + off, &len, 4);
}

/* A CIE with augmentation aug; for "z..." its data is given raw. */
static size_t cie(struct sec *s, int version, const char *aug, const uint8_t *data, size_t dlen)
{
    size_t off = s->n;
    put(s, 0, 4); /* length, patched */
    put(s, 0, 4); /* id: a CIE */
    put(s, (uint64_t)version, 1);
    put_str(s, aug);
    put(s, 1, 1);    /* code alignment 1 */
    put(s, 0x78, 1); /* data alignment -8 */
    put(s, 16, 1);   /* return address: rip */
    if (aug[0] == 'z') {
        put(s, dlen, 1);
        memcpy(s->b + s->n, data, dlen);
        s->n += dlen;
    }
    put(s, 0, (8 - (s->n % 8)) % 8); /* DW_CFA_nop padding */
    close_record(s, off);
    return off;
}

/* An FDE of the CIE at cie_off whose function starts at runtime address
 * start, its address encoded as pcrel sdata4 (pcrel) or udata4 less bias. */
static size_t fde(struct sec *s, size_t cie_off, uint64_t start, bool pcrel, int64_t bias)
{
    size_t off = s->n;
    put(s, 0, 4);
    put(s, s->n - cie_off, 4); /* back to the CIE, from this field */
    if (pcrel)
        put(s, (uint64_t)(start - (AT + s->n)), 4);
    else
        put(s, start - (uint64_t)bias, 4);
    put(s, 0x40, 4); /* range */
    put(s, 0, 1);    /* no augmentation data */
    put(s, 0, (8 - (s->n % 8)) % 8);
    close_record(s, off);
    return off;
}

struct made {
    struct sec s;
    size_t want_fde[4]; /* the FDEs to be found, by start order */
    uint64_t want_start[4];
};

#define BIAS 0x1000

static void make(struct made *m)
{
    struct sec *s = &m->s;
    memset(m, 0, sizeof *m);
    static const uint8_t zr[] = {0x1b};                       /* R: pcrel sdata4 */
    static const uint8_t zplr[] = {0x9b, 1, 2, 3, 4, 0x1b, 0x03}; /* P, L, R: udata4 */
    static const uint8_t zx[] = {0};
    size_t a = cie(s, 1, "zR", zr, sizeof zr);
    m->want_fde[1] = fde(s, a, AT + 0x2000, true, 0);
    m->want_start[1] = AT + 0x2000;
    m->want_fde[0] = fde(s, a, AT + 0x1000, true, 0);
    m->want_start[0] = AT + 0x1000;
    fde(s, a, 0, true, 0); /* a discarded function's: out of [lo, hi) */
    size_t b = cie(s, 3, "zPLR", zplr, sizeof zplr);
    m->want_fde[3] = fde(s, b, AT + 0x4000, false, BIAS);
    m->want_start[3] = AT + 0x4000;
    /* A 64-bit length, of an FDE of the first CIE: its CIE pointer 8
     * bytes, as libunwind reads it. */
    size_t off = s->n;
    put(s, 0xffffffffu, 4);
    put(s, 0, 8);
    put(s, s->n - a, 8);
    put(s, (uint64_t)(AT + 0x3000 - (AT + s->n)), 4);
    put(s, 0x40, 4);
    put(s, 0, 4);
    uint64_t len64 = s->n - off - 12;
    memcpy(s->b + off + 4, &len64, 8);
    m->want_fde[2] = off;
    m->want_start[2] = AT + 0x3000;
    /* An augmentation not known: its FDEs cannot be read. */
    size_t c = cie(s, 1, "zX", zx, sizeof zx);
    fde(s, c, AT + 0x5000, true, 0);
    /* An FDE whose CIE would be before the section. */
    off = s->n;
    put(s, 0, 4);
    put(s, s->n + 100, 4);
    put(s, 0, 8);
    close_record(s, off);
    /* A CIE whose augmentation is longer than any there is: not read. */
    size_t d = cie(s, 1, "zRRRRRRRRRRRRRRRRRRRRRRRRR", zr, sizeof zr);
    fde(s, d, AT + 0x6000, true, 0);
    /* A record running off the end. */
    put(s, 4000, 4);
    put(s, 0, 4);
}

TEST(hand_made_section)
{
    struct made m;
    struct eh_frame_entry *e;
    make(&m);
    long n = eh_frame__index(m.s.b, m.s.n, AT, BIAS, AT, AT + 0x10000, &e);
    CHECK_EQ_INT(n, 4);
    for (int i = 0; i < 4; i++) {
        CHECK_EQ_INT(AT + (uint64_t)(int64_t)e[i].start, m.want_start[i]);
        CHECK_EQ_INT(e[i].fde, m.want_fde[i]);
    }
    free(e);
    /* Each FDE read alone: its function's first address and length. */
    for (int i = 0; i < 4; i++) {
        uint64_t start = 0, size = 0;
        CHECK(eh_frame__function(m.s.b, m.s.n, m.want_fde[i], AT, BIAS, &start, &size));
        CHECK_EQ_INT(start, m.want_start[i]);
        CHECK_EQ_INT(size, 0x40);
    }
    uint64_t start, size;
    CHECK(!eh_frame__function(m.s.b, m.s.n, 0, AT, BIAS, &start, &size)); /* a CIE */
    CHECK(!eh_frame__function(m.s.b, m.s.n, m.s.n, AT, BIAS, &start, &size));
    CHECK(!eh_frame__function(m.s.b, m.want_fde[0] + 10, m.want_fde[0], AT, BIAS, &start,
                              &size)); /* cut */
    /* Up to the terminator only. */
    struct sec t = {{0}, 0};
    static const uint8_t zr[] = {0x1b};
    size_t a = cie(&t, 1, "zR", zr, sizeof zr);
    fde(&t, a, AT + 0x100, true, 0);
    put(&t, 0, 4);
    fde(&t, a, AT + 0x200, true, 0);
    n = eh_frame__index(t.b, t.n, AT, 0, AT, AT + 0x10000, &e);
    CHECK_EQ_INT(n, 1);
    CHECK_EQ_INT(e[0].start, 0x100);
    free(e);
    /* Nothing to index: no table. */
    n = eh_frame__index(t.b, 0, AT, 0, AT, AT + 0x10000, &e);
    CHECK_EQ_INT(n, 0);
    CHECK(e == NULL);
}

/* Every cut and a scramble of the hand-made section: whatever it indexes
 * points inside the bytes given, in order. (Run under valgrind by the
 * suite's valgrind test like every unit test binary, a read past them
 * would show.) */
TEST(cut_and_scrambled)
{
    struct made m;
    make(&m);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int round = 0; round < 4000; round++) {
        uint8_t b[1024];
        size_t len = round < (int)m.s.n ? (size_t)round : m.s.n;
        memcpy(b, m.s.b, m.s.n);
        if (round >= (int)m.s.n)
            for (int k = 0; k < 1 + round % 6; k++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                b[x % m.s.n] = (uint8_t)(x >> 32);
            }
        uint8_t *copy = malloc(len ? len : 1); /* exact size, for valgrind */
        memcpy(copy, b, len);
        struct eh_frame_entry *e;
        long n = eh_frame__index(copy, len, AT, BIAS, AT, AT + 0x10000, &e);
        CHECK(n >= 0);
        for (long i = 0; i < n; i++) {
            CHECK(e[i].fde >= 0 && (size_t)e[i].fde < len);
            CHECK(e[i].start >= 0 && e[i].start < 0x10000);
            CHECK(i == 0 || e[i - 1].start <= e[i].start);
        }
        /* (and an FDE read alone, at any offset: found or not) */
        for (size_t off = 0; off <= len; off += 4) {
            uint64_t start, size;
            eh_frame__function(copy, len, off, AT, BIAS, &start, &size);
        }
        free(e);
        free(copy);
    }
}

/* This binary has a .eh_frame_hdr made by the linker: the table built from
 * its .eh_frame is that one, entry for entry. */
TEST(same_as_the_linkers)
{
    elf_version(EV_CURRENT);
    int fd = open("/proc/self/exe", O_RDONLY);
    CHECK(fd >= 0);
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    CHECK(elf != NULL);
    size_t shstrndx;
    CHECK(elf_getshdrstrndx(elf, &shstrndx) == 0);
    Elf_Scn *scn = NULL;
    Elf_Data *ehf = NULL, *hdr = NULL;
    uint64_t ehf_at = 0, hdr_at = 0;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr sh;
        CHECK(gelf_getshdr(scn, &sh) != NULL);
        const char *nm = elf_strptr(elf, shstrndx, sh.sh_name);
        if (nm && strcmp(nm, ".eh_frame") == 0) {
            ehf = elf_getdata(scn, NULL);
            ehf_at = sh.sh_addr;
        } else if (nm && strcmp(nm, ".eh_frame_hdr") == 0) {
            hdr = elf_getdata(scn, NULL);
            hdr_at = sh.sh_addr;
        }
    }
    if (!ehf || !hdr)
        UNIT_SKIP("this binary has no .eh_frame_hdr to compare with");
    const uint8_t *h = hdr->d_buf;
    /* version 1; the section's pointer pcrel sdata4; the count udata4; the
     * table datarel sdata4: what GNU ld writes. */
    CHECK(hdr->d_size >= 12 && h[0] == 1 && h[1] == 0x1b && h[2] == 0x03 && h[3] == 0x3b);
    uint32_t count;
    memcpy(&count, h + 8, 4);
    CHECK(count > 100 && 12 + (size_t)count * 8 <= hdr->d_size);
    struct eh_frame_entry *e;
    long n = eh_frame__index(ehf->d_buf, ehf->d_size, ehf_at, 0, 1, UINT64_MAX, &e);
    CHECK_EQ_INT(n, count);
    for (uint32_t i = 0; i < count; i++) {
        int32_t start, at;
        memcpy(&start, h + 12 + 8 * i, 4);
        memcpy(&at, h + 16 + 8 * i, 4);
        uint64_t first, size;
        if (!eh_frame__function(ehf->d_buf, ehf->d_size, (size_t)e[i].fde, ehf_at, 0, &first,
                                &size) ||
            first != ehf_at + (uint64_t)(int64_t)e[i].start || size == 0)
            UNIT_FAIL("entry %u: its FDE read alone does not start its function", i);
        if (ehf_at + (uint64_t)(int64_t)e[i].start != hdr_at + (uint64_t)(int64_t)start ||
            ehf_at + (uint64_t)(int64_t)e[i].fde != hdr_at + (uint64_t)(int64_t)at)
            UNIT_FAIL("entry %u: start %#llx, FDE at %#llx; the linker's %#llx, %#llx", i,
                      (unsigned long long)(ehf_at + (uint64_t)(int64_t)e[i].start),
                      (unsigned long long)(ehf_at + (uint64_t)(int64_t)e[i].fde),
                      (unsigned long long)(hdr_at + (uint64_t)(int64_t)start),
                      (unsigned long long)(hdr_at + (uint64_t)(int64_t)at));
    }
    free(e);
    elf_end(elf);
    close(fd);
}
