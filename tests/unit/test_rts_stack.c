/* Where a stopped thread running Haskell code keeps its STG stack chunk,
 * from its registers (SpLim in r15, Sp in rbp), against GHC 9.0.2's
 * threaded layout: the ranges rts__guess_stack reads ahead with the C
 * stack, and rts__capture_thread and rts__view using them instead of the
 * thread's TSO, or the TSO when the registers are a C function's. The
 * "target" is this process: its Task, Capability, TSO and stack chunk are
 * laid out in a buffer here and read with process_vm_readv, as from a
 * stopped thread. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "haskell-stack/rts.h"
#include "sampler/memimg.h"
#include "sampler/remote.h"
#include "tests/unit/unit.h"

#define STACK_INFO 0x4a0000ull
#define TSO_INFO 0x4c0000ull
#define UNDERFLOW_INFO 0x4b0000ull
#define CHUNK 32768u

struct target {
    uint8_t *mem; /* 64 KB: Task, Capability, TSO at the start; the chunk at 32 KB */
    uint64_t my_task, task, cap, tso, obj, start, end;
    struct rts r;
    struct user_regs_struct regs;
};

static void put(uint64_t addr, struct rts_layout__field f, uint64_t v)
{
    if (!rts_layout__has(f))
        UNIT_FAIL("layout lacks a field this test needs");
    memcpy((void *)(uintptr_t)(addr + (uint64_t)(int64_t)f.off), &v, f.size);
}

/* One thread holding its capability, running Haskell code on a 32 KB chunk
 * whose live part is its last 256 bytes. */
static void setup(struct target *t)
{
    memset(t, 0, sizeof *t);
    t->r.L = rts_layout__find("9.0.2", true, false, false);
    if (!t->r.L)
        UNIT_FAIL("no 9.0.2 layout");
    const struct rts_layout *L = t->r.L;
    t->r.usable = true;
    t->r.threaded = true;
    t->r.stg_STACK_info = STACK_INFO;
    t->r.stg_TSO_info = TSO_INFO;
    t->r.stg_underflow_info = UNDERFLOW_INFO;
    t->mem = aligned_alloc(4096, 2 * CHUNK);
    if (!t->mem)
        UNIT_FAIL("out of memory");
    memset(t->mem, 0, 2 * CHUNK);
    uint64_t base = (uint64_t)(uintptr_t)t->mem;
    t->my_task = base;
    t->task = base + 0x100;
    t->cap = base + 0x1000;
    t->tso = base + 0x4000;
    t->obj = base + CHUNK;
    t->start = t->obj + (uint64_t)L->stack.stack.off;
    t->end = t->obj + CHUNK;
    t->r.my_task_is_tls = false;
    t->r.my_task = t->my_task;
    memcpy(t->mem, &t->task, 8);
    put(t->task, L->task.cap, t->cap);
    put(t->cap, L->capability.running_task, t->task);
    put(t->cap, L->capability.in_haskell, 1);
    struct rts_layout__field cur = L->reg.rCurrentTSO;
    cur.off += L->capability.r.off;
    put(t->cap, cur, t->tso);
    put(t->tso, L->header.info, TSO_INFO);
    put(t->tso, L->tso.stackobj, t->obj);
    put(t->obj, L->header.info, STACK_INFO);
    put(t->obj, L->stack.stack_size, (t->end - t->start) / 8);
    put(t->obj, L->stack.sp, t->start + 64); /* stale: saved when it last stopped */
    t->regs.fs_base = 0x7000; /* a thread pointer, so that a Task is looked for */
    put(t->task, L->task.id, t->regs.fs_base); /* (the Task's: its thread's) */
    t->regs.r15 = t->start + (uint64_t)L->misc.RESERVED_STACK_WORDS * 8;
    t->regs.rbp = t->end - 256;
}

/* Read ranges into the image (those it holds already skipped), one
 * read each. */
