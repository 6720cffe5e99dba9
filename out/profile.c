/* profile.c - interning of frames and stacks, samples and threads. */
#include "out/profile.h"
#include "out/text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EMPTY UINT32_MAX

int profile__grow(void **v, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 64;
    while (nc < need)
        nc *= 2;
    char *nv = realloc(*v, nc * elem);
    if (!nv)
        return -ENOMEM;
    memset(nv + *cap * elem, 0, (nc - *cap) * elem);
    *v = nv;
    *cap = nc;
    return 0;
}

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

static uint32_t *new_table(size_t size)
{
    uint32_t *t = malloc(size * sizeof *t);
    if (t)
        memset(t, 0xff, size * sizeof *t);
    return t;
}

int profile__init(struct profile *p)
{
    memset(p, 0, sizeof *p);
    p->frame_hash_size = 4096;
    p->stack_hash_size = 4096;
    p->frame_hash = new_table(p->frame_hash_size);
    p->stack_hash = new_table(p->stack_hash_size);
    if (!p->frame_hash || !p->stack_hash) {
        profile__free(p);
        return -ENOMEM;
    }
    return 0;
}

void profile__free(struct profile *p)
{
    free(p->green);
    for (size_t i = 0; i < p->nmodules; i++) {
        free(p->modules[i].path);
        free(p->modules[i].blob);
    }
    free(p->modules);
    if (p->syms)
        for (size_t i = 0; i < p->nframes; i++)
            frame_sym__free(&p->syms[i]);
    free(p->syms);
    for (size_t i = 0; i < p->nsaved; i++)
        frame_sym__free(&p->saved[i]);
    free(p->saved);
    for (size_t i = 0; i < p->nobjects; i++)
        free(p->objects[i].path);
    free(p->objects);
    free(p->frame_object);
    free(p->threads);
    for (size_t i = 0; i < p->nblocks; i++)
        free(p->blocks[i].b);
    free(p->blocks);
    free(p->s_last);
    free(p->frames);
    free(p->frame_hash);
    free(p->ids);
    free(p->stacks);
    free(p->stack_hash);
    memset(p, 0, sizeof *p);
}

int profile__thread(struct profile *p, pid_t tid, const char *comm)
{
    for (size_t i = p->nthreads; i-- > 0;)
        if (p->threads[i].tid == tid)
            return (int)i;
    if (profile__grow((void **)&p->threads, &p->cap_threads, p->nthreads + 1, sizeof *p->threads) < 0)
        return -1;
    struct prof_thread *t = &p->threads[p->nthreads];
    memset(t, 0, sizeof *t);
    t->tid = tid;
    strncpy(t->comm, comm ? comm : "?", sizeof t->comm - 1);
    text__clean(t->comm);
    return (int)p->nthreads++;
}

static uint64_t frame_hash(const struct raw_frame *f)
{
    return mix(f->addr * 31 + f->kind * 7 + f->aux);
}

static int rehash_frames(struct profile *p)
{
    size_t size = p->frame_hash_size * 2;
    uint32_t *t = new_table(size);
    if (!t)
        return -ENOMEM;
    for (uint32_t i = 0; i < p->nframes; i++) {
        size_t h = frame_hash(&p->frames[i]) & (size - 1);
        while (t[h] != EMPTY)
            h = (h + 1) & (size - 1);
        t[h] = i;
    }
    free(p->frame_hash);
    p->frame_hash = t;
    p->frame_hash_size = size;
    return 0;
}

/* Once naming has begun, every frame has a slot for its name (zero, shown
 * as "[unknown]", until profile__symbolize_new names it), so a live view
 * can intern frames and read names in any order. */
