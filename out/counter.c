/* counter.c - a string -> count hash table. */
#include "out/counter.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h;
}

int counter__init(struct counter *c)
{
    c->n = 0;
    c->size = 256;
    c->e = calloc(c->size, sizeof *c->e);
    return c->e ? 0 : -ENOMEM;
}

void counter__free(struct counter *c)
{
    if (c->e)
        for (size_t i = 0; i < c->size; i++)
            free(c->e[i].key);
    free(c->e);
    memset(c, 0, sizeof *c);
}

static int grow(struct counter *c)
{
    size_t size = c->size * 2;
    struct counter_entry *e = calloc(size, sizeof *e);
    if (!e)
        return -ENOMEM;
    for (size_t i = 0; i < c->size; i++) {
        if (!c->e[i].key)
            continue;
        size_t h = hash_str(c->e[i].key) & (size - 1);
        while (e[h].key)
            h = (h + 1) & (size - 1);
        e[h] = c->e[i];
    }
    free(c->e);
    c->e = e;
    c->size = size;
    return 0;
}

struct counter_entry *counter__add(struct counter *c, const char *key, uint64_t count,
                                   uint64_t aux)
{
    if ((c->n + 1) * 2 > c->size && grow(c) < 0)
        return NULL;
    size_t h = hash_str(key) & (c->size - 1);
    while (c->e[h].key && strcmp(c->e[h].key, key) != 0)
        h = (h + 1) & (c->size - 1);
    if (!c->e[h].key) {
        c->e[h].key = strdup(key);
        if (!c->e[h].key)
            return NULL;
        c->n++;
    }
    c->e[h].count += count;
    c->e[h].aux += aux;
    return &c->e[h];
}

static int by_key(const void *a, const void *b)
{
    return strcmp(((const struct counter_entry *)a)->key, ((const struct counter_entry *)b)->key);
}

static int by_count(const void *a, const void *b)
{
    const struct counter_entry *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->key, y->key);
}

static int by_aux(const void *a, const void *b)
{
    const struct counter_entry *x = a, *y = b;
    if (x->aux != y->aux)
        return x->aux > y->aux ? -1 : 1;
    return by_count(a, b);
}

struct counter_entry *counter__sorted(const struct counter *c, enum counter_order order)
{
    struct counter_entry *v = malloc((c->n ? c->n : 1) * sizeof *v);
    size_t k = 0;
    if (!v)
        return NULL;
    for (size_t i = 0; i < c->size; i++)
        if (c->e[i].key)
            v[k++] = c->e[i];
    qsort(v, k, sizeof *v,
          order == COUNTER_BY_KEY ? by_key : order == COUNTER_BY_COUNT ? by_count : by_aux);
    return v;
}
