/* ipe.c - decoding GHC's IPE data (rts/include/rts/IPE.h, rts/IPE.c) from
 * an executable file into a sorted map from info pointer to provenance. */
#define _GNU_SOURCE
#include "symbolizer/ipe.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "symbolizer/module.h"

/* Caps on what one node may claim: GHC's largest modules have a few
 * thousand info tables and strings tables of a few hundred KiB. */
#define MAX_ENTRIES (1u << 20)
#define MAX_TABLE_BYTES (64u << 20)
#define MAX_STRING 65536

void ipe_map__init(struct ipe_map *m) { memset(m, 0, sizeof *m); }

void ipe_map__free(struct ipe_map *m)
{
    for (size_t i = 0; i < m->nowned; i++)
        free(m->owned[i]);
    free(m->owned);
    free(m->e);
    memset(m, 0, sizeof *m);
}

static int own(struct ipe_map *m, void *p)
{
    void **v = realloc(m->owned, (m->nowned + 1) * sizeof *v);
    if (!v) {
        free(p);
        return -ENOMEM;
    }
    m->owned = v;
    m->owned[m->nowned++] = p;
    return 0;
}

/* A little-endian unsigned field of 1..8 bytes at p + f.off. */
static uint64_t get(const uint8_t *p, struct rts_layout__field f)
{
    uint64_t v = 0;
    if (rts_layout__has(f) && f.size > 0 && f.size <= 8)
        memcpy(&v, p + f.off, f.size);
    return v;
}

/* A string table: either a known number of bytes (9.10), or, when GHC
 * records no size (9.6), whatever the file holds from its start on. */
struct strtab {
    const char *base;
    size_t size;
};

/* The NUL-terminated string at idx, or NULL if it does not end inside. */
static const char *str_at(const struct strtab *t, uint64_t idx)
{
    if (idx >= t->size)
        return NULL;
    size_t left = t->size - (size_t)idx;
    if (left > MAX_STRING)
        left = MAX_STRING;
    return memchr(t->base + idx, 0, left) ? t->base + idx : NULL;
}

/* Closure types as GHC 9.10's formatClosureDescIpe prints them. */
static const char *closure_type_str(uint64_t t)
{
    static const char *const nums[128] = {
        "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16",
        "17", "18", "19", "20", "21", "22", "23", "24", "25", "26", "27", "28", "29", "30", "31",
        "32", "33", "34", "35", "36", "37", "38", "39", "40", "41", "42", "43", "44", "45", "46",
        "47", "48", "49", "50", "51", "52", "53", "54", "55", "56", "57", "58", "59", "60", "61",
        "62", "63", "64", "65", "66", "67", "68", "69", "70", "71", "72", "73", "74", "75", "76",
        "77", "78", "79", "80", "81", "82", "83", "84", "85", "86", "87", "88", "89", "90", "91",
        "92", "93", "94", "95", "96", "97", "98", "99", "100", "101", "102", "103", "104", "105",
        "106", "107", "108", "109", "110", "111", "112", "113", "114", "115", "116", "117", "118",
        "119", "120", "121", "122", "123", "124", "125", "126", "127",
    };
    return t < 128 ? nums[t] : "?";
}

static int push(struct ipe_map *m, const struct ipe_entry *e)
{
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 256;
        struct ipe_entry *v = realloc(m->e, cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        m->e = v;
        m->cap = cap;
    }
    m->e[m->n++] = *e;
    return 0;
}

/* size bytes of table data at vaddr, decompressed if the node says so;
 * *out points into the file or into an owned buffer. */
static int table_bytes(struct ipe_map *m, const struct ipe_reader *r, uint64_t vaddr,
                       uint64_t size, bool compressed, const uint8_t **out)
{
    size_t avail;
    const uint8_t *src = r->at(r->ctx, vaddr, &avail);
    if (!src || size > MAX_TABLE_BYTES)
        return -EINVAL;
    if (!compressed) {
        if (avail < size)
            return -EINVAL;
        *out = src;
        return 0;
    }
    /* As rts/IPE.c: one zstd frame holding exactly `size` bytes. */
    size_t csize = ZSTD_findFrameCompressedSize(src, avail);
    if (ZSTD_isError(csize))
        return -EINVAL;
    uint8_t *dst = malloc(size ? size : 1);
    if (!dst)
        return -ENOMEM;
    size_t got = ZSTD_decompress(dst, size, src, csize);
    if (ZSTD_isError(got) || got != size) {
        free(dst);
        return -EINVAL;
    }
    int e = own(m, dst);
    if (e < 0)
        return e;
    *out = dst;
    return 0;
}

