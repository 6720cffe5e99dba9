/* dwarf_lines.h - file:line for an address, from an object's DWARF.
 *
 * The compile-unit ranges are indexed once per object (GHC's -g output and
 * many C builds have no .debug_aranges, so libdw's own address lookup cannot
 * be relied on); a lookup is then a binary search plus libdw's line table.
 */
#ifndef HSSPY_DWARF_LINES_H
#define HSSPY_DWARF_LINES_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdint.h>

struct dwarf_lines {
    Dwarf *dw;
    struct cu_range *r;
    size_t n;
};

/* Index the DWARF of elf; false (and nothing to free) if it has none. */
bool dwarf_lines__open(struct dwarf_lines *d, Elf *elf);
void dwarf_lines__close(struct dwarf_lines *d);

/* Source file and line of an ELF virtual address; false if unknown.
 * *file points into libdw's data (valid until close). */
bool dwarf_lines__find(struct dwarf_lines *d, uint64_t vaddr, const char **file, int *line);

/* A source file's path as a user writes it, in place: GHC names a compile
 * unit's directory with a trailing slash, which libdw joins to a relative
 * file name with another ("/src//Main.hs"); "//" and "/./" are made "/",
 * and a leading "./" goes. ".." is left: it may cross a symbolic link. */
void dwarf_lines__clean_path(char *path);

/* The function (DW_TAG_subprogram) containing an ELF virtual address, its
 * linkage name (or NULL), and the range of its compile unit; false if none.
 * For GHC's -g output the name is the Haskell binding the code belongs to
 * ("main", "fib"), also for the code of local closures that have no symbol;
 * a procedure GHC generated itself is named after a label (c48L, see
 * dwarf_lines__is_label) and has a linkage name instead. *haskell says
 * whether the unit's language is Haskell. */
bool dwarf_lines__function(struct dwarf_lines *d, uint64_t vaddr, const char **name,
                           const char **linkage, uint64_t *cu_lo, uint64_t *cu_hi,
                           bool *haskell);

/* Is this one of GHC's block labels (c48L, _c2ci, s2b7), not a name? */
bool dwarf_lines__is_label(const char *name);

#endif
