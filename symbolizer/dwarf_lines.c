/* dwarf_lines.c - a compile-unit range index over libdw. */
#include "symbolizer/dwarf_lines.h"
#include "symbolizer/zdecode.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

struct cu_range {
    uint64_t lo, hi;
    Dwarf_Off cu_off;
};

static int cmp_range(const void *a, const void *b)
{
    const struct cu_range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

bool dwarf_lines__open(struct dwarf_lines *d, Elf *elf)
{
    Dwarf_Off off = 0, next;
    size_t hsize, cap = 0;

    memset(d, 0, sizeof *d);
    d->dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
    if (!d->dw)
        return false;
    while (dwarf_nextcu(d->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
        Dwarf_Die cu;
        if (dwarf_offdie(d->dw, off + hsize, &cu)) {
            Dwarf_Addr base, lo, hi;
            ptrdiff_t it = 0;
            while ((it = dwarf_ranges(&cu, it, &base, &lo, &hi)) > 0) {
                if (hi <= lo)
                    continue;
                if (d->n == cap) {
                    size_t nc = cap ? 2 * cap : 64;
                    struct cu_range *nr = realloc(d->r, nc * sizeof *nr);
                    if (!nr)
                        break;
                    d->r = nr;
                    cap = nc;
                }
                d->r[d->n++] = (struct cu_range){lo, hi, off + hsize};
            }
        }
        off = next;
    }
    if (d->n == 0) {
        dwarf_lines__close(d);
        return false;
    }
    qsort(d->r, d->n, sizeof *d->r, cmp_range);
    return true;
}

void dwarf_lines__close(struct dwarf_lines *d)
{
    if (d->dw)
        dwarf_end(d->dw);
    free(d->r);
    memset(d, 0, sizeof *d);
}

static const struct cu_range *find_range(const struct dwarf_lines *d, uint64_t vaddr)
{
    size_t lo = 0, hi = d->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->r[mid].lo <= vaddr)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t k = lo; k > 0 && lo - k < 4; k--)
        if (vaddr >= d->r[k - 1].lo && vaddr < d->r[k - 1].hi)
            return &d->r[k - 1];
    return NULL;
}

void dwarf_lines__clean_path(char *path)
{
    const char *r = path;
    char *w = path;
    while (r[0] == '.' && r[1] == '/' && r[2])
        for (r += 2; *r == '/'; r++)
            ;
    while (*r) {
        if (r[0] == '/' && (r[1] == '/' || (r[1] == '.' && r[2] == '/'))) {
            r += r[1] == '/' ? 1 : 2;
            continue;
        }
        *w++ = *r++;
    }
    *w = '\0';
}

bool dwarf_lines__is_label(const char *nm)
{
    if (*nm == '_')
        nm++;
    /* GHC 9.6 on: "L7133701809754876057", a block's unique in decimal */
    if (nm[0] == 'L' && nm[1] >= '0' && nm[1] <= '9') {
        size_t d = strspn(nm + 1, "0123456789");
        return nm[1 + d] == 0 && d >= 6;
    }
    if ((nm[0] != 'c' && nm[0] != 's') || nm[1] < '0' || nm[1] > '9')
        return false;
    for (nm += 2; *nm; nm++)
        if (!((*nm >= '0' && *nm <= '9') || (*nm >= 'a' && *nm <= 'z') ||
              (*nm >= 'A' && *nm <= 'Z')))
            return false;
    return true;
}

/* Does die, or any block nested in it, cover vaddr? GHC gives a procedure's
 * DW_TAG_subprogram the range of its entry code only; its other blocks
 * (continuations) are nested DW_TAG_lexical_blocks with their own ranges,
 * which is why libdw's dwarf_getscopes, which only descends into DIEs
 * covering the address, does not find them. */
static bool covers(Dwarf_Die *die, uint64_t vaddr, int depth)
{
    Dwarf_Die child;
    if (dwarf_haspc(die, vaddr) > 0)
        return true;
    if (depth > 8 || dwarf_child(die, &child) != 0)
        return false;
    do {
        int tag = dwarf_tag(&child);
        if ((tag == DW_TAG_lexical_block || tag == DW_TAG_subprogram) &&
            covers(&child, vaddr, depth + 1))
            return true;
    } while (dwarf_siblingof(&child, &child) == 0);
    return false;
}

/* GHC's source notes (-g): a DIE of tag 0x5b00 under a procedure or
 * block, giving the source span it comes from (attributes 0x2b00 file,
 * 0x2b01 start line, 0x2b03 end line). */
#define DW_TAG_ghc_src_note 0x5b00
#define DW_AT_ghc_span_start_line 0x2b01
#define DW_AT_ghc_span_end_line 0x2b03

