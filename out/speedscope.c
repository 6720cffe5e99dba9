/* speedscope.c - speedscope's own file format
 * (https://www.speedscope.app/file-format-schema.json): one "sampled"
 * profile per OS thread, so its time-order view shows each thread's
 * samples in the order they were taken, and its thread menu picks threads.
 *
 * Frames are shared by all profiles: one per distinct name and source file,
 * with the line when every sampled address of it has the same one (a
 * function's samples fall on many lines; speedscope's frame is the
 * function). A sample's stack is outermost first and starts with the tag
 * frame ("[haskell]"), as in folded output; the thread is the profile, so
 * --threads adds nothing. Each sample weighs 1 (unit "none"). The sampling
 * health is the file's name, which speedscope shows as its title.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "out/counter.h"
#include "out/text.h"
#include "out/writer.h"

#define SCHEMA "https://www.speedscope.app/file-format-schema.json"
#define NONE UINT32_MAX

struct sframe {
    const char *name, *file;
    int line; /* 0 unknown, -1 several */
};

struct frames {
    struct counter index; /* "name\x1ffile" -> position + 1 in aux */
    struct sframe *v;
    size_t n, cap;
    uint32_t *of_frame; /* profile frame id -> index, NONE until seen */
    uint32_t tag[TAG__COUNT];
};

static int64_t frames__add(struct frames *fs, const char *name, const char *file, int line)
{
    size_t len = strlen(name) + (file ? strlen(file) : 0) + 2;
    char *key = malloc(len);
    if (!key)
        return -1;
    snprintf(key, len, "%s\x1f%s", name, file ? file : "");
    struct counter_entry *e = counter__add(&fs->index, key, 1, 0);
    free(key);
    if (!e)
        return -1;
    if (e->count > 1) {
        struct sframe *sf = &fs->v[e->aux - 1];
        if (sf->line != line)
            sf->line = -1;
        return (int64_t)e->aux - 1;
    }
    if (fs->n == fs->cap) {
        size_t cap = fs->cap ? fs->cap * 2 : 256;
        struct sframe *v = realloc(fs->v, cap * sizeof *v);
        if (!v)
            return -1;
        fs->v = v;
        fs->cap = cap;
    }
    fs->v[fs->n] = (struct sframe){name, file, line};
    e->aux = ++fs->n;
    return (int64_t)fs->n - 1;
}

/* The frame indices of a sample's stack, outermost first. */
static int stack_of(struct frames *fs, const struct profile *p, const struct prof_sample *s,
                    uint32_t *out)
{
    uint32_t ids[MAX_FRAMES];
    int n = 0;
    if (s->tag != TAG_NONE && s->tag < TAG__COUNT) {
        if (fs->tag[s->tag] == NONE) {
            int64_t k = frames__add(fs, out__tag_frame(s->tag), NULL, 0);
            if (k < 0)
                return -1;
            fs->tag[s->tag] = (uint32_t)k;
        }
        out[n++] = fs->tag[s->tag];
    }
    int k = out__frames(p, s, ids, MAX_FRAMES);
    for (int i = 0; i < k; i++) {
        uint32_t id = ids[i];
        if (fs->of_frame[id] == NONE) {
            const struct frame_sym *sym = p->syms ? &p->syms[id] : NULL;
            int64_t x = frames__add(fs, profile__frame_name(p, id), sym ? sym->file : NULL,
                                    sym ? sym->line : 0);
            if (x < 0)
                return -1;
            fs->of_frame[id] = (uint32_t)x;
        }
        out[n++] = fs->of_frame[id];
    }
    return n;
}

static void header(const struct profile *p, const struct out_opts *o, FILE *f)
{
    char health[1024], name[sizeof p->cmdline + sizeof health + 64];
    out__health(p, o, health, sizeof health, "; ");
    snprintf(name, sizeof name, "hsspy: pid %d: %s%s%s; %s", (int)p->pid, p->cmdline,
             p->ghc_version[0] ? "; GHC " : "", p->ghc_version, health);
    fputs("{\"$schema\":\"" SCHEMA "\",\n\"name\":", f);
    text__json(f, name);
    fputs(",\n\"exporter\":\"hsspy " HSSPY_VERSION "\",\n\"activeProfileIndex\":0,\n", f);
}

