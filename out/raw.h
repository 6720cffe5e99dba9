/* raw.h - hsspy's own recording format, read back by `hsspy report FILE`.
 *
 * A raw file keeps what the sampler and the walkers produced, before any
 * naming: frames as addresses and kinds, stacks, samples with their times,
 * tags and states, threads, the sampling health, and the modules the
 * addresses point into (path, where mapped, build-id; the vDSO's bytes).
 * Names are looked up when the file is reported, from the files on disk,
 * only where their build-id still matches.
 *
 * Layout (little-endian): "HSSPYRAW", u32 version, u32 section count, then
 * sections { u32 type, u64 length, payload }. Readers skip sections they do
 * not know, so later versions can add some; a changed meaning bumps the
 * version. Every count and index is checked against what the file holds:
 * a truncated or corrupt file is an error with a message, never a crash.
 */
#ifndef HSSPY_RAW_H
#define HSSPY_RAW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "out/profile.h"

#define RAW_VERSION 1

/* A raw file in two steps, for a recording: everything but the frames'
 * names, then (after it has dropped its samples and named its frames, so
 * that the memory naming takes, symbol tables and DWARF, is not added to
 * theirs) the names. Names of a profile not named are empty (none saved).
 * 0, or -1 on a write error. */
int raw__write_unnamed(const struct profile *p, FILE *f);
int raw__write_names(const struct profile *p, FILE *f);

/* Parse a raw file's bytes into p (initialized by the call). 0, or -1 with
 * what is wrong in err. */
int raw__parse(const uint8_t *buf, size_t len, struct profile *p, char *err, size_t errlen);

/* Read and parse a file. 0, or -1 with the reason in err. */
int raw__read(const char *path, struct profile *p, char *err, size_t errlen);

#endif
