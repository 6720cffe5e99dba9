/* test_unwind.c - unit tests for the StgReturn epilogue in
 * symbolizer/unwind.c (unwind__stg_return).
 *
 * The code is StgReturn's as GHC 9.0.2, 9.6.6 and 9.10.3 link it (the same
 * bytes in each, from `objdump -d` of the test programs), followed by the
 * bytes after its ret. The stack is StgRun's frame: 0x4000 bytes of spill
 * area, the six callee-saved registers, then the return address into the
 * scheduler. Wherever the thread is stopped in that code, the caller's
 * registers must come out the same: those the epilogue has not restored
 * yet from the stack, the others as the thread has them.
 */
#include "tests/unit/unit.h"
#include "symbolizer/unwind.h"

#include <stdint.h>
#include <string.h>

static const uint8_t stg_return[] = {
    0x48, 0x89, 0xd8,                         /* mov %rbx,%rax */
    0x48, 0x81, 0xc4, 0x00, 0x40, 0x00, 0x00, /* add $0x4000,%rsp */
    0x48, 0x8b, 0x1c, 0x24,                   /* mov (%rsp),%rbx */
    0x48, 0x8b, 0x6c, 0x24, 0x08,             /* mov 0x8(%rsp),%rbp */
    0x4c, 0x8b, 0x64, 0x24, 0x10,             /* mov 0x10(%rsp),%r12 */
    0x4c, 0x8b, 0x6c, 0x24, 0x18,             /* mov 0x18(%rsp),%r13 */
    0x4c, 0x8b, 0x74, 0x24, 0x20,             /* mov 0x20(%rsp),%r14 */
    0x4c, 0x8b, 0x7c, 0x24, 0x28,             /* mov 0x28(%rsp),%r15 */
    0x48, 0x83, 0xc4, 0x30,                   /* add $0x30,%rsp */
    0xc3,                                     /* ret */
    0xc3, 0x66, 0x0f, 0x1f,                   /* (what follows it) */
};
/* Where each instruction starts, and what it restores (x86 number, -1:
 * none); the last is the ret. */
static const struct { int at, reg; } insn[] = {
    {0, -1}, {3, -1}, {10, 3}, {14, 5}, {19, 12}, {24, 13}, {29, 14}, {34, 15}, {39, -1}, {43, -1},
};
#define NINSN (sizeof insn / sizeof insn[0])

#define BASE 0x4ff2bdull  /* StgReturn */
#define FRAME 0x7ff000000ull /* StgRun's frame: rsp in the STG machine */
#define RA 0x4a1234ull    /* the return address into schedule() */

/* The saved value of register reg, as the frame holds it. */
static uint64_t saved(int reg) { return 0x1000 + (uint64_t)reg; }
/* ... and as the thread has it before the epilogue (the STG machine's). */
static uint64_t live(int reg) { return 0x9000 + (uint64_t)reg; }

static bool unreadable_ra;

static int read_frame(void *ctx, uint64_t addr, uint64_t *out)
{
    static const int order[6] = {3, 5, 12, 13, 14, 15};
    (void)ctx;
    for (int k = 0; k < 6; k++)
        if (addr == FRAME + 0x4000 + 8 * (uint64_t)k) {
            *out = saved(order[k]);
            return 0;
        }
    if (addr == FRAME + 0x4030 && !unreadable_ra) {
        *out = RA;
        return 0;
    }
    return -1;
}

static unsigned long long reg_of(const struct user_regs_struct *r, int reg)
{
    switch (reg) {
    case 3: return r->rbx;
    case 5: return r->rbp;
    case 12: return r->r12;
    case 13: return r->r13;
    case 14: return r->r14;
    default: return r->r15;
    }
}

/* The thread stopped at instruction k: the registers those before it
 * restored hold the saved values, rsp where those before it left it. */
static struct user_regs_struct stopped_at(size_t k)
{
    static const int regs[6] = {3, 5, 12, 13, 14, 15};
    struct user_regs_struct r;
    memset(&r, 0, sizeof r);
    r.rip = BASE + (uint64_t)insn[k].at;
    r.rsp = FRAME + (k >= 2 ? 0x4000 : 0) + (k >= 9 ? 0x30 : 0);
    for (int i = 0; i < 6; i++) {
        bool done = false;
        for (size_t j = 0; j < k; j++)
            done |= insn[j].reg == regs[i];
        unsigned long long v = done ? saved(regs[i]) : live(regs[i]);
        switch (regs[i]) {
        case 3: r.rbx = v; break;
        case 5: r.rbp = v; break;
        case 12: r.r12 = v; break;
        case 13: r.r13 = v; break;
        case 14: r.r14 = v; break;
        default: r.r15 = v; break;
        }
    }
    r.rax = 0x77;
    return r;
}

TEST(caller_from_every_instruction)
{
    static const int regs[6] = {3, 5, 12, 13, 14, 15};
    unreadable_ra = false;
    for (size_t k = 0; k < NINSN; k++) {
        struct user_regs_struct in = stopped_at(k), out;
        if (!unwind__stg_return(stg_return, sizeof stg_return, BASE, &in, read_frame, NULL,
                                &out))
            UNIT_FAIL("stopped at StgReturn+%d: no caller", insn[k].at);
        if (out.rip != RA || out.rsp != FRAME + 0x4038)
            UNIT_FAIL("stopped at StgReturn+%d: rip %llx rsp %llx", insn[k].at, out.rip,
                      out.rsp);
        for (int i = 0; i < 6; i++)
            if (reg_of(&out, regs[i]) != saved(regs[i]))
                UNIT_FAIL("stopped at StgReturn+%d: register %d is %llx", insn[k].at, regs[i],
                          reg_of(&out, regs[i]));
    }
}

/* Not a pc the code has an instruction at, an instruction of another
 * form, a return address that cannot be read, or a pc past the ret: no
 * caller, rather than a wrong one. */
TEST(nothing_made_up)
{
    struct user_regs_struct in = stopped_at(2), out;
    unreadable_ra = false;
    in.rip = BASE + 11; /* inside mov (%rsp),%rbx */
    CHECK(!unwind__stg_return(stg_return, sizeof stg_return, BASE, &in, read_frame, NULL, &out));
    in = stopped_at(0);
    in.rip = BASE + 44; /* the ret after StgReturn's */
    CHECK(!unwind__stg_return(stg_return, sizeof stg_return, BASE, &in, read_frame, NULL, &out));

    uint8_t other[sizeof stg_return];
    memcpy(other, stg_return, sizeof other);
    other[34] = 0x49; /* mov 0x28(%rsp),%r15 as REX.WB: not a form it knows */
    in = stopped_at(3);
    CHECK(!unwind__stg_return(other, sizeof other, BASE, &in, read_frame, NULL, &out));
    memcpy(other, stg_return, sizeof other);
    other[12] = 0x0c; /* mov (%rsp),%rcx: not a callee-saved register */
    in = stopped_at(0);
    CHECK(!unwind__stg_return(other, sizeof other, BASE, &in, read_frame, NULL, &out));

    unreadable_ra = true;
    in = stopped_at(8);
    CHECK(!unwind__stg_return(stg_return, sizeof stg_return, BASE, &in, read_frame, NULL,
                              &out));
    unreadable_ra = false;
    /* Code cut short before its ret. */
    in = stopped_at(1);
    CHECK(!unwind__stg_return(stg_return, 40, BASE, &in, read_frame, NULL, &out));
}

UNIT_MAIN()
