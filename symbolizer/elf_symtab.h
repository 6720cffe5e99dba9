/* elf_symtab.h - one object file's symbol table, sorted for address lookup.
 *
 * Built from .symtab and .dynsym together (a stripped library still has
 * .dynsym), keeping code symbols only: functions, and the objects and untyped
 * labels that live in executable sections (GHC's RTS info tables such as
 * stg_upd_frame_info are OBJECTs in .text). Addresses are ELF virtual
 * addresses, before load bias.
 *
 *   struct symtab st;
 *   symtab__load(&st, elf);
 *   const struct sym *s = symtab__lookup(&st, vaddr);   // NULL: no symbol
 */
#ifndef HSSPY_ELF_SYMTAB_H
#define HSSPY_ELF_SYMTAB_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sym {
    uint64_t addr;
    uint64_t size; /* 0: unknown, the symbol reaches to the next one, */
    uint64_t end;  /* ... but not past the end of its section (0: unknown) */
    const char *name; /* points into the ELF string table */
    uint8_t score;    /* which of several symbols at one address to show */
};

struct symtab {
    struct sym *s;
    size_t n;
    size_t from_symtab, from_dynsym;
};

/* 0 or -errno; an object without symbols is not an error (n == 0). */
int symtab__load(struct symtab *t, Elf *elf);
void symtab__free(struct symtab *t);

/* The symbol covering vaddr: the nearest one at or below it, provided vaddr
 * is inside it (when its size is known). NULL if none. */
const struct sym *symtab__lookup(const struct symtab *t, uint64_t vaddr);

/* The nearest symbol at or below vaddr, whatever its size says. */
const struct sym *symtab__nearest(const struct symtab *t, uint64_t vaddr);
/* The nearest symbol above vaddr. */
const struct sym *symtab__next(const struct symtab *t, uint64_t vaddr);

/* The address of a symbol by exact name (linear; for a handful of RTS
 * globals at attach time). Searches data symbols too. Returns 1 if found,
 * 0 if absent. */
int symtab__find_by_name(Elf *elf, const char *name, GElf_Sym *out);

/* Call fn for every defined symbol of .symtab (or .dynsym when there is no
 * .symtab), in table order; stop early when fn returns false. */
typedef bool (*symtab_fn)(void *arg, const char *name, const GElf_Sym *sym);
void symtab__each(Elf *elf, symtab_fn fn, void *arg);

#endif
