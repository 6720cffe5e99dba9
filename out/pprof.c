/* pprof.c - the profile.proto format of github.com/google/pprof, gzipped:
 * what `go tool pprof` and pprof's web UI read, and many profile stores.
 *
 * The schema is small and fixed, so it is encoded here by hand: varints,
 * and nested messages built in scratch buffers and copied in behind their
 * length. zlib does the gzip.
 *
 * A pprof sample's stack is its code frames only (leaf first). What folded
 * shows as pseudo-frames becomes labels, the pprof way (-tags, -tagfocus,
 * -tagroot): the tag ("haskell", "unsafe-ffi", ...), the thread's id, name
 * and role, and its /proc state letter. Samples with the same stack and the
 * same labels are one pprof sample with their count. Sampling health goes
 * into the profile's comments (-comments).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "out/counter.h"
#include "out/text.h"
#include "out/writer.h"

/* Field numbers of profile.proto. */
enum {
    PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4,
    PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9,
    PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12,
    PROFILE_COMMENT = 13,
    VALUETYPE_TYPE = 1, VALUETYPE_UNIT = 2,
    SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,
    LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3,
    MAPPING_ID = 1, MAPPING_MEMORY_START = 2, MAPPING_MEMORY_LIMIT = 3, MAPPING_FILE_OFFSET = 4,
    MAPPING_FILENAME = 5, MAPPING_BUILD_ID = 6, MAPPING_HAS_FUNCTIONS = 7,
    MAPPING_HAS_FILENAMES = 8, MAPPING_HAS_LINE_NUMBERS = 9,
    LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4,
    LINE_FUNCTION_ID = 1, LINE_LINE = 2,
    FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4,
};

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

/* A growing byte buffer; an allocation failure is remembered, not
 * checked at every call. */
struct pb {
    uint8_t *b;
    size_t n, cap;
    bool oom;
};

static void pb__put(struct pb *b, const void *data, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n)
            cap *= 2;
        uint8_t *nb = realloc(b->b, cap);
        if (!nb) {
            b->oom = true;
            return;
        }
        b->b = nb;
        b->cap = cap;
    }
    memcpy(b->b + b->n, data, n);
    b->n += n;
}

static size_t varint_len(uint64_t v)
{
    size_t n = 1;
    for (; v >= 0x80; v >>= 7)
        n++;
    return n;
}

static void pb__varint(struct pb *b, uint64_t v)
{
    uint8_t buf[10];
    size_t n = 0;
    for (; v >= 0x80; v >>= 7)
        buf[n++] = (uint8_t)(v | 0x80);
    buf[n++] = (uint8_t)v;
    pb__put(b, buf, n);
}

static void pb__key(struct pb *b, int field, int wire)
{
    pb__varint(b, (uint64_t)field << 3 | (uint64_t)wire);
}

/* A scalar field; zero is proto3's default and is left out. (An int64 is
 * its two's complement as a varint.) */
static void pb__uint(struct pb *b, int field, uint64_t v)
{
    if (v == 0)
        return;
    pb__key(b, field, WIRE_VARINT);
    pb__varint(b, v);
}

static void pb__bytes(struct pb *b, int field, const void *data, size_t n)
{
    pb__key(b, field, WIRE_LEN);
    pb__varint(b, n);
    pb__put(b, data, n);
}

/* An embedded message, built in m (which is then emptied for reuse). */
static void pb__msg(struct pb *b, int field, struct pb *m)
{
    if (m->oom)
        b->oom = true;
    pb__bytes(b, field, m->b, m->n);
    m->n = 0;
}

/* A packed repeated scalar field, as proto3 writes them. */
static void pb__packed(struct pb *b, int field, const uint64_t *v, size_t n)
{
    size_t len = 0;
    if (n == 0)
        return;
    for (size_t i = 0; i < n; i++)
        len += varint_len(v[i]);
    pb__key(b, field, WIRE_LEN);
    pb__varint(b, len);
    for (size_t i = 0; i < n; i++)
        pb__varint(b, v[i]);
}

