/* unwind.h - C stacks, unwound after the target has resumed.
 *
 * libunwind's remote unwinder (the one libunwind-ptrace drives) with our own
 * accessors, the design perf uses for --call-graph=dwarf: registers and the
 * stack bytes come from the capture taken while the thread was stopped,
 * unwind tables (.eh_frame_hdr/.eh_frame) and code come from the object files
 * (modset), and only a read outside both falls back to process_vm_readv of the
 * live process (counted: it may see a newer state). libunwind's global cache
 * keeps the parsed unwind rules of every pc across samples.
 *
 * In a GHC program the unwind stops at the first frame whose pc is Haskell
 * code (a GHC module without CFI for that pc): there rbp is the STG stack
 * pointer Sp, restored by the C frames' CFI, and the STG walker takes over.
 */
#ifndef HSSPY_UNWIND_H
#define HSSPY_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "sampler/memimg.h"
#include "sampler/sample.h"
#include "symbolizer/modset.h"

struct unwind_stats {
    unsigned long stacks, frames;
    unsigned long live_reads;   /* words read from the running process */
    unsigned long failed_reads; /* words nobody could provide */
    unsigned long errors;       /* unw_step errors */
};

/* The frame of code without unwind information at a pc, as its code makes
 * it: the return address down bytes above rsp, callee-saved register
 * reg[k] (x86 number) below[k] bytes under that. */
#define UNWIND_ASM_CACHE 1024
#define UNWIND_ASM_SAVES 8
struct unwind_asm_layout {
    const void *m; /* its module (NULL: an empty slot) */
    uint64_t pc;
    uint32_t down;
    uint32_t below[UNWIND_ASM_SAVES];
    int8_t reg[UNWIND_ASM_SAVES];
    uint8_t n;
    bool ok; /* false: no layout known there */
};

struct unwinder {
    void *as; /* unw_addr_space_t */
    struct modset *ms;
    pid_t pid;
    bool ghc; /* a GHC program: look for Haskell callers of CFI-less code */
    uint64_t stg_return; /* its StgReturn (0: none known): see unwind__stg_return */
    uint64_t stg_run;    /* its StgRun (0: none known): see unwind__stg_run */
    const struct user_regs_struct *regs; /* the stack being unwound */
    bool partial; /* regs hold rip, rsp and fs_base only (see unwind__stack) */
    bool stepping, missing; /* inside unw_step; it asked for a missing one */
    const struct memimg *img;
    uint64_t stack_hi;     /* highest stack byte read so far (+1) */
    unsigned long live_now; /* live reads during the current unwind */
    /* Inside libunwind's guess at the caller of code without unwind
     * information (through rbp): what it read of the stack is counted in
     * the two above only if the guess is taken. */
    bool guessing;
    uint64_t guess_hi;
    unsigned long guess_live;
    struct unwind_stats st;
    /* The table of a module without .eh_frame_hdr (module.h's ehf_index)
     * while libunwind searches it: it reads it at UNWIND_TABLE_AT. */
    const struct eh_frame_entry *table;
    uint64_t table_bytes;
    uint64_t cfi_cache_pc[1024];
    int8_t cfi_cache_val[1024];
    uint64_t sig_cache_pc[256]; /* is a return address a signal's way back? */
    int8_t sig_cache_val[256];
    struct unwind_asm_layout *asm_cache; /* UNWIND_ASM_CACHE of them, by pc */
    struct unwind_asm_layout asm_one;    /* the one there is without them */
};

struct unwind_result {
    int n;               /* frames written */
    bool reached_haskell;/* stopped at Haskell code ... */
    uint64_t hs_pc;      /* ... at this pc (exact for the leaf, a return address above it) */
    bool hs_is_leaf;     /* the thread was executing Haskell code itself */
    uint64_t hs_sp;      /* rbp there: the STG Sp */
    uint64_t hs_rsp;     /* rsp there: inside StgRun's frame */
    bool scanned;        /* the Haskell caller was found by a stack scan ... */
    uint64_t scan_lo, scan_hi; /* ... of the words [lo, hi): the routine's frame,
                                * where it saved the caller's rbp if it uses it */
    bool error;          /* the unwind failed (an FK_INVALID frame was added) */
    bool truncated;
    bool bottom;         /* it ended at the stack's outermost frame (_start,
                          * clone3): its unwind information, or a caller of 0,
                          * said there is none above it */
    uint64_t stack_used; /* bytes above rsp the unwind read (from the capture,
                          * or beyond it, live_reads, from the program) */
    unsigned long live_reads; /* words it had to read from the live process */
    bool missing_regs;   /* partial registers: a step needed one of the others */
};

int unwind__init(struct unwinder *u, struct modset *ms, pid_t pid);
void unwind__free(struct unwinder *u);

