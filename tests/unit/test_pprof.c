/* The pprof writer on hand-built profiles: its output is gunzipped with
 * zlib and decoded here by an independent protobuf reader, then every
 * field a pprof reader uses is checked: sample types, period, samples with
 * their locations (leaf first), values and labels, locations, functions,
 * mappings, string table and comments. Varints of every length are
 * exercised (tids, addresses up to 2^64 - 1). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "out/profile.h"
#include "out/writer.h"
#include "tests/unit/unit.h"

/* ---- a protobuf reader, written from the wire format, not from pprof.c */

struct field {
    int num, wire;
    uint64_t v;        /* WIRE 0 */
    const uint8_t *p;  /* WIRE 2 */
    size_t n;
};

static bool varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 70 && *p < end; shift += 7) {
        uint8_t b = *(*p)++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return true;
    }
    return false;
}

/* The next field of a message; 0 at its end, -1 if malformed. */
static int next_field(const uint8_t **p, const uint8_t *end, struct field *f)
{
    uint64_t key;
    if (*p == end)
        return 0;
    if (!varint(p, end, &key))
        return -1;
    f->num = (int)(key >> 3);
    f->wire = (int)(key & 7);
    if (f->wire == 0)
        return varint(p, end, &f->v) ? 1 : -1;
    if (f->wire != 2 || !varint(p, end, &f->v) || f->v > (uint64_t)(end - *p))
        return -1;
    f->p = *p;
    f->n = (size_t)f->v;
    *p += f->n;
    return 1;
}

/* A repeated scalar field, packed or not: append its values. */
static void scalars(const struct field *f, uint64_t *out, int *n, int max)
{
    if (f->wire == 0) {
        if (*n < max)
            out[(*n)++] = f->v;
        return;
    }
    const uint8_t *p = f->p, *end = f->p + f->n;
    uint64_t v;
    while (p < end && varint(&p, end, &v))
        if (*n < max)
            out[(*n)++] = v;
}

struct dlabel { uint64_t key, str, num; };
struct dsample {
    uint64_t loc[16], val[4];
    int nloc, nval, nlabel;
    struct dlabel label[8];
};
struct dloc { uint64_t id, mapping, addr, func, line; int nline; };
struct dfunc { uint64_t id, name, sys, file; };
struct dmap { uint64_t id, start, limit, offset, file, build, has_fn, has_fl, has_ln; };
struct decoded {
    char *str[256];
    int nstr;
    uint64_t stype[4][2];
    int nstype;
    struct dsample s[32];
    int ns;
    struct dloc loc[32];
    int nloc;
    struct dfunc fn[32];
    int nfn;
    struct dmap map[8];
    int nmap;
    uint64_t time, duration, period, ptype[2], comment[32];
    int ncomment;
};

static bool decode_pair(const struct field *f, uint64_t out[2])
{
    const uint8_t *p = f->p, *end = f->p + f->n;
    struct field g;
    int r;
    out[0] = out[1] = 0;
    while ((r = next_field(&p, end, &g)) > 0)
        if (g.num == 1 || g.num == 2)
            out[g.num - 1] = g.v;
    return r == 0;
}

