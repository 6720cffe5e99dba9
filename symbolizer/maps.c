/* maps.c - parsing /proc/PID/maps. */
#define _GNU_SOURCE
#include "symbolizer/maps.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sampler/remote.h"

static int parse_line(const char *line, size_t len, struct map_entry *e)
{
    char buf[4200];
    unsigned long long start, end, off, ino;
    unsigned maj, min;
    char perms[8];
    int pathpos = 0;

    if (len >= sizeof buf)
        len = sizeof buf - 1;
    memcpy(buf, line, len);
    buf[len] = 0;
    if (sscanf(buf, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off, &maj, &min,
               &ino, &pathpos) < 7)
        return -EINVAL;
    if (end < start || strlen(perms) != 4)
        return -EINVAL;
    memset(e, 0, sizeof *e);
    e->start = start;
    e->end = end;
    e->offset = off;
    e->inode = ino;
    e->dev_major = maj;
    e->dev_minor = min;
    memcpy(e->perms, perms, 5);
    e->path = strdup(pathpos ? buf + pathpos : "");
    return e->path ? 0 : -ENOMEM;
}

static int cmp_start(const void *a, const void *b)
{
    const struct map_entry *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

int maps__parse(const char *text, struct maps *m)
{
    size_t cap = 64;
    m->n = 0;
    m->e = malloc(cap * sizeof *m->e);
    if (!m->e)
        return -ENOMEM;
    while (*text) {
        const char *nl = strchr(text, '\n');
        size_t len = nl ? (size_t)(nl - text) : strlen(text);
        if (len > 0) {
            if (m->n == cap) {
                struct map_entry *ne = realloc(m->e, 2 * cap * sizeof *ne);
                if (!ne) {
                    maps__free(m);
                    return -ENOMEM;
                }
                m->e = ne;
                cap *= 2;
            }
            int r = parse_line(text, len, &m->e[m->n]);
            if (r < 0) {
                maps__free(m);
                return r;
            }
            m->n++;
        }
        text += len + (nl ? 1 : 0);
    }
    qsort(m->e, m->n, sizeof *m->e, cmp_start);
    return 0;
}

int maps__read(pid_t pid, struct maps *m)
{
    char path[64];
    FILE *f;
    char *text = NULL;
    size_t size = 0;
    int r;

    snprintf(path, sizeof path, "/proc/%d/maps", (int)remote__mm_pid(pid));
    f = fopen(path, "re");
    if (!f)
        return -errno;
    /* getdelim with NUL reads the whole file at once. */
    if (getdelim(&text, &size, 0, f) < 0) {
        r = feof(f) ? 0 : -errno;
        fclose(f);
        free(text);
        if (r == 0) {
            m->e = NULL;
            m->n = 0;
        }
        return r;
    }
    fclose(f);
    r = maps__parse(text, m);
    free(text);
    return r;
}

void maps__free(struct maps *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->e[i].path);
    free(m->e);
    m->e = NULL;
    m->n = 0;
}

const struct map_entry *maps__find(const struct maps *m, uint64_t addr)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->e[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const struct map_entry *e = &m->e[lo - 1];
    return addr < e->end ? e : NULL;
}

bool map_entry__is_file(const struct map_entry *e)
{
    return e->path[0] == '/' && e->inode != 0;
}
