/* test_unwind.c - unit tests for the StgReturn epilogue and the StgRun
 * prologue in symbolizer/unwind.c (unwind__stg_return, unwind__stg_run),
 * and for the frames of assembly without CFI (unwind__asm_caller, at the
 * end).
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

/* StgRun as GHC 9.0.2, 9.6.6 and 9.10.3 link it (the same bytes in
 * each), to StgRunJmp's jmp into Haskell code. Stopped anywhere up to the
 * jmp, the caller (the scheduler) has rsp above the return address that
 * its call left at the entry's rsp, and its own callee-saved registers:
 * those StgRun has not reused as the thread has them, r13 from where
 * StgRun saved it. */
static const uint8_t stg_run[] = {
    0x48, 0x83, 0xec, 0x30,                   /* sub $0x30,%rsp */
    0x48, 0x89, 0xe0,                         /* mov %rsp,%rax */
    0x48, 0x81, 0xec, 0x00, 0x40, 0x00, 0x00, /* sub $0x4000,%rsp */
    0x48, 0x89, 0x18,                         /* mov %rbx,(%rax) */
    0x48, 0x89, 0x68, 0x08,                   /* mov %rbp,0x8(%rax) */
    0x4c, 0x89, 0x60, 0x10,                   /* mov %r12,0x10(%rax) */
    0x4c, 0x89, 0x68, 0x18,                   /* mov %r13,0x18(%rax) */
    0x4c, 0x89, 0x70, 0x20,                   /* mov %r14,0x20(%rax) */
    0x4c, 0x89, 0x78, 0x28,                   /* mov %r15,0x28(%rax) */
    0x49, 0x89, 0xf5,                         /* mov %rsi,%r13 */
    0x48, 0x89, 0xf8,                         /* mov %rdi,%rax */
    0xff, 0xe0,                               /* jmp *%rax */
};
static const int run_at[] = {0, 4, 7, 14, 17, 21, 25, 29, 33, 37, 40, 43};
#define NRUN (sizeof run_at / sizeof run_at[0])
#define ENTRY 0x7ff100000ull /* rsp at StgRun's entry: the return address */
#define BASE_REG 0x4200001000ull /* rsi: the capability's registers, r13's new value */

/* The caller's callee-saved registers, as the thread has them at the
 * entry; and the stack: the return address, and each saved register
 * where StgRun put it (0x30 below the entry, in the order above). */
static uint64_t caller_reg(int reg) { return 0x5000 + (uint64_t)reg; }
static int run_saved(void *ctx, uint64_t addr, uint64_t *out)
{
    static const int order[6] = {3, 5, 12, 13, 14, 15};
    size_t k = *(size_t *)ctx; /* the instructions done */
    if (addr == ENTRY) {
        *out = RA;
        return 0;
    }
    for (int i = 0; i < 6; i++)
        if (k > 3 + (size_t)i && addr == ENTRY - 0x30 + 8 * (uint64_t)i) {
            *out = caller_reg(order[i]);
            return 0;
        }
    return -1; /* not written yet */
}

TEST(stg_run_caller_from_every_instruction)
{
    static const int regs[6] = {3, 5, 12, 13, 14, 15};
    for (size_t k = 0; k < NRUN; k++) {
        struct user_regs_struct in, out;
        memset(&in, 0, sizeof in);
        in.rip = BASE + (uint64_t)run_at[k];
        in.rsp = ENTRY - (k >= 1 ? 0x30 : 0) - (k >= 3 ? 0x4000 : 0);
        in.rbx = caller_reg(3);
        in.rbp = caller_reg(5);
        in.r12 = caller_reg(12);
        in.r13 = k >= 10 ? BASE_REG : caller_reg(13);
        in.r14 = caller_reg(14);
        in.r15 = caller_reg(15);
        in.rax = k >= 2 ? ENTRY - 0x30 : 0x77;
        if (!unwind__stg_run(stg_run, sizeof stg_run, BASE, &in, run_saved, &k, &out))
            UNIT_FAIL("stopped at StgRun+%d: no caller", run_at[k]);
        if (out.rip != RA || out.rsp != ENTRY + 8)
            UNIT_FAIL("stopped at StgRun+%d: rip %llx rsp %llx", run_at[k], out.rip, out.rsp);
        for (int i = 0; i < 6; i++)
            if (reg_of(&out, regs[i]) != caller_reg(regs[i]))
                UNIT_FAIL("stopped at StgRun+%d: register %d is %llx", run_at[k], regs[i],
                          reg_of(&out, regs[i]));
    }
}