static bool decode(const uint8_t *buf, size_t len, struct decoded *d)
{
    const uint8_t *p = buf, *end = buf + len;
    struct field f, g, h;
    int r;
    memset(d, 0, sizeof *d);
    while ((r = next_field(&p, end, &f)) > 0) {
        const uint8_t *q = f.p, *qe = f.p + f.n;
        switch (f.num) {
        case 1:
            if (d->nstype < 4 && !decode_pair(&f, d->stype[d->nstype++]))
                return false;
            break;
        case 2: {
            struct dsample *s = &d->s[d->ns < 31 ? d->ns++ : 31];
            while (next_field(&q, qe, &g) > 0) {
                if (g.num == 1)
                    scalars(&g, s->loc, &s->nloc, 16);
                else if (g.num == 2)
                    scalars(&g, s->val, &s->nval, 4);
                else if (g.num == 3 && s->nlabel < 8) {
                    struct dlabel *l = &s->label[s->nlabel++];
                    const uint8_t *lp = g.p, *le = g.p + g.n;
                    while (next_field(&lp, le, &h) > 0)
                        if (h.num == 1)
                            l->key = h.v;
                        else if (h.num == 2)
                            l->str = h.v;
                        else if (h.num == 3)
                            l->num = h.v;
                }
            }
            break;
        }
        case 3: {
            struct dmap *m = &d->map[d->nmap < 7 ? d->nmap++ : 7];
            uint64_t *v[] = {NULL, &m->id, &m->start, &m->limit, &m->offset, &m->file,
                             &m->build, &m->has_fn, &m->has_fl, &m->has_ln};
            while (next_field(&q, qe, &g) > 0)
                if (g.num >= 1 && g.num <= 9 && g.wire == 0)
                    *v[g.num] = g.v;
            break;
        }
        case 4: {
            struct dloc *l = &d->loc[d->nloc < 31 ? d->nloc++ : 31];
            while (next_field(&q, qe, &g) > 0) {
                if (g.num == 1)
                    l->id = g.v;
                else if (g.num == 2)
                    l->mapping = g.v;
                else if (g.num == 3)
                    l->addr = g.v;
                else if (g.num == 4) {
                    uint64_t pair[2];
                    if (!decode_pair(&g, pair))
                        return false;
                    l->func = pair[0];
                    l->line = pair[1];
                    l->nline++;
                }
            }
            break;
        }
        case 5: {
            struct dfunc *fn = &d->fn[d->nfn < 31 ? d->nfn++ : 31];
            while (next_field(&q, qe, &g) > 0)
                if (g.num == 1)
                    fn->id = g.v;
                else if (g.num == 2)
                    fn->name = g.v;
                else if (g.num == 3)
                    fn->sys = g.v;
                else if (g.num == 4)
                    fn->file = g.v;
            break;
        }
        case 6:
            if (d->nstr < 256)
                d->str[d->nstr++] = strndup((const char *)f.p, f.n);
            break;
        case 9: d->time = f.v; break;
        case 10: d->duration = f.v; break;
        case 11:
            if (!decode_pair(&f, d->ptype))
                return false;
            break;
        case 12: d->period = f.v; break;
        case 13: scalars(&f, d->comment, &d->ncomment, 32); break;
        }
    }
    return r == 0;
}

static void decoded_free(struct decoded *d)
{
    for (int i = 0; i < d->nstr; i++)
        free(d->str[i]);
}

static const char *S(const struct decoded *d, uint64_t i)
{
    return i < (uint64_t)d->nstr ? d->str[i] : "(out of the string table)";
}

static const struct dloc *loc_by_id(const struct decoded *d, uint64_t id)
{
    for (int i = 0; i < d->nloc; i++)
        if (d->loc[i].id == id)
            return &d->loc[i];
    return NULL;
}

static const struct dfunc *fn_by_id(const struct decoded *d, uint64_t id)
{
    for (int i = 0; i < d->nfn; i++)
        if (d->fn[i].id == id)
            return &d->fn[i];
    return NULL;
}

/* A sample's stack as "leaf;...;root" function names. */
static void stack_of(const struct decoded *d, const struct dsample *s, char *out, size_t size)
{
    size_t pos = 0;
    out[0] = 0;
    for (int i = 0; i < s->nloc; i++) {
        const struct dloc *l = loc_by_id(d, s->loc[i]);
        const struct dfunc *f = l ? fn_by_id(d, l->func) : NULL;
        pos += (size_t)snprintf(out + pos, size - pos, "%s%s", i ? ";" : "",
                                f ? S(d, f->name) : "?");
    }
}

/* The value of a string label, or of a numeric one in decimal. */
static const char *label(const struct decoded *d, const struct dsample *s, const char *key,
                         char *buf)
{
    for (int i = 0; i < s->nlabel; i++)
        if (strcmp(S(d, s->label[i].key), key) == 0) {
            if (s->label[i].str)
                return S(d, s->label[i].str);
            sprintf(buf, "%llu", (unsigned long long)s->label[i].num);
            return buf;
        }
    return "";
}

