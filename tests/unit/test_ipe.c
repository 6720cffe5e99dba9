/* test_ipe.c - unit tests for symbolizer/ipe.c: IPE nodes laid out as GHC
 * 9.6.6 and 9.10.3 emit them (the layouts from their generated tables),
 * uncompressed and zstd-compressed, decoded into the info pointer -> source
 * map; and malformed nodes (offsets out of their table, unterminated
 * strings, sizes that do not add up, corrupt frames) refused whole.
 */
#include "tests/unit/unit.h"
#include "symbolizer/ipe.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <zstd.h>

/* A fake file: bytes at virtual addresses [BASE, BASE + sizeof bytes). */
#define BASE 0x400000u
static uint8_t img[16384];

static const uint8_t *img_at(void *ctx, uint64_t vaddr, size_t *avail)
{
    (void)ctx;
    if (vaddr < BASE || vaddr >= BASE + sizeof img)
        return NULL;
    *avail = (size_t)(BASE + sizeof img - vaddr);
    return img + (vaddr - BASE);
}
static const struct ipe_reader reader = {img_at, NULL};

static void put(uint64_t vaddr, struct rts_layout__field f, uint64_t v)
{
    if (!rts_layout__has(f))
        UNIT_FAIL("writing an absent field");
    memcpy(img + (vaddr - BASE) + f.off, &v, f.size);
}

/* A string table, and where each string starts in it. */
static const char strings[] = "\0fib\0Main\0deep.hs\0" "14:1-3\0Int -> Int\0fib_info\0"
                              "block_c1_info\0main\0" "21:5-9\0" "14";
enum { S_EMPTY = 0, S_FIB = 1, S_MAIN = 5, S_FILE = 10, S_SPAN = 18, S_TYPE = 25,
       S_TABLE = 36, S_BLOCK = 45, S_UNIT = 59, S_SPAN2 = 64, S_DESC = 71 };

static const struct rts_layout *layout(const char *v)
{
    const struct rts_layout *L = rts_layout__find(v, true, false, false);
    if (!L)
        UNIT_FAIL("no %s layout", v);
    return L;
}

/* 9.6: node {next, string_table, count, entries[]}, entries carrying their
 * info pointer and module. Two entries: fib's closure, and a continuation. */
static uint64_t build_9_6(const struct rts_layout *L)
{
    const struct rts_layout__ipe_entry *E = &L->ipe_entry;
    uint64_t node = BASE + 0x100, strs = BASE + 0x2000;
    memset(img, 0, sizeof img);
    memcpy(img + (strs - BASE), strings, sizeof strings);
    put(node, L->ipe_node.string_table, strs);
    put(node, L->ipe_node.count, 2);
    uint64_t e0 = node + (uint64_t)L->ipe_node.entries_inline.off;
    uint64_t e1 = e0 + (uint64_t)E->struct_size;
    put(e0, E->info, 0x401000);
    put(e0, E->table_name, S_TABLE);
    put(e0, E->closure_desc, S_DESC);
    put(e0, E->ty_desc, S_TYPE);
    put(e0, E->label, S_FIB);
    put(e0, E->module_name, S_MAIN);
    put(e0, E->src_file, S_FILE);
    put(e0, E->src_span, S_SPAN);
    put(e1, E->info, 0x400800);
    put(e1, E->table_name, S_BLOCK);
    put(e1, E->closure_desc, S_DESC);
    put(e1, E->ty_desc, S_EMPTY);
    put(e1, E->label, S_FIB);
    put(e1, E->module_name, S_MAIN);
    put(e1, E->src_file, S_FILE);
    put(e1, E->src_span, S_SPAN2);
    return node;
}

/* 9.10: node {next, compressed, count, tables, entries, entries_size,
 * string_table, string_table_size, unit_id, module_name}; the entries are
 * string offsets only. With compress, entries and strings are zstd frames. */
