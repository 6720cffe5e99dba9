/* Memory images, batched remote reads and maps parsing: the bounds checks
 * every walker relies on. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sampler/capfile.h"
#include "sampler/capture.h"
#include "sampler/memimg.h"
#include "sampler/remote.h"
#include "symbolizer/maps.h"
#include "tests/unit/unit.h"

TEST(memimg_bounds)
{
    struct memimg m;
    uint64_t w;
    uint8_t b[16];
    CHECK_EQ_INT(memimg__init(&m, 64, 4), 0);
    uint8_t *p = memimg__add(&m, 0x1000, 32);
    CHECK(p != NULL);
    for (int i = 0; i < 32; i++)
        p[i] = (uint8_t)i;
    CHECK_EQ_INT(memimg__read_u64(&m, 0x1000, &w), 0);
    CHECK_EQ_INT(w, 0x0706050403020100ull);
    CHECK_EQ_INT(memimg__read(&m, 0x1000 + 24, b, 8), 0);   /* last word */
    CHECK(memimg__read(&m, 0x1000 + 25, b, 8) < 0);         /* one byte past */
    CHECK(memimg__read(&m, 0x0fff, b, 2) < 0);              /* one byte before */
    CHECK(memimg__read(&m, UINT64_MAX - 3, b, 8) < 0);      /* wraps */
    CHECK(memimg__add(&m, 0x2000, 64) == NULL);             /* does not fit */
    CHECK(memimg__add(&m, UINT64_MAX - 4, 8) == NULL);      /* wraps */
    memimg__set_len(&m, 0x1000, 10);
    CHECK(memimg__read(&m, 0x1000 + 8, b, 4) < 0);
    CHECK_EQ_INT(memimg__read(&m, 0x1000 + 8, b, 2), 0);
    memimg__free(&m);
}

/* A capture found unusable is forgotten with everything it added. */
TEST(memimg_rewind)
{
    struct memimg m;
    uint8_t b[8];
    CHECK_EQ_INT(memimg__init(&m, 64, 4), 0);
    memset(memimg__add(&m, 0x1000, 16), 1, 16);
    memimg__note(&m, 0x1000, 16);
    struct memimg_mark k = memimg__mark(&m);
    memset(memimg__add(&m, 0x2000, 16), 2, 16);
    memimg__note(&m, 0x2000, 16);
    CHECK_EQ_INT(memimg__read(&m, 0x2000, b, 8), 0);
    memimg__rewind(&m, k);
    CHECK(memimg__read(&m, 0x2000, b, 8) < 0);
    CHECK_EQ_INT(memimg__read(&m, 0x1000, b, 8), 0);
    CHECK_EQ_INT(b[0], 1);
    CHECK_EQ_INT((int)m.nnotes, 1);
    /* its room is free again: 48 bytes fit where only 32 did */
    CHECK(memimg__add(&m, 0x3000, 48) != NULL);
    /* a mark from a later state does not apply to an earlier one */
    memimg__reset(&m);
    memimg__rewind(&m, k);
    CHECK_EQ_INT((int)m.n, 0);
    memimg__free(&m);
}

/* Overlapping regions: the newest holds, unless the last lookup's region
 * holds the whole range (a walk stays in the capture it started in). */