/* Past the jmp (Haskell code's), inside an instruction, with r13 reused
 * but never saved, or the return address unread: no caller. */
TEST(stg_run_nothing_made_up)
{
    struct user_regs_struct in, out;
    size_t k = NRUN - 1;
    memset(&in, 0, sizeof in);
    in.rsp = ENTRY - 0x4030;
    in.rip = BASE + 45; /* past the jmp */
    CHECK(!unwind__stg_run(stg_run, sizeof stg_run, BASE, &in, run_saved, &k, &out));
    in.rip = BASE + 5; /* inside mov %rsp,%rax */
    k = 1;
    CHECK(!unwind__stg_run(stg_run, sizeof stg_run, BASE, &in, run_saved, &k, &out));
    uint8_t other[sizeof stg_run];
    memcpy(other, stg_run, sizeof other);
    other[27] = 0x70; /* mov %r13,0x18(%rax) becomes a second %r14 */
    k = 11;
    in.rip = BASE + 43 - 3; /* after mov %rsi,%r13 */
    CHECK(!unwind__stg_run(other, sizeof other, BASE, &in, run_saved, &k, &out));
    in.rip = BASE + 4;
    in.rsp = ENTRY - 0x30;
    k = 1;
    CHECK(unwind__stg_run(stg_run, sizeof stg_run, BASE, &in, run_saved, &k, &out));
    in.rsp = ENTRY; /* then the return address is not where it reads */
    CHECK(!unwind__stg_run(stg_run, sizeof stg_run, BASE, &in, run_saved, &k, &out));
}

/* ---- Assembly without CFI (unwind__asm_caller) ----------------------------
 *
 * Routines in the style of GMP's mpn_* (never run: their bytes are read as
 * the unwinder reads a module's), assembled by the compiler, with a label
 * at each place the tests stop them. asm_sub1 pushes rbx after a first
 * instruction, as mpn_submul_1 does, then runs a body of the instruction
 * forms such code uses (SSE, BMI2 and ADX ones included), a call, another
 * with two registers saved around it (as mpn_divrem_2 does), a loop, and
 * pops rbx before its ret. asm_two pushes two registers with an
 * instruction between, has an early way out (pops, ret) before the rest
 * of its frame (sub $0x18,%rsp), then calls and undoes it all.
 * asm_three makes its frame as mpn_sqr_basecase does (below). asm_bad1
 * aligns rsp, asm_bad2 holds an x87 instruction: no frame is made up. */