/* The string table: strings in the order first used, "" first. */
struct strings {
    struct counter c;
    const char **v; /* the counter's keys, by index */
    size_t n, cap;
    bool oom;
};

static uint64_t str__id(struct strings *s, const char *str)
{
    struct counter_entry *e = counter__add(&s->c, str ? str : "", 1, 0);
    if (!e) {
        s->oom = true;
        return 0;
    }
    if (e->count > 1)
        return e->aux;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        const char **v = realloc(s->v, cap * sizeof *v);
        if (!v) {
            s->oom = true;
            return 0;
        }
        s->v = v;
        s->cap = cap;
    }
    e->aux = s->n;
    s->v[s->n++] = e->key;
    return e->aux;
}

/* One pprof sample: visible samples with the same stack and labels, in a
 * fixed order (thread, tag, state, stack). */
static int cmp_group(const void *a, const void *b)
{
    const struct prof_sample *x = &((const struct out_group *)a)->s;
    const struct prof_sample *y = &((const struct out_group *)b)->s;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    if (x->tag != y->tag)
        return x->tag < y->tag ? -1 : 1;
    if (x->state != y->state)
        return x->state < y->state ? -1 : 1;
    return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static void value_type(struct pb *b, struct pb *m, int field, struct strings *s,
                       const char *type, const char *unit)
{
    pb__uint(m, VALUETYPE_TYPE, str__id(s, type));
    pb__uint(m, VALUETYPE_UNIT, str__id(s, unit));
    pb__msg(b, field, m);
}

static void label_str(struct pb *b, struct pb *m, struct strings *s, const char *key,
                      const char *value)
{
    pb__uint(m, LABEL_KEY, str__id(s, key));
    pb__uint(m, LABEL_STR, str__id(s, value));
    pb__msg(b, SAMPLE_LABEL, m);
}

/* Each sample stands for one sampling period of its thread. */
static uint64_t period_ns(const struct profile *p)
{
    return p->rate_hz > 0 ? (uint64_t)(1e9 / p->rate_hz + 0.5) : 0;
}

/* The samples; marks the frames they use. */
static int samples(const struct profile *p, const struct out_opts *o, struct strings *s,
                   struct pb *b, bool *used)
{
    struct out_group *g;
    uint32_t ids[MAX_FRAMES];
    uint64_t locs[MAX_FRAMES];
    size_t ng;
    struct pb m = {0}, l = {0};
    uint64_t period = period_ns(p);

    if (out__groups(p, o, OUT_BY_THREAD | OUT_BY_STATE, &g, &ng) < 0)
        return -1;
    qsort(g, ng, sizeof *g, cmp_group);
    for (size_t i = 0; i < ng; i++) {
        struct {
            uint32_t thread, stack;
            uint8_t tag;
            char state;
            uint64_t count;
        } cur = {g[i].s.thread, g[i].s.stack, g[i].s.tag, g[i].s.state, g[i].count};
        const struct prof_thread *t = &p->threads[cur.thread];
        struct prof_sample x = {.thread = cur.thread, .stack = cur.stack, .tag = cur.tag};
        int n = out__frames(p, &x, ids, MAX_FRAMES);
        for (int k = 0; k < n; k++) { /* leaf first */
            locs[k] = (uint64_t)ids[n - 1 - k] + 1;
            used[ids[k]] = true;
        }
        pb__packed(&m, SAMPLE_LOCATION_ID, locs, (size_t)n);
        uint64_t values[2] = {cur.count, cur.count * period};
        pb__packed(&m, SAMPLE_VALUE, values, 2);

        pb__uint(&l, LABEL_KEY, str__id(s, "tid"));
        pb__uint(&l, LABEL_NUM, (uint64_t)t->tid);
        pb__msg(&m, SAMPLE_LABEL, &l);
        label_str(&m, &l, s, "thread", t->comm);
        if (t->role[0])
            label_str(&m, &l, s, "role", t->role);
        if (cur.tag != TAG_NONE)
            label_str(&m, &l, s, "tag", sample_tag__str(cur.tag));
        if (cur.state) {
            char state[2] = {cur.state, 0};
            label_str(&m, &l, s, "state", state);
        }
        pb__msg(b, PROFILE_SAMPLE, &m);
    }
    free(g);
    free(m.b);
    free(l.b);
    return m.oom || l.oom ? -1 : 0;
}

/* Mappings, the executable first as pprof expects; each object's id is
 * its index + 1. */
static void mappings(const struct profile *p, struct strings *s, struct pb *b, const bool *used)
{
    struct pb m = {0};
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < p->nobjects; i++) {
            const struct prof_object *ob = &p->objects[i];
            bool files = false, lines = false, any = false;
            if (ob->main != (pass == 0))
                continue;
            for (size_t f = 0; f < p->nframes; f++)
                if (used[f] && p->frame_object && p->frame_object[f] == i + 1) {
                    any = true;
                    files |= p->syms[f].file != NULL;
                    lines |= p->syms[f].line > 0;
                }
            if (!any)
                continue;
            pb__uint(&m, MAPPING_ID, i + 1);
            pb__uint(&m, MAPPING_MEMORY_START, ob->start);
            pb__uint(&m, MAPPING_MEMORY_LIMIT, ob->limit);
            pb__uint(&m, MAPPING_FILE_OFFSET, ob->offset);
            /* (The path as the program mapped it: any bytes. A string of
             * profile.proto is UTF-8.) */
            char *path = strdup(ob->path);
            if (path)
                text__clean(path);
            else
                s->oom = true;
            pb__uint(&m, MAPPING_FILENAME, str__id(s, path));
            free(path);
            pb__uint(&m, MAPPING_BUILD_ID, str__id(s, ob->build_id));
            /* Named already: pprof is not to look for the files. */
            pb__uint(&m, MAPPING_HAS_FUNCTIONS, 1);
            pb__uint(&m, MAPPING_HAS_FILENAMES, files);
            pb__uint(&m, MAPPING_HAS_LINE_NUMBERS, lines);
            pb__msg(b, PROFILE_MAPPING, &m);
        }
    if (m.oom)
        b->oom = true;
    free(m.b);
}