int ipe_map__add_node(struct ipe_map *m, const struct rts_layout *L, const struct ipe_reader *r,
                      uint64_t node_vaddr)
{
    const struct rts_layout__ipe_node *N = &L->ipe_node;
    const struct rts_layout__ipe_entry *E = &L->ipe_entry;
    size_t avail;
    const uint8_t *node;
    int err = -EINVAL;

    if (N->struct_size <= 0 || E->struct_size <= 0 || !rts_layout__has(N->count) ||
        !rts_layout__has(N->string_table) ||
        rts_layout__has(N->entries_inline) == rts_layout__has(N->entries))
        return -ENOTSUP;
    node = r->at(r->ctx, node_vaddr, &avail);
    if (!node || avail < (size_t)N->struct_size)
        goto bad;

    uint64_t count = get(node, N->count), esize = (uint64_t)E->struct_size;
    bool compressed = get(node, N->compressed) != 0;
    if (count == 0 || count > MAX_ENTRIES)
        goto bad;

    const uint8_t *entries, *tables = NULL;
    struct strtab st;
    const char *unit = "", *module = NULL;
    if (rts_layout__has(N->entries_inline)) {
        /* 9.6: the entries follow the node; strings have no recorded size. */
        if (avail - (size_t)N->entries_inline.off < count * esize)
            goto bad;
        entries = node + N->entries_inline.off;
        const uint8_t *s = r->at(r->ctx, get(node, N->string_table), &avail);
        if (!s)
            goto bad;
        st = (struct strtab){(const char *)s, avail};
    } else {
        /* 9.10: entries and info pointers behind pointers, maybe zstd. */
        const uint8_t *sb;
        uint64_t ssize = get(node, N->string_table_size);
        if (get(node, N->entries_size) != count * esize || !rts_layout__has(N->tables))
            goto bad;
        if ((err = table_bytes(m, r, get(node, N->entries), count * esize, compressed,
                               &entries)) < 0 ||
            (err = table_bytes(m, r, get(node, N->tables), count * 8, false, &tables)) < 0 ||
            (err = table_bytes(m, r, get(node, N->string_table), ssize, compressed, &sb)) < 0)
            goto bad;
        err = -EINVAL;
        st = (struct strtab){(const char *)sb, (size_t)ssize};
        if (rts_layout__has(N->unit_id) && !(unit = str_at(&st, get(node, N->unit_id))))
            goto bad;
        if (rts_layout__has(N->module_name) && !(module = str_at(&st, get(node, N->module_name))))
            goto bad;
    }

    bool desc_is_string = L->info_prov.closure_desc.size == 8;
    size_t first = m->n;
    for (uint64_t i = 0; i < count; i++) {
        const uint8_t *p = entries + i * esize;
        struct ipe_entry e = {0};
        e.info = tables ? get(tables + 8 * i, (struct rts_layout__field){0, 8}) : get(p, E->info);
        e.unit = unit;
        e.module = module ? module : str_at(&st, get(p, E->module_name));
        e.table_name = str_at(&st, get(p, E->table_name));
        e.closure_desc = desc_is_string ? str_at(&st, get(p, E->closure_desc))
                                        : closure_type_str(get(p, E->closure_desc));
        e.ty_desc = str_at(&st, get(p, E->ty_desc));
        e.label = str_at(&st, get(p, E->label));
        e.src_file = str_at(&st, get(p, E->src_file));
        e.src_span = str_at(&st, get(p, E->src_span));
        if (!e.info || !e.module || !e.table_name || !e.closure_desc || !e.ty_desc || !e.label ||
            !e.src_file || !e.src_span) {
            m->n = first; /* all of a node or none of it */
            goto bad;
        }
        if ((err = push(m, &e)) < 0) {
            m->n = first;
            return err;
        }
    }
    return 0;
bad:
    m->bad_nodes++;
    return err == -ENOMEM ? err : -EINVAL;
}

static int cmp_entry(const void *a, const void *b)
{
    const struct ipe_entry *x = a, *y = b;
    return x->info < y->info ? -1 : x->info > y->info;
}

void ipe_map__finish(struct ipe_map *m)
{
    if (m->n)
        qsort(m->e, m->n, sizeof *m->e, cmp_entry);
}

const struct ipe_entry *ipe_map__find(const struct ipe_map *m, uint64_t vaddr)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->e[mid].info < vaddr)
            lo = mid + 1;
        else if (m->e[mid].info > vaddr)
            hi = mid;
        else
            return &m->e[mid];
    }
    return NULL;
}

int ipe__span_line(const char *span)
{
    if (!span)
        return 0;
    if (*span == '(')
        span++;
    int line = 0;
    for (; *span >= '0' && *span <= '9' && line < 100000000; span++)
        line = line * 10 + (*span - '0');
    return line;
}

/* ------------------------------------------------------------------------
 * A module's map, from its file
 * ---------------------------------------------------------------------- */

/* The nodes are in .data: what the file holds is their state before the
 * RTS touched them, which is what is wanted. */
static const uint8_t *module_at(void *ctx, uint64_t vaddr, size_t *avail)
{
    return module__file_at(ctx, vaddr, avail);
}

struct node_scan {
    struct module *mod;
    const struct rts_layout *L;
    struct ipe_map *map;
    int err;
};

static bool scan_node(void *arg, const char *name, const GElf_Sym *s)
{
    struct node_scan *sc = arg;
    static const char suffix[] = "_ipe_buf";
    size_t n = strlen(name), k = sizeof suffix - 1;
    if (n <= k || strcmp(name + n - k, suffix) != 0 || GELF_ST_TYPE(s->st_info) == STT_FUNC)
        return true;
    struct ipe_reader r = {module_at, sc->mod};
    if (ipe_map__add_node(sc->map, sc->L, &r, s->st_value) == -ENOMEM) {
        sc->err = -ENOMEM;
        return false;
    }
    return true;
}

const struct ipe_entry *ipe__lookup(struct module *mod, uint64_t addr)
{
    if (!mod->ipe_tried) {
        mod->ipe_tried = true;
        /* The IPE structures do not depend on the RTS variant. */
        const struct rts_layout *L =
            mod->is_haskell ? rts_layout__find(mod->ghc_version, false, false, false) : NULL;
        if (!L || L->ipe_node.struct_size <= 0 || !mod->elf || !mod->image)
            return NULL;
        struct ipe_map *map = malloc(sizeof *map);
        if (!map)
            return NULL;
        ipe_map__init(map);
        struct node_scan sc = {mod, L, map, 0};
        symtab__each(mod->elf, scan_node, &sc);
        if (sc.err || map->n == 0) {
            ipe_map__free(map);
            free(map);
            return NULL;
        }
        ipe_map__finish(map);
        mod->ipe = map;
    }
    return mod->ipe ? ipe_map__find(mod->ipe, addr - (uint64_t)mod->bias) : NULL;
}
