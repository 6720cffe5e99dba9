/* maps.h - /proc/PID/maps, parsed.
 *
 * The raw list of mappings: where each file (executable, shared library) sits
 * in the target's address space, with what permissions and at which file
 * offset. Modules (module.h) are built from it.
 */
#ifndef HSSPY_MAPS_H
#define HSSPY_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct map_entry {
    uint64_t start, end, offset, inode;
    unsigned dev_major, dev_minor;
    char perms[5]; /* "r-xp" */
    char *path;    /* "" for anonymous; "[stack]", "[vdso]", ... for special ones */
};

struct maps {
    struct map_entry *e; /* sorted by start */
    size_t n;
};

/* Parse the text of a maps file. 0 or -errno (-EINVAL on a malformed line). */
int maps__parse(const char *text, struct maps *m);
/* Read and parse /proc/PID/maps. 0 or -errno. */
int maps__read(pid_t pid, struct maps *m);
void maps__free(struct maps *m);

/* The mapping containing addr, or NULL. */
const struct map_entry *maps__find(const struct maps *m, uint64_t addr);

/* A file-backed mapping of an object file (not [heap], [vdso], anon, ...). */
bool map_entry__is_file(const struct map_entry *e);

#endif