static int room_for_names(struct profile *p, size_t n)
{
    if (n <= p->cap_syms)
        return 0;
    struct frame_sym *v = realloc(p->syms, n * sizeof *v);
    if (!v)
        return -ENOMEM;
    memset(v + p->cap_syms, 0, (n - p->cap_syms) * sizeof *v);
    p->syms = v;
    uint32_t *o = realloc(p->frame_object, n * sizeof *o);
    if (!o)
        return -ENOMEM;
    memset(o + p->cap_syms, 0, (n - p->cap_syms) * sizeof *o);
    p->frame_object = o;
    p->cap_syms = n;
    return 0;
}

static int64_t intern_frame(struct profile *p, const struct raw_frame *f)
{
    size_t mask = p->frame_hash_size - 1;
    size_t h = frame_hash(f) & mask;
    for (; p->frame_hash[h] != EMPTY; h = (h + 1) & mask) {
        const struct raw_frame *g = &p->frames[p->frame_hash[h]];
        if (g->addr == f->addr && g->kind == f->kind && g->aux == f->aux)
            return p->frame_hash[h];
    }
    if (profile__grow((void **)&p->frames, &p->cap_frames, p->nframes + 1, sizeof *p->frames) < 0)
        return -1;
    if (p->syms && room_for_names(p, p->cap_frames) < 0)
        return -1;
    p->frames[p->nframes] = *f;
    p->frame_hash[h] = (uint32_t)p->nframes;
    int64_t id = (int64_t)p->nframes++;
    if (p->nframes * 2 > p->frame_hash_size && rehash_frames(p) < 0)
        return -1;
    return id;
}

static uint64_t ids_hash(const uint32_t *ids, uint32_t n)
{
    uint64_t h = n;
    for (uint32_t i = 0; i < n; i++)
        h = mix(h ^ ids[i]) + i;
    return h;
}

static int rehash_stacks(struct profile *p)
{
    size_t size = p->stack_hash_size * 2;
    uint32_t *t = new_table(size);
    if (!t)
        return -ENOMEM;
    for (uint32_t i = 0; i < p->nstacks; i++) {
        size_t h = ids_hash(p->ids + p->stacks[i].off, p->stacks[i].len) & (size - 1);
        while (t[h] != EMPTY)
            h = (h + 1) & (size - 1);
        t[h] = i;
    }
    free(p->stack_hash);
    p->stack_hash = t;
    p->stack_hash_size = size;
    return 0;
}

int64_t profile__stack(struct profile *p, const struct raw_frame *f, int n)
{
    if (n < 0)
        n = 0;
    /* Frame ids are appended tentatively; dropped again if the stack exists. */
    if (profile__grow((void **)&p->ids, &p->cap_ids, p->nids + (size_t)n, sizeof *p->ids) < 0)
        return -1;
    uint32_t *ids = p->ids + p->nids;
    for (int i = 0; i < n; i++) {
        int64_t id = intern_frame(p, &f[i]);
        if (id < 0)
            return -1;
        ids[i] = (uint32_t)id;
    }
    size_t mask = p->stack_hash_size - 1;
    size_t h = ids_hash(ids, (uint32_t)n) & mask;
    for (; p->stack_hash[h] != EMPTY; h = (h + 1) & mask) {
        const struct prof_stack *s = &p->stacks[p->stack_hash[h]];
        if (s->len == (uint32_t)n && memcmp(p->ids + s->off, ids, (size_t)n * sizeof *ids) == 0)
            return p->stack_hash[h];
    }
    if (profile__grow((void **)&p->stacks, &p->cap_stacks, p->nstacks + 1, sizeof *p->stacks) < 0)
        return -1;
    p->stacks[p->nstacks] = (struct prof_stack){(uint32_t)p->nids, (uint32_t)n};
    p->nids += (size_t)n;
    p->stack_hash[h] = (uint32_t)p->nstacks;
    int64_t id = (int64_t)p->nstacks++;
    if (p->nstacks * 2 > p->stack_hash_size && rehash_stacks(p) < 0)
        return -1;
    return id;
}