/* The first source note at or under die: its span's lines. */
static bool src_span(Dwarf_Die *die, Dwarf_Word *lo, Dwarf_Word *hi, int depth)
{
    Dwarf_Die child;
    Dwarf_Attribute a;
    if (dwarf_tag(die) == DW_TAG_ghc_src_note)
        return dwarf_formudata(dwarf_attr(die, DW_AT_ghc_span_start_line, &a), lo) == 0 &&
               dwarf_formudata(dwarf_attr(die, DW_AT_ghc_span_end_line, &a), hi) == 0;
    if (depth > 8 || dwarf_child(die, &child) != 0)
        return false;
    do
        if (src_span(&child, lo, hi, depth + 1))
            return true;
    while (dwarf_siblingof(&child, &child) == 0);
    return false;
}

/* A procedure GHC made for a local closure carries only a label: name it
 * after the binding whose source span holds its code's (the innermost). */
static const char *enclosing_binding(Dwarf_Die *cu, Dwarf_Die *proc)
{
    Dwarf_Word line, end, best = (Dwarf_Word)-1;
    const char *name = NULL;
    Dwarf_Die die;
    if (!src_span(proc, &line, &end, 0) || dwarf_child(cu, &die) != 0)
        return NULL;
    do {
        const char *nm = dwarf_diename(&die);
        Dwarf_Word lo, hi;
        if (dwarf_tag(&die) != DW_TAG_subprogram || !nm || dwarf_lines__is_label(nm) ||
            !src_span(&die, &lo, &hi, 0))
            continue;
        if (lo <= line && line <= hi && hi - lo < best) {
            best = hi - lo;
            name = nm;
        }
    } while (dwarf_siblingof(&die, &die) == 0);
    return name;
}

bool dwarf_lines__function(struct dwarf_lines *d, uint64_t vaddr, const char **name,
                           const char **linkage, uint64_t *cu_lo, uint64_t *cu_hi,
                           bool *haskell)
{
    const struct cu_range *r;
    Dwarf_Die cu, die;
    Dwarf_Word lang = 0;
    Dwarf_Attribute a;
    bool found = false;

    if (!d->dw || !(r = find_range(d, vaddr)) || !dwarf_offdie(d->dw, r->cu_off, &cu))
        return false;
    if (dwarf_child(&cu, &die) != 0)
        return false;
    do {
        if (dwarf_tag(&die) == DW_TAG_subprogram && dwarf_diename(&die) &&
            covers(&die, vaddr, 0)) {
            *name = dwarf_diename(&die);
            Dwarf_Attribute la;
            *linkage = dwarf_formstring(dwarf_attr(&die, DW_AT_MIPS_linkage_name, &la))
                           ?: dwarf_formstring(dwarf_attr(&die, DW_AT_linkage_name, &la));
            struct zdecoded z;
            if (dwarf_lines__is_label(*name) && (!*linkage || !zdecode__symbol(*linkage, &z))) {
                /* Neither name nor linkage name (r3ZD_info) says which
                 * binding this is: its source span does. */
                const char *b = enclosing_binding(&cu, &die);
                if (b) {
                    *name = b;
                    *linkage = NULL;
                }
            }
            found = true;
        }
    } while (!found && dwarf_siblingof(&die, &die) == 0);
    if (!found)
        return false;
    *cu_lo = r->lo;
    *cu_hi = r->hi;
    *haskell = dwarf_attr(&cu, DW_AT_language, &a) && dwarf_formudata(&a, &lang) == 0 &&
               lang == 0x18; /* DW_LANG_Haskell */
    return true;
}

bool dwarf_lines__find(struct dwarf_lines *d, uint64_t vaddr, const char **file, int *line)
{
    size_t lo = 0, hi = d->n;
    if (!d->dw)
        return false;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->r[mid].lo <= vaddr)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* Ranges of different CUs do not nest, but check a few candidates in
     * case of overlap from odd producers. */
    for (size_t k = lo; k > 0 && lo - k < 4; k--) {
        const struct cu_range *r = &d->r[k - 1];
        if (vaddr < r->lo || vaddr >= r->hi)
            continue;
        Dwarf_Die cu;
        Dwarf_Line *l;
        if (!dwarf_offdie(d->dw, r->cu_off, &cu))
            continue;
        l = dwarf_getsrc_die(&cu, vaddr);
        if (!l)
            continue;
        const char *f = dwarf_linesrc(l, NULL, NULL);
        int ln = 0;
        if (!f || dwarf_lineno(l, &ln) != 0 || ln <= 0)
            continue;
        *file = f;
        *line = ln;
        return true;
    }
    return false;
}
