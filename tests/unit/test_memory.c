/* Memory images, batched remote reads and maps parsing: the bounds checks
 * every walker relies on. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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