/* ------------------------------------------------------------------------
 * The sample stream. Each sample is:
 *   a header byte: bit 0, same stack as its thread's previous sample; bit 1,
 *     same tag, state, flags, role and capability; bits 2-7, the thread
 *     index, or 63 and the index minus 63 as a varint after it;
 *   its time minus the previous sample's, zigzag varint (samples of one
 *     tick come a few microseconds apart, or at the very same time);
 *   the stack id, varint, unless bit 0;
 *   tag, state, flags, role (a byte each) and the capability (zigzag
 *     varint), unless bit 1.
 * A thread's "previous sample" starts as all zeroes.
 * ---------------------------------------------------------------------- */

#define SAME_STACK 1
#define SAME_ATTRS 2
#define THREAD_ESC 63

static size_t put_varint(uint8_t *b, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        b[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    b[n++] = (uint8_t)v;
    return n;
}

static uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static int64_t unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

static bool same_attrs(const struct prof_sample *a, const struct prof_sample *b)
{
    return a->tag == b->tag && a->state == b->state && a->flags == b->flags &&
           a->role == b->role && a->cap == b->cap;
}

int profile__add(struct profile *p, const struct prof_sample *s)
{
    uint8_t b[48];
    size_t n = 1;
    if (s->thread >= p->nthreads)
        return -EINVAL;
    /* A thread's previous sample starts as zeroes. */
    if (profile__grow((void **)&p->s_last, &p->cap_last, p->nthreads, sizeof *p->s_last) < 0)
        return -ENOMEM;
    struct prof_sample *last = &p->s_last[s->thread];
    uint8_t hdr = (uint8_t)((s->thread < THREAD_ESC ? s->thread : THREAD_ESC) << 2);
    if (s->stack == last->stack)
        hdr |= SAME_STACK;
    if (same_attrs(s, last))
        hdr |= SAME_ATTRS;
    b[0] = hdr;
    if (s->thread >= THREAD_ESC)
        n += put_varint(b + n, s->thread - THREAD_ESC);
    n += put_varint(b + n, zigzag((int64_t)(s->t_ns - p->s_last_t)));
    if (!(hdr & SAME_STACK))
        n += put_varint(b + n, s->stack);
    if (!(hdr & SAME_ATTRS)) {
        b[n++] = s->tag;
        b[n++] = (uint8_t)s->state;
        b[n++] = s->flags;
        b[n++] = s->role;
        n += put_varint(b + n, zigzag(s->cap));
    }
    struct prof_block *blk = p->nblocks ? &p->blocks[p->nblocks - 1] : NULL;
    if (!blk || blk->len + n > blk->cap) {
        /* A sample never spans two blocks. Blocks grow from 64 KB to 1 MB. */
        if (profile__grow((void **)&p->blocks, &p->cap_blocks, p->nblocks + 1, sizeof *p->blocks) < 0)
            return -ENOMEM;
        size_t cap = p->nblocks < 4 ? (size_t)64 << (10 + 2 * p->nblocks) : (size_t)1 << 20;
        if (cap > (size_t)1 << 20)
            cap = (size_t)1 << 20;
        uint8_t *nb = malloc(cap);
        if (!nb)
            return -ENOMEM;
        blk = &p->blocks[p->nblocks++];
        *blk = (struct prof_block){nb, 0, cap};
    }
    memcpy(blk->b + blk->len, b, n);
    blk->len += n;
    p->slen += n;
    p->s_last_t = s->t_ns;
    *last = *s;
    p->nsamples++;
    struct prof_thread *t = &p->threads[s->thread];
    t->samples++;
    t->oncpu += profile__on_cpu(s);
    if (s->tag < TAG__COUNT)
        t->tags[s->tag]++;
    return 0;
}

void profile__drop_samples(struct profile *p)
{
    for (size_t i = 0; i < p->nblocks; i++)
        free(p->blocks[i].b);
    p->nblocks = 0;
    p->nsamples = 0;
    p->slen = 0;
    /* The next sample of each thread is encoded against zeroes, as an
     * iterator starts. */
    p->s_last_t = 0;
    if (p->s_last)
        memset(p->s_last, 0, p->cap_last * sizeof *p->s_last);
}

int profile__iter(const struct profile *p, struct prof_iter *it)
{
    memset(it, 0, sizeof *it);
    it->p = p;
    it->last = calloc(p->nthreads ? p->nthreads : 1, sizeof *it->last);
    return it->last ? 0 : -ENOMEM;
}

void profile__iter_free(struct prof_iter *it)
{
    free(it->last);
    it->last = NULL;
}

/* A varint of the stream at *pos (the stream is ours: well-formed). */
static uint64_t get_varint(const uint8_t *b, size_t *pos)
{
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
        uint8_t c = b[(*pos)++];
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80) || shift >= 63)
            return v;
    }
}

