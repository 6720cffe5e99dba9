/* memimg.h - a memory image: ranges of the target's memory captured while it
 * was stopped, read back later with bounds checks.
 *
 * The sampler fills an image during the stop; the walkers (C unwinder, RTS
 * reader, STG walker) read only from it after the target has resumed, so a
 * walk sees one consistent instant and nothing slow happens during the stop.
 * The same image is what the fuzzers mutate: every read a walker makes goes
 * through memimg__read and can fail, never crash.
 *
 *   struct memimg img;
 *   memimg__init(&img, 1 << 20, 256);
 *   uint8_t *p = memimg__add(&img, rsp, 16384);   // reserve, then fill p
 *   memimg__set_len(&img, rsp, got);              // after a short read
 *   uint64_t w;
 *   if (memimg__read(&img, rsp + 8, &w, 8) == 0) ...
 */
#ifndef HSSPY_MEMIMG_H
#define HSSPY_MEMIMG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct memimg_region {
    uint64_t addr;
    uint32_t len;
    uint32_t off; /* into buf */
};

/* A range a capture needed (memimg__note), whether it read it then or found
 * it captured already: what the next capture of the same thread will
 * likely need again, and can read in one batch with the stack. */
struct memimg_note {
    uint64_t addr;
    uint32_t len;
};
#define MEMIMG_NOTES 256

struct memimg {
    uint8_t *buf;
    size_t used, size;
    struct memimg_region *reg;
    size_t n, cap;
    struct memimg_note notes[MEMIMG_NOTES]; /* in order; the rest are dropped */
    size_t nnotes;
    size_t hint; /* the region the last lookup found: where the next one
                  * looks first (a walk reads one region word after word) */
    /* The regions by the 4 KB pages they cover, newest first in each chain:
     * a lookup visits only the regions on its first byte's page. */
    uint32_t *head; /* MEMIMG_BUCKETS chains: 1 + an entry's index, 0: none */
    struct memimg_entry {
        uint64_t page;
        uint32_t region;
        uint32_t next; /* 1 + the next entry's index, 0: none */
    } *ent;
    size_t nent, capent;
    bool unindexed; /* the index ran out of room: lookups scan every region
                     * (init sizes it so that it cannot; a guard) */
    /* One tick's image holds the captures of threads stopped one after
     * another, each while the others ran: a range two captures read (a
     * Capability, which every thread's view reads) differs between them.
     * A capture reuses only what was read during its own stop (regions
     * from `floor` on: memimg__ptr_own); a walk sees only what was read
     * up to the end of its thread's capture (regions below `limit`), the
     * newest of it first. */
    size_t floor, limit;
};
#define MEMIMG_BUCKET_BITS 10
#define MEMIMG_BUCKETS (1u << MEMIMG_BUCKET_BITS)

/* Preallocate room for `bytes` of captured memory in at most `regions` ranges,
 * so capturing never allocates. 0 or -ENOMEM. */
int memimg__init(struct memimg *m, size_t bytes, size_t regions);
void memimg__free(struct memimg *m);
/* Forget every region, keep the storage. */
void memimg__reset(struct memimg *m);

/* Where the image stands, to forget everything added after it (a capture
 * that turned out unusable): memimg__rewind(m, memimg__mark(m)). */
struct memimg_mark {
    size_t used, n, nnotes, nent;
    bool unindexed;
};
struct memimg_mark memimg__mark(const struct memimg *m);
void memimg__rewind(struct memimg *m, struct memimg_mark k);

/* Reserve a region of len bytes at addr; returns where to write its contents,
 * or NULL when the image is full (the capture is then partial, not fatal). */
uint8_t *memimg__add(struct memimg *m, uint64_t addr, size_t len);
/* Shrink the most recent region starting at addr to len bytes (a short read). */
void memimg__set_len(struct memimg *m, uint64_t addr, size_t len);
/* Shrink region i (an index in reg) to len bytes. */
void memimg__set_len_at(struct memimg *m, size_t i, size_t len);

/* Note that a capture needed len bytes at addr (see struct memimg_note). */
void memimg__note(struct memimg *m, uint64_t addr, size_t len);

/* Forget the region the last lookup found: a walk that begins so finds,
 * where regions overlap (the same words read at two moments), what the
 * image holds, not what the walk before it looked at last. */
void memimg__forget_hint(const struct memimg *m);

/* Copy len bytes at addr out of the image: 0, or -EFAULT if any byte of the
 * range was not captured. */
int memimg__read(const struct memimg *m, uint64_t addr, void *out, size_t len);
/* Read one little-endian 64-bit word. */
int memimg__read_u64(const struct memimg *m, uint64_t addr, uint64_t *out);
/* A pointer to len captured bytes at addr, or NULL. Where regions overlap
 * (ranges read at two stops of one tick), the region the previous lookup
 * found wins if it holds all of them, else the newest. */
const uint8_t *memimg__ptr(const struct memimg *m, uint64_t addr, size_t len);

/* Is there room for one more range of len bytes? */
bool memimg__room(const struct memimg *m, size_t len);
/* The same, from the regions added since memimg__set_floor only (those of
 * the capture under way): NULL if only older ones hold the range. */
const uint8_t *memimg__ptr_own(const struct memimg *m, uint64_t addr, size_t len);
/* Where the capture under way began (a region count, memimg.n then). */
void memimg__set_floor(struct memimg *m, size_t regions);
/* Let lookups see the first `regions` regions only (SIZE_MAX: all). */
void memimg__set_limit(struct memimg *m, size_t regions);

/* Flatten to / restore from a byte string (for fuzzing corpora and tests):
 * "HSMI" u32 count, then per region u64 addr, u32 len, bytes. */
int memimg__save(const struct memimg *m, uint8_t **out, size_t *outlen);
int memimg__load(struct memimg *m, const uint8_t *in, size_t inlen);

#endif
