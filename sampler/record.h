/* record.h - `hsspy record`: attach or launch, sample, detach, write. */
#ifndef HSSPY_RECORD_H
#define HSSPY_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "out/writer.h"

/* What a GHC sample's Haskell part is (--stack). */
enum stack_mode {
    STACK_STG, /* the STG stack's frames (the default) */
    STACK_CCS, /* the current cost-centre stack (a -prof program) */
};

struct record_opts {
    double rate_hz;     /* -F */
    double duration_s;  /* -d, 0 = until Ctrl-C or exit */
    const char *output; /* -o, NULL = stdout */
    const char *format; /* -f */
    bool threads;       /* --threads */
    bool idle;          /* --idle */
    enum out_sort sort; /* --sort (-f calls) */
    pid_t pid;          /* -p */
    char **argv;        /* -- CMD ARGS */
    size_t stack_bytes; /* C stack copied per thread per sample */
    bool snapshot;      /* one sample of every thread, exact stacks (dump) */
    const char *save_dir; /* --save-captures: raw captures for the fuzzer */
    enum stack_mode stack; /* --stack */
};

/* Run a recording; returns the process exit code (0 on success). */
int record__run(const struct record_opts *o);

#endif