static void read_ranges(struct memimg *img, const struct memimg_note *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (memimg__ptr_own(img, r[i].addr, r[i].len))
            continue;
        uint8_t *p = memimg__add(img, r[i].addr, r[i].len);
        struct remote_req q = {r[i].addr, p, r[i].len, 0};
        remote__batch(getpid(), &q, 1);
        memimg__set_len(img, r[i].addr, q.got);
    }
}

/* What a capture does first: read the guessed ranges into the image. */
static size_t read_guess(struct target *t, struct memimg *img)
{
    struct memimg_note g[2];
    size_t n = rts__guess_stack(&t->r, &t->regs, g, 2);
    read_ranges(img, g, n);
    return n;
}

TEST(guess_stack_ranges)
{
    struct target t;
    struct memimg_note g[2];
    setup(&t);
    uint64_t hdr = (uint64_t)t.r.L->stack.stack.off;

    /* Sp far from the header: the header, and Sp to the end of a chunk of
     * GHC's default size (none seen yet). */
    CHECK_EQ_INT(rts__guess_stack(&t.r, &t.regs, g, 2), 2);
    CHECK_EQ_INT(g[0].addr, t.obj);
    CHECK_EQ_INT(g[0].len, hdr);
    CHECK_EQ_INT(g[1].addr, t.regs.rbp);
    CHECK_EQ_INT(g[1].len, 256);
    /* Room for one range only: none. */
    CHECK_EQ_INT(rts__guess_stack(&t.r, &t.regs, g, 1), 0);

    /* Sp near the header: one range, header and live part together, as far
     * as the chunk size last seen says. */
    t.r.chunk_bytes = 1024;
    t.regs.rbp = t.obj + 512;
    CHECK_EQ_INT(rts__guess_stack(&t.r, &t.regs, g, 2), 1);
    CHECK_EQ_INT(g[0].addr, t.obj);
    CHECK_EQ_INT(g[0].len, 1024);
    /* Beyond the size last seen: GHC's default. */
    t.regs.rbp = t.obj + 2048;
    CHECK_EQ_INT(rts__guess_stack(&t.r, &t.regs, g, 2), 1);
    CHECK_EQ_INT(g[0].len, 32768);
    /* Beyond that too: the header alone; the live part is read once known. */
    t.regs.rbp = t.obj + 40000;
    CHECK_EQ_INT(rts__guess_stack(&t.r, &t.regs, g, 2), 1);
    CHECK_EQ_INT(g[0].addr, t.obj);
    CHECK_EQ_INT(g[0].len, hdr);

    /* rts__saw_stack learns the size from a walk's view. */
    struct rts_view v = {.stack = t.obj, .stack_end = t.obj + 4096};
    rts__saw_stack(&t.r, &v);
    CHECK_EQ_INT(t.r.chunk_bytes, 4096);
    v.stack_end = t.obj + (1u << 30); /* nonsense: not learnt */
    rts__saw_stack(&t.r, &v);
    CHECK_EQ_INT(t.r.chunk_bytes, 4096);

    /* Registers that are not a running Haskell thread's: nothing. */
    t.regs.rbp = t.regs.r15 + 8;
    t.regs.r15 |= 4; /* misaligned */
    CHECK_EQ_INT(rts__guess_stack(&t.r, &t.regs, g, 2), 0);
    t.regs.r15 &= ~(uint64_t)7;
    t.regs.rbp = t.regs.r15 - 8; /* Sp below SpLim */
    CHECK_EQ_INT(rts__guess_stack(&t.r, &t.regs, g, 2), 0);
    t.regs.rbp = t.regs.r15 + (1u << 20); /* further than any chunk */
    CHECK_EQ_INT(rts__guess_stack(&t.r, &t.regs, g, 2), 0);
    t.regs.r15 = 0x100;
    t.regs.rbp = 0x200; /* near address zero */
    CHECK_EQ_INT(rts__guess_stack(&t.r, &t.regs, g, 2), 0);
    t.r.usable = false;
    t.regs.r15 = t.start + 168;
    t.regs.rbp = t.end - 256;
    CHECK_EQ_INT(rts__guess_stack(&t.r, &t.regs, g, 2), 0);
    free(t.mem);
}

