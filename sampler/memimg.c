/* memimg.c - captured ranges of remote memory and bounds-checked reads. */
#include "sampler/memimg.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define PAGE_SHIFT 12

static size_t bucket(uint64_t page)
{
    return (size_t)((page * 0x9e3779b97f4a7c15ull) >> (64 - MEMIMG_BUCKET_BITS));
}

int memimg__init(struct memimg *m, size_t bytes, size_t regions)
{
    memset(m, 0, sizeof *m);
    /* Pages: those of the bytes, plus a partial one at each end of each
     * region. */
    size_t capent = (bytes >> PAGE_SHIFT) + 2 * regions + 16;
    m->buf = malloc(bytes ? bytes : 1);
    m->reg = malloc((regions ? regions : 1) * sizeof *m->reg);
    m->head = calloc(MEMIMG_BUCKETS, sizeof *m->head);
    m->ent = capent <= UINT32_MAX ? malloc(capent * sizeof *m->ent) : NULL;
    if (!m->buf || !m->reg || !m->head || !m->ent) {
        memimg__free(m);
        return -ENOMEM;
    }
    m->size = bytes;
    m->cap = regions;
    m->capent = capent;
    m->hint = SIZE_MAX;
    m->limit = SIZE_MAX;
    return 0;
}

void memimg__free(struct memimg *m)
{
    free(m->buf);
    free(m->reg);
    free(m->head);
    free(m->ent);
    memset(m, 0, sizeof *m);
}

void memimg__reset(struct memimg *m)
{
    m->used = 0;
    m->n = 0;
    m->nnotes = 0;
    m->hint = SIZE_MAX;
    if (m->nent)
        memset(m->head, 0, MEMIMG_BUCKETS * sizeof *m->head);
    m->nent = 0;
    m->unindexed = false;
    m->floor = 0;
    m->limit = SIZE_MAX;
}

struct memimg_mark memimg__mark(const struct memimg *m)
{
    return (struct memimg_mark){m->used, m->n, m->nnotes, m->nent, m->unindexed};
}

void memimg__rewind(struct memimg *m, struct memimg_mark k)
{
    if (k.n > m->n || k.used > m->used || k.nnotes > m->nnotes || k.nent > m->nent)
        return; /* not a mark of this image's present */
    /* Entries go in at the heads of their chains, so the newest are at
     * the heads still: take them out newest first. */
    while (m->nent > k.nent) {
        const struct memimg_entry *e = &m->ent[--m->nent];
        m->head[bucket(e->page)] = e->next;
    }
    m->used = k.used;
    m->n = k.n;
    m->nnotes = k.nnotes;
    m->unindexed = k.unindexed;
    m->hint = SIZE_MAX;
    if (m->floor > m->n)
        m->floor = m->n;
}

/* Enter region i under each page it covers. */
static void index_region(struct memimg *m, size_t i)
{
    const struct memimg_region *r = &m->reg[i];
    if (m->unindexed || !r->len)
        return;
    uint64_t first = r->addr >> PAGE_SHIFT, last = (r->addr + r->len - 1) >> PAGE_SHIFT;
    if (last - first >= m->capent - m->nent) {
        m->unindexed = true;
        return;
    }
    for (uint64_t p = first; p <= last; p++) {
        struct memimg_entry *e = &m->ent[m->nent];
        size_t b = bucket(p);
        e->page = p;
        e->region = (uint32_t)i;
        e->next = m->head[b];
        m->head[b] = (uint32_t)++m->nent;
    }
}

void memimg__note(struct memimg *m, uint64_t addr, size_t len)
{
    if (m->nnotes < MEMIMG_NOTES && len <= UINT32_MAX)
        m->notes[m->nnotes++] = (struct memimg_note){addr, (uint32_t)len};
}

bool memimg__room(const struct memimg *m, size_t len)
{
    return m->n < m->cap && len <= m->size - m->used;
}

uint8_t *memimg__add(struct memimg *m, uint64_t addr, size_t len)
{
    if (m->n == m->cap || len > m->size - m->used || len > UINT32_MAX)
        return NULL;
    if (addr + len < addr) /* wraps around the address space */
        return NULL;
    struct memimg_region *r = &m->reg[m->n++];
    r->addr = addr;
    r->len = (uint32_t)len;
    r->off = (uint32_t)m->used;
    m->used += len;
    index_region(m, m->n - 1);
    return m->buf + r->off;
}

void memimg__set_len(struct memimg *m, uint64_t addr, size_t len)
{
    for (size_t i = m->n; i-- > 0;) {
        struct memimg_region *r = &m->reg[i];
        if (r->addr != addr)
            continue;
        if (len < r->len) {
            if (i == m->n - 1)
                m->used = r->off + len; /* give the tail back */
            r->len = (uint32_t)len;
        }
        return;
    }
}

