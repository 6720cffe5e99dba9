/* counter.h - counts keyed by string, for aggregating displayed stacks and
 * function names.
 *
 *   struct counter c;
 *   counter__init(&c);
 *   counter__add(&c, "main;work;leaf", 3);
 *   struct counter_entry *v = counter__sorted(&c, COUNTER_BY_COUNT);
 */
#ifndef HSSPY_COUNTER_H
#define HSSPY_COUNTER_H

#include <stddef.h>
#include <stdint.h>

struct counter_entry {
    char *key;
    uint64_t count;
    uint64_t aux; /* a second count, caller-defined */
};

struct counter {
    struct counter_entry *e;
    size_t n, size; /* open addressing, size a power of two */
};

int counter__init(struct counter *c);
void counter__free(struct counter *c);
/* Add to key's count (and aux). Returns the entry, or NULL on ENOMEM. */
struct counter_entry *counter__add(struct counter *c, const char *key, uint64_t count,
                                   uint64_t aux);

enum counter_order { COUNTER_BY_KEY, COUNTER_BY_COUNT, COUNTER_BY_AUX };
/* A malloc'ed array of the n entries in the given order (descending counts,
 * ties by key). The keys stay owned by the counter. */
struct counter_entry *counter__sorted(const struct counter *c, enum counter_order order);

#endif