TEST(memimg_overlap)
{
    struct memimg m;
    uint8_t b;
    CHECK_EQ_INT(memimg__init(&m, 128, 4), 0);
    memset(memimg__add(&m, 0x1000, 32), 1, 32);
    memset(memimg__add(&m, 0x1010, 32), 2, 32);
    CHECK_EQ_INT(memimg__read(&m, 0x1018, &b, 1), 0);
    CHECK_EQ_INT(b, 2);
    CHECK_EQ_INT(memimg__read(&m, 0x1000, &b, 1), 0); /* only the first */
    CHECK_EQ_INT(b, 1);
    CHECK_EQ_INT(memimg__read(&m, 0x1018, &b, 1), 0); /* both: the last found */
    CHECK_EQ_INT(b, 1);
    memimg__forget_hint(&m); /* a walk's start: no last found, the newest */
    CHECK_EQ_INT(memimg__read(&m, 0x1018, &b, 1), 0);
    CHECK_EQ_INT(b, 2);
    CHECK_EQ_INT(memimg__read(&m, 0x1028, &b, 1), 0); /* only the second */
    CHECK_EQ_INT(b, 2);
    CHECK(memimg__read(&m, 0x1018, &b, 40) < 0);      /* neither holds it all */
    memimg__reset(&m);
    CHECK(memimg__read(&m, 0x1028, &b, 1) < 0);       /* the hint is no region */
    memimg__free(&m);
}

/* The page index finds what a scan of every region finds: the last
 * lookup's region if it holds the range, else the newest that does; through
 * overlapping regions over many pages, rewinds and resets. */
TEST(memimg_index_matches_scan)
{
    struct memimg m;
    uint64_t seed = 12345;
#define RND() (seed = seed * 6364136223846793005ull + 1442695040888963407ull, seed >> 33)
    CHECK_EQ_INT(memimg__init(&m, 1 << 20, 256), 0);
    size_t last = SIZE_MAX; /* the region the previous hit was in */
    for (int round = 0; round < 200; round++) {
        if (round % 50 == 0) {
            memimg__reset(&m);
            last = SIZE_MAX;
        }
        struct memimg_mark k = memimg__mark(&m);
        int adds = 1 + (int)(RND() % 6);
        for (int a = 0; a < adds; a++) {
            uint64_t addr = 0x10000 + (RND() % 64) * 1024 + RND() % 512;
            size_t len = 8 + RND() % 20000;
            uint8_t *p = memimg__add(&m, addr, len);
            if (p)
                memset(p, (int)(m.n & 0xff), len);
        }
        if (RND() % 4 == 0) {
            memimg__rewind(&m, k);
            last = SIZE_MAX;
        }
        for (int q = 0; q < 200; q++) {
            uint64_t addr = 0x10000 + RND() % (70 * 1024);
            size_t len = 1 + RND() % 64;
            const uint8_t *want = NULL;
            size_t at = SIZE_MAX;
            if (last < m.n && addr >= m.reg[last].addr &&
                addr + len <= (uint64_t)m.reg[last].addr + m.reg[last].len)
                at = last;
            for (size_t i = m.n; at == SIZE_MAX && i-- > 0;)
                if (addr >= m.reg[i].addr && addr + len <= (uint64_t)m.reg[i].addr + m.reg[i].len)
                    at = i;
            if (at != SIZE_MAX) {
                want = m.buf + m.reg[at].off + (addr - m.reg[at].addr);
                last = at;
            }
            if (memimg__ptr(&m, addr, len) != want)
                UNIT_FAIL("round %d: lookup of %zu bytes at 0x%llx: not the region a scan finds",
                          round, len, (unsigned long long)addr);
        }
    }
    CHECK(!m.unindexed);
#undef RND
    memimg__free(&m);
}

/* A saved capture comes back as the walkers saw it, including whether its
 * registers were all there (a stop) or only pc and sp (no stop). */
TEST(capfile_round_trip)
{
    struct modset ms;
    struct memimg img;
    struct user_regs_struct regs;
    struct capfile c;
    char path[] = "/tmp/hsspy-capfile-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    memset(&ms, 0, sizeof ms);
    memset(&regs, 0, sizeof regs);
    regs.rip = 0x401000;
    regs.rsp = 0x7ffd0000;
    CHECK_EQ_INT(memimg__init(&img, 64, 4), 0);
    memset(memimg__add(&img, 0x7ffd0000, 32), 7, 32);
    for (int partial = 0; partial <= 1; partial++) {
        CHECK_EQ_INT(capfile__write(path, &ms, 10, 11, "prog", 'S', partial, &regs, &img), 0);
        CHECK_EQ_INT(capfile__read(path, &c), 0);
        CHECK_EQ_INT(c.partial, partial);
        CHECK_EQ_INT(c.tid, 11);
        CHECK_EQ_INT(c.state, 'S');
        CHECK(c.regs.rip == 0x401000 && c.regs.rsp == 0x7ffd0000);
        uint64_t w;
        CHECK_EQ_INT(memimg__read_u64(&c.img, 0x7ffd0008, &w), 0);
        CHECK(w == 0x0707070707070707ull);
        capfile__free(&c);
    }
    unlink(path);
    memimg__free(&img);
}