bool profile__next(struct prof_iter *it, struct prof_sample *s)
{
    const struct profile *p = it->p;
    if (it->i >= p->nsamples)
        return false;
    while (it->pos >= p->blocks[it->block].len) {
        it->block++;
        it->pos = 0;
    }
    const uint8_t *b = p->blocks[it->block].b;
    uint8_t hdr = b[it->pos++];
    uint32_t thread = hdr >> 2;
    if (thread == THREAD_ESC)
        thread += (uint32_t)get_varint(b, &it->pos);
    struct prof_sample *last = &it->last[thread];
    *s = *last;
    s->thread = thread;
    it->t_ns += (uint64_t)unzigzag(get_varint(b, &it->pos));
    s->t_ns = it->t_ns;
    if (!(hdr & SAME_STACK))
        s->stack = (uint32_t)get_varint(b, &it->pos);
    if (!(hdr & SAME_ATTRS)) {
        s->tag = b[it->pos++];
        s->state = (char)b[it->pos++];
        s->flags = b[it->pos++];
        s->role = b[it->pos++];
        s->cap = (int16_t)unzigzag(get_varint(b, &it->pos));
    }
    *last = *s;
    it->i++;
    return true;
}

/* The object index + 1 of the object at path from lo to hi, added if it is
 * new (then *made is it, for the caller to fill in; else NULL); -ENOMEM.
 * (Matched by path and start, not by pointer: a live view re-reads the
 * maps, and a module unmapped since may have left its memory to
 * another.) */
static int64_t object_at(struct profile *p, const char *path, uint64_t lo, uint64_t hi,
                         struct prof_object **made)
{
    *made = NULL;
    for (size_t i = 0; i < p->nobjects; i++)
        if (p->objects[i].start == lo && strcmp(p->objects[i].path, path) == 0)
            return (int64_t)i + 1;
    if (profile__grow((void **)&p->objects, &p->cap_objects, p->nobjects + 1, sizeof *p->objects) < 0)
        return -ENOMEM;
    struct prof_object *o = &p->objects[p->nobjects];
    memset(o, 0, sizeof *o);
    if (!(o->path = strdup(path)))
        return -ENOMEM;
    o->start = lo;
    o->limit = hi;
    *made = o;
    return (int64_t)++p->nobjects;
}

/* The object index + 1 of a frame's module, adding the module on first
 * sight; 0 if the frame is in none. */
static int64_t frame_object(struct profile *p, struct modset *ms, const struct raw_frame *f)
{
    uint64_t addr;
    const struct module *m;
    struct prof_object *o;
    if (!symbolize__code_addr(f, &addr) || !(m = modset__find(ms, addr)))
        return 0;
    int64_t i = object_at(p, m->path, m->lo, m->hi, &o);
    if (o) {
        o->offset = m->lo_offset;
        module__build_id_hex(m, o->build_id, sizeof o->build_id);
        o->main = m == ms->main;
    }
    return i;
}

/* Does this frame point at code no module known yet covers? */
static bool unmapped(const struct modset *ms, const struct raw_frame *f)
{
    if (f->kind == FK_INVALID || f->kind == FK_TRUNCATED || f->addr == 0)
        return false;
    return !modset__find(ms, f->kind == FK_RET ? f->addr - 1 : f->addr);
}