__asm__(".text\n"
        ".globl asm_sub1, asm_sub1_push, asm_sub1_body, asm_sub1_loop, asm_sub1_call\n"
        ".globl asm_sub1_after_call, asm_sub1_saved_call, asm_sub1_after_saved\n"
        ".globl asm_sub1_pop, asm_sub1_ret, asm_sub1_end\n"
        "asm_sub1:\n"
        "    mov (%rsi),%rax\n"
        "asm_sub1_push:\n"
        "    push %rbx\n"
        "asm_sub1_body:\n"
        "    mov %rdx,%rbx\n"
        "    mul %rcx\n"
        "    and $3,%ebx\n"
        "    je 1f\n"
        "    lea 8(%rsi,%r11,8),%rsi\n"
        "    movabs $0x5555555555555555,%r10\n"
        "    bsr %rsi,%rcx\n"
        "    shld %cl,%rax,%rsi\n"
        "    shld $3,%rax,%rsi\n"
        "    imul %r8,%rsi\n"
        "    imul $123456,%rsi,%rdi\n"
        "    adc $0,%rdx\n"
        "    sub %rax,(%rdi)\n"
        "    sub %rax,-8(%rdi,%r11,8)\n"
        "    movdqa (%rsi),%xmm0\n"
        "    pxor %xmm1,%xmm0\n"
        "    pshufd $0x4e,%xmm0,%xmm1\n"
        "    mulx %r8,%r9,%r10\n"
        "    adcx %rax,%rbx\n"
        "    adox %rdx,%r9\n"
        "    cmovc %rax,%rdx\n"
        "    setc %al\n"
        "    movzbl %al,%eax\n"
        "    test $1,%r8b\n"
        "    testq $0x100,8(%rsp)\n"
        "    xor %r10d,%r10d\n"
        "    lea 0x2f8(%rip),%r14\n"
        "    cmpq $0x7f,0x10(%rsp)\n"
        "    mov %rbp,0x8(%rbx)\n"
        "    movq $-1,(%rdi)\n"
        "    shr %cl,%rsi\n"
        "    neg %r8\n"
        "    not %rdx\n"
        "    nopw 0x0(%rax,%rax,1)\n"
        "asm_sub1_call:\n"
        "    call *%r14\n"
        "asm_sub1_after_call:\n"
        "    push %r8\n"
        "    push %r10\n"
        "    call *%r14\n"
        "asm_sub1_saved_call:\n"
        "    pop %r10\n"
        "    pop %r8\n"
        "asm_sub1_after_saved:\n"
        "    mov %rax,%r11\n"
        "1:\n"
        "asm_sub1_loop:\n"
        "    dec %r11\n"
        "    jne asm_sub1_loop\n"
        "    jmp 2f\n"
        "    nopl 0x0(%rax)\n"
        "2:\n"
        "asm_sub1_pop:\n"
        "    pop %rbx\n"
        "asm_sub1_ret:\n"
        "    ret\n"
        "asm_sub1_end:\n"
        ".globl asm_two, asm_two_push2, asm_two_early_ret, asm_two_after_early\n"
        ".globl asm_two_body, asm_two_after_call, asm_two_add, asm_two_pop, asm_two_end\n"
        "asm_two:\n"
        "    push %rbp\n"
        "    bsr %rsi,%rcx\n"
        "asm_two_push2:\n"
        "    push %r12\n"
        "    test %rdi,%rdi\n"
        "    jne 3f\n"
        "    pop %r12\n"
        "    pop %rbp\n"
        "asm_two_early_ret:\n"
        "    ret\n"
        "3:\n"
        "asm_two_after_early:\n"
        "    sub $0x18,%rsp\n"
        "asm_two_body:\n"
        "    mov %ecx,%ebp\n"
        "    call asm_sub1\n"
        "asm_two_after_call:\n"
        "    mov %rax,(%rsp)\n"
        "asm_two_add:\n"
        "    add $0x18,%rsp\n"
        "asm_two_pop:\n"
        "    pop %r12\n"
        "    pop %rbp\n"
        "    ret\n"
        "asm_two_end:\n"
        ".globl asm_three, asm_three_path1, asm_three_path2, asm_three_path2_pop\n"
        ".globl asm_three_body, asm_three_pop, asm_three_end\n"
        "asm_three:\n"
        "    mov %edx,%ecx\n"
        "    add $-40,%rsp\n"
        "    and $3,%ecx\n"
        "    mov %rbx,0x20(%rsp)\n"
        "    mov %rbp,0x18(%rsp)\n"
        "    mov %r12,0x10(%rsp)\n"
        "    mov %r13,0x8(%rsp)\n"
        "    mov %r14,(%rsp)\n"
        "    lea 0x10(%rip),%rax\n"
        "    jmp *%rax\n"
        "    mov (%rsi),%rax\n"
        "    add $0x28,%rsp\n"
        "asm_three_path1:\n"
        "    mov %rax,(%rdi)\n"
        "    ret\n"
        "    mov (%rsi),%rax\n"
        "    add $0x20,%rsp\n"
        "asm_three_path2:\n"
        "    mul %r11\n"
        "asm_three_path2_pop:\n"
        "    pop %rbx\n"
        "    add %rax,%r11\n"
        "    ret\n"
        "    mov %rdx,%rbx\n"
        "asm_three_body:\n"
        "    mul %rbx\n"
        "    mov %r15,%r9\n"
        "asm_three_pop:\n"
        "    pop %r14\n"
        "    pop %r13\n"
        "    pop %r12\n"
        "    pop %rbp\n"
        "    pop %rbx\n"
        "    ret\n"
        "asm_three_end:\n"
        ".globl asm_bad1, asm_bad1_body, asm_bad1_end, asm_bad2, asm_bad2_body, asm_bad2_end\n"
        "asm_bad1:\n"
        "    push %rbx\n"
        "    and $-16,%rsp\n"
        "asm_bad1_body:\n"
        "    mov %rax,%rbx\n"
        "    ret\n"
        "asm_bad1_end:\n"
        "asm_bad2:\n"
        "    push %rbx\n"
        "    fld1\n"
        "asm_bad2_body:\n"
        "    mov %rax,%rbx\n"
        "    pop %rbx\n"
        "    ret\n"
        "asm_bad2_end:\n");

