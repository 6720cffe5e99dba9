/* fuzz - throw damaged memory at the stack walkers and damaged files at the
 * raw-file reader, by the million, to show they never crash and never run
 * long. Built with AddressSanitizer and UndefinedBehaviorSanitizer (make
 * fuzz): any bad read, overflow or undefined behaviour aborts the run.
 *
 *   fuzz walk DIR N   captures saved by `hsspy record --save-captures DIR`
 *                     (real targets); each iteration damages one (registers,
 *                     stack and heap words: flipped bits, random words,
 *                     pointers into other captured memory, valid info
 *                     pointers in wrong places, short regions) and runs the
 *                     C unwinder, the RTS reader and the STG walker on it
 *                     (and, one time in four, the walk again without its
 *                     cache of info tables: the frames must be the same)
 *   fuzz raw FILE N   a raw recording, truncated, bit-flipped, overwritten
 *   fuzz eh_frame ELF N  the .eh_frame section of an executable, damaged
 *                     the same ways, indexed as for a static executable,
 *                     and each FDE indexed read alone as symbolizing does
 *
 * Prints "iterations N, max us M, mean us A" (CPU time per iteration) and
 * exits 0 when done. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "haskell-stack/hs_sample.h"
#include "haskell-stack/stg_walk.h"
#include "out/raw.h"
#include "symbolizer/eh_frame.h"
#include "sampler/capfile.h"
#include "symbolizer/unwind.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* CPU time, not wall time: a walk's cost is what is bounded, and on a busy
 * machine the wall clock also counts the time the fuzzer waited for a CPU. */
static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct undo {
    uint8_t *at;
    uint64_t old;
    size_t len;
};

