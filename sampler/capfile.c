/* capfile.c - saving and loading single-thread captures (see capfile.h).
 * Layout (little-endian): "HSCAP002", pid, tid, comm[16], state, flags
 * (1: partial registers; absent from "HSCAP001" files), regs,
 * module count, modules {path, lo, hi, bias, build-id, image}, then the
 * memory image as memimg__save writes it. */
#include "sampler/capfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int put(FILE *f, const void *p, size_t n) { return fwrite(p, 1, n, f) == n ? 0 : -EIO; }

static int put_blob(FILE *f, const void *p, uint64_t n)
{
    return put(f, &n, 8) || (n && put(f, p, (size_t)n)) ? -EIO : 0;
}

int capfile__write(const char *path, const struct modset *ms, pid_t pid, pid_t tid,
                   const char *comm, char state, bool partial,
                   const struct user_regs_struct *regs, const struct memimg *img)
{
    FILE *f = fopen(path, "we");
    char c16[16] = {0};
    uint8_t *blob = NULL;
    size_t blen = 0;
    int r = 0;

    if (!f)
        return -errno;
    strncpy(c16, comm, sizeof c16 - 1);
    uint32_t n = (uint32_t)ms->nmods;
    uint8_t flags = partial ? 1 : 0;
    r |= put(f, "HSCAP002", 8);
    r |= put(f, &pid, 4);
    r |= put(f, &tid, 4);
    r |= put(f, c16, 16);
    r |= put(f, &state, 1);
    r |= put(f, &flags, 1);
    r |= put(f, regs, sizeof *regs);
    r |= put(f, &n, 4);
    /* The executable first: the reader takes the first module for it. */
    for (size_t k = 0; k < ms->nmods; k++) {
        const struct module *e = ms->mods[k];
        if (ms->main) {
            if (k == 0)
                e = ms->main;
            else if (e == ms->main)
                e = ms->mods[0];
        }
        r |= put_blob(f, e->path, strlen(e->path));
        r |= put(f, &e->lo, 8);
        r |= put(f, &e->hi, 8);
        r |= put(f, &e->bias, 8);
        r |= put_blob(f, e->build_id, e->build_id_len);
        r |= put_blob(f, e->mem ? e->image : NULL, e->mem ? e->image_size : 0);
    }
    if (memimg__save(img, &blob, &blen) < 0)
        r = -ENOMEM;
    else
        r |= put_blob(f, blob, blen);
    free(blob);
    if (fclose(f) != 0)
        r = -EIO;
    return r ? -EIO : 0;
}

struct in {
    const uint8_t *p;
    size_t left;
    int bad;
};

static const uint8_t *take(struct in *in, size_t n)
{
    if (in->bad || n > in->left) {
        in->bad = 1;
        return NULL;
    }
    const uint8_t *p = in->p;
    in->p += n;
    in->left -= n;
    return p;
}

static void get(struct in *in, void *out, size_t n)
{
    const uint8_t *p = take(in, n);
    if (p)
        memcpy(out, p, n);
}

static uint8_t *get_blob(struct in *in, uint64_t *len, size_t limit)
{
    get(in, len, 8);
    if (in->bad || *len > limit) {
        in->bad = 1;
        return NULL;
    }
    const uint8_t *p = take(in, (size_t)*len);
    uint8_t *copy = p ? malloc((size_t)*len + 1) : NULL;
    if (p && !copy)
        in->bad = 1;
    if (copy) {
        memcpy(copy, p, (size_t)*len);
        copy[*len] = 0;
    }
    return copy;
}

int capfile__read(const char *path, struct capfile *c)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    long size;
    struct in in;
    uint32_t n = 0;

    memset(c, 0, sizeof *c);
    if (!f)
        return -1;
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
        !(buf = malloc((size_t)size + 1)) || fread(buf, 1, (size_t)size, f) != (size_t)size) {
        fclose(f);
        free(buf);
        return -1;
    }
    fclose(f);
    in = (struct in){buf, (size_t)size, 0};
    const uint8_t *magic = take(&in, 8);
    bool v1 = magic && memcmp(magic, "HSCAP001", 8) == 0;
    if (!magic || (!v1 && memcmp(magic, "HSCAP002", 8) != 0))
        in.bad = 1;
    get(&in, &c->pid, 4);
    get(&in, &c->tid, 4);
    get(&in, c->comm, 16);
    c->comm[15] = 0;
    get(&in, &c->state, 1);
    uint8_t flags = 0;
    if (!v1)
        get(&in, &flags, 1);
    c->partial = flags & 1;
    get(&in, &c->regs, sizeof c->regs);
    get(&in, &n, 4);
    if (!in.bad && n > 4096)
        in.bad = 1;
    if (!in.bad && !(c->mods = calloc(n ? n : 1, sizeof *c->mods)))
        in.bad = 1;
    for (uint32_t i = 0; i < n && !in.bad; i++) {
        struct saved_module *m = &c->mods[i];
        uint64_t len;
        m->path = (const char *)get_blob(&in, &len, 4096);
        get(&in, &m->lo, 8);
        get(&in, &m->hi, 8);
        get(&in, &m->bias, 8);
        m->build_id = get_blob(&in, &len, 64);
        m->build_id_len = (size_t)len;
        m->blob = get_blob(&in, &len, 16u << 20);
        m->blob_len = (size_t)len;
        if (!m->blob_len) {
            free((void *)m->blob);
            m->blob = NULL;
        }
        c->nmods++;
    }
    uint64_t ilen = 0;
    uint8_t *img = in.bad ? NULL : get_blob(&in, &ilen, 1u << 30);
    if (!in.bad && (memimg__init(&c->img, (size_t)ilen + 1, 4096) < 0 ||
                    memimg__load(&c->img, img, (size_t)ilen) < 0))
        in.bad = 1;
    free(img);
    free(buf);
    if (in.bad) {
        capfile__free(c);
        return -1;
    }
    return 0;
}

void capfile__free(struct capfile *c)
{
    for (size_t i = 0; i < c->nmods; i++) {
        free((void *)c->mods[i].path);
        free((void *)c->mods[i].build_id);
        free((void *)c->mods[i].blob);
    }
    free(c->mods);
    memimg__free(&c->img);
    memset(c, 0, sizeof *c);
}
