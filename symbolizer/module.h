/* module.h - one object file mapped into the target: the executable, a shared
 * library, or the vDSO.
 *
 * A module knows where it sits (load bias), can serve reads of its read-only
 * segments from the file instead of the live process (info tables, unwind
 * tables: they cannot change, and reading the file is free while the target
 * runs), finds its .eh_frame_hdr for the unwinder, and lazily loads symbols
 * and line information. Files are opened through /proc/PID/root (checked to
 * be the mapped inode) or the mapping itself, so a target in a container or
 * chroot is symbolized with its own files, and so are its separate debug
 * files.
 */
#ifndef HSSPY_MODULE_H
#define HSSPY_MODULE_H

#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbolizer/dwarf_lines.h"
#include "symbolizer/eh_frame.h"
#include "symbolizer/elf_symtab.h"
#include "symbolizer/maps.h"
#include "symbolizer/plt.h"

struct module {
    char *path;      /* as the target sees it ("/usr/lib/x86_64-linux-gnu/libc.so.6") */
    const char *name; /* its basename, for display */
    uint64_t lo, hi; /* runtime span of all its mappings */
    uint64_t lo_offset; /* file offset mapped at lo */
    int64_t bias;    /* runtime address = ELF virtual address + bias */

    int fd;
    Elf *elf;
    void *mem; /* an in-memory copy (the vDSO), owned */
    const uint8_t *image;
    size_t image_size;
    GElf_Phdr *ph;
    size_t nph;

    uint8_t build_id[64];
    size_t build_id_len;
    bool is_haskell;      /* GHC compiled code in it (.comment "GHC x.y.z") */
    char ghc_version[16]; /* "9.0.2", or "" */

    /* .eh_frame_hdr, in runtime addresses, for the unwinder; without one
     * (a static executable), ehf_index is the table built from .eh_frame
     * (owned), its entries relative to ehf_hdr, .eh_frame's address.
     * ehf_section: .eh_frame's runtime address either way */
    uint64_t ehf_hdr, ehf_table, ehf_section;
    uint64_t ehf_count;
    struct eh_frame_entry *ehf_index;

    bool syms_loaded, lines_tried, lines_ok, plt_loaded;
    struct symtab syms;
    struct plt_stub *plt; /* the PLT's stubs (plt.h), loaded on first use */
    size_t nplt;
    struct dwarf_lines lines;
    int debug_fd; /* separate debug info (/usr/lib/debug/.build-id), if found */
    Elf *debug_elf;
    bool debug_tried;
    bool ipe_tried;
    struct ipe_map *ipe; /* -finfo-table-map provenance (ipe.h), if any */
    pid_t pid; /* the live process whose root its files are under, or 0 */
};

/* Open the object behind the mappings of one file. `maps`/`first` give its
 * mappings (first: index of its lowest one). 0 or -errno. */
int module__open(struct module *m, pid_t pid, const struct maps *maps, size_t first);

/* A module for the vDSO, from its bytes copied out of the target. */
int module__open_memory(struct module *m, const char *name, uint64_t start, const void *bytes,
                        size_t len);

/* A module for a file mapped at [lo, hi) with the given bias in a process
 * that may be long gone (a saved recording), opened by its path here. */
int module__open_file(struct module *m, const char *path, uint64_t lo, uint64_t hi,
                      int64_t bias);

void module__close(struct module *m);

/* How far the file's bytes mapped by e sit from where the module's load
 * bias puts them (runtime address there - e->start): 0 for its own
 * mappings, another for a part of the file mapped again elsewhere. */
int64_t module__mapping_shift(const struct module *m, const struct map_entry *e);

/* Copy len bytes at runtime address addr out of a read-only segment of the
 * file. 0, or -EFAULT if the range is not entirely in one such segment. */
int module__read(const struct module *m, uint64_t addr, void *out, size_t len);

/* The bytes the file holds at ELF virtual address vaddr, in any loaded
 * segment, writable ones included (their contents before the program ran:
 * static data such as GHC's IPE nodes and cost centres), and in *avail how
 * many follow in the same segment; NULL if vaddr is not in the file. */
const uint8_t *module__file_at(const struct module *m, uint64_t vaddr, size_t *avail);

/* The symbol covering a runtime address (loads the table on first use). */
const struct sym *module__symbol(struct module *m, uint64_t addr);

/* The name of the PLT stub at a runtime address, "getchar@plt", into buf;
 * false if it is not in one the file's relocations name. */
bool module__plt_name(struct module *m, uint64_t addr, char *buf, size_t size);

/* The nearest symbol at or below a runtime address, ignoring sizes; and the
 * nearest one above it. */
const struct sym *module__symbol_nearest(struct module *m, uint64_t addr);
const struct sym *module__symbol_next(struct module *m, uint64_t addr);

/* The function whose call frame information (an FDE of .eh_frame) covers
 * a runtime address: its first address in *start. For code no symbol
 * names (a stripped file, a library's local functions): all of a
 * function's addresses then make one frame. */
bool module__cfi_function(const struct module *m, uint64_t addr, uint64_t *start);

/* file:line of a runtime address, when the module has DWARF. */
bool module__line(struct module *m, uint64_t addr, const char **file, int *line);

/* The Haskell binding a runtime address belongs to, from DWARF (-g):
 * "Main.main" into out; false without such DWARF. */
bool module__haskell_function(struct module *m, uint64_t addr, char *out, size_t size);

/* Find a symbol by name (st_value is an ELF vaddr: add bias). */
bool module__find_symbol(struct module *m, const char *name, GElf_Sym *out);

/* Is GHC's runtime in it, where .comment does not say (distributions
 * strip it, with .symtab)? By the symbols the runtime defines
 * (stg_upd_frame_info, hs_init_ghc: a program linked with -rdynamic keeps
 * them in .dynsym), else by the head of its +RTS --info table in .rodata.
 * Sets is_haskell then (its version unknown). */
bool module__is_ghc(struct module *m);

/* Has it a full symbol table (.symtab), not only .dynsym? */
bool module__has_symtab(const struct module *m);

/* Hex build-id into buf ("" if none). */
void module__build_id_hex(const struct module *m, char *buf, size_t size);

#endif