static int profile_of(const struct profile *p, const struct out_opts *o, struct frames *fs,
                      size_t t, uint64_t shown, FILE *f)
{
    const struct prof_thread *th = &p->threads[t];
    char name[128];
    uint32_t stack[MAX_FRAMES + 1];
    snprintf(name, sizeof name, "tid %d %s%s%s%s", (int)th->tid, th->comm,
             th->role[0] ? " (" : "", th->role, th->role[0] ? ")" : "");
    fputs("{\"type\":\"sampled\",\"name\":", f);
    text__json(f, name);
    fprintf(f, ",\"unit\":\"none\",\"startValue\":0,\"endValue\":%" PRIu64 ",\n\"samples\":[",
            shown);
    bool first = true;
    struct prof_iter it;
    struct prof_sample smp;
    if (profile__iter(p, &it) < 0)
        return -1;
    while (profile__next(&it, &smp)) {
        const struct prof_sample *s = &smp;
        if (s->thread != t || !out__visible(p, s, o))
            continue;
        /* (frame indices were all made in the first pass) */
        int n = stack_of(fs, p, s, stack);
        fputs(first ? "[" : ",\n[", f);
        for (int k = 0; k < n; k++)
            fprintf(f, k ? ",%" PRIu32 : "%" PRIu32, stack[k]);
        fputc(']', f);
        first = false;
    }
    profile__iter_free(&it);
    fputs("],\n\"weights\":[", f);
    for (uint64_t i = 0; i < shown; i++)
        fputs(i ? ",1" : "1", f);
    fputs("]}", f);
    return 0;
}

static int write_speedscope(const struct profile *p, const struct out_opts *o, FILE *f)
{
    struct frames fs = {0};
    uint64_t *shown = calloc(p->nthreads + 1, sizeof *shown);
    struct out_rank *order = NULL;
    uint32_t stack[MAX_FRAMES + 1];
    int r = -1;

    fs.of_frame = malloc((p->nframes + 1) * sizeof *fs.of_frame);
    if (!shown || !fs.of_frame || counter__init(&fs.index) < 0)
        goto out;
    memset(fs.of_frame, 0xff, (p->nframes + 1) * sizeof *fs.of_frame);
    memset(fs.tag, 0xff, sizeof fs.tag);

    /* First pass: the frames, and which threads have samples shown. */
    struct prof_iter it;
    struct prof_sample smp;
    if (profile__iter(p, &it) < 0)
        goto out;
    while (profile__next(&it, &smp)) {
        if (!out__visible(p, &smp, o))
            continue;
        if (stack_of(&fs, p, &smp, stack) < 0) {
            profile__iter_free(&it);
            goto out;
        }
        shown[smp.thread]++;
    }
    profile__iter_free(&it);
    if (out__rank_threads(p, shown, &order) < 0)
        goto out;

    header(p, o, f);
    fputs("\"shared\":{\"frames\":[", f);
    for (size_t i = 0; i < fs.n; i++) {
        const struct sframe *sf = &fs.v[i];
        fputs(i ? ",\n{\"name\":" : "\n{\"name\":", f);
        text__json(f, sf->name);
        if (sf->file) {
            fputs(",\"file\":", f);
            text__json(f, sf->file);
        }
        if (sf->line > 0)
            fprintf(f, ",\"line\":%d", sf->line);
        fputc('}', f);
    }
    fputs("]},\n\"profiles\":[", f);
    bool first = true;
    for (size_t i = 0; i < p->nthreads; i++) {
        size_t t = order[i].t;
        if (!shown[t])
            continue;
        fputs(first ? "\n" : ",\n", f);
        first = false;
        if (profile_of(p, o, &fs, t, shown[t], f) < 0)
            goto out;
    }
    fputs("]}\n", f);
    r = ferror(f) ? -1 : 0;
out:
    free(order);
    free(shown);
    free(fs.of_frame);
    free(fs.v);
    counter__free(&fs.index);
    return r;
}

const struct writer writer_speedscope = {
    .name = "speedscope",
    .help = "speedscope JSON, a profile per thread in time order, tags as first frames",
    .text = true,
    .write = write_speedscope,
};