/* With the chunk read ahead from the registers, the capture needs neither
 * the TSO nor another read for the chunk, and the view walks that chunk
 * from Sp. */
TEST(capture_stack_from_registers)
{
    struct target t;
    struct memimg img;
    struct rts_view v;
    setup(&t);
    CHECK_EQ_INT(memimg__init(&img, 1 << 20, 64), 0);
    CHECK_EQ_INT(read_guess(&t, &img), 2);
    unsigned long before = remote__calls();
    rts__capture_thread(&t.r, getpid(), getpid(), &t.regs, &img);
    /* (the Task's slot, the Task and the Capability: not read ahead here) */
    CHECK_EQ_INT(remote__calls() - before, 3);
    CHECK(memimg__ptr(&img, t.tso, (size_t)t.r.L->tso.struct_size) == NULL);
    CHECK(memimg__ptr(&img, t.regs.rbp, (size_t)(t.end - t.regs.rbp)) != NULL);
    CHECK(rts__view(&t.r, &t.regs, &img, &v));
    CHECK(v.holds_cap && v.in_haskell);
    CHECK_EQ_INT(v.tso, t.tso);
    CHECK_EQ_INT(v.stack, t.obj);
    CHECK_EQ_INT(v.stack_end, t.end);
    memimg__free(&img);
    free(t.mem);
}

/* The thunks a running thread forces (its update frames' updatees) have
 * their headers copied while it is stopped, and noted for its next
 * capture, which reads them ahead with its stack: a thread still forcing
 * them then needs no read for them, one forcing others one read. A
 * suspended thread's are not noted (its OS thread runs other code). */
#define UPD_INFO 0x4d0000ull
#define THUNK_INFO 0x4e0000ull
static bool noted(const struct memimg *img, uint64_t addr, size_t len)
{
    for (size_t i = 0; i < img->nnotes; i++)
        if (img->notes[i].addr == addr && img->notes[i].len == len)
            return true;
    return false;
}

/* What a thread's next capture reads ahead: the ranges its last noted. */
static void read_noted(const struct memimg *last, struct memimg *img)
{
    read_ranges(img, last->notes, last->nnotes);
}

