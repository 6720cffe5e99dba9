/* plt.c - names for the stubs of a file's procedure linkage table (see
 * plt.h). */
#include "symbolizer/plt.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* A GOT slot a relocation names: the function's name, or an ifunc's
 * resolver. */
struct slot {
    uint64_t at;
    const char *name;
    uint64_t resolver;
};

struct slots {
    struct slot *s;
    size_t n, cap;
};

static int by_at(const void *a, const void *b)
{
    const struct slot *x = a, *y = b;
    return x->at < y->at ? -1 : x->at > y->at;
}

static int by_addr(const void *a, const void *b)
{
    const struct plt_stub *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static const char *section_name(Elf *elf, size_t shstrndx, const GElf_Shdr *sh)
{
    const char *nm = elf_strptr(elf, shstrndx, sh->sh_name);
    return nm ? nm : "";
}

/* The slots of one SHT_RELA section whose symbols are in a dynamic symbol
 * table. */
static int add_slots(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct slots *sl)
{
    Elf_Scn *symscn = elf_getscn(elf, sh->sh_link);
    GElf_Shdr symsh;
    Elf_Data *d = elf_getdata(scn, NULL), *symd;
    if (!d || !sh->sh_entsize || !symscn || !gelf_getshdr(symscn, &symsh) ||
        symsh.sh_type != SHT_DYNSYM || !symsh.sh_entsize || !(symd = elf_getdata(symscn, NULL)))
        return 0;
    size_t n = sh->sh_size / sh->sh_entsize;
    for (size_t i = 0; i < n; i++) {
        GElf_Rela r;
        GElf_Sym s;
        struct slot one = {0};
        if (!gelf_getrela(d, (int)i, &r))
            continue;
        switch (GELF_R_TYPE(r.r_info)) {
        case R_X86_64_JUMP_SLOT:
        case R_X86_64_GLOB_DAT:
            if (!gelf_getsym(symd, (int)GELF_R_SYM(r.r_info), &s) ||
                !(one.name = elf_strptr(elf, symsh.sh_link, s.st_name)) || !one.name[0])
                continue;
            break;
        case R_X86_64_IRELATIVE:
            if (r.r_addend <= 0)
                continue;
            one.resolver = (uint64_t)r.r_addend;
            break;
        default:
            continue;
        }
        one.at = r.r_offset;
        if (sl->n == sl->cap) {
            size_t nc = sl->cap ? 2 * sl->cap : 256;
            struct slot *ns = realloc(sl->s, nc * sizeof *ns);
            if (!ns)
                return -ENOMEM;
            sl->s = ns;
            sl->cap = nc;
        }
        sl->s[sl->n++] = one;
    }
    return 0;
}

/* The slot a stub's bytes jump through: the first `jmp *disp32(%rip)`
 * starting in its size bytes (ff 25; after an endbr64 or a bnd prefix; a
 * lazy stub's push and jmp come after it), avail bytes readable, at the
 * stub's ELF address `at`. */
static bool stub_slot(const uint8_t *b, size_t size, size_t avail, uint64_t at, uint64_t *slot)
{
    for (size_t k = 0; k < size && k + 6 <= avail; k++)
        if (b[k] == 0xff && b[k + 1] == 0x25) {
            int32_t disp;
            memcpy(&disp, b + k + 2, 4);
            *slot = at + k + 6 + (uint64_t)(int64_t)disp;
            return true;
        }
    return false;
}

long plt__read(Elf *elf, struct plt_stub **out)
{
    size_t shstrndx;
    Elf_Scn *scn = NULL;
    struct slots sl = {0};
    struct plt_stub *st = NULL;
    size_t n = 0, cap = 0;

    *out = NULL;
    if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
        return 0;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_RELA && add_slots(elf, scn, &sh, &sl) < 0)
            goto nomem;
    }
    if (!sl.n)
        return 0;
    qsort(sl.s, sl.n, sizeof *sl.s, by_at);
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr sh;
        Elf_Data *d;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
            !(sh.sh_flags & SHF_EXECINSTR))
            continue;
        const char *nm = section_name(elf, shstrndx, &sh);
        bool got = strcmp(nm, ".plt.got") == 0;
        if (!got && strcmp(nm, ".plt") != 0 && strcmp(nm, ".plt.sec") != 0)
            continue;
        if (!(d = elf_getdata(scn, NULL)) || !d->d_buf)
            continue;
        /* 16-byte stubs; .plt.got's are 8 without CET (its entsize says) */
        size_t size = sh.sh_entsize == 8 || sh.sh_entsize == 16 ? sh.sh_entsize : got ? 8 : 16;
        size_t len = d->d_size < sh.sh_size ? d->d_size : sh.sh_size;
        for (size_t off = 0; off + size <= len; off += size) {
            uint64_t at = sh.sh_addr + off, slot;
            if (!stub_slot((const uint8_t *)d->d_buf + off, size, len - off, at, &slot))
                continue;
            struct slot key = {slot, NULL, 0};
            const struct slot *hit = bsearch(&key, sl.s, sl.n, sizeof *sl.s, by_at);
            if (!hit)
                continue;
            if (n == cap) {
                size_t nc = cap ? 2 * cap : 256;
                struct plt_stub *ns = realloc(st, nc * sizeof *ns);
                if (!ns)
                    goto nomem;
                st = ns;
                cap = nc;
            }
            st[n++] = (struct plt_stub){at, (uint32_t)size, hit->name, hit->resolver};
        }
    }
    free(sl.s);
    if (!n) {
        free(st);
        return 0;
    }
    qsort(st, n, sizeof *st, by_addr);
    *out = st;
    return (long)n;
nomem:
    free(sl.s);
    free(st);
    return -ENOMEM;
}

const struct plt_stub *plt__lookup(const struct plt_stub *s, size_t n, uint64_t vaddr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s[mid].addr <= vaddr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || vaddr - s[lo - 1].addr >= s[lo - 1].size)
        return NULL;
    return &s[lo - 1];
}