/* The sample whose labels are exactly tid and tag. */
static const struct dsample *find_sample(const struct decoded *d, const char *tid,
                                         const char *tag)
{
    char b1[32], b2[32];
    for (int i = 0; i < d->ns; i++)
        if (strcmp(label(d, &d->s[i], "tid", b1), tid) == 0 &&
            strcmp(label(d, &d->s[i], "tag", b2), tag) == 0)
            return &d->s[i];
    return NULL;
}

static bool has_comment(const struct decoded *d, const char *text)
{
    for (int i = 0; i < d->ncomment; i++)
        if (strstr(S(d, d->comment[i]), text))
            return true;
    return false;
}

/* ---- the profile */

struct fr { uint64_t addr; uint32_t kind; const char *name, *symbol, *file; int line; int lang; int obj; };

/* Frames by index; stacks refer to them innermost first. */
static const struct fr FRAMES[] = {
    /* 0 */ {0x7fffffffe123, FK_PC, "leaf", "leaf", "x.c", 12, LANG_C, 2},
    /* 1 */ {0x401000, FK_RET, "middle", "middle", "x.c", 30, LANG_C, 1},
    /* 2 */ {0x401100, FK_RET, "main", "main", NULL, 0, LANG_C, 1},
    /* 3 */ {0x402000, FK_HS_RET, "Main.go", "Main_go_info", "M.hs", 127, LANG_HASKELL, 1},
    /* 4 */ {0x402080, FK_HS_RET, "Main.go", "Main_go_info", "M.hs", 128, LANG_HASKELL, 1},
    /* 5 */ {0, FK_HS_CATCH, "[catch]", NULL, NULL, 0, LANG_NONE, 0},
    /* 6 */ {0xffffffffffffffffull, FK_RET, "high", NULL, NULL, 0, LANG_C, 0},
    /* 7 */ {0x7fffffffe200, FK_PC, "leaf", "leaf", "x.c", 14, LANG_C, 2},
};

static int64_t stack(struct profile *p, const int *idx, int n)
{
    struct raw_frame f[8];
    for (int i = 0; i < n; i++)
        f[i] = (struct raw_frame){FRAMES[idx[i]].addr, FRAMES[idx[i]].kind, 0};
    return profile__stack(p, f, n);
}

static void add(struct profile *p, int thread, int64_t st, int tag, char state, bool idle,
                int times)
{
    for (int k = 0; k < times; k++)
        profile__add(p, &(struct prof_sample){.thread = (uint32_t)thread, .stack = (uint32_t)st,
                                              .tag = (uint8_t)tag, .state = state,
                                              .flags = idle ? SAMPLE_IDLE : 0, .cap = -1});
}

/* Name the interned frames as profile__symbolize would, with objects. */
static void symbolize(struct profile *p)
{
    p->syms = calloc(p->nframes, sizeof *p->syms);
    p->frame_object = calloc(p->nframes, sizeof *p->frame_object);
    p->objects = calloc(2, sizeof *p->objects);
    p->objects[0] = (struct prof_object){strdup("/bin/prog"), 0x400000, 0x500000, 0, "abcd", true};
    p->objects[1] = (struct prof_object){strdup("/lib/libx.so"), 0x7fffffff0000,
                                         0xffffffffffff0000ull, 0x3000, "", false};
    p->nobjects = 2;
    for (size_t i = 0; i < p->nframes; i++)
        for (size_t k = 0; k < sizeof FRAMES / sizeof *FRAMES; k++)
            if (FRAMES[k].addr == p->frames[i].addr && FRAMES[k].kind == p->frames[i].kind) {
                const struct fr *f = &FRAMES[k];
                p->syms[i] = (struct frame_sym){
                    .name = strdup(f->name),
                    .symbol = f->symbol ? strdup(f->symbol) : NULL,
                    .file = f->file ? strdup(f->file) : NULL,
                    .line = f->line,
                    .lang = (unsigned char)f->lang,
                };
                p->frame_object[i] = (uint32_t)f->obj;
            }
}

