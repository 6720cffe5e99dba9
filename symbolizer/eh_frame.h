/* eh_frame.h - an index of a .eh_frame section, for a file without a usable
 * .eh_frame_hdr.
 *
 * gcc asks the linker for .eh_frame_hdr (and its PT_GNU_EH_FRAME segment)
 * only when it links dynamically: a static executable (-static, a GHC
 * program built with -optl-static) has its call frame information in
 * .eh_frame but no table to find a function's entry in. libunwind finds
 * entries only through such a table. This builds the table the linker
 * would have, from the section's bytes (the target's file: untrusted, every
 * record bounds-checked).
 */
#ifndef HSSPY_EH_FRAME_H
#define HSSPY_EH_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One entry, as in .eh_frame_hdr's table (datarel, sdata4): the first
 * address of the function an FDE covers, and the FDE's own address (its
 * length field), both as offsets from the section's runtime address. */
struct eh_frame_entry {
    int32_t start;
    int32_t fde;
};

/* Index the .eh_frame bytes sec[0..len), which sit at runtime address
 * `at`, keeping the FDEs whose functions start in [lo, hi). `bias` is
 * added to absolute (absptr) addresses: runtime = ELF address + bias.
 * Sorted by start. Returns the number of entries (*out malloc'ed, NULL
 * when 0), or -ENOMEM. Records it cannot read (a truncated length, an
 * encoding linkers do not emit, a function beyond 2 GB of the section)
 * are skipped; a length running off the section ends the walk. */
long eh_frame__index(const uint8_t *sec, size_t len, uint64_t at, int64_t bias, uint64_t lo,
                     uint64_t hi, struct eh_frame_entry **out);

/* The function covered by the FDE at offset off of the same section:
 * its first runtime address in *start, its length in *size. false if
 * there is no FDE there that can be read. */
bool eh_frame__function(const uint8_t *sec, size_t len, size_t off, uint64_t at, int64_t bias,
                        uint64_t *start, uint64_t *size);

#endif