int profile__symbolize_new(struct profile *p, struct modset *ms)
{
    if (room_for_names(p, p->cap_frames > p->nframes ? p->cap_frames : p->nframes + 1) < 0)
        return -ENOMEM;
    /* The unwinder re-reads the maps when it meets unknown code, but only
     * so often; a name given now is kept for good, so look once more. */
    for (size_t i = p->nnamed; i < p->nframes; i++)
        if (unmapped(ms, &p->frames[i])) {
            modset__refresh(ms, true);
            break;
        }
    for (; p->nnamed < p->nframes; p->nnamed++) {
        int64_t o;
        if (symbolize__frame(ms, &p->frames[p->nnamed], &p->syms[p->nnamed]) < 0 ||
            (o = frame_object(p, ms, &p->frames[p->nnamed])) < 0)
            return -ENOMEM;
        profile__clean_sym(&p->syms[p->nnamed]);
        p->frame_object[p->nnamed] = (uint32_t)o;
    }
    return 0;
}

void profile__clean_sym(struct frame_sym *fs)
{
    char *parts[] = {fs->name, fs->symbol, fs->unit, fs->object, fs->file, fs->span};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        if (parts[i])
            text__clean(parts[i]);
}

int profile__symbolize(struct profile *p, struct modset *ms)
{
    return profile__symbolize_new(p, ms);
}

/* The object index + 1 of the recording's module that addr is in, made
 * from what the recording saved of it (its file not opened here): 0 if
 * none. (The file offset its first mapping maps: 0, a file's start, as
 * the lowest mapping of an ELF file maps; the recording does not say.) */
static int64_t saved_object(struct profile *p, uint64_t addr)
{
    size_t j = 0;
    while (j < p->nmodules && !(addr >= p->modules[j].lo && addr < p->modules[j].hi))
        j++;
    if (j == p->nmodules || !p->modules[j].path)
        return 0;
    const struct prof_module *m = &p->modules[j];
    struct prof_object *o;
    int64_t i = object_at(p, m->path, m->lo, m->hi, &o);
    if (o) {
        for (uint32_t k = 0; k < m->build_id_len && 2 * k + 2 < sizeof o->build_id; k++)
            snprintf(o->build_id + 2 * k, 3, "%02x", m->build_id[k]);
        o->main = j == 0; /* (the executable is saved first) */
    }
    return i;
}

size_t profile__keep_saved(struct profile *p, const struct modset *ms)
{
    size_t kept = 0;
    /* Frames in files not opened here are still in their mappings. */
    for (size_t i = 0; i < p->nnamed && p->frame_object; i++) {
        uint64_t addr;
        int64_t o;
        if (!p->frame_object[i] && symbolize__code_addr(&p->frames[i], &addr) &&
            !modset__find(ms, addr) && (o = saved_object(p, addr)) > 0)
            p->frame_object[i] = (uint32_t)o;
    }
    if (p->nsaved != p->nframes || p->nnamed != p->nframes)
        return 0;
    for (size_t i = 0; i < p->nframes; i++) {
        const struct raw_frame *f = &p->frames[i];
        uint64_t addr;
        bool missing = symbolize__code_addr(f, &addr) ? !modset__find(ms, addr)
                                                      : f->kind == FK_HS_CCS && !ms->main;
        /* A file found here, the same build, but that names less than the
         * recording did: where it was recorded, its debug file was found
         * under the target's root (not from here, where the file is seen
         * through a plain chroot's path); or it was stripped since (strip
         * keeps the build-id): an address where the recording had a name,
         * a symbol's or a Haskell binding's (Module.<local>, from the
         * symbols around it, or from DWARF). */
        struct frame_sym *here = &p->syms[i], *then = &p->saved[i];
        bool poorer = !missing && !here->symbol && here->lang == LANG_C &&
                      (then->symbol || then->lang == LANG_HASKELL || then->lang == LANG_RTS);
        if (!missing && !poorer && then->name && !here->file && then->file &&
            strcmp(here->name, then->name) == 0) {
            /* (The same name, but its line only in the recording: the
             * file's debug information stripped since, strip -g.) */
            here->file = then->file;
            here->line = then->line;
            free(here->span);
            here->span = then->span;
            then->file = then->span = NULL;
            continue;
        }
        if ((!missing && !poorer) || !then->name)
            continue;
        frame_sym__free(&p->syms[i]);
        p->syms[i] = p->saved[i];
        memset(&p->saved[i], 0, sizeof p->saved[i]);
        kept++;
    }
    return kept;
}