static void build(struct profile *p)
{
    profile__init(p);
    p->pid = 100;
    strcpy(p->cmdline, "./prog 1");
    strcpy(p->ghc_version, "9.0.2");
    p->rate_hz = 100;
    p->start_wall_ns = 1700000000123456789ull;
    p->duration_ns = 2500000000ull;
    p->ticks = 10;
    p->missed_ticks = 2;
    p->errors[WE_C_UNWIND] = 1;
    hist__add(&p->pause, 4000);
    hist__add(&p->pause, 8000);
    int t0 = profile__thread(p, 100, "prog");
    int t1 = profile__thread(p, 70000, "prog:w");
    strcpy(p->threads[t0].role, "capability 0");
    int64_t c = stack(p, (int[]){0, 1, 2}, 3);         /* leaf <- middle <- main */
    int64_t hs = stack(p, (int[]){3, 4, 5}, 3);        /* Main.go twice, under [catch] */
    int64_t hi = stack(p, (int[]){6, 2}, 2);
    int64_t c2 = stack(p, (int[]){7, 1, 2}, 3);        /* leaf elsewhere in it */
    add(p, t0, c, TAG_UNSAFE_FFI, 'R', false, 3);
    add(p, t0, hs, TAG_HASKELL, 'R', false, 2);
    add(p, t1, hi, TAG_NONE, 'S', false, 1);
    add(p, t1, c2, TAG_GC, 'R', false, 1);
    add(p, t1, c, TAG_IDLE, 'S', true, 4);
    symbolize(p);
}

static bool render(const struct profile *p, struct out_opts o, struct decoded *d)
{
    char *gz = NULL;
    size_t gzlen = 0;
    FILE *f = open_memstream(&gz, &gzlen);
    int r = writer__find("pprof")->write(p, &o, f);
    fclose(f);
    if (r != 0 || gzlen < 18 || (uint8_t)gz[0] != 0x1f || (uint8_t)gz[1] != 0x8b) {
        free(gz);
        return false; /* not gzip */
    }
    size_t cap = 1 << 20;
    uint8_t *raw = malloc(cap);
    z_stream z = {0};
    inflateInit2(&z, 15 + 16); /* gzip only */
    z.next_in = (Bytef *)gz;
    z.avail_in = (uInt)gzlen;
    z.next_out = raw;
    z.avail_out = (uInt)cap;
    r = inflate(&z, Z_FINISH);
    size_t rawlen = cap - z.avail_out;
    bool whole = r == Z_STREAM_END && z.avail_in == 0;
    inflateEnd(&z);
    bool ok = whole && decode(raw, rawlen, d);
    free(gz);
    free(raw);
    return ok;
}

TEST(pprof_header_fields)
{
    struct profile p;
    struct decoded d;
    build(&p);
    CHECK(render(&p, (struct out_opts){false, false, OUT_SORT_ACC}, &d));
    CHECK(d.nstr > 0);
    CHECK_EQ_STR(d.str[0], "");
    CHECK_EQ_INT(d.nstype, 2);
    CHECK_EQ_STR(S(&d, d.stype[0][0]), "samples");
    CHECK_EQ_STR(S(&d, d.stype[0][1]), "count");
    CHECK_EQ_STR(S(&d, d.stype[1][0]), "cpu");
    CHECK_EQ_STR(S(&d, d.stype[1][1]), "nanoseconds");
    CHECK_EQ_STR(S(&d, d.ptype[0]), "cpu");
    CHECK_EQ_STR(S(&d, d.ptype[1]), "nanoseconds");
    CHECK_EQ_INT(d.period, 10000000);
    CHECK(d.time == 1700000000123456789ull);
    CHECK_EQ_INT(d.duration, 2500000000ll);
    CHECK(has_comment(&d, "target: pid 100: ./prog 1"));
    CHECK(has_comment(&d, "runtime: GHC 9.0.2"));
    CHECK(has_comment(&d, "rate: 100 Hz asked, 4.0 Hz achieved"));
    CHECK(has_comment(&d, "ticks: 10, 2 missed"));
    CHECK(has_comment(&d, "pause per stopped thread: mean 6.0 us, max 8.0 us"));
    CHECK(has_comment(&d, "errors: 1 (C unwind failed: 1)"));
    CHECK(has_comment(&d, "duration: 2.50 s"));
    CHECK(has_comment(&d, "samples: 7 thread samples (idle"));
    decoded_free(&d);
    profile__free(&p);
}

