/* modset.c - the set of mapped modules and the address -> module index. */
#define _GNU_SOURCE
#include "symbolizer/modset.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sampler/remote.h"

struct mod_range {
    uint64_t lo, hi;
    struct module *m;
    /* What takes an address here to where the module's load bias puts
     * the same byte of the file: 0, but for a part of the file mapped a
     * second time elsewhere (node maps V8's builtins again, away from its
     * executable), which module__* would otherwise read with the bias of
     * the first. */
    int64_t shift;
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool same_file(const struct map_entry *a, const struct map_entry *b)
{
    return a->inode == b->inode && a->dev_major == b->dev_major &&
           a->dev_minor == b->dev_minor && strcmp(a->path, b->path) == 0;
}

static struct module *known(const struct modset *s, const struct map_entry *e)
{
    for (size_t i = 0; i < s->nmods; i++) {
        struct module *m = s->mods[i];
        if (strcmp(m->path, e->path) == 0 && e->start >= m->lo && e->start < m->hi)
            return m;
    }
    return NULL;
}

static struct module *open_module(struct modset *s, const struct maps *maps, size_t i)
{
    const struct map_entry *e = &maps->e[i];
    struct module *m = calloc(1, sizeof *m);
    struct module **nm;
    int r;

    if (!m)
        return NULL;
    if (strcmp(e->path, "[vdso]") == 0) {
        size_t len = e->end - e->start;
        void *buf = len <= (1u << 20) ? malloc(len) : NULL;
        r = buf ? remote__read(s->pid, e->start, buf, len) : -ENOMEM;
        if (r == 0)
            r = module__open_memory(m, "[vdso]", e->start, buf, len);
        free(buf);
    } else {
        size_t first = i;
        for (size_t j = 0; j < i; j++)
            if (same_file(&maps->e[j], e)) {
                first = j;
                break;
            }
        r = module__open(m, s->pid, maps, first);
        if (r < 0 && r != -ENOMEM && r != -ENOEXEC && !s->unreadable[0] && e->path[0] == '/') {
            snprintf(s->unreadable, sizeof s->unreadable, "%s", e->path);
            s->unreadable_err = r;
        }
    }
    if (r < 0) {
        free(m);
        return NULL;
    }
    nm = realloc(s->mods, (s->nmods + 1) * sizeof *nm);
    if (!nm) {
        module__close(m);
        free(m);
        return NULL;
    }
    s->mods = nm;
    s->mods[s->nmods++] = m;
    return m;
}

static int cmp_range(const void *a, const void *b)
{
    const struct mod_range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static bool overlaps(const struct mod_range *r, const struct mod_range *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (r->lo < v[i].hi && v[i].lo < r->hi)
            return true;
    return false;
}

static int rebuild(struct modset *s, struct maps *maps)
{
    struct mod_range *nr = malloc((maps->n + s->nranges + 1) * sizeof *nr);
    size_t n = 0;
    int added = 0;

    if (!nr)
        return -ENOMEM;
    for (size_t i = 0; i < maps->n; i++) {
        const struct map_entry *e = &maps->e[i];
        if (!map_entry__is_file(e) && strcmp(e->path, "[vdso]") != 0)
            continue;
        struct module *m = known(s, e);
        if (!m) {
            size_t before = s->nmods;
            m = open_module(s, maps, i);
            added += s->nmods > before;
        }
        if (!m)
            continue; /* not an ELF file (a font, a data file): no range */
        nr[n++] = (struct mod_range){e->start, e->end, m, module__mapping_shift(m, e)};
    }
    /* Keep ranges of objects unmapped since: earlier samples point there. */
    size_t fresh = n;
    for (size_t i = 0; i < s->nranges; i++)
        if (!overlaps(&s->ranges[i], nr, fresh))
            nr[n++] = s->ranges[i];
    qsort(nr, n, sizeof *nr, cmp_range);
    free(s->ranges);
    s->ranges = nr;
    s->nranges = n;
    maps__free(&s->maps);
    s->maps = *maps;
    return added;
}

int modset__init(struct modset *s, pid_t pid)
{
    struct maps maps;
    int r;

    memset(s, 0, sizeof *s);
    s->pid = pid;
    if ((r = maps__read(pid, &maps)) < 0)
        return r;
    if ((r = rebuild(s, &maps)) < 0) {
        maps__free(&maps);
        return r;
    }
    s->last_refresh_ns = now_ns();
    s->loading = true;
    /* The executable is the object mapped from /proc/PID/exe. */
    char exe[4096];
    char link[64];
    snprintf(link, sizeof link, "/proc/%d/exe", (int)remote__mm_pid(pid));
    ssize_t n = readlink(link, exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        for (size_t i = 0; i < s->nmods; i++)
            if (strcmp(s->mods[i]->path, exe) == 0) {
                s->main = s->mods[i];
                break;
            }
    }
    return 0;
}

int modset__init_saved(struct modset *s, const struct saved_module *sm, size_t n,
                       size_t *changed)
{
    memset(s, 0, sizeof *s);
    *changed = 0;
    s->mods = calloc(n ? n : 1, sizeof *s->mods);
    s->ranges = calloc(n ? n : 1, sizeof *s->ranges);
    if (!s->mods || !s->ranges) {
        modset__free(s);
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        if (sm[i].unopened)
            continue;
        struct module *m = calloc(1, sizeof *m);
        int r;
        if (!m)
            continue;
        if (sm[i].blob)
            r = module__open_memory(m, sm[i].path, sm[i].lo, sm[i].blob, sm[i].blob_len);
        else
            r = module__open_file(m, sm[i].path, sm[i].lo, sm[i].hi, sm[i].bias);
        if (r == 0 && sm[i].build_id_len &&
            (m->build_id_len != sm[i].build_id_len ||
             memcmp(m->build_id, sm[i].build_id, sm[i].build_id_len) != 0)) {
            module__close(m);
            r = -ESTALE;
            (*changed)++;
        }
        if (r < 0) {
            free(m);
            continue;
        }
        if (i == 0)
            s->main = m; /* the recording lists the executable first */
        s->mods[s->nmods++] = m;
        s->ranges[s->nranges++] = (struct mod_range){sm[i].lo, sm[i].hi, m, 0};
    }
    qsort(s->ranges, s->nranges, sizeof *s->ranges, cmp_range);
    s->last_refresh_ns = UINT64_MAX; /* no process to re-read */
    return 0;
}

void modset__free(struct modset *s)
{
    for (size_t i = 0; i < s->nmods; i++) {
        module__close(s->mods[i]);
        free(s->mods[i]);
    }
    free(s->mods);
    free(s->ranges);
    maps__free(&s->maps);
    memset(s, 0, sizeof *s);
}

int modset__refresh(struct modset *s, bool force)
{
    struct maps maps;
    uint64_t now = now_ns();
    int r;

    /* Rate-limited, since an address no module covers (JIT code, a wild
     * pointer) would otherwise re-read the maps on every frame; but not
     * while libraries are arriving (a program just started): the first
     * re-read, and one after a re-read that found something new, are free. */
    if (s->last_refresh_ns == UINT64_MAX)
        return 0;
    if (!force && !s->loading && now - s->last_refresh_ns < 10000000u)
        return 0;
    s->last_refresh_ns = now;
    if (maps__read(s->pid, &maps) < 0)
        return 0;
    s->refreshes++;
    r = rebuild(s, &maps);
    if (r < 0)
        maps__free(&maps);
    s->loading = r > 0;
    return r;
}

struct module *modset__find(const struct modset *s, uint64_t addr)
{
    size_t lo = 0, hi = s->nranges;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->ranges[mid].lo <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const struct mod_range *r = &s->ranges[lo - 1];
    return addr < r->hi ? r->m : NULL;
}

struct module *modset__locate(const struct modset *s, uint64_t *addr)
{
    size_t lo = 0, hi = s->nranges;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->ranges[mid].lo <= *addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || *addr >= s->ranges[lo - 1].hi)
        return NULL;
    *addr += (uint64_t)s->ranges[lo - 1].shift;
    return s->ranges[lo - 1].m;
}

int modset__read(const struct modset *s, uint64_t addr, void *out, size_t len)
{
    struct module *m = modset__locate(s, &addr);
    return m ? module__read(m, addr, out, len) : -EFAULT;
}

bool modset__is_sigreturn(const struct modset *s, uint64_t addr)
{
    static const uint8_t code[9] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};
    uint8_t b[sizeof code];
    return modset__read(s, addr, b, sizeof b) == 0 && memcmp(b, code, sizeof code) == 0;
}
