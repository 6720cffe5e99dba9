/* elf_symtab.c - loading and searching ELF symbol tables. */
#include "symbolizer/elf_symtab.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static uint8_t score(const GElf_Sym *s)
{
    uint8_t v = 0;
    switch (GELF_ST_BIND(s->st_info)) {
    case STB_GLOBAL: v += 8; break;
    case STB_WEAK: v += 4; break;
    default: break;
    }
    switch (GELF_ST_TYPE(s->st_info)) {
    case STT_FUNC: v += 3; break;
    case STT_OBJECT: v += 2; break;
    default: break;
    }
    if (s->st_size)
        v += 16;
    return v;
}

static bool wanted(Elf *elf, const GElf_Sym *s, const char *name)
{
    int type = GELF_ST_TYPE(s->st_info);
    GElf_Shdr sh;
    Elf_Scn *scn;

    if (!name || !name[0] || (name[0] == '.' && name[1] == 'L'))
        return false;
    if (s->st_shndx == SHN_UNDEF || s->st_shndx >= SHN_LORESERVE)
        return false;
    if (type != STT_FUNC && type != STT_NOTYPE && type != STT_OBJECT &&
        type != STT_GNU_IFUNC)
        return false;
    if (type == STT_FUNC || type == STT_GNU_IFUNC)
        return true;
    /* Objects and labels count only inside code (GHC info tables). */
    scn = elf_getscn(elf, s->st_shndx);
    if (!scn || !gelf_getshdr(scn, &sh))
        return false;
    return (sh.sh_flags & SHF_EXECINSTR) != 0;
}

static int add_table(struct symtab *t, size_t *cap, Elf *elf, Elf_Scn *scn, size_t *count)
{
    GElf_Shdr sh;
    Elf_Data *data;

    if (!gelf_getshdr(scn, &sh) || sh.sh_entsize == 0)
        return 0;
    data = elf_getdata(scn, NULL);
    if (!data)
        return 0;
    size_t n = sh.sh_size / sh.sh_entsize;
    for (size_t i = 0; i < n; i++) {
        GElf_Sym s;
        if (!gelf_getsym(data, (int)i, &s))
            continue;
        const char *name = elf_strptr(elf, sh.sh_link, s.st_name);
        if (!wanted(elf, &s, name))
            continue;
        if (t->n == *cap) {
            size_t nc = *cap ? 2 * *cap : 1024;
            struct sym *ns = realloc(t->s, nc * sizeof *ns);
            if (!ns)
                return -ENOMEM;
            t->s = ns;
            *cap = nc;
        }
        /* (crt's _fini, sizeless at the end of .fini, is not the code
         * of every address above it that no symbol names) */
        GElf_Shdr in;
        Elf_Scn *at = s.st_size ? NULL : elf_getscn(elf, s.st_shndx);
        uint64_t end = at && gelf_getshdr(at, &in) && in.sh_size ? in.sh_addr + in.sh_size : 0;
        t->s[t->n++] = (struct sym){s.st_value, s.st_size, end, name, score(&s)};
        (*count)++;
    }
    return 0;
}

static int cmp_sym(const void *a, const void *b)
{
    const struct sym *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1; /* best first */
    return strcmp(x->name, y->name);
}

int symtab__load(struct symtab *t, Elf *elf)
{
    Elf_Scn *scn = NULL;
    size_t cap = 0;
    int r;

    memset(t, 0, sizeof *t);
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        if (sh.sh_type == SHT_SYMTAB)
            r = add_table(t, &cap, elf, scn, &t->from_symtab);
        else if (sh.sh_type == SHT_DYNSYM)
            r = add_table(t, &cap, elf, scn, &t->from_dynsym);
        else
            continue;
        if (r < 0) {
            symtab__free(t);
            return r;
        }
    }
    if (t->n == 0)
        return 0;
    qsort(t->s, t->n, sizeof *t->s, cmp_sym);
    /* One symbol per address: the best one (sorted first). */
    size_t w = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (w > 0 && t->s[w - 1].addr == t->s[i].addr) {
            if (!t->s[w - 1].size && t->s[i].size)
                t->s[w - 1].size = t->s[i].size;
            if (t->s[i].end > t->s[w - 1].end)
                t->s[w - 1].end = t->s[i].end;
            continue;
        }
        t->s[w++] = t->s[i];
    }
    t->n = w;
    return 0;
}

void symtab__free(struct symtab *t)
{
    free(t->s);
    memset(t, 0, sizeof *t);
}

const struct sym *symtab__nearest(const struct symtab *t, uint64_t vaddr)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->s[mid].addr <= vaddr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? &t->s[lo - 1] : NULL;
}

const struct sym *symtab__next(const struct symtab *t, uint64_t vaddr)
{
    const struct sym *s = symtab__nearest(t, vaddr);
    size_t i = s ? (size_t)(s - t->s) + 1 : 0;
    return i < t->n ? &t->s[i] : NULL;
}

const struct sym *symtab__lookup(const struct symtab *t, uint64_t vaddr)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->s[mid].addr <= vaddr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const struct sym *s = &t->s[lo - 1];
    if (s->size == 0 ? !s->end || vaddr < s->end : vaddr - s->addr < s->size)
        return s;
    /* vaddr lies past the end of the nearest symbol: it may still be inside
     * an enclosing one (a label nested in a function). Look back a little. */
    for (size_t k = 2; k <= 16 && k <= lo; k++) {
        const struct sym *o = &t->s[lo - k];
        if (o->size && vaddr - o->addr < o->size)
            return o;
    }
    return NULL;
}

int symtab__find_by_name(Elf *elf, const char *name, GElf_Sym *out)
{
    Elf_Scn *scn = NULL;
    int found = 0;
    while (!found && (scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr sh;
        Elf_Data *data;
        if (!gelf_getshdr(scn, &sh) || sh.sh_entsize == 0)
            continue;
        if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM)
            continue;
        if (!(data = elf_getdata(scn, NULL)))
            continue;
        size_t n = sh.sh_size / sh.sh_entsize;
        for (size_t i = 0; i < n; i++) {
            GElf_Sym s;
            if (!gelf_getsym(data, (int)i, &s) || s.st_shndx == SHN_UNDEF)
                continue;
            const char *nm = elf_strptr(elf, sh.sh_link, s.st_name);
            if (nm && strcmp(nm, name) == 0) {
                *out = s;
                found = 1;
                break;
            }
        }
    }
    return found;
}

void symtab__each(Elf *elf, symtab_fn fn, void *arg)
{
    Elf_Scn *scn = NULL, *dyn = NULL, *use = NULL;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        if (sh.sh_type == SHT_SYMTAB)
            use = scn;
        else if (sh.sh_type == SHT_DYNSYM)
            dyn = scn;
    }
    if (!use)
        use = dyn;
    GElf_Shdr sh;
    Elf_Data *data;
    if (!use || !gelf_getshdr(use, &sh) || sh.sh_entsize == 0 || !(data = elf_getdata(use, NULL)))
        return;
    size_t n = sh.sh_size / sh.sh_entsize;
    for (size_t i = 0; i < n; i++) {
        GElf_Sym s;
        if (!gelf_getsym(data, (int)i, &s) || s.st_shndx == SHN_UNDEF)
            continue;
        const char *nm = elf_strptr(elf, sh.sh_link, s.st_name);
        if (nm && nm[0] && !fn(arg, nm, &s))
            return;
    }
}