/* A location per frame used (id: frame id + 1), a function per distinct
 * name, system name and file. */
static int locations(const struct profile *p, struct strings *s, struct pb *b, const bool *used)
{
    struct counter funcs;
    struct pb m = {0}, l = {0}, fn = {0};
    uint64_t nfuncs = 0;
    bool failed = false;
    if (counter__init(&funcs) < 0)
        return -1;
    for (size_t f = 0; f < p->nframes; f++) {
        if (!used[f])
            continue;
        const struct frame_sym *sym = p->syms ? &p->syms[f] : NULL;
        const char *name = profile__frame_name(p, (uint32_t)f);
        uint64_t name_id = str__id(s, name);
        uint64_t sys_id = str__id(s, sym && sym->symbol ? sym->symbol : name);
        uint64_t file_id = str__id(s, sym ? sym->file : NULL);
        char key[64];
        snprintf(key, sizeof key, "%" PRIu64 " %" PRIu64 " %" PRIu64, name_id, sys_id, file_id);
        struct counter_entry *e = counter__add(&funcs, key, 1, 0);
        if (!e) {
            failed = true;
            break;
        }
        if (e->count == 1) {
            e->aux = ++nfuncs;
            pb__uint(&fn, FUNCTION_ID, e->aux);
            pb__uint(&fn, FUNCTION_NAME, name_id);
            pb__uint(&fn, FUNCTION_SYSTEM_NAME, sys_id);
            pb__uint(&fn, FUNCTION_FILENAME, file_id);
            pb__msg(b, PROFILE_FUNCTION, &fn);
        }
        /* The address as sampled (a return address, not less one: pprof
         * adjusts for itself), or none for [catch], [invalid] and such. */
        uint64_t addr = 0;
        const struct raw_frame *r = &p->frames[f];
        if (symbolize__code_addr(r, &addr))
            addr = r->addr;
        pb__uint(&m, LOCATION_ID, f + 1);
        pb__uint(&m, LOCATION_MAPPING_ID, p->frame_object ? p->frame_object[f] : 0);
        pb__uint(&m, LOCATION_ADDRESS, addr);
        pb__uint(&l, LINE_FUNCTION_ID, e->aux);
        pb__uint(&l, LINE_LINE, sym && sym->line > 0 ? (uint64_t)sym->line : 0);
        pb__msg(&m, LOCATION_LINE, &l);
        pb__msg(b, PROFILE_LOCATION, &m);
    }
    int r = !failed && !m.oom && !l.oom && !fn.oom ? 0 : -1;
    counter__free(&funcs);
    free(m.b);
    free(l.b);
    free(fn.b);
    return r;
}