/* Damage a capture in place, remembering how to undo it. */
static int damage(struct capfile *c, struct undo *u, int max_undo, struct user_regs_struct *regs,
                  const uint64_t *pool, size_t npool)
{
    int nu = 0;
    struct memimg *m = &c->img;
    int k = 1 + (int)(rnd() % 6);
    for (int i = 0; i < k && nu < max_undo && m->n; i++) {
        struct memimg_region *r = &m->reg[rnd() % m->n];
        if (r->len < 8)
            continue;
        size_t off = (rnd() % (r->len - 7)) & ~(size_t)7;
        uint8_t *at = m->buf + r->off + off;
        uint64_t v;
        u[nu] = (struct undo){at, 0, 8};
        memcpy(&u[nu].old, at, 8);
        nu++;
        memcpy(&v, at, 8);
        switch (rnd() % 6) {
        case 0: v ^= 1ull << (rnd() % 64); break;
        case 1: v = rnd(); break;
        case 2: v = 0; break;
        case 3: { /* a pointer into some captured memory */
            struct memimg_region *o = &m->reg[rnd() % m->n];
            v = o->addr + (o->len ? (rnd() % o->len) & ~7ull : 0);
            break;
        }
        case 4: /* a real info pointer, somewhere it does not belong */
            if (npool)
                v = pool[rnd() % npool];
            break;
        default: v += (rnd() % 17) * 8 - 64; break;
        }
        memcpy(at, &v, 8);
    }
    /* Registers: now and then. */
    switch (rnd() % 8) {
    case 0: regs->rbp ^= 1ull << (rnd() % 48); break;
    case 1: regs->rsp += (rnd() % 64) * 8 - 256; break;
    case 2: regs->rip = npool ? pool[rnd() % npool] : rnd(); break;
    case 3: regs->fs_base ^= 1ull << (rnd() % 16); break;
    case 4: regs->rbp = rnd(); break;
    default: break;
    }
    return nu;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int fuzz_walk(const char *dir, long iterations)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char *names[512];
    size_t nn = 0;
    struct capfile caps[512];
    size_t nc = 0;

    if (!d) {
        perror(dir);
        return 2;
    }
    while ((e = readdir(d)) && nn < 512)
        if (strncmp(e->d_name, "cap-", 4) == 0 && (names[nn] = strdup(e->d_name)))
            nn++;
    closedir(d);
    qsort(names, nn, sizeof *names, cmp_name);
    for (size_t i = 0; i < nn; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (capfile__read(path, &caps[nc]) == 0)
            nc++;
        free(names[i]);
    }
    if (!nc) {
        fprintf(stderr, "fuzz: no captures in %s\n", dir);
        return 2;
    }

    struct modset ms;
    size_t changed;
    struct rts rts;
    struct unwinder uw;
    /* The module list grows while a program starts: the capture that saw
     * the most modules knows them all. */
    size_t best = 0;
    for (size_t i = 1; i < nc; i++)
        if (caps[i].nmods > caps[best].nmods)
            best = i;
    if (modset__init_saved(&ms, caps[best].mods, caps[best].nmods, &changed) < 0 || !ms.main) {
        fprintf(stderr, "fuzz: cannot open the captured program's files\n");
        return 2;
    }
    rts__attach(&rts, &ms, 0);
    if (rts.ghc && rts.L) {
        /* No process to validate against: the captures came from a
         * validated recording. */
        rts.pending = false;
        rts.usable = true;
        rts.task_checked = true;
    }
    unwind__init(&uw, &ms, 0);
    uw.ghc = rts.ghc;
    uw.stg_return = rts.stg_return;
    uw.stg_run = rts.stg_run;

    /* Info pointers that really are frames in these captures: the most
     * dangerous kind of garbage is the plausible kind. */
    uint64_t pool[4096];
    size_t npool = 0;
    for (size_t i = 0; i < nc && npool < 4096; i++)
        for (size_t r = 0; r < caps[i].img.n && npool < 4096; r++)
            for (size_t o = 0; o + 8 <= caps[i].img.reg[r].len && npool < 4096; o += 8) {
                uint64_t w;
                memcpy(&w, caps[i].img.buf + caps[i].img.reg[r].off + o, 8);
                struct module *m = modset__find(&ms, w);
                if (m && m->is_haskell && (rnd() % 16) == 0)
                    pool[npool++] = w;
            }

    static struct raw_frame frames[MAX_FRAMES];
    uint64_t max_ns = 0, total_ns = 0, total_frames = 0;
    for (long it = 0; it < iterations; it++) {
        struct capfile *c = &caps[(size_t)it % nc];
        struct undo u[16];
        struct user_regs_struct regs = c->regs;
        int nu = it % 8 == 0 ? 0 : damage(c, u, 16, &regs, pool, npool);
        struct thread_capture tc = {.tid = c->tid, .state = c->state, .soft = c->partial,
                                    .regs = regs};
        uint64_t t0 = now_ns();
        int n;
        if (rts.usable) {
            struct hs_sample hs;
            hs_sample__build(&rts, &uw, &tc, c->comm, &c->img, frames, MAX_FRAMES, &hs);
            n = hs.n;
            if (it % 4 == 1) {
                /* The walk's cache of info tables must change nothing:
                 * the same walk without it gives the same frames. */
                static struct raw_frame again[MAX_FRAMES];
                struct hs_sample hs2;
                struct stg_info_cache *cache = rts.walk_cache;
                rts.walk_cache = NULL;
                hs_sample__build(&rts, &uw, &tc, c->comm, &c->img, again, MAX_FRAMES, &hs2);
                rts.walk_cache = cache;
                if (hs2.n != n || hs2.tag != hs.tag || hs2.err != hs.err ||
                    memcmp(again, frames, (size_t)n * sizeof *frames) != 0) {
                    fprintf(stderr, "fuzz: the walk differs without its cache at iteration %ld\n",
                            it);
                    return 1;
                }
            }
        } else {
            struct unwind_result ur;
            unwind__stack(&uw, &regs, c->partial, &c->img, frames, MAX_FRAMES, &ur);
            n = ur.n;
        }
        uint64_t dt = now_ns() - t0;
        if (n < 0 || n > MAX_FRAMES) {
            fprintf(stderr, "fuzz: %d frames at iteration %ld\n", n, it);
            return 1;
        }
        for (int f = 0; f < n; f++)
            if (frames[f].kind >= FK__COUNT) {
                fprintf(stderr, "fuzz: frame kind %u at iteration %ld\n", frames[f].kind, it);
                return 1;
            }
        total_frames += (uint64_t)n;
        total_ns += dt;
        if (dt > max_ns)
            max_ns = dt;
        while (nu-- > 0)
            memcpy(u[nu].at, &u[nu].old, u[nu].len);
    }
    printf("walk: %zu captures (%s), iterations %ld, max us %.0f, mean us %.1f, frames/walk "
           "%.1f\n",
           nc, rts.usable ? "GHC" : "C", iterations, (double)max_ns / 1e3,
           (double)total_ns / 1e3 / (double)iterations,
           (double)total_frames / (double)iterations);
    unwind__free(&uw);
    rts__free(&rts);
    modset__free(&ms);
    for (size_t i = 0; i < nc; i++)
        capfile__free(&caps[i]);
    return 0;
}

/* A copy of good[0..len) (len >= 16) damaged one way: cut short, bits
 * flipped, a length-like word written, or a run of random bytes; in *n
 * its length, and exactly that many bytes allocated, so that a read past
 * them is AddressSanitizer's. */
static uint8_t *damaged(const uint8_t *good, size_t len, size_t *n)
{
    uint8_t *m = malloc(len);
    memcpy(m, good, len);
    *n = len;
    switch (rnd() % 4) {
    case 0: *n = (size_t)(rnd() % len); break;
    case 1:
        for (int k = 0; k < 1 + (int)(rnd() % 4); k++)
            m[rnd() % len] ^= (uint8_t)(1u << (rnd() % 8));
        break;
    case 2: {
        size_t at = (size_t)(rnd() % (len - 4));
        uint32_t v = rnd() % 3 ? (uint32_t)(rnd() % 100000) : 0xffffffffu;
        memcpy(m + at, &v, 4);
        break;
    }
    default:
        for (size_t k = (size_t)(rnd() % len), e2 = k + rnd() % 64; k < e2 && k < len; k++)
            m[k] = (uint8_t)rnd();
    }
    uint8_t *exact = malloc(*n ? *n : 1);
    memcpy(exact, m, *n);
    free(m);
    return exact;
}