TEST(thunk_headers_noted_for_next_capture)
{
    struct target t;
    struct memimg img, next;
    uint64_t w;
    setup(&t);
    const struct rts_layout *L = t.r.L;
    uint64_t base = (uint64_t)(uintptr_t)t.mem, thunk = base + 0x6000, thunk2 = base + 0x6100;
    t.r.upd_frame_info[0] = UPD_INFO;
    memcpy((void *)(uintptr_t)thunk, &(uint64_t){THUNK_INFO}, 8);
    memcpy((void *)(uintptr_t)thunk2, &(uint64_t){THUNK_INFO + 64}, 8);
    /* An update frame at Sp, forcing thunk. */
    memcpy((void *)(uintptr_t)t.regs.rbp, &(uint64_t){UPD_INFO}, 8);
    put(t.regs.rbp, L->update_frame.updatee, thunk);

    /* First capture: its header read after the chunk's, and noted. */
    CHECK_EQ_INT(memimg__init(&img, 1 << 20, 64), 0);
    read_guess(&t, &img);
    unsigned long before = remote__calls();
    rts__capture_thread(&t.r, getpid(), getpid(), &t.regs, &img);
    CHECK_EQ_INT(remote__calls() - before, 4); /* Task's slot, Task, Capability; the header */
    CHECK(memimg__read_u64(&img, thunk, &w) == 0 && w == THUNK_INFO);
    CHECK(noted(&img, thunk, 8));

    /* Still forcing it: read ahead, no read after the stack's. */
    CHECK_EQ_INT(memimg__init(&next, 1 << 20, 64), 0);
    read_noted(&img, &next);
    before = remote__calls();
    rts__capture_thread(&t.r, getpid(), getpid(), &t.regs, &next);
    CHECK_EQ_INT(remote__calls() - before, 0);
    CHECK(memimg__read_u64(&next, thunk, &w) == 0 && w == THUNK_INFO);
    memimg__free(&img);

    /* Forcing another: the old one read ahead in vain, the new one read. */
    put(t.regs.rbp, L->update_frame.updatee, thunk2);
    CHECK_EQ_INT(memimg__init(&img, 1 << 20, 64), 0);
    read_noted(&next, &img);
    before = remote__calls();
    rts__capture_thread(&t.r, getpid(), getpid(), &t.regs, &img);
    CHECK_EQ_INT(remote__calls() - before, 1);
    CHECK(memimg__read_u64(&img, thunk2, &w) == 0 && w == THUNK_INFO + 64);
    CHECK(noted(&img, thunk2, 8) && !noted(&img, thunk, 8));
    memimg__free(&img);
    memimg__free(&next);

    /* A suspended thread's thunks: read, not noted. */
    CHECK_EQ_INT(memimg__init(&img, 1 << 20, 64), 0);
    put(t.obj, L->stack.sp, t.regs.rbp);
    rts__grab_stack(&t.r, getpid(), &img, t.tso);
    CHECK(memimg__read_u64(&img, thunk2, &w) == 0 && w == THUNK_INFO + 64);
    CHECK(!noted(&img, thunk2, 8));
    memimg__free(&img);
    free(t.mem);
}

/* Registers a C function has reused (an unsafe foreign call), or that
 * point at something that is not a STACK: the TSO decides, as without
 * registers. Its chunk is copied from Sp if rbp still holds it, else all of
 * it: the chunk's saved sp is stale while it runs. */
TEST(capture_stack_from_tso)
{
    struct target t;
    struct memimg img;
    struct rts_view v;
    for (int k = 0; k < 4; k++) {
        setup(&t);
        CHECK_EQ_INT(memimg__init(&img, 1 << 20, 64), 0);
        if (k == 0)
            t.regs.r15 = 0x7ffd12345670; /* a C value */
        else if (k == 1)
            t.regs.rbp = t.end + 8; /* Sp past the chunk's end */
        else if (k == 2)
            put(t.obj, t.r.L->header.info, STACK_INFO + 8); /* not a STACK */
        if (k == 3) {
            /* C code cleared rbp; the saved sp is above Sp, which the
             * stack has grown past since it was saved. */
            t.regs.r15 = 0x7ffd12345670;
            t.regs.rbp = 0;
            put(t.obj, t.r.L->stack.sp, t.end - 64);
        }
        uint64_t sp = t.regs.rbp;
        read_guess(&t, &img);
        rts__capture_thread(&t.r, getpid(), getpid(), &t.regs, &img);
        CHECK(memimg__ptr(&img, t.tso, (size_t)t.r.L->tso.struct_size) != NULL);
        CHECK(rts__view(&t.r, &t.regs, &img, &v));
        CHECK_EQ_INT(v.stack, t.obj);
        CHECK_EQ_INT(v.stack_end, t.end);
        if (k == 0) /* Sp still in the chunk: copied from there */
            CHECK(memimg__ptr(&img, sp, (size_t)(t.end - sp)) != NULL);
        else if (k == 3) /* Sp unknown: all of the chunk */
            CHECK(memimg__ptr(&img, t.start, (size_t)(t.end - t.start)) != NULL);
        memimg__free(&img);
        free(t.mem);
    }
}