static uint64_t build_9_10(const struct rts_layout *L, bool compress)
{
    const struct rts_layout__ipe_entry *E = &L->ipe_entry;
    const struct rts_layout__ipe_node *N = &L->ipe_node;
    uint64_t node = BASE + 0x100, tables = BASE + 0x400, ents = BASE + 0x800,
             strs = BASE + 0x2000;
    uint8_t raw[256] = {0};
    size_t esize = (size_t)E->struct_size;

    memset(img, 0, sizeof img);
    put(node, N->count, 2);
    put(node, N->compressed, compress);
    put(node, N->tables, tables);
    put(node, N->entries, ents);
    put(node, N->entries_size, 2 * esize);
    put(node, N->string_table, strs);
    put(node, N->string_table_size, sizeof strings);
    put(node, N->unit_id, S_UNIT);
    put(node, N->module_name, S_MAIN);
    put(tables, (struct rts_layout__field){0, 8}, 0x401000);
    put(tables, (struct rts_layout__field){8, 8}, 0x400800);
    /* the entries, as the compiler lays them out, into raw */
    uint8_t ent[2][64] = {{0}};
    struct { uint64_t table, desc, ty, label, file, span; } v[2] = {
        {S_TABLE, 14, S_TYPE, S_FIB, S_FILE, S_SPAN},
        {S_BLOCK, 53, S_EMPTY, S_FIB, S_FILE, S_SPAN2},
    };
    for (int i = 0; i < 2; i++) {
        memcpy(ent[i] + E->table_name.off, &v[i].table, E->table_name.size);
        memcpy(ent[i] + E->closure_desc.off, &v[i].desc, E->closure_desc.size);
        memcpy(ent[i] + E->ty_desc.off, &v[i].ty, E->ty_desc.size);
        memcpy(ent[i] + E->label.off, &v[i].label, E->label.size);
        memcpy(ent[i] + E->src_file.off, &v[i].file, E->src_file.size);
        memcpy(ent[i] + E->src_span.off, &v[i].span, E->src_span.size);
        memcpy(raw + i * esize, ent[i], esize);
    }
    if (!compress) {
        memcpy(img + (ents - BASE), raw, 2 * esize);
        memcpy(img + (strs - BASE), strings, sizeof strings);
    } else {
        size_t n = ZSTD_compress(img + (ents - BASE), 0x800, raw, 2 * esize, 3);
        if (ZSTD_isError(n))
            UNIT_FAIL("zstd: %s", ZSTD_getErrorName(n));
        n = ZSTD_compress(img + (strs - BASE), 0x1000, strings, sizeof strings, 3);
        if (ZSTD_isError(n))
            UNIT_FAIL("zstd: %s", ZSTD_getErrorName(n));
    }
    return node;
}

static void check_decoded(const struct ipe_map *m, bool has_unit)
{
    CHECK_EQ_INT(m->n, 2);
    CHECK_EQ_INT(m->bad_nodes, 0);
    const struct ipe_entry *a = ipe_map__find(m, 0x401000), *b = ipe_map__find(m, 0x400800);
    CHECK(a && b);
    CHECK(ipe_map__find(m, 0x401001) == NULL);
    CHECK(ipe_map__find(m, 0x400000) == NULL);
    CHECK_EQ_STR(a->label, "fib");
    CHECK_EQ_STR(a->module, "Main");
    CHECK_EQ_STR(a->src_file, "deep.hs");
    CHECK_EQ_STR(a->src_span, "14:1-3");
    CHECK_EQ_STR(a->ty_desc, "Int -> Int");
    CHECK_EQ_STR(a->table_name, "fib_info");
    CHECK_EQ_STR(a->closure_desc, "14");
    CHECK_EQ_STR(b->table_name, "block_c1_info");
    CHECK_EQ_STR(b->src_span, "21:5-9");
    CHECK_EQ_STR(b->ty_desc, "");
    CHECK_EQ_STR(a->unit, has_unit ? "main" : "");
}

TEST(decodes_9_6_nodes)
{
    const struct rts_layout *L = layout("9.6.6");
    struct ipe_map m;
    ipe_map__init(&m);
    uint64_t node = build_9_6(L);
    CHECK_EQ_INT(ipe_map__add_node(&m, L, &reader, node), 0);
    ipe_map__finish(&m);
    check_decoded(&m, false);
    ipe_map__free(&m);
}

TEST(decodes_9_10_nodes)
{
    const struct rts_layout *L = layout("9.10.3");
    struct ipe_map m;
    ipe_map__init(&m);
    uint64_t node = build_9_10(L, false);
    CHECK_EQ_INT(ipe_map__add_node(&m, L, &reader, node), 0);
    ipe_map__finish(&m);
    /* 9.10 stores the closure type as a number: printed as GHC prints it */
    check_decoded(&m, true);
    CHECK_EQ_STR(ipe_map__find(&m, 0x400800)->closure_desc, "53");
    ipe_map__free(&m);
}

TEST(decodes_9_10_compressed_nodes)
{
    const struct rts_layout *L = layout("9.10.3");
    struct ipe_map m;
    ipe_map__init(&m);
    uint64_t node = build_9_10(L, true);
    /* the compressed bytes really are not the plain ones */
    CHECK(memcmp(img + 0x2000, strings, sizeof strings) != 0);
    CHECK_EQ_INT(ipe_map__add_node(&m, L, &reader, node), 0);
    ipe_map__finish(&m);
    check_decoded(&m, true);
    CHECK_EQ_INT(m.nowned, 2); /* the two decompressed tables */
    ipe_map__free(&m);
}