int profile__keep_modules(struct profile *p, const struct modset *ms)
{
    p->modules = calloc(ms->nmods ? ms->nmods : 1, sizeof *p->modules);
    if (!p->modules)
        return -ENOMEM;
    /* The executable first: a reader takes the first module for it. */
    for (size_t k = 0; k < ms->nmods; k++) {
        size_t i = k;
        if (ms->main) {
            size_t mi = 0;
            while (mi < ms->nmods && ms->mods[mi] != ms->main)
                mi++;
            i = k == 0 ? mi : (k <= mi ? k - 1 : k);
        }
        const struct module *m = ms->mods[i];
        struct prof_module *pm = &p->modules[p->nmodules];
        pm->path = strdup(m->path);
        if (!pm->path)
            return -ENOMEM;
        pm->lo = m->lo;
        pm->hi = m->hi;
        pm->bias = m->bias;
        pm->build_id_len = (uint32_t)m->build_id_len;
        memcpy(pm->build_id, m->build_id, m->build_id_len);
        if (m->mem) { /* the vDSO */
            pm->blob = malloc(m->image_size);
            if (!pm->blob)
                return -ENOMEM;
            memcpy(pm->blob, m->image, m->image_size);
            pm->blob_len = m->image_size;
        }
        p->nmodules++;
    }
    return 0;
}

const char *profile__frame_name(const struct profile *p, uint32_t frame)
{
    if (!p->syms || frame >= p->nframes || !p->syms[frame].name)
        return "[unknown]";
    return p->syms[frame].name;
}

double profile__achieved_hz(const struct profile *p)
{
    return p->duration_ns ? (double)p->ticks * 1e9 / (double)p->duration_ns : 0.0;
}

uint64_t profile__walk_errors(const struct profile *p)
{
    uint64_t errors = 0;
    for (int e = 1; e < WE__COUNT; e++)
        errors += p->errors[e];
    return errors;
}

pid_t profile__green_runner(const struct profile *p, const struct prof_green *g)
{
    for (size_t i = 0; g->tso && i < p->nthreads; i++) {
        const struct prof_thread *t = &p->threads[i];
        if (t->tso == g->tso &&
            t->tags[TAG_HASKELL] + t->tags[TAG_UNSAFE_FFI] + t->tags[TAG_RTS] > 0)
            return t->tid;
    }
    return 0;
}

uint64_t profile__threads_sampled(const struct profile *p)
{
    uint64_t threads = 0;
    for (size_t i = 0; i < p->nthreads; i++)
        threads += p->threads[i].samples > 0;
    return threads;
}

/* Buckets: 0..15 are exact µs (0-15 µs); above, 8 buckets per doubling. */
static unsigned bucket_of(uint64_t ns)
{
    uint64_t us = ns / 1000;
    if (us < 16)
        return (unsigned)us;
    unsigned lg = 63u - (unsigned)__builtin_clzll(us); /* >= 4 */
    unsigned sub = (unsigned)((us >> (lg - 3)) & 7);
    unsigned b = 16 + (lg - 4) * 8 + sub;
    return b < HIST_BUCKETS ? b : HIST_BUCKETS - 1;
}

static uint64_t bucket_top_ns(unsigned b)
{
    if (b < 16)
        return (uint64_t)(b + 1) * 1000;
    unsigned lg = (b - 16) / 8 + 4, sub = (b - 16) % 8;
    uint64_t lo = ((uint64_t)(8 + sub)) << (lg - 3);
    uint64_t width = 1ull << (lg - 3);
    return (lo + width) * 1000;
}

