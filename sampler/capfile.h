/* capfile.h - one thread's raw capture saved to a file, exactly as the
 * walkers saw it: registers, /proc state, the memory image (its C stack, RTS
 * structures, STG stack chunks) and the modules its addresses point into.
 *
 * `hsspy record --save-captures DIR` writes them; the fuzzer
 * (tests/fuzz/fuzz.c) mutates them by the million to check that the C
 * unwinder, the RTS reader and the STG walker survive any memory.
 */
#ifndef HSSPY_CAPFILE_H
#define HSSPY_CAPFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "sampler/memimg.h"
#include "symbolizer/modset.h"

struct capfile {
    pid_t pid, tid;
    char comm[16];
    char state;
    bool partial; /* taken without a stop: regs hold rip, rsp and fs_base only */
    struct user_regs_struct regs;
    struct memimg img;
    struct saved_module *mods; /* paths and images owned by the capfile */
    size_t nmods;
};

/* Write one capture. 0 or -errno. */
int capfile__write(const char *path, const struct modset *ms, pid_t pid, pid_t tid,
                   const char *comm, char state, bool partial,
                   const struct user_regs_struct *regs, const struct memimg *img);

/* Read one (bounds-checked: a damaged file is an error). 0 or -1. */
int capfile__read(const char *path, struct capfile *c);
void capfile__free(struct capfile *c);

#endif