/* Every way a node can lie is refused, and the map keeps nothing of it. */
TEST(refuses_malformed_nodes)
{
    const struct rts_layout *A = layout("9.6.6"), *B = layout("9.10.3");
    const struct rts_layout__ipe_node *N = &B->ipe_node;
    struct ipe_map m;
    uint64_t node = BASE + 0x100;
    ipe_map__init(&m);

    build_9_6(A); /* a string offset past the file */
    put(node + (uint64_t)A->ipe_node.entries_inline.off, A->ipe_entry.label, 0x7fffffff);
    CHECK_EQ_INT(ipe_map__add_node(&m, A, &reader, node), -EINVAL);
    build_9_6(A); /* an unterminated string at the very end of the file */
    memset(img + sizeof img - 8, 'x', 8);
    put(node + (uint64_t)A->ipe_node.entries_inline.off, A->ipe_entry.src_span,
        sizeof img - 8 - 0x2000);
    CHECK_EQ_INT(ipe_map__add_node(&m, A, &reader, node), -EINVAL);
    build_9_6(A); /* more entries than the file holds */
    put(node, A->ipe_node.count, 100000);
    CHECK_EQ_INT(ipe_map__add_node(&m, A, &reader, node), -EINVAL);
    build_9_6(A); /* no entries */
    put(node, A->ipe_node.count, 0);
    CHECK_EQ_INT(ipe_map__add_node(&m, A, &reader, node), -EINVAL);
    CHECK_EQ_INT(ipe_map__add_node(&m, A, &reader, BASE + sizeof img - 8), -EINVAL);

    build_9_10(B, false); /* entries_size disagrees with count */
    put(node, N->entries_size, 7);
    CHECK_EQ_INT(ipe_map__add_node(&m, B, &reader, node), -EINVAL);
    build_9_10(B, false); /* an offset past string_table_size (but in the file) */
    put(node, N->string_table_size, 20);
    CHECK_EQ_INT(ipe_map__add_node(&m, B, &reader, node), -EINVAL);
    build_9_10(B, false); /* the module name out of the table */
    put(node, N->module_name, 5000);
    CHECK_EQ_INT(ipe_map__add_node(&m, B, &reader, node), -EINVAL);
    build_9_10(B, false); /* tables outside the file */
    put(node, N->tables, 0x10);
    CHECK_EQ_INT(ipe_map__add_node(&m, B, &reader, node), -EINVAL);
    build_9_10(B, true); /* not a zstd frame (its magic number broken) */
    img[0x2000] ^= 0xff;
    CHECK_EQ_INT(ipe_map__add_node(&m, B, &reader, node), -EINVAL);
    build_9_10(B, true); /* a frame that decompresses to another size */
    put(node, N->string_table_size, sizeof strings + 1);
    CHECK_EQ_INT(ipe_map__add_node(&m, B, &reader, node), -EINVAL);
    build_9_10(B, false); /* a zero info pointer */
    put(BASE + 0x400, (struct rts_layout__field){8, 8}, 0);
    CHECK_EQ_INT(ipe_map__add_node(&m, B, &reader, node), -EINVAL);

    CHECK_EQ_INT(m.n, 0);
    CHECK_EQ_INT(m.bad_nodes, 12);
    /* and a good node still goes in after all that */
    build_9_10(B, false);
    CHECK_EQ_INT(ipe_map__add_node(&m, B, &reader, node), 0);
    CHECK_EQ_INT(m.n, 2);
    ipe_map__free(&m);
}

TEST(no_ipe_layout_before_9_2)
{
    const struct rts_layout *L = layout("9.0.2");
    struct ipe_map m;
    ipe_map__init(&m);
    CHECK_EQ_INT(ipe_map__add_node(&m, L, &reader, BASE + 0x100), -ENOTSUP);
    CHECK_EQ_INT(m.bad_nodes, 0);
    ipe_map__free(&m);
}

TEST(span_lines)
{
    CHECK_EQ_INT(ipe__span_line("14:44-54"), 14);
    CHECK_EQ_INT(ipe__span_line("(17,1)-(26,8)"), 17);
    CHECK_EQ_INT(ipe__span_line(""), 0);
    CHECK_EQ_INT(ipe__span_line(NULL), 0);
}

UNIT_MAIN()