TEST(pprof_samples_and_labels)
{
    struct profile p;
    struct decoded d;
    char st[256], b[32];
    build(&p);
    CHECK(render(&p, (struct out_opts){false, false, OUT_SORT_ACC}, &d));
    /* Four stacks with distinct labels; the idle one left out. */
    CHECK_EQ_INT(d.ns, 4);

    const struct dsample *s = find_sample(&d, "100", "unsafe-ffi");
    CHECK(s);
    stack_of(&d, s, st, sizeof st);
    CHECK_EQ_STR(st, "leaf;middle;main"); /* leaf first */
    CHECK_EQ_INT(s->nval, 2);
    CHECK_EQ_INT(s->val[0], 3);
    CHECK_EQ_INT(s->val[1], 30000000);
    CHECK_EQ_STR(label(&d, s, "thread", b), "prog");
    CHECK_EQ_STR(label(&d, s, "role", b), "capability 0");
    CHECK_EQ_STR(label(&d, s, "state", b), "R");

    /* The tag is a label, not a frame; the running code and its pushed
     * continuation in the same function are one frame, as in folded. */
    s = find_sample(&d, "100", "haskell");
    CHECK(s);
    stack_of(&d, s, st, sizeof st);
    CHECK_EQ_STR(st, "Main.go;[catch]");
    CHECK_EQ_INT(s->val[0], 2);

    /* A tid of three varint bytes; no tag, no role: no such labels. */
    s = find_sample(&d, "70000", "");
    CHECK(s);
    stack_of(&d, s, st, sizeof st);
    CHECK_EQ_STR(st, "high;main");
    CHECK_EQ_STR(label(&d, s, "thread", b), "prog:w");
    CHECK_EQ_STR(label(&d, s, "state", b), "S");
    CHECK_EQ_INT(s->nlabel, 3); /* tid, thread, state */
    decoded_free(&d);

    /* --idle keeps the idle thread's samples; --threads adds no frame. */
    CHECK(render(&p, (struct out_opts){true, true, OUT_SORT_ACC}, &d));
    CHECK_EQ_INT(d.ns, 5);
    s = find_sample(&d, "70000", "idle");
    CHECK(s);
    stack_of(&d, s, st, sizeof st);
    CHECK_EQ_STR(st, "leaf;middle;main");
    CHECK_EQ_INT(s->val[0], 4);
    decoded_free(&d);
    profile__free(&p);
}

