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

#endif