TEST(memimg_save_load)
{
    struct memimg a, b;
    uint8_t *img;
    size_t len;
    uint64_t w;
    memimg__init(&a, 256, 8);
    memimg__init(&b, 256, 8);
    memset(memimg__add(&a, 0x10, 16), 0xab, 16);
    memset(memimg__add(&a, 0x100, 8), 0xcd, 8);
    CHECK_EQ_INT(memimg__save(&a, &img, &len), 0);
    CHECK_EQ_INT(memimg__load(&b, img, len), 0);
    CHECK_EQ_INT(memimg__read_u64(&b, 0x100, &w), 0);
    CHECK_EQ_INT(w, 0xcdcdcdcdcdcdcdcdull);
    /* Every truncation is rejected or loads a prefix; none reads past the end. */
    for (size_t cut = 0; cut < len; cut++) {
        uint8_t *t = malloc(cut ? cut : 1);
        memcpy(t, img, cut);
        int r = memimg__load(&b, t, cut);
        CHECK(r < 0);
        free(t);
    }
    free(img);
    memimg__free(&a);
    memimg__free(&b);
}

TEST(remote_batch_partial)
{
    /* Two pages, the second unmapped: a read across the hole is short, and
     * the batch carries on with the requests after it. */
    long pg = sysconf(_SC_PAGESIZE);
    uint8_t *map = mmap(NULL, (size_t)pg * 3, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(map != MAP_FAILED);
    munmap(map + pg, (size_t)pg);
    memset(map, 0x11, (size_t)pg);
    memset(map + 2 * pg, 0x22, (size_t)pg);
    uint8_t a[64], b[128], c[16];
    struct remote_req r[3] = {
        {(uint64_t)(uintptr_t)map, a, sizeof a, 0},
        {(uint64_t)(uintptr_t)(map + pg - 32), b, sizeof b, 0},
        {(uint64_t)(uintptr_t)(map + 2 * pg), c, sizeof c, 0},
    };
    size_t full = remote__batch(getpid(), r, 3);
    CHECK_EQ_INT(full, 2);
    CHECK_EQ_INT(r[0].got, 64);
    CHECK_EQ_INT(r[1].got, 32);
    CHECK_EQ_INT(r[2].got, 16);
    CHECK_EQ_INT(c[0], 0x22);
    CHECK(remote__read(getpid(), (uint64_t)(uintptr_t)(map + pg), c, 8) < 0);
    munmap(map, (size_t)pg);
    munmap(map + 2 * pg, (size_t)pg);
}

/* A thread's capture reads ahead, with its stack and in one batch, what
 * its last capture needed (memimg__note, kept by capture__remember): each
 * range lands in the image, a stack-chunk-sized one from a little lower
 * (stacks grow down), one already captured is not read twice, and an
 * unreadable one costs nothing to the others. */
TEST(capture_read_ahead)
{
    long pg = sysconf(_SC_PAGESIZE);
    uint8_t *map = mmap(NULL, (size_t)pg * 4, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(map != MAP_FAILED);
    munmap(map + pg, (size_t)pg); /* a hole */
    for (long i = 0; i < 4 * pg; i++)
        if (i < pg || i >= 2 * pg)
            map[i] = (uint8_t)(i / 8);
    uint64_t base = (uint64_t)(uintptr_t)map, w, stackword = 0x5eed;
    struct capture c;
    struct tthread th;
    CHECK_EQ_INT(capture__init(&c, 4096), 0);
    CHECK_EQ_INT(capture__reserve(&c, 4, 64 * 1024, 0), 0);

    /* First capture: nothing to read ahead; the ranges it then needs. */
    memset(&th, 0, sizeof th);
    th.tid = 1;
    th.soft_sp = (uint64_t)(uintptr_t)&stackword;
    capture__begin(&c);
    capture__soft(&c, getpid(), &th);
    CHECK_EQ_INT(c.n, 1);
    memimg__note(&c.img, base + 16, 32);              /* a struct */
    memimg__note(&c.img, base + pg + 8, 8);            /* in the hole */
    memimg__note(&c.img, base + 2 * pg + 2048, 4096);  /* a stack chunk */
    capture__remember(&c, &th, &c.th[0]);
    CHECK_EQ_INT(th.nahead, 3);

    /* The red zone below the stack pointer comes with the stack: an
     * epilogue's popped register is still described as saved there. */
    CHECK(memimg__ptr(&c.img, (uint64_t)(uintptr_t)&stackword - 128, 128) != NULL);

    /* Next capture: all of it arrives with the stack. */
    capture__begin(&c);
    capture__soft(&c, getpid(), &th);
    CHECK_EQ_INT(memimg__read_u64(&c.img, (uint64_t)(uintptr_t)&stackword, &w), 0);
    CHECK_EQ_INT(w, 0x5eed);
    CHECK_EQ_INT(memimg__read(&c.img, base + 16, &w, 8), 0);
    CHECK_EQ_INT(w, 0x0202020202020202ull);
    CHECK(memimg__ptr(&c.img, base + pg + 8, 8) == NULL);
    CHECK(memimg__ptr(&c.img, base + 2 * pg + 2048, 4096) != NULL);
    CHECK(memimg__ptr(&c.img, base + 2 * pg + 1024, 1024 + 4096) != NULL); /* read lower */
    CHECK_EQ_INT(memimg__read_u64(&c.img, base + 3 * pg, &w), 0);
    CHECK_EQ_INT(w, 0x0101010101010101ull * (uint8_t)(3 * pg / 8));
    size_t regions = c.img.n;

    /* A second thread with the same struct to read, captured at its own
     * stop, while the struct changed (a Capability shared by threads
     * stopped one after another): read again, not taken from the first
     * thread's capture. Each thread's walk sees its own copy. */
    struct tthread th2 = th;
    th2.tid = 2;
    th2.nahead = 1;
    memset(map + 16, 0x77, 8);
    capture__soft(&c, getpid(), &th2);
    CHECK_EQ_INT(c.img.n, regions + 3); /* its stack, the red zone, the struct */
    CHECK(memimg__ptr_own(&c.img, base + 16, 32) != NULL);
    CHECK_EQ_INT(c.th[1].first_region, regions);
    memimg__set_limit(&c.img, c.th[1].first_region); /* the first thread's walk */
    CHECK_EQ_INT(memimg__read(&c.img, base + 16, &w, 8), 0);
    CHECK_EQ_INT(w, 0x0202020202020202ull);
    memimg__set_limit(&c.img, SIZE_MAX); /* the second's */
    CHECK_EQ_INT(memimg__read(&c.img, base + 16, &w, 8), 0);
    CHECK_EQ_INT(w, 0x7777777777777777ull);
    /* A limit before every copy of it: not captured, for that walk. */
    memimg__set_limit(&c.img, 1); /* (the first thread's C stack only) */
    CHECK(memimg__ptr(&c.img, base + 16, 32) == NULL);
    memimg__set_limit(&c.img, SIZE_MAX);
    capture__free(&c);
    munmap(map, (size_t)pg);
    munmap(map + 2 * pg, (size_t)pg * 2);
}

/* Every thread captured in a tick keeps the ranges its capture needed,
 * however many threads there are: 200 threads blocked in short calls,
 * each needing the runtime's seven (Task slot, Task, InCall, Capability,
 * TSO, chunk header, live stack), read them at their next capture in one
 * batch with the stack. (The image's room for notes held 256: from the
 * 37th thread on, each kept none, and read them in seven calls.) */
TEST(capture_read_ahead_many_threads)
{
    enum { THREADS = 200, RANGES = 7 };
    static uint64_t words[THREADS][RANGES];
    static struct tthread th[THREADS];
    uint64_t stackword = 0x5eed, w;
    struct capture c;
    CHECK_EQ_INT(capture__init(&c, 512), 0);
    CHECK_EQ_INT(capture__reserve(&c, THREADS, 0, THREADS * RANGES), 0);
    capture__begin(&c);
    for (int i = 0; i < THREADS; i++) {
        th[i].tid = 1000 + i;
        th[i].soft_sp = (uint64_t)(uintptr_t)&stackword;
        struct thread_capture *tc = capture__soft(&c, getpid(), &th[i]);
        CHECK(tc != NULL);
        for (int k = 0; k < RANGES; k++)
            memimg__note(&c.img, (uint64_t)(uintptr_t)&words[i][k], 8);
        capture__remember(&c, &th[i], tc);
        if (th[i].nahead != RANGES)
            UNIT_FAIL("thread %d of %d kept %d of its %d ranges", i + 1, THREADS,
                      (int)th[i].nahead, RANGES);
    }
    /* The next tick: each thread's ranges come in its one batch. */
    capture__begin(&c);
    for (int i = 0; i < THREADS; i++)
        for (int k = 0; k < RANGES; k++)
            words[i][k] = (uint64_t)(i * RANGES + k);
    unsigned long calls = remote__calls();
    for (int i = 0; i < THREADS; i++) {
        struct thread_capture *tc = capture__soft(&c, getpid(), &th[i]);
        CHECK(tc != NULL);
        for (int k = 0; k < RANGES; k++) {
            CHECK_EQ_INT(memimg__read_u64(&c.img, (uint64_t)(uintptr_t)&words[i][k], &w), 0);
            CHECK_EQ_INT(w, (uint64_t)(i * RANGES + k));
        }
        capture__remember(&c, &th[i], tc);
    }
    CHECK_EQ_INT(remote__calls() - calls, THREADS);
    capture__free(&c);
}

TEST(maps_parse)
{
    struct maps m;
    const char *text =
        "7f0000001000-7f0000002000 r-xp 00001000 fd:01 1234  /usr/lib/libx.so (deleted)\n"
        "00400000-00401000 r--p 00000000 fd:01 99                         /bin/prog\n"
        "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                  [stack]\n"
        "7f0000003000-7f0000004000 rw-p 00000000 00:00 0 \n";
    CHECK_EQ_INT(maps__parse(text, &m), 0);
    CHECK_EQ_INT(m.n, 4);
    CHECK_EQ_INT(m.e[0].start, 0x400000);
    CHECK_EQ_STR(m.e[0].path, "/bin/prog");
    CHECK_EQ_STR(m.e[1].path, "/usr/lib/libx.so (deleted)");
    CHECK_EQ_INT(m.e[1].offset, 0x1000);
    CHECK_EQ_STR(m.e[1].perms, "r-xp");
    CHECK(map_entry__is_file(&m.e[0]));
    CHECK(!map_entry__is_file(&m.e[2]));
    CHECK_EQ_STR(m.e[2].path, "");
    CHECK(maps__find(&m, 0x7f0000001fff) == &m.e[1]);
    CHECK(maps__find(&m, 0x7f0000002000) == NULL);
    CHECK(maps__find(&m, 0x3fffff) == NULL);
    maps__free(&m);
    CHECK(maps__parse("garbage line\n", &m) < 0);
    CHECK(maps__parse("2000-1000 r-xp 0 0:0 0 /x\n", &m) < 0);
}

UNIT_MAIN()