extern const uint8_t asm_sub1[], asm_sub1_push[], asm_sub1_body[], asm_sub1_loop[],
    asm_sub1_call[], asm_sub1_after_call[], asm_sub1_saved_call[], asm_sub1_after_saved[],
    asm_sub1_pop[], asm_sub1_ret[], asm_sub1_end[];
extern const uint8_t asm_two[], asm_two_push2[], asm_two_early_ret[], asm_two_after_early[],
    asm_two_body[], asm_two_after_call[], asm_two_add[], asm_two_pop[], asm_two_end[];
extern const uint8_t asm_three[], asm_three_path1[], asm_three_path2[], asm_three_path2_pop[],
    asm_three_body[], asm_three_pop[], asm_three_end[];
extern const uint8_t asm_bad1[], asm_bad1_body[], asm_bad1_end[], asm_bad2[], asm_bad2_body[],
    asm_bad2_end[];

#define A_START 0x7f0000400000ull /* where the routine is mapped, in the tests */
#define A_ENTRY 0x7ffd00001000ull /* rsp at its entry: the return address there */
#define A_RA 0x55550000abcdull

/* The frame of a routine stopped with `depth` bytes below its entry's
 * rsp: regs[k] pushed k-th (x86 numbers, -1: a slot of no register). */
struct a_frame {
    int regs[6];
    int npushed;
};
static uint64_t a_pushed(int reg) { return 0x2000 + (uint64_t)reg; }
static uint64_t a_live(int reg) { return 0xa000 + (uint64_t)reg; }

static int a_read(void *ctx, uint64_t addr, uint64_t *out)
{
    const struct a_frame *f = ctx;
    if (addr == A_ENTRY) {
        *out = A_RA;
        return 0;
    }
    for (int k = 0; k < f->npushed; k++)
        if (addr == A_ENTRY - 8 * (uint64_t)(k + 1)) {
            *out = a_pushed(f->regs[k]);
            return 0;
        }
    if (addr < A_ENTRY && addr >= A_ENTRY - 0x100) {
        *out = 0x1111; /* spill area: nothing to take for a register */
        return 0;
    }
    return -1;
}

static struct user_regs_struct a_regs(uint64_t pc, uint64_t depth)
{
    struct user_regs_struct r;
    memset(&r, 0, sizeof r);
    r.rip = pc;
    r.rsp = A_ENTRY - depth;
    r.rbx = a_live(3);
    r.rbp = a_live(5);
    r.r12 = a_live(12);
    r.r13 = a_live(13);
    r.r14 = a_live(14);
    r.r15 = a_live(15);
    return r;
}

/* Stop the routine code[0, len) at code + at, with depth bytes taken off
 * rsp and frame f pushed: is the caller the one f and the entry say? */
static bool a_check(const uint8_t *code, const uint8_t *end, const uint8_t *at, uint64_t depth,
                    const struct a_frame *f)
{
    static const int regs[6] = {3, 5, 12, 13, 14, 15};
    size_t len = (size_t)(end - code), off = (size_t)(at - code);
    uint64_t pc = A_START + off;
    struct user_regs_struct in = a_regs(pc, depth), out;
    if (!unwind__asm_caller(code, len, A_START, at, len - off, &in, a_read, (void *)f, &out))
        return false;
    if (out.rip != A_RA || out.rsp != A_ENTRY + 8)
        return false;
    for (int i = 0; i < 6; i++) {
        bool pushed = false;
        for (int k = 0; k < f->npushed; k++)
            pushed |= f->regs[k] == regs[i];
        if (reg_of(&out, regs[i]) != (pushed ? a_pushed(regs[i]) : a_live(regs[i])))
            return false;
    }
    return true;
}