TEST(pprof_locations_functions_mappings)
{
    struct profile p;
    struct decoded d;
    build(&p);
    CHECK(render(&p, (struct out_opts){false, false, OUT_SORT_ACC}, &d));
    const struct dsample *s = find_sample(&d, "100", "unsafe-ffi");
    CHECK(s && s->nloc == 3);
    const struct dloc *leaf = loc_by_id(&d, s->loc[0]);
    CHECK(leaf);
    CHECK(leaf->addr == 0x7fffffffe123ull);
    CHECK_EQ_INT(leaf->line, 12);
    CHECK_EQ_INT(leaf->nline, 1);
    const struct dfunc *f = fn_by_id(&d, leaf->func);
    CHECK(f);
    CHECK_EQ_STR(S(&d, f->name), "leaf");
    CHECK_EQ_STR(S(&d, f->file), "x.c");

    /* Its mapping: the library, with its range and offset. */
    CHECK(leaf->mapping != 0);
    const struct dmap *m = NULL;
    for (int i = 0; i < d.nmap; i++)
        if (d.map[i].id == leaf->mapping)
            m = &d.map[i];
    CHECK(m);
    CHECK_EQ_STR(S(&d, m->file), "/lib/libx.so");
    CHECK(m->start == 0x7fffffff0000ull);
    CHECK(m->limit == 0xffffffffffff0000ull); /* a ten-byte varint */
    CHECK_EQ_INT(m->offset, 0x3000);
    CHECK_EQ_INT(m->has_fn, 1);
    CHECK_EQ_INT(m->has_fl, 1);
    CHECK_EQ_INT(m->has_ln, 1);
    /* The executable is the first mapping, as pprof expects. */
    CHECK(d.nmap == 2);
    CHECK_EQ_STR(S(&d, d.map[0].file), "/bin/prog");
    CHECK_EQ_STR(S(&d, d.map[0].build), "abcd");

    /* A frame outside any object: its address in full, no mapping. */
    s = find_sample(&d, "70000", "");
    const struct dloc *high = s ? loc_by_id(&d, s->loc[0]) : NULL;
    CHECK(high);
    CHECK(high->addr == 0xffffffffffffffffull);
    CHECK_EQ_INT(high->mapping, 0);
    f = fn_by_id(&d, high->func);
    CHECK(f);
    CHECK_EQ_STR(S(&d, f->sys), "high"); /* no symbol: its name */

    /* [catch] has no address; Main.go keeps its ELF symbol. */
    s = find_sample(&d, "100", "haskell");
    CHECK(s && s->nloc == 2);
    const struct dloc *hs = loc_by_id(&d, s->loc[0]), *catch = loc_by_id(&d, s->loc[1]);
    CHECK(hs && catch);
    CHECK_EQ_INT(catch->addr, 0);
    CHECK_EQ_INT(catch->mapping, 0);
    CHECK_EQ_INT(hs->line, 128); /* the outer of the two frames, a two-byte varint */
    f = fn_by_id(&d, hs->func);
    CHECK(f);
    CHECK_EQ_STR(S(&d, f->sys), "Main_go_info");

    /* The other frame in leaf: its own location and line, the same function. */
    s = find_sample(&d, "70000", "gc");
    const struct dloc *leaf2 = s ? loc_by_id(&d, s->loc[0]) : NULL;
    CHECK(leaf2);
    CHECK(leaf2->id != leaf->id);
    CHECK_EQ_INT(leaf2->line, 14);
    CHECK_EQ_INT(leaf2->func, leaf->func);

    /* Every location used is there, ids unique and nonzero; functions are
     * one per name, system name and file: "leaf" once. */
    for (int i = 0; i < d.nloc; i++) {
        CHECK(d.loc[i].id != 0);
        for (int k = 0; k < i; k++)
            CHECK(d.loc[k].id != d.loc[i].id);
    }
    int leaves = 0;
    for (int i = 0; i < d.nfn; i++) {
        CHECK(d.fn[i].id != 0);
        leaves += strcmp(S(&d, d.fn[i].name), "leaf") == 0;
    }
    CHECK_EQ_INT(leaves, 1);
    for (int i = 0; i < d.ns; i++)
        for (int k = 0; k < d.s[i].nloc; k++)
            CHECK(loc_by_id(&d, d.s[i].loc[k]));
    decoded_free(&d);
    profile__free(&p);
}

TEST(pprof_empty_profile)
{
    struct profile p;
    struct decoded d;
    profile__init(&p);
    p.rate_hz = 99;
    CHECK(render(&p, (struct out_opts){false, false, OUT_SORT_ACC}, &d));
    CHECK_EQ_INT(d.ns, 0);
    CHECK_EQ_INT(d.nstype, 2);
    CHECK_EQ_INT(d.period, 10101010);
    decoded_free(&d);
    profile__free(&p);
}

UNIT_MAIN()