void hist__add(struct hist *h, uint64_t ns)
{
    h->n++;
    h->sum_ns += ns;
    if (ns > h->max_ns)
        h->max_ns = ns;
    h->b[bucket_of(ns)]++;
}

uint64_t hist__quantile(const struct hist *h, double q)
{
    if (!h->n)
        return 0;
    uint64_t want = (uint64_t)(q * (double)h->n);
    if (want >= h->n)
        want = h->n - 1;
    uint64_t seen = 0;
    for (unsigned b = 0; b < HIST_BUCKETS; b++) {
        seen += h->b[b];
        if (seen > want) {
            uint64_t top = bucket_top_ns(b);
            return top < h->max_ns ? top : h->max_ns;
        }
    }
    return h->max_ns;
}

void profile__name_roles(struct profile *p)
{
    /* One pass over the samples, counting per thread. */
    struct counts {
        uint64_t roles[ROLE__COUNT], caps[256], bound;
    } *c = calloc(p->nthreads ? p->nthreads : 1, sizeof *c);
    struct prof_iter it;
    struct prof_sample s;
    if (!c || profile__iter(p, &it) < 0) {
        free(c);
        return; /* out of memory: the roles stay unnamed */
    }
    while (profile__next(&it, &s)) {
        if (s.role < ROLE__COUNT)
            c[s.thread].roles[s.role]++;
        if (s.cap >= 0 && s.cap < 256 && !(s.flags & SAMPLE_CAP_COLLECTED))
            c[s.thread].caps[s.cap]++;
        c[s.thread].bound += (s.flags & SAMPLE_BOUND) != 0;
    }
    profile__iter_free(&it);
    for (size_t t = 0; t < p->nthreads; t++) {
        const uint64_t *roles = c[t].roles, *caps = c[t].caps;
        int best = ROLE_NONE, cap = 0;
        bool main_thread = p->threads[t].tid == p->pid;
        uint64_t all = 0;
        for (int k = 0; k < ROLE__COUNT; k++)
            all += roles[k];
        for (int k = 1; k < ROLE__COUNT; k++)
            if (roles[k] > roles[best] && k != ROLE_IDLE_WORKER)
                best = k;
        /* A worker is named after what it does when it works, however long
         * it waits between: one that held capability 0 for a third of the
         * time is that capability's, not an idle worker. Only one that
         * (almost) never worked is idle. The main thread waiting in the
         * scheduler (its Haskell thread blocked) is not a worker at all. */
        /* A bound thread (forkOS, a call in from C) for most of its
         * samples: not a worker, but its own Haskell thread's, as the main
         * thread is; in a safe call, that is what it does. */
        bool bound = main_thread || (all && c[t].bound * 2 > all);
        if (!bound && roles[ROLE_IDLE_WORKER] > 0 &&
            (best == ROLE_NONE || roles[best] * 100 < all))
            best = ROLE_IDLE_WORKER;
        for (int k = 1; k < 256; k++)
            if (caps[k] > caps[cap])
                cap = k;
        struct prof_thread *th = &p->threads[t];
        char what[32];
        if (best == ROLE_CAP)
            snprintf(what, sizeof what, "capability %d", cap);
        else if (bound && best == ROLE_SAFE_FFI)
            snprintf(what, sizeof what, "in safe calls");
        else
            snprintf(what, sizeof what, "%s", thread_role__str(best));
        if (bound && best == ROLE_NONE && roles[ROLE_IDLE_WORKER])
            snprintf(what, sizeof what, "waiting");
        if (bound)
            snprintf(th->role, sizeof th->role, "bound %sthread%s%s%s",
                     main_thread ? "main " : "", what[0] ? " (" : "", what, what[0] ? ")" : "");
        else
            snprintf(th->role, sizeof th->role, "%s", what);
    }
    free(c);
}