TEST(asm_caller_one_push)
{
    const struct a_frame none = {{0}, 0}, rbx = {{3}, 1};
    const uint8_t *s = asm_sub1, *e = asm_sub1_end;
    CHECK(a_check(s, e, s, 0, &none));
    CHECK(a_check(s, e, asm_sub1_push, 0, &none)); /* (the push to come) */
    CHECK(a_check(s, e, asm_sub1_body, 8, &rbx));
    CHECK(a_check(s, e, asm_sub1_call, 8, &rbx));       /* past every body form */
    CHECK(a_check(s, e, asm_sub1_after_call, 8, &rbx)); /* a return address in it */
    /* r8 and r10 saved around a call: slots, then popped again. */
    const struct a_frame saved = {{3, 8, 10}, 3};
    CHECK(a_check(s, e, asm_sub1_saved_call, 24, &saved));
    CHECK(a_check(s, e, asm_sub1_after_saved, 8, &rbx));
    CHECK(a_check(s, e, asm_sub1_loop, 8, &rbx));
    CHECK(a_check(s, e, asm_sub1_pop, 8, &rbx)); /* the epilogue, run */
    CHECK(a_check(s, e, asm_sub1_ret, 0, &none));
    /* Only part of the routine read, the pc beyond: the frame as that
     * part leaves it. */
    size_t part = (size_t)(asm_sub1_call - asm_sub1) + 3;
    struct user_regs_struct in = a_regs(A_START + (size_t)(asm_sub1_loop - s), 8), out;
    CHECK(unwind__asm_caller(s, part, A_START, asm_sub1_loop, (size_t)(e - asm_sub1_loop), &in,
                             a_read, (void *)&rbx, &out));
    CHECK(out.rip == A_RA && out.rbx == a_pushed(3));
}

TEST(asm_caller_early_return_and_sub)
{
    const struct a_frame none = {{0}, 0}, rbp = {{5}, 1}, two = {{5, 12}, 2};
    const uint8_t *s = asm_two, *e = asm_two_end;
    CHECK(a_check(s, e, asm_two_push2, 8, &rbp));
    CHECK(a_check(s, e, asm_two_early_ret, 0, &none)); /* its pops done */
    /* Past that way out, the frame is as it was before it. */
    CHECK(a_check(s, e, asm_two_after_early, 16, &two));
    CHECK(a_check(s, e, asm_two_body, 16 + 0x18, &two));
    CHECK(a_check(s, e, asm_two_after_call, 16 + 0x18, &two));
    CHECK(a_check(s, e, asm_two_add, 16 + 0x18, &two)); /* add, pops, ret: run */
    CHECK(a_check(s, e, asm_two_pop, 16, &two));
    /* A wrong depth puts the return address elsewhere: not this one. */
    CHECK(!a_check(s, e, asm_two_body, 16, &two));
}

/* Registers stored in a frame made by an add of a negative (mpn_sqr_basecase
 * does so), a jump table, paths that free part of the frame or all of it
 * before their ret, and one that pops its registers. */
TEST(asm_caller_stored_registers)
{
    const struct a_frame none = {{0}, 0}, rbx = {{3}, 1},
                         five = {{3, 5, 12, 13, 14}, 5};
    const uint8_t *s = asm_three, *e = asm_three_end;
    CHECK(a_check(s, e, asm_three_path1, 0, &none));
    CHECK(a_check(s, e, asm_three_path2, 8, &rbx));
    CHECK(a_check(s, e, asm_three_path2_pop, 8, &rbx));
    CHECK(a_check(s, e, asm_three_body, 40, &five));
    CHECK(a_check(s, e, asm_three_pop, 40, &five));
}

TEST(asm_caller_nothing_made_up)
{
    const struct a_frame rbx = {{3}, 1};
    /* rsp aligned, or an instruction form not known, before the pc. */
    CHECK(!a_check(asm_bad1, asm_bad1_end, asm_bad1_body, 8, &rbx));
    CHECK(!a_check(asm_bad2, asm_bad2_end, asm_bad2_body, 8, &rbx));
    /* A pc before the routine's start; the return address unread. */
    struct user_regs_struct in = a_regs(A_START - 1, 8), out;
    size_t len = (size_t)(asm_sub1_end - asm_sub1);
    CHECK(!unwind__asm_caller(asm_sub1, len, A_START, asm_sub1, len, &in, a_read, (void *)&rbx,
                              &out));
    const struct a_frame none = {{0}, 0};
    in = a_regs(A_START + (size_t)(asm_sub1_body - asm_sub1), 0);
    in.rsp = A_ENTRY + 0x1000; /* nothing readable there */
    CHECK(!unwind__asm_caller(asm_sub1, len, A_START, asm_sub1_body,
                              len - (size_t)(asm_sub1_body - asm_sub1), &in, a_read,
                              (void *)&none, &out));
}

UNIT_MAIN()
