/* plt.h - names for the stubs of a file's procedure linkage table.
 *
 * A call from one file to a function of another goes through a stub of the
 * caller's PLT (`jmp *slot(%rip)`, the slot in its GOT filled in by the
 * dynamic loader). No symbol covers the stubs; objdump and perf name each
 * after the function whose slot it jumps through: "getchar@plt". So does
 * this, the same way: each stub's jump is decoded, and its slot is looked
 * up among the file's relocations (R_X86_64_JUMP_SLOT in .rela.plt,
 * R_X86_64_GLOB_DAT in .rela.dyn for .plt.got's stubs), which name the
 * function; an R_X86_64_IRELATIVE one (an ifunc called from inside its
 * own file, as glibc's memcpy) gives its resolver's address instead. The
 * three layouts GNU ld makes are covered: .plt alone (lazy binding), .plt
 * with .plt.sec (-z ibtplt, CET), and .plt.got.
 */
#ifndef HSSPY_PLT_H
#define HSSPY_PLT_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

struct plt_stub {
    uint64_t addr; /* ELF virtual address of the stub */
    uint32_t size;
    const char *name; /* the function's, in the file's string table; NULL
                       * for an ifunc's stub: see resolver */
    uint64_t resolver; /* an ifunc's resolver's address (ELF), else 0 */
};

/* The stubs of elf's PLT sections that jump through a slot a relocation
 * names, sorted by address. Returns their number (*out malloc'ed, NULL when
 * 0) or -ENOMEM. Everything is read from the file, untrusted: a stub whose
 * jump is not understood, or whose slot no relocation names, is left out. */
long plt__read(Elf *elf, struct plt_stub **out);

/* The stub covering vaddr, or NULL. */
const struct plt_stub *plt__lookup(const struct plt_stub *s, size_t n, uint64_t vaddr);

#endif