static int fuzz_raw(const char *file, long iterations)
{
    FILE *f = fopen(file, "rb");
    static uint8_t good[64 << 20];
    size_t len;
    uint64_t max_ns = 0;
    long accepted = 0;

    if (!f) {
        perror(file);
        return 2;
    }
    len = fread(good, 1, sizeof good, f);
    fclose(f);
    if (len < 16)
        return 2;
    for (long it = 0; it < iterations; it++) {
        size_t n;
        uint8_t *exact = damaged(good, len, &n);
        struct profile p;
        char err[256];
        uint64_t t0 = now_ns();
        if (raw__parse(exact, n, &p, err, sizeof err) == 0) {
            accepted++;
            profile__free(&p);
        }
        uint64_t dt = now_ns() - t0;
        if (dt > max_ns)
            max_ns = dt;
        free(exact);
    }
    printf("raw: iterations %ld, accepted %ld, max us %.0f\n", iterations, accepted,
           (double)max_ns / 1e3);
    return 0;
}

/* The .eh_frame of elf, damaged: whatever is indexed lies in the bytes
 * given, sorted. Fails (1) on an entry that does not. */
static int fuzz_eh_frame(const char *file, long iterations)
{
    int fd = open(file, O_RDONLY);
    Elf *elf = NULL;
    Elf_Scn *scn = NULL;
    Elf_Data *d = NULL;
    GElf_Shdr sh;
    size_t shstrndx;
    uint64_t max_ns = 0, indexed = 0;

    elf_version(EV_CURRENT);
    if (fd < 0 || !(elf = elf_begin(fd, ELF_C_READ, NULL)) ||
        elf_getshdrstrndx(elf, &shstrndx) != 0) {
        fprintf(stderr, "%s: not an ELF file\n", file);
        return 2;
    }
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        const char *nm;
        if (gelf_getshdr(scn, &sh) && (nm = elf_strptr(elf, shstrndx, sh.sh_name)) &&
            strcmp(nm, ".eh_frame") == 0) {
            d = elf_getdata(scn, NULL);
            break;
        }
    }
    if (!d || d->d_size < 16) {
        fprintf(stderr, "%s: no .eh_frame\n", file);
        return 2;
    }
    for (long it = 0; it < iterations; it++) {
        size_t n;
        uint8_t *exact = damaged(d->d_buf, d->d_size, &n);
        struct eh_frame_entry *e;
        uint64_t t0 = now_ns();
        long k = eh_frame__index(exact, n, sh.sh_addr, 0, 1, UINT64_MAX, &e);
        uint64_t dt = now_ns() - t0;
        if (dt > max_ns)
            max_ns = dt;
        for (long i = 0; i < k; i++) {
            if (e[i].fde < 0 || (size_t)e[i].fde >= n || (i && e[i - 1].start > e[i].start)) {
                fprintf(stderr, "iteration %ld: entry %ld of %ld: FDE at %d of %zu bytes\n",
                        it, i, k, e[i].fde, n);
                return 1;
            }
            /* each FDE indexed read alone, as symbolizing reads it: it
             * starts where the index says */
            uint64_t start, size;
            if (eh_frame__function(exact, n, (size_t)e[i].fde, sh.sh_addr, 0, &start, &size) &&
                start != sh.sh_addr + (uint64_t)(int64_t)e[i].start) {
                fprintf(stderr, "iteration %ld: the FDE at %d starts at %#llx, indexed at %#llx\n",
                        it, e[i].fde, (unsigned long long)start,
                        (unsigned long long)(sh.sh_addr + (uint64_t)(int64_t)e[i].start));
                return 1;
            }
        }
        indexed += k > 0 ? (uint64_t)k : 0;
        free(e);
        free(exact);
    }
    printf("eh_frame: iterations %ld, entries %.1f each, max us %.0f\n", iterations,
           iterations ? (double)indexed / (double)iterations : 0.0, (double)max_ns / 1e3);
    elf_end(elf);
    close(fd);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: fuzz walk DIR N | fuzz raw FILE N | fuzz eh_frame ELF N\n");
        return 2;
    }
    long n = atol(argv[3]);
    if (strcmp(argv[1], "walk") == 0)
        return fuzz_walk(argv[2], n);
    if (strcmp(argv[1], "raw") == 0)
        return fuzz_raw(argv[2], n);
    if (strcmp(argv[1], "eh_frame") == 0)
        return fuzz_eh_frame(argv[2], n);
    return 2;
}