void memimg__set_len_at(struct memimg *m, size_t i, size_t len)
{
    if (i >= m->n || len >= m->reg[i].len)
        return;
    if (i == m->n - 1)
        m->used = m->reg[i].off + len; /* give the tail back */
    m->reg[i].len = (uint32_t)len;
}

static bool holds(const struct memimg_region *r, uint64_t addr, size_t len)
{
    return addr >= r->addr && addr - r->addr <= r->len && len <= r->len - (addr - r->addr);
}

/* The newest region in [lo, the limit) that holds the range, or SIZE_MAX. */
static size_t find(const struct memimg *m, uint64_t addr, size_t len, size_t lo)
{
    size_t hi = m->limit < m->n ? m->limit : m->n;
    if (!m->unindexed && m->head) {
        uint64_t page = addr >> PAGE_SHIFT;
        for (uint32_t k = m->head[bucket(page)]; k; k = m->ent[k - 1].next) {
            const struct memimg_entry *e = &m->ent[k - 1];
            if (e->page == page && e->region >= lo && e->region < hi &&
                holds(&m->reg[e->region], addr, len))
                return e->region;
        }
        return SIZE_MAX;
    }
    for (size_t i = hi; i-- > lo;)
        if (holds(&m->reg[i], addr, len))
            return i;
    return SIZE_MAX;
}

const uint8_t *memimg__ptr(const struct memimg *m, uint64_t addr, size_t len)
{
    size_t i = m->hint;
    if (i < m->n && i < m->limit && holds(&m->reg[i], addr, len))
        return m->buf + m->reg[i].off + (addr - m->reg[i].addr);
    /* Newest first: a later capture of the same range is the fresher one.
     * (The hint is a cache, not the image: lookups stay const.) */
    if ((i = find(m, addr, len, 0)) == SIZE_MAX)
        return NULL;
    ((struct memimg *)m)->hint = i;
    return m->buf + m->reg[i].off + (addr - m->reg[i].addr);
}

const uint8_t *memimg__ptr_own(const struct memimg *m, uint64_t addr, size_t len)
{
    size_t i = find(m, addr, len, m->floor);
    return i == SIZE_MAX ? NULL : m->buf + m->reg[i].off + (addr - m->reg[i].addr);
}

void memimg__set_floor(struct memimg *m, size_t regions) { m->floor = regions; }

void memimg__set_limit(struct memimg *m, size_t regions)
{
    m->limit = regions;
    m->hint = SIZE_MAX;
}

void memimg__forget_hint(const struct memimg *m)
{
    ((struct memimg *)m)->hint = SIZE_MAX; /* (a cache, not the image) */
}

int memimg__read(const struct memimg *m, uint64_t addr, void *out, size_t len)
{
    const uint8_t *p = memimg__ptr(m, addr, len);
    if (!p)
        return -EFAULT;
    memcpy(out, p, len);
    return 0;
}

int memimg__read_u64(const struct memimg *m, uint64_t addr, uint64_t *out)
{
    return memimg__read(m, addr, out, sizeof *out);
}

int memimg__save(const struct memimg *m, uint8_t **out, size_t *outlen)
{
    size_t total = 8;
    for (size_t i = 0; i < m->n; i++)
        total += 12 + m->reg[i].len;
    uint8_t *p = malloc(total), *q = p;
    if (!p)
        return -ENOMEM;
    memcpy(q, "HSMI", 4);
    uint32_t n = (uint32_t)m->n;
    memcpy(q + 4, &n, 4);
    q += 8;
    for (size_t i = 0; i < m->n; i++) {
        memcpy(q, &m->reg[i].addr, 8);
        memcpy(q + 8, &m->reg[i].len, 4);
        memcpy(q + 12, m->buf + m->reg[i].off, m->reg[i].len);
        q += 12 + m->reg[i].len;
    }
    *out = p;
    *outlen = total;
    return 0;
}

int memimg__load(struct memimg *m, const uint8_t *in, size_t inlen)
{
    uint32_t n;
    size_t pos = 8;
    if (inlen < 8 || memcmp(in, "HSMI", 4) != 0)
        return -EINVAL;
    memcpy(&n, in + 4, 4);
    memimg__reset(m);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t addr;
        uint32_t len;
        if (inlen - pos < 12)
            return -EINVAL;
        memcpy(&addr, in + pos, 8);
        memcpy(&len, in + pos + 8, 4);
        pos += 12;
        if (len > inlen - pos)
            return -EINVAL;
        uint8_t *dst = memimg__add(m, addr, len);
        if (!dst)
            return -ENOSPC;
        memcpy(dst, in + pos, len);
        pos += len;
    }
    return 0;
}