/* The same thread in a safe call: its Task's InCall holds its TSO. */
static uint64_t suspend(struct target *t)
{
    const struct rts_layout *L = t->r.L;
    uint64_t incall = t->task + 0x400;
    put(t->task, L->task.incall, incall);
    put(incall, L->incall.suspended_tso, t->tso);
    put(t->cap, L->capability.running_task, 0);
    put(t->cap, L->capability.in_haskell, 0);
    struct rts_layout__field cur = L->reg.rCurrentTSO;
    cur.off += L->capability.r.off;
    put(t->cap, cur, 0);
    t->regs.r15 = 0x7ffd12345670; /* C code's registers */
    t->regs.rbp = 0x7ffd12345000;
    return incall;
}

/* resumeThread with its capability back, between clearing the InCall's
 * suspended TSO and setting rCurrentTSO: the TSO is in a register, and is
 * found there only for a thread stopped in resumeThread (suspendThread)
 * itself, and only where it points at a TSO; the stack is then walked from
 * the chunk's saved sp. */
TEST(capture_resuming_tso_from_registers)
{
    static struct code_range resume = {0x480000, 0x480100};
    for (int k = 0; k < 4; k++) {
        struct target t;
        struct memimg img;
        struct rts_view v;
        setup(&t);
        const struct rts_layout *L = t.r.L;
        t.r.rts_calls = (struct code_ranges){&resume, 1};
        uint64_t incall = suspend(&t);
        put(incall, L->incall.suspended_tso, 0);
        put(t.cap, L->capability.running_task, t.task);
        t.regs.rip = 0x480040;
        t.regs.r12 = t.cap + 8; /* points at something that is no TSO */
        t.regs.rbx = t.tso;
        if (k == 1)
            t.regs.rip = 0x480100; /* not in resumeThread */
        else if (k == 2)
            t.regs.rbx = t.tso + 4; /* not a pointer to an object */
        else if (k == 3)
            put(t.tso, L->header.info, TSO_INFO + 8); /* not a TSO */
        CHECK_EQ_INT(memimg__init(&img, 1 << 20, 64), 0);
        rts__capture_thread(&t.r, getpid(), getpid(), &t.regs, &img);
        CHECK(rts__view(&t.r, &t.regs, &img, &v));
        CHECK(v.holds_cap && !v.in_haskell && !v.suspended_tso);
        if (k == 0) {
            CHECK(v.resuming);
            CHECK_EQ_INT(v.tso, t.tso);
            CHECK_EQ_INT(v.stack, t.obj);
            CHECK_EQ_INT(v.saved_sp, t.start + 64);
            CHECK(memimg__ptr(&img, t.start + 64, (size_t)(t.end - t.start - 64)) != NULL);
        } else {
            CHECK(!v.resuming);
            CHECK_EQ_INT(v.tso, 0);
            CHECK_EQ_INT(v.stack, 0);
        }
        memimg__free(&img);
        free(t.mem);
    }
}

/* A compacting collection threads the pointers to the objects it moves: the
 * InCall's pointer to the suspended TSO then holds the TSO's header (the
 * first pointer of its chain) or the address of the next pointer to it,
 * tagged 1 or 2, and the TSO's header the address of the last pointer; so
 * too the TSO's pointer to its chunk. Such a TSO has no stack to walk until
 * the collection is over. A TSO whose header alone is not a TSO's is read
 * as it is (a copying collection leaves its fields as they were). */
