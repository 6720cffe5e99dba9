/* modset.h - the modules (mapped object files) of one process, found by
 * address.
 *
 * Built from /proc/PID/maps at attach time and refreshed when an address
 * turns up that no known module covers (a library loaded later). Modules are
 * never dropped while recording: samples taken before a dlclose still need
 * their names.
 */
#ifndef HSSPY_MODSET_H
#define HSSPY_MODSET_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbolizer/maps.h"
#include "symbolizer/module.h"

struct modset {
    pid_t pid;
    struct module **mods;
    size_t nmods;
    struct mod_range *ranges; /* sorted runtime ranges -> module */
    size_t nranges;
    struct maps maps; /* the most recent /proc/PID/maps */
    uint64_t last_refresh_ns;
    unsigned long refreshes;
    bool loading; /* the last re-read found new modules: more may follow */
    struct module *main; /* the executable */
    /* The first file of executable code that could not be opened (its
     * frames then unnamed, its CFI unknown), and why (-errno); "": none. */
    char unreadable[256];
    int unreadable_err;
};

/* Read maps and open every mapped object. 0 or -errno (logs nothing). */
int modset__init(struct modset *s, pid_t pid);
/* A saved module: where it was mapped, and how to know it is the same file. */
struct saved_module {
    const char *path;
    uint64_t lo, hi;
    int64_t bias;
    const uint8_t *build_id;
    size_t build_id_len;
    const uint8_t *blob; /* the vDSO's bytes, or NULL */
    size_t blob_len;
    bool unopened; /* not to be opened: its frames are named otherwise */
};

/* The modules of a recording made earlier (no process): each file is opened
 * by its path on this machine (but those marked unopened); one whose
 * build-id differs from the recorded one (rebuilt, upgraded) is left out,
 * so its frames stay unnamed rather than wrongly named, and counted in
 * *changed. */
int modset__init_saved(struct modset *s, const struct saved_module *m, size_t n,
                       size_t *changed);

void modset__free(struct modset *s);

/* Re-read maps and open objects not seen before. Rate-limited: at most one
 * re-read per 10 ms unless force. Returns the number of new modules. */
int modset__refresh(struct modset *s, bool force);

/* The module mapped at addr, or NULL. */
struct module *modset__find(const struct modset *s, uint64_t addr);

/* The same, and *addr made the address the module's load bias gives the
 * byte mapped there (another only for a part of the file mapped a second
 * time, elsewhere): for module__symbol and the other module__ lookups. */
struct module *modset__locate(const struct modset *s, uint64_t *addr);

/* Read len bytes at addr from a read-only segment of whichever module maps
 * it (file contents: free and consistent). 0 or -EFAULT. */
int modset__read(const struct modset *s, uint64_t addr, void *out, size_t len);

/* Is the code at addr the way back from a signal handler on x86_64 Linux
 * (glibc's __restore_rt, musl's __restore_rt: mov $15,%rax; syscall, the
 * rt_sigreturn call), which a handler returns into? */
bool modset__is_sigreturn(const struct modset *s, uint64_t addr);

#endif
