/* raw_resize - for `make bench`: a raw recording of exactly N samples made
 * from a real one, to time `hsspy report` on a known number of samples.
 *
 * Everything but the sample list is the real recording's (modules, threads,
 * frames, stacks, sampling health). With more than N samples, the first N
 * are kept (the duration and tick count shrink in proportion). With fewer,
 * the sample list is repeated, each copy shifted in time by the recording's
 * duration, as if the program had gone on doing the same: the distinct
 * stacks stay those of the real recording, as they do in a longer run of
 * the same program. The file is written by hsspy's own raw writer.
 *
 * Usage: raw_resize IN OUT N    (prints "kept|repeated ORIG -> N samples")
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out/raw.h"
#include "out/writer.h"

extern const struct writer writer_raw;

int main(int argc, char **argv)
{
    struct profile p;
    char err[256];
    if (argc != 4) {
        fprintf(stderr, "usage: raw_resize IN OUT N\n");
        return 2;
    }
    size_t want = strtoull(argv[3], NULL, 10);
    if (raw__read(argv[1], &p, err, sizeof err) < 0) {
        fprintf(stderr, "raw_resize: %s: %s\n", argv[1], err);
        return 1;
    }
    size_t orig = p.nsamples;
    if (orig == 0 || want == 0) {
        fprintf(stderr, "raw_resize: %s has no samples\n", argv[1]);
        return 1;
    }
    struct prof_iter it;
    struct prof_sample x;
    if (profile__iter(&p, &it) < 0) {
        fprintf(stderr, "raw_resize: out of memory\n");
        return 1;
    }
    if (orig >= want) {
        /* The stream is read in order, up to nsamples: cut it there. */
        for (size_t i = 0; i < want && profile__next(&it, &x); i++)
            ;
        p.nsamples = want;
        p.ticks = p.ticks * want / orig;
        p.duration_ns = x.t_ns;
    } else {
        uint64_t span = p.duration_ns;
        for (size_t i = 0; i < orig && profile__next(&it, &x); i++)
            if (x.t_ns >= span)
                span = x.t_ns + 1;
        for (size_t copy = 1; p.nsamples < want; copy++) {
            profile__iter_free(&it);
            if (profile__iter(&p, &it) < 0) {
                fprintf(stderr, "raw_resize: out of memory\n");
                return 1;
            }
            /* Adding to the stream while reading it: the reader holds its
             * own place and stops after the original samples. */
            for (size_t i = 0; i < orig && p.nsamples < want && profile__next(&it, &x); i++) {
                x.t_ns += copy * span;
                if (profile__add(&p, &x) < 0) {
                    fprintf(stderr, "raw_resize: out of memory\n");
                    return 1;
                }
            }
        }
        double k = (double)want / (double)orig;
        p.ticks = (uint64_t)((double)p.ticks * k);
        p.missed_ticks = (uint64_t)((double)p.missed_ticks * k);
        p.duration_ns = (uint64_t)((double)span * k);
    }
    profile__iter_free(&it);
    FILE *f = fopen(argv[2], "wb");
    struct out_opts o = {0};
    if (!f || writer_raw.write(&p, &o, f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "raw_resize: cannot write %s\n", argv[2]);
        return 1;
    }
    printf("%s %zu -> %zu samples\n", orig >= want ? "kept" : "repeated", orig, want);
    profile__free(&p);
    return 0;
}