TEST(suspended_tso_threaded_by_compaction)
{
    for (int k = 0; k < 6; k++) {
        struct target t;
        struct memimg img;
        struct rts_view v;
        setup(&t);
        const struct rts_layout *L = t.r.L;
        uint64_t incall = suspend(&t);
        if (k == 5) /* its header alone a chain's, or a forwarding pointer:
                     * its fields are as they were */
            put(t.tso, L->header.info, incall + (uint64_t)L->incall.suspended_tso.off + 1);
        if (k == 1) /* the InCall's pointer is on the way */
            put(incall, L->incall.suspended_tso, t.tso + 0x40 + 1);
        else if (k == 2) /* the InCall's pointer is the end of the chain */
            put(incall, L->incall.suspended_tso, TSO_INFO);
        else if (k == 3) /* the TSO's pointer to its chunk is */
            put(t.tso, L->tso.stackobj, STACK_INFO);
        else if (k == 4) /* ... or is on the way */
            put(t.tso, L->tso.stackobj, t.tso + 0x40 + 2);
        CHECK_EQ_INT(memimg__init(&img, 1 << 20, 64), 0);
        rts__capture_thread(&t.r, getpid(), getpid(), &t.regs, &img);
        CHECK(rts__view(&t.r, &t.regs, &img, &v));
        CHECK(v.suspended_tso != 0);
        if (k == 0 || k == 5) {
            CHECK(!v.tso_moving);
            CHECK(v.tso_in_gc == (k == 5));
            CHECK_EQ_INT(v.tso, t.tso);
            CHECK_EQ_INT(v.stack, t.obj);
            CHECK_EQ_INT(v.saved_sp, t.start + 64);
        } else {
            CHECK(v.tso_moving);
            CHECK_EQ_INT(v.tso, 0);
            CHECK_EQ_INT(v.stack, 0);
        }
        memimg__free(&img);
        free(t.mem);
    }
    CHECK(rts__threaded(STACK_INFO, STACK_INFO));
    CHECK(rts__threaded(0x7f0000001001ull, STACK_INFO));
    CHECK(rts__threaded(0x7f0000001002ull, STACK_INFO));
    CHECK(!rts__threaded(0x7f0000001000ull, STACK_INFO));
    CHECK(!rts__threaded(0, STACK_INFO));
}

/* A worker the runtime lets go of frees its Task, then ends its thread:
 * its thread pointer leads to freed memory, where the Task's id is no
 * longer its thread's. Nothing more is read of it, and it does not count
 * against the layout (the first Task checked must be its thread's). */
TEST(task_of_another_thread)
{
    struct target t;
    struct memimg img;
    struct rts_view v;
    setup(&t);
    uint64_t incall = suspend(&t);
    (void)incall;
    put(t.task, t.r.L->task.id, 0x7ffd00001000ull);
    CHECK_EQ_INT(memimg__init(&img, 1 << 20, 64), 0);
    rts__capture_thread(&t.r, getpid(), getpid(), &t.regs, &img);
    CHECK(rts__view(&t.r, &t.regs, &img, &v));
    CHECK(v.task_stale);
    CHECK_EQ_INT(v.task, t.task);
    CHECK(!v.suspended_tso && !v.tso && !v.cap && !v.holds_cap);
    /* It does not fail the layout's check, unless no Task is ever its
     * thread's. */
    for (int i = 1; i < 16; i++) {
        CHECK(rts__check_task(&t.r, &t.regs, &img, &v));
        CHECK(!t.r.task_checked);
    }
    CHECK(!rts__check_task(&t.r, &t.regs, &img, &v));
    CHECK(!t.r.usable);
    t.r.usable = true;
    t.r.task_checked = false;
    t.r.stale_tasks = 0;
    memimg__free(&img);
    /* Its own: read as usual. */
    put(t.task, t.r.L->task.id, t.regs.fs_base);
    CHECK_EQ_INT(memimg__init(&img, 1 << 20, 64), 0);
    rts__capture_thread(&t.r, getpid(), getpid(), &t.regs, &img);
    CHECK(rts__view(&t.r, &t.regs, &img, &v));
    CHECK(!v.task_stale);
    CHECK_EQ_INT(v.suspended_tso, t.tso);
    CHECK(rts__check_task(&t.r, &t.regs, &img, &v));
    CHECK(t.r.task_checked);
    memimg__free(&img);
    free(t.mem);
}

UNIT_MAIN()

/* A callback: the thread runs Haskell code through an InCall whose
 * prev_stack is the InCall its safe call left, with that call's TSO
 * suspended. The capture copies the outer InCall and its TSO's stack; the
 * outer view is that TSO's, with its chunk's saved sp; an outer InCall that
 * is not in a safe call, or one that is its own, is none. */