static void comments(const struct profile *p, const struct out_opts *o, struct strings *s,
                     struct pb *b)
{
    char buf[2048];
    uint64_t ids[32];
    size_t n = 0;

    ids[n++] = str__id(s, "hsspy " HSSPY_VERSION);
    snprintf(buf, sizeof buf, "target: pid %d: %s", (int)p->pid, p->cmdline);
    ids[n++] = str__id(s, buf);
    if (p->ghc_version[0]) {
        snprintf(buf, sizeof buf, "runtime: GHC %s", p->ghc_version);
        ids[n++] = str__id(s, buf);
    }
    out__health(p, o, buf, sizeof buf, "\n");
    for (char *line = strtok(buf, "\n"); line && n < 32; line = strtok(NULL, "\n"))
        ids[n++] = str__id(s, line);
    pb__packed(b, PROFILE_COMMENT, ids, n);
}

static int gzip_to(const uint8_t *data, size_t n, FILE *f)
{
    z_stream z;
    uint8_t out[65536];
    int r;

    if (n > UINT_MAX) {
        errno = EFBIG;
        return -1;
    }
    memset(&z, 0, sizeof z);
    /* windowBits 15 + 16: a gzip header and trailer, not zlib's. */
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
        Z_OK) {
        errno = ENOMEM;
        return -1;
    }
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)n;
    do {
        z.next_out = out;
        z.avail_out = sizeof out;
        r = deflate(&z, Z_FINISH);
        size_t have = sizeof out - z.avail_out;
        if (r == Z_STREAM_ERROR || fwrite(out, 1, have, f) != have)
            break;
    } while (r != Z_STREAM_END);
    deflateEnd(&z);
    return r == Z_STREAM_END ? 0 : -1;
}

static int write_pprof(const struct profile *p, const struct out_opts *o, FILE *f)
{
    struct pb b = {0}, m = {0};
    struct strings s = {0};
    bool *used = calloc(p->nframes + 1, sizeof *used);
    int r = -1;

    if (!used || counter__init(&s.c) < 0)
        goto out;
    str__id(&s, ""); /* string_table[0] must be "" */
    value_type(&b, &m, PROFILE_SAMPLE_TYPE, &s, "samples", "count");
    value_type(&b, &m, PROFILE_SAMPLE_TYPE, &s, "cpu", "nanoseconds");
    if (samples(p, o, &s, &b, used) < 0 || locations(p, &s, &b, used) < 0)
        goto out;
    mappings(p, &s, &b, used);
    pb__uint(&b, PROFILE_TIME_NANOS, p->start_wall_ns);
    pb__uint(&b, PROFILE_DURATION_NANOS, p->duration_ns);
    value_type(&b, &m, PROFILE_PERIOD_TYPE, &s, "cpu", "nanoseconds");
    pb__uint(&b, PROFILE_PERIOD, period_ns(p));
    comments(p, o, &s, &b);
    for (size_t i = 0; i < s.n; i++)
        pb__bytes(&b, PROFILE_STRING_TABLE, s.v[i], strlen(s.v[i]));
    if (b.oom || m.oom || s.oom) {
        errno = ENOMEM;
        goto out;
    }
    r = gzip_to(b.b, b.n, f);
out:
    free(used);
    free(b.b);
    free(m.b);
    free(s.v);
    counter__free(&s.c);
    return r;
}

const struct writer writer_pprof = {
    .name = "pprof",
    .help = "gzipped profile.proto for go tool pprof; tags and threads as labels",
    .text = false,
    .write = write_pprof,
};