/* Unwind one thread from its captured registers and stack, writing at most
 * max raw frames (innermost first: FK_PC then FK_RET). With partial, regs
 * hold only rip, rsp and fs_base (a capture taken without stopping the
 * thread, from /proc): the other registers are refused, and a step that
 * needed one sets res->missing_regs. */
void unwind__stack(struct unwinder *u, const struct user_regs_struct *regs, bool partial,
                   const struct memimg *img, struct raw_frame *out, int max,
                   struct unwind_result *res);

/* GHC's StgReturn, the way out of the STG machine to the scheduler:
 *     mov %rbx,%rax; add $0x4000,%rsp; mov (%rsp),%rbx;
 *     mov 0x8(%rsp),%rbp; ... mov 0x28(%rsp),%r15; add $0x30,%rsp; ret
 * Its CFI gives StgRun's frame as it is before the first add, all the way
 * to the ret: a thread stopped past that add unwinds through the wrong
 * words (an [invalid] frame under StgReturn). unwind__stack runs the rest
 * of the epilogue instead, from the stopped pc (in->rip, within code,
 * whose first byte is at base) over the stack (read: a word, 0 or -1):
 * into out, the registers it restores and the return address into the
 * scheduler, the caller's, from which the unwind carries on. Only those
 * instruction forms are known: with any other, or a word unread, false. */
typedef int (*unwind_read_fn)(void *ctx, uint64_t addr, uint64_t *out);
bool unwind__stg_return(const uint8_t *code, size_t len, uint64_t base,
                        const struct user_regs_struct *in, unwind_read_fn read, void *ctx,
                        struct user_regs_struct *out);

/* Assembly without CFI whose frame is made by its prologue alone: GMP's
 * mpn_* routines (mpn_mul_basecase, mpn_submul_1, mpn_mod_1s_4p_cps...),
 * which GHC's Integer calls through C or straight from Haskell, push the
 * callee-saved registers they use at their entry (after an endbr64), may
 * take a fixed amount off rsp, keep rsp still in their body, and undo it
 * all in an epilogue of pops before their ret; they use rbp as any other
 * register, so libunwind's guess through rbp goes astray. From the
 * function's first bytes (entry, its first byte at start) and those at the
 * stopped pc (at_pc, from in->rip): if the pc is in an epilogue (an add to
 * rsp, pops, then ret), that epilogue is run; else the prologue's pushes
 * and subtractions done by then are undone. Into out: the caller's rip,
 * rsp and the callee-saved registers pushed. False for a prologue or
 * epilogue of any other form (a pc in the prologue past a form not
 * known), or a word unread. The caller checks that out->rip is a return
 * address. */
bool unwind__asm_caller(const uint8_t *entry, size_t entry_len, uint64_t start,
                        const uint8_t *at_pc, size_t pc_len, const struct user_regs_struct *in,
                        unwind_read_fn read, void *ctx, struct user_regs_struct *out);

/* GHC's StgRun, the way into the STG machine from the scheduler, without
 * CFI:
 *     sub $0x30,%rsp; mov %rsp,%rax; sub $0x4000,%rsp; mov %rbx,(%rax);
 *     mov %rbp,0x8(%rax); ... mov %r15,0x28(%rax); mov %rsi,%r13;
 *     mov %rdi,%rax; jmp *%rax
 * A thread stopped in it has taken some of StgRun's frame off rsp and
 * saved some registers there (and reused r13): unwind__stack runs the code
 * from its start to the stopped pc to know how much and which, then gives
 * in out the caller's registers (the scheduler's): rsp above the return
 * address, r13 from where it was saved. Same arguments as
 * unwind__stg_return; false for any other instruction form, a pc not at
 * one of its instructions up to the jmp, or a word unread. */
bool unwind__stg_run(const uint8_t *code, size_t len, uint64_t base,
                     const struct user_regs_struct *in, unwind_read_fn read, void *ctx,
                     struct user_regs_struct *out);

/* The C frames under the Haskell code of one call into the STG machine:
 * where rsp is while that code runs (rsp, StgRun's frame), StgReturn's
 * epilogue is run from its start (as if the code returned to the
 * scheduler now) for the scheduler's registers, and the unwind carries on
 * from there as unwind__stack does, its first frame the return address
 * into the scheduler (FK_RET). regs gives the registers StgReturn does not
 * restore (fs_base). In a callback (C called from Haskell calling Haskell
 * again), the frames reach the Haskell code that made the outer call.
 * False (nothing written) without a StgReturn to run, or a word unread. */
bool unwind__below_stg(struct unwinder *u, const struct user_regs_struct *regs, uint64_t rsp,
                       const struct memimg *img, struct raw_frame *out, int max,
                       struct unwind_result *res);

/* Is pc GHC-compiled code (a Haskell module and no CFI covers it)? */
bool unwind__is_haskell_pc(struct unwinder *u, uint64_t pc);

#endif