TEST(callback_outer_call)
{
    struct target t;
    struct memimg img;
    struct rts_view v, o, o2;
    setup(&t);
    const struct rts_layout *L = t.r.L;
    uint64_t base = (uint64_t)(uintptr_t)t.mem;
    uint64_t incall = t.task + 0x400, outer = t.task + 0x600;
    uint64_t tso2 = base + 0x5000, obj2 = base + 0x7000;
    uint64_t start2 = obj2 + (uint64_t)L->stack.stack.off, end2 = obj2 + 0x800;
    put(t.task, L->task.incall, incall);
    put(incall, L->incall.prev_stack, outer);
    put(outer, L->incall.suspended_tso, tso2);
    put(tso2, L->header.info, TSO_INFO);
    put(tso2, L->tso.stackobj, obj2);
    put(obj2, L->header.info, STACK_INFO);
    put(obj2, L->stack.stack_size, (end2 - start2) / 8);
    put(obj2, L->stack.sp, end2 - 48);

    CHECK_EQ_INT(memimg__init(&img, 1 << 20, 64), 0);
    rts__capture_thread(&t.r, getpid(), getpid(), &t.regs, &img);
    CHECK(memimg__ptr(&img, outer, (size_t)L->incall.struct_size) != NULL);
    CHECK(memimg__ptr(&img, tso2, (size_t)L->tso.struct_size) != NULL);
    CHECK(memimg__ptr(&img, end2 - 48, 48) != NULL);
    CHECK(rts__view(&t.r, &t.regs, &img, &v));
    CHECK(v.holds_cap && v.in_haskell);
    CHECK_EQ_INT(v.tso, t.tso);
    CHECK(rts__outer(&t.r, &img, &v, &o));
    CHECK_EQ_INT(o.incall, outer);
    CHECK_EQ_INT(o.suspended_tso, tso2);
    CHECK_EQ_INT(o.tso, tso2);
    CHECK_EQ_INT(o.stack, obj2);
    CHECK_EQ_INT(o.saved_sp, end2 - 48);
    CHECK_EQ_INT(o.stack_end, end2);
    CHECK(!rts__outer(&t.r, &img, &o, &o2)); /* the outermost */
    memimg__free(&img);

    /* The outer InCall not in a safe call: no outer call. */
    put(outer, L->incall.suspended_tso, 0);
    CHECK_EQ_INT(memimg__init(&img, 1 << 20, 64), 0);
    rts__capture_thread(&t.r, getpid(), getpid(), &t.regs, &img);
    CHECK(rts__view(&t.r, &t.regs, &img, &v));
    CHECK(!rts__outer(&t.r, &img, &v, &o));
    memimg__free(&img);

    /* InCalls in a ring (memory that is not what it should be): the
     * capture stops, and each step is one InCall. */
    put(outer, L->incall.suspended_tso, tso2);
    put(outer, L->incall.prev_stack, incall);
    put(incall, L->incall.suspended_tso, 0);
    CHECK_EQ_INT(memimg__init(&img, 1 << 20, 64), 0);
    rts__capture_thread(&t.r, getpid(), getpid(), &t.regs, &img);
    CHECK(rts__view(&t.r, &t.regs, &img, &v));
    CHECK(rts__outer(&t.r, &img, &v, &o));
    CHECK_EQ_INT(o.incall, outer);
    CHECK(!rts__outer(&t.r, &img, &o, &o2)); /* (back to the inner one: not suspended) */
    put(incall, L->incall.prev_stack, incall); /* its own */
    memimg__free(&img);
    CHECK_EQ_INT(memimg__init(&img, 1 << 20, 64), 0);
    rts__capture_thread(&t.r, getpid(), getpid(), &t.regs, &img);
    CHECK(rts__view(&t.r, &t.regs, &img, &v));
    CHECK(!rts__outer(&t.r, &img, &v, &o));
    memimg__free(&img);
    free(t.mem);
}
