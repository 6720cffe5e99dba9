/* unwind.c - libunwind remote unwinding over captured memory. */
#define _GNU_SOURCE
#include "symbolizer/unwind.h"

#include <errno.h>
#include <libunwind.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <stdlib.h>

#include "sampler/remote.h"

/* Where libunwind is told a table built from .eh_frame is (module.h's
 * ehf_index): an address no process can map (not canonical, with 4- or
 * 5-level page tables), read by access_mem from the table in our memory. */
#define UNWIND_TABLE_AT 0x4000000000000000ull

/* libunwind as Debian builds it (CONFIG_BLOCK_SIGNALS, and no support for
 * UNW_CACHE_PER_THREAD, which it quietly turns into the global cache)
 * blocks every signal around each use of its cache and memory pools, so
 * that an unwind can run inside a signal handler: two sigprocmask system
 * calls per frame, a sixth of hsspy's system calls at 1 kHz. hsspy unwinds
 * from its main loop only, never in a handler, and from one thread: while
 * it unwinds, the mask is left alone. This definition takes the place of
 * libc's for libunwind (and for hsspy, for which it is libc's, through
 * pthread_sigmask). */
static bool quiet_signals;

int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
    if (quiet_signals) {
        /* (libunwind restores what it saved with the same call, also
         * skipped: the saved mask is never used) */
        if (old)
            sigemptyset(old);
        return 0;
    }
    int err = pthread_sigmask(how, set, old);
    if (err) {
        errno = err;
        return -1;
    }
    return 0;
}

/* libunwind's DWARF table search is exported but not declared in its public
 * headers; perf's unwind-libunwind-local.c relies on the same symbol. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
                                              unw_dyn_info_t *di, unw_proc_info_t *pi,
                                              int need_unwind_info, void *arg);

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
                          int need_unwind_info, void *arg)
{
    struct unwinder *u = arg;
    struct module *m = modset__find(u->ms, ip);
    unw_dyn_info_t di;

    if (!m) {
        modset__refresh(u->ms, false);
        m = modset__find(u->ms, ip);
    }
    if (!m || !m->ehf_hdr || !m->ehf_count)
        return -UNW_ENOINFO;
    memset(&di, 0, sizeof di);
    di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    di.start_ip = m->lo;
    di.end_ip = m->hi;
    di.u.rti.segbase = m->ehf_hdr;
    di.u.rti.table_data = m->ehf_index ? UNWIND_TABLE_AT : m->ehf_table;
    /* table_len counts words; each table entry is two int32s. */
    di.u.rti.table_len = m->ehf_count * 8 / sizeof(unw_word_t);
    u->table = m->ehf_index;
    u->table_bytes = m->ehf_count * sizeof *m->ehf_index;
    int r = UNW_OBJ(dwarf_search_unwind_table)(as, ip, &di, pi, need_unwind_info, arg);
    u->table = NULL;
    return r;
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
    /* dwarf_search_unwind_table's info lives in libunwind's own pool and is
     * released by libunwind; nothing of ours to free. */
    (void)as;
    (void)pi;
    (void)arg;
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
    (void)as;
    (void)addr;
    (void)arg;
    return -UNW_ENOINFO;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write,
                      void *arg)
{
    struct unwinder *u = arg;
    (void)as;
    if (write)
        return -UNW_EINVAL;
    if (u->table && addr - UNWIND_TABLE_AT < u->table_bytes) {
        /* libunwind reads the words of the table it searches: ours. */
        uint64_t off = addr - UNWIND_TABLE_AT, left = u->table_bytes - off;
        *val = 0;
        memcpy(val, (const uint8_t *)u->table + off, left < sizeof *val ? left : sizeof *val);
        return 0;
    }
    uint64_t *hi = u->guessing ? &u->guess_hi : &u->stack_hi;
    if (u->img && memimg__read_u64(u->img, addr, (uint64_t *)val) == 0) {
        if (u->regs && addr >= u->regs->rsp && addr + 8 > *hi)
            *hi = addr + 8;
        return 0;
    }
    if (modset__read(u->ms, addr, val, sizeof *val) == 0)
        return 0;
    /* A module's writable data, as its file has it. libunwind reads one
     * such word in an unwind: a CIE's personality routine, through its
     * DW.ref pointer in .data (glibc's stdio, any C++), a value no unwind
     * uses. Read live it cost a read of the program at each such frame,
     * counted the frame as beyond the copy, and failed once the program
     * had exited (a sample in fclose as it wrote a .prof at exit). */
    struct module *m = modset__find(u->ms, addr);
    size_t avail = 0;
    const uint8_t *p = m ? module__file_at(m, addr - (uint64_t)m->bias, &avail) : NULL;
    if (p && avail >= sizeof *val) {
        memcpy(val, p, sizeof *val);
        return 0;
    }
    /* Outside the captured stack and the files: older frames beyond the
     * snapshot, or data no file holds (.bss, the heap). Read it live; outer
     * frames rarely change. A word of the stack is counted in how far the
     * unwind read it (stack_hi), for the next copy's sake. (A word below the
     * stack pointer is no outer frame; nor is one libunwind's guess through
     * an rbp that is not a frame pointer read, unless the guess is taken:
     * in the parent's side of clone3, rbp is the new thread's descriptor,
     * megabytes from the stack. Neither is counted as the copy falling
     * short.) */
    if (remote__read(u->pid, addr, val, sizeof *val) == 0) {
        u->st.live_reads++;
        if (u->regs && addr >= u->regs->rsp) {
            *(u->guessing ? &u->guess_live : &u->live_now) += 1;
            if (addr + 8 > *hi)
                *hi = addr + 8;
        }
        return 0;
    }
    u->st.failed_reads++;
    return -UNW_EINVAL;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write,
                      void *arg)
{
    struct unwinder *u = arg;
    const struct user_regs_struct *r = u->regs;
    (void)as;
    if (write || !r)
        return -UNW_EINVAL;
    if (u->partial && reg != UNW_X86_64_RIP && reg != UNW_X86_64_RSP) {
        u->missing |= u->stepping;
        return -UNW_EBADREG;
    }
    switch (reg) {
    case UNW_X86_64_RAX: *val = r->rax; break;
    case UNW_X86_64_RDX: *val = r->rdx; break;
    case UNW_X86_64_RCX: *val = r->rcx; break;
    case UNW_X86_64_RBX: *val = r->rbx; break;
    case UNW_X86_64_RSI: *val = r->rsi; break;
    case UNW_X86_64_RDI: *val = r->rdi; break;
    case UNW_X86_64_RBP: *val = r->rbp; break;
    case UNW_X86_64_RSP: *val = r->rsp; break;
    case UNW_X86_64_R8: *val = r->r8; break;
    case UNW_X86_64_R9: *val = r->r9; break;
    case UNW_X86_64_R10: *val = r->r10; break;
    case UNW_X86_64_R11: *val = r->r11; break;
    case UNW_X86_64_R12: *val = r->r12; break;
    case UNW_X86_64_R13: *val = r->r13; break;
    case UNW_X86_64_R14: *val = r->r14; break;
    case UNW_X86_64_R15: *val = r->r15; break;
    case UNW_X86_64_RIP: *val = r->rip; break;
    default: return -UNW_EBADREG;
    }
    return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write,
                        void *arg)
{
    (void)as;
    (void)reg;
    (void)val;
    (void)write;
    (void)arg;
    return -UNW_EBADREG;
}

static int resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
    (void)as;
    (void)c;
    (void)arg;
    return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len,
                         unw_word_t *off, void *arg)
{
    (void)as;
    (void)addr;
    (void)buf;
    (void)len;
    (void)off;
    (void)arg;
    return -UNW_ENOINFO;
}

static unw_accessors_t accessors = {
    .find_proc_info = find_proc_info,
    .put_unwind_info = put_unwind_info,
    .get_dyn_info_list_addr = get_dyn_info_list_addr,
    .access_mem = access_mem,
    .access_reg = access_reg,
    .access_fpreg = access_fpreg,
    .resume = resume,
    .get_proc_name = get_proc_name,
};

int unwind__init(struct unwinder *u, struct modset *ms, pid_t pid)
{
    memset(u, 0, sizeof *u);
    u->ms = ms;
    u->pid = pid;
    u->as = unw_create_addr_space(&accessors, 0);
    if (!u->as)
        return -1;
    /* (The global cache: see sigprocmask above for what its lock costs.) */
    unw_set_caching_policy(u->as, UNW_CACHE_GLOBAL);
    for (size_t i = 0; i < 1024; i++)
        u->cfi_cache_val[i] = -1;
    for (size_t i = 0; i < 256; i++)
        u->sig_cache_val[i] = -1;
    /* (Without it, a layout is found at every frame again.) */
    u->asm_cache = calloc(UNWIND_ASM_CACHE, sizeof *u->asm_cache);
    return 0;
}

void unwind__free(struct unwinder *u)
{
    if (u->as)
        unw_destroy_addr_space(u->as);
    u->as = NULL;
    free(u->asm_cache);
    u->asm_cache = NULL;
}

/* Does code at pc have unwind information? (Cached by pc: frames recur.) */
static bool has_cfi(struct unwinder *u, uint64_t pc)
{
    size_t slot = (pc >> 2) & 1023;
    unw_proc_info_t pi;
    if (u->cfi_cache_val[slot] >= 0 && u->cfi_cache_pc[slot] == pc)
        return u->cfi_cache_val[slot] == 1;
    memset(&pi, 0, sizeof pi);
    bool has = find_proc_info(u->as, pc, &pi, 0, u) == 0;
    u->cfi_cache_pc[slot] = pc;
    u->cfi_cache_val[slot] = has;
    return has;
}

/* Is ip (a frame's, above the first) a signal handler's way back,
 * __restore_rt? (Cached by ip, as has_cfi.) */
static bool is_sigreturn(struct unwinder *u, uint64_t ip)
{
    size_t slot = (ip >> 3) & 255;
    if (u->sig_cache_val[slot] >= 0 && u->sig_cache_pc[slot] == ip)
        return u->sig_cache_val[slot] == 1;
    bool is = modset__is_sigreturn(u->ms, ip);
    u->sig_cache_pc[slot] = ip;
    u->sig_cache_val[slot] = is;
    return is;
}

bool unwind__is_haskell_pc(struct unwinder *u, uint64_t pc)
{
    struct module *m = modset__find(u->ms, pc);
    return m && m->is_haskell && !has_cfi(u, pc);
}

/* Is there a call instruction just before ret? (call rel32, call *reg,
 * call *mem forms GHC and gcc emit.) */
static bool after_call(struct unwinder *u, uint64_t ret)
{
    uint8_t b[8];
    if (modset__read(u->ms, ret - 8, b, 8) < 0)
        return false;
    return b[3] == 0xe8 ||                                  /* call rel32 */
           (b[6] == 0xff && (b[7] & 0x38) == 0x10) ||       /* call *%reg */
           (b[5] == 0x41 && b[6] == 0xff && (b[7] & 0x38) == 0x10) ||
           (b[2] == 0xff && (b[3] & 0x38) == 0x10);         /* call *disp32(...) */
}

/* Hand-written assembly without CFI (GMP's mpn_* routines, which GHC's
 * Integer calls through unsafe foreign calls) stops libunwind. Such
 * routines keep their frame small: look a few words up the stack for a
 * return address into Haskell code that follows a call. */
static bool scan_for_haskell(struct unwinder *u, uint64_t sp, uint64_t *ret, uint64_t *at)
{
    for (int k = 0; k < 32; k++) {
        uint64_t w;
        if (access_mem(NULL, sp + 8 * (uint64_t)k, &w, 0, u) < 0)
            return false;
        if (w > 8 && unwind__is_haskell_pc(u, w - 1) && after_call(u, w)) {
            *ret = w;
            *at = sp + 8 * (uint64_t)k;
            return true;
        }
    }
    return false;
}

/* A callee-saved register of regs by its x86 number (0-15), or NULL. */
static unsigned long long *callee_saved(struct user_regs_struct *regs, int n)
{
    switch (n) {
    case 3: return &regs->rbx;
    case 5: return &regs->rbp;
    case 12: return &regs->r12;
    case 13: return &regs->r13;
    case 14: return &regs->r14;
    case 15: return &regs->r15;
    default: return NULL;
    }
}

static bool is_callee_saved(int n)
{
    struct user_regs_struct any;
    return callee_saved(&any, n) != NULL;
}

bool unwind__stg_return(const uint8_t *code, size_t len, uint64_t base,
                        const struct user_regs_struct *in, unwind_read_fn read, void *ctx,
                        struct user_regs_struct *out)
{
    *out = *in;
    bool run = false; /* the stopped pc reached: its instructions are to come */
    for (size_t i = 0; i < len;) {
        const uint8_t *b = code + i;
        size_t left = len - i, n;
        int64_t add = 0;
        int reg = -1, disp = 0;
        run |= base + i == in->rip;
        if (b[0] == 0xc3) { /* ret */
            uint64_t ra;
            if (!run || read(ctx, out->rsp, &ra) < 0)
                return false;
            out->rip = ra;
            out->rsp += 8;
            return true;
        } else if (left >= 3 && b[0] == 0x48 && b[1] == 0x89 && b[2] == 0xd8) {
            n = 3; /* mov %rbx,%rax (StgRun's result) */
        } else if (left >= 7 && b[0] == 0x48 && b[1] == 0x81 && b[2] == 0xc4) {
            n = 7; /* add $imm32,%rsp */
            add = (int32_t)((uint32_t)b[3] | (uint32_t)b[4] << 8 | (uint32_t)b[5] << 16 |
                            (uint32_t)b[6] << 24);
        } else if (left >= 4 && b[0] == 0x48 && b[1] == 0x83 && b[2] == 0xc4) {
            n = 4; /* add $imm8,%rsp */
            add = (int8_t)b[3];
        } else if (left >= 5 && (b[0] == 0x48 || b[0] == 0x4c) && b[1] == 0x8b &&
                   (b[2] & 0xc7) == 0x44 && b[3] == 0x24) {
            n = 5; /* mov disp8(%rsp),%reg */
            reg = (b[2] >> 3 & 7) + (b[0] == 0x4c ? 8 : 0);
            disp = (int8_t)b[4];
        } else if (left >= 4 && (b[0] == 0x48 || b[0] == 0x4c) && b[1] == 0x8b &&
                   (b[2] & 0xc7) == 0x04 && b[3] == 0x24) {
            n = 4; /* mov (%rsp),%reg */
            reg = (b[2] >> 3 & 7) + (b[0] == 0x4c ? 8 : 0);
        } else {
            return false;
        }
        if (run && reg >= 0) {
            unsigned long long *dst = callee_saved(out, reg);
            uint64_t v;
            if (!dst || read(ctx, out->rsp + (uint64_t)(int64_t)disp, &v) < 0)
                return false;
            *dst = v;
        }
        if (run)
            out->rsp += (uint64_t)add;
        i += n;
    }
    return false;
}

/* The caller's registers (into out) from a frame whose entry's rsp was
 * entry: the return address there, and each callee-saved register reg[k]
 * (x86 number; -1 or another: a slot, nothing taken) from below[k] bytes
 * under it. False if a word is unread. */
static bool frame_caller(uint64_t entry, const int *reg, const uint64_t *below, int n,
                         unwind_read_fn read, void *ctx, struct user_regs_struct *out)
{
    uint64_t ra, v;
    for (int k = 0; k < n; k++) {
        unsigned long long *dst = reg[k] >= 0 ? callee_saved(out, reg[k]) : NULL;
        if (!dst)
            continue;
        if (read(ctx, entry - below[k], &v) < 0)
            return false;
        *dst = v;
    }
    if (read(ctx, entry, &ra) < 0)
        return false;
    out->rip = ra;
    out->rsp = entry + 8;
    return true;
}

/* One instruction of hand-written assembly, as far as a frame is
 * concerned. */
enum insn_kind {
    IK_OTHER,   /* leaves rsp alone */
    IK_PUSH,    /* push %reg (reg), or push $imm (reg -1) */
    IK_POP,     /* pop %reg */
    IK_SUB_RSP, /* sub $imm,%rsp */
    IK_ADD_RSP, /* add $imm,%rsp */
    IK_RET,
    IK_BRANCH, /* jcc, jmp, call: the frame is the same after */
    IK_RSP,    /* moves rsp some other way (leave, mov to rsp, and...) */
    IK_SAVE,   /* mov %reg,imm(%rsp): reg saved in the frame */
};
struct insn {
    enum insn_kind kind;
    int reg;
    int64_t imm;
};

/* n if the instruction's n bytes are all at hand (left), else 0. */
static size_t fits(size_t n, size_t left) { return n <= left ? n : 0; }

/* The length of a ModRM operand (the ModRM byte, SIB, displacement) at b,
 * or 0 if cut short. */
static size_t modrm_len(const uint8_t *b, size_t left)
{
    if (left < 1)
        return 0;
    int mod = b[0] >> 6, rm = b[0] & 7;
    size_t n = 1;
    if (mod != 3 && rm == 4) {
        if (left < 2)
            return 0;
        n = 2;
        if (mod == 0 && (b[1] & 7) == 5)
            n += 4;
    } else if (mod == 0 && rm == 5) {
        n += 4; /* rip-relative */
    }
    if (mod == 1)
        n += 1;
    else if (mod == 2)
        n += 4;
    return fits(n, left);
}

static int64_t imm_at(const uint8_t *b, size_t size)
{
    if (size == 1)
        return (int8_t)b[0];
    if (size == 2)
        return (int16_t)((uint16_t)b[0] | (uint16_t)b[1] << 8);
    return (int32_t)((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                     (uint32_t)b[3] << 24);
}

/* The length of the instruction at b and what it does to rsp: the integer
 * and SSE instructions of hand-written x86-64 assembly such as GMP's, and
 * VEX ones (mulx); 0 for any other form, or one cut short. */
static size_t insn_decode(const uint8_t *b, size_t left, struct insn *in)
{
    size_t i = 0;
    bool opsize = false;
    uint8_t rex = 0;
    in->kind = IK_OTHER;
    in->reg = -1;
    in->imm = 0;
    while (i < left && i < 4 &&
           (b[i] == 0x66 || b[i] == 0x67 || b[i] == 0xf2 || b[i] == 0xf3 || b[i] == 0x2e ||
            b[i] == 0x3e))
        opsize |= b[i++] == 0x66;
    if (i < left && (b[i] & 0xf0) == 0x40)
        rex = b[i++];
    if (i >= left)
        return 0;
    uint8_t op = b[i++];
    bool w = rex & 8;
    size_t immz = opsize ? 2 : 4, m, imm = 0;
    const uint8_t *mr = b + i;
    if (op == 0xc4 || op == 0xc5) { /* VEX: map, opcode, ModRM */
        if (rex || i + (op == 0xc4 ? 2u : 1u) >= left)
            return 0;
        int map = op == 0xc5 ? 1 : (b[i] & 0x1f);
        i += op == 0xc4 ? 2 : 1;
        uint8_t vop = b[i++];
        if (map < 1 || map > 3 || !(m = modrm_len(b + i, left - i)))
            return 0;
        imm = map == 3 || (map == 1 && ((vop >= 0x70 && vop <= 0x73) || vop == 0xc2 ||
                                        (vop >= 0xc4 && vop <= 0xc6)));
        return fits(i + m + imm, left);
    }
    if (op == 0x0f) {
        if (i >= left)
            return 0;
        uint8_t op2 = b[i++];
        mr = b + i;
        if (op2 >= 0x80 && op2 <= 0x8f) { /* jcc rel32 */
            in->kind = IK_BRANCH;
            return fits(i + 4, left);
        }
        if (op2 == 0x05 || op2 == 0x0b || op2 == 0xa2 || (op2 >= 0xc8 && op2 <= 0xcf) ||
            op2 == 0x31)
            return i; /* syscall, ud2, cpuid, bswap, rdtsc */
        if (op2 == 0x38 || op2 == 0x3a) {
            if (i >= left)
                return 0;
            i++;
            imm = op2 == 0x3a;
        } else if (op2 == 0x70 || op2 == 0x71 || op2 == 0x72 || op2 == 0x73 || op2 == 0xa4 ||
                   op2 == 0xac || op2 == 0xba || op2 == 0xc2 || op2 == 0xc4 || op2 == 0xc5 ||
                   op2 == 0xc6) {
            imm = 1;
        } else if (!((op2 >= 0x10 && op2 <= 0x17) || op2 == 0x18 || op2 == 0x1e || op2 == 0x1f ||
                     (op2 >= 0x28 && op2 <= 0x2f) || (op2 >= 0x40 && op2 <= 0x7f) ||
                     (op2 >= 0x90 && op2 <= 0x9f) || op2 == 0xa3 || op2 == 0xa5 ||
                     op2 == 0xab || op2 == 0xad || op2 == 0xaf || op2 == 0xb0 || op2 == 0xb1 ||
                     op2 == 0xb3 || (op2 >= 0xb6 && op2 <= 0xbf) || op2 == 0xc0 || op2 == 0xc1 ||
                     op2 == 0xc3 || op2 >= 0xd0)) {
            return 0;
        }
        if (!(m = modrm_len(b + i, left - i)))
            return 0;
        return fits(i + m + imm, left);
    }
    if (op >= 0x50 && op <= 0x5f) { /* push %reg, pop %reg */
        in->reg = (op & 7) + (rex & 1 ? 8 : 0);
        in->kind = in->reg == 4 ? IK_RSP : op < 0x58 ? IK_PUSH : IK_POP;
        return i;
    }
    if (op >= 0x70 && op <= 0x7f) {
        in->kind = IK_BRANCH;
        return fits(i + 1, left);
    }
    switch (op) {
    case 0xc3:
        in->kind = IK_RET;
        return i;
    case 0xc2:
        in->kind = IK_RET;
        return fits(i + 2, left);
    case 0xe8:
    case 0xe9:
        in->kind = IK_BRANCH;
        return fits(i + 4, left);
    case 0xeb:
        in->kind = IK_BRANCH;
        return fits(i + 1, left);
    case 0x68:
    case 0x6a:
        in->kind = IK_PUSH; /* (a slot, no register) */
        imm = op == 0x68 ? 4 : 1;
        return fits(i + imm, left);
    case 0xc9:
        in->kind = IK_RSP; /* leave */
        return i;
    case 0x90: case 0x91: case 0x92: case 0x93: case 0x95: case 0x96: case 0x97:
    case 0x98: case 0x99: case 0xcc: case 0xf5: case 0xf8: case 0xf9: case 0xfc:
        return i; /* nop, xchg %rax, cdqe, cqo, int3, cmc, clc, stc, cld */
    case 0xa8:
        return fits(i + 1, left);
    case 0xa9:
        return fits(i + immz, left);
    default:
        break;
    }
    if (op >= 0xb0 && op <= 0xb7)
        return fits(i + 1, left);
    if (op >= 0xb8 && op <= 0xbf) {
        size_t z = w ? 8 : immz;
        return fits(i + z, left);
    }
    if (op < 0x40 && (op & 7) == 4)
        return fits(i + 1, left); /* ALU al, imm8 */
    if (op < 0x40 && (op & 7) == 5)
        return fits(i + immz, left); /* ALU eax, imm32 */
    bool has_modrm = (op < 0x40 && (op & 7) < 4) || op == 0x63 || op == 0x69 || op == 0x6b ||
                     (op >= 0x80 && op <= 0x8f) || op == 0xc0 || op == 0xc1 || op == 0xc6 ||
                     op == 0xc7 || (op >= 0xd0 && op <= 0xd3) || op == 0xf6 || op == 0xf7 ||
                     op == 0xfe || op == 0xff;
    if (!has_modrm || op == 0x82 || !(m = modrm_len(mr, left - i)))
        return 0;
    int mod = mr[0] >> 6, reg = (mr[0] >> 3) & 7, rm = mr[0] & 7;
    bool rsp_rm = mod == 3 && rm == 4 && !(rex & 1); /* the operand is %rsp itself */
    if (op == 0x80 || op == 0x83 || op == 0x6b || op == 0xc0 || op == 0xc1 || op == 0xc6)
        imm = 1;
    else if (op == 0x81 || op == 0x69 || op == 0xc7)
        imm = immz;
    else if (op == 0xf6 && reg < 2)
        imm = 1;
    else if (op == 0xf7 && reg < 2)
        imm = immz;
    if (i + m + imm > left)
        return 0;
    /* (%rsp as a memory operand's base, no index: ModRM rm 4, SIB 0x24) */
    bool rsp_base = mod != 3 && rm == 4 && m >= 2 && mr[1] == 0x24 && !(rex & 3);
    int64_t disp = !rsp_base ? 0 : mod == 1 ? (int8_t)mr[2] : mod == 2 ? imm_at(mr + 2, 4) : 0;
    if ((op == 0x81 || op == 0x83) && rsp_rm && w && (reg == 0 || reg == 5)) {
        int64_t v = imm_at(mr + m, imm) * (reg == 5 ? 1 : -1); /* (taken off rsp) */
        in->kind = v >= 0 ? IK_SUB_RSP : IK_ADD_RSP;
        in->imm = v >= 0 ? v : -v;
    } else if ((op == 0x81 || op == 0x83) && rsp_rm && reg != 7) {
        in->kind = IK_RSP; /* and, or...: an alignment */
    } else if (op == 0x8d && reg == 4 && !(rex & 4) && w && rsp_base) {
        in->kind = disp <= 0 ? IK_SUB_RSP : IK_ADD_RSP; /* lea disp(%rsp),%rsp */
        in->imm = disp <= 0 ? -disp : disp;
    } else if (op == 0x89 && w && rsp_base) {
        in->kind = IK_SAVE;
        in->reg = reg + (rex & 4 ? 8 : 0);
        in->imm = disp;
    } else if (op == 0xff && (reg == 2 || reg == 3 || reg == 4 || reg == 5)) {
        in->kind = IK_BRANCH; /* call, jmp indirect */
    } else if (op == 0xff && reg == 6) {
        in->kind = IK_PUSH; /* push r/m: a slot */
    } else if (op == 0x8f) {
        in->kind = IK_RSP; /* pop r/m */
    } else if ((op == 0x8b || op == 0x8d) && reg == 4 && !(rex & 4)) {
        in->kind = IK_RSP; /* mov/lea to %rsp */
    } else if ((op == 0x89 || (op < 0x40 && (op & 7) < 2 && (op >> 3) != 7) ||
                ((op == 0xc1 || op == 0xd1 || op == 0xd3 || op == 0xf7 || op == 0xff) &&
                 reg != 0 && reg != 1 && op != 0xf7)) &&
               rsp_rm) {
        in->kind = IK_RSP; /* anything else written to %rsp */
    }
    return i + m + imm;
}

/* Is the instruction at b one insn_decode knows, cut short by the end of
 * the bytes at hand (left)? */
static bool insn_cut(const uint8_t *b, size_t left)
{
    uint8_t pad[32] = {0};
    struct insn tmp;
    if (left >= 16)
        return false;
    memcpy(pad, b, left);
    return insn_decode(pad, sizeof pad, &tmp) > left;
}

/* A frame as the code from its routine's entry has made it so far: how
 * far below the entry's rsp rsp is, and where registers were saved (reg
 * k, x86 number or -1, below[k] bytes under the entry's rsp). */
#define ASM_SAVES 32
struct asm_state {
    uint64_t down;
    int reg[ASM_SAVES];
    uint64_t below[ASM_SAVES];
    int n;
};

/* The frame at the pc (in routine code whose first byte is at start) as a
 * layout: false for a form not known (see unwind__asm_caller). Depends on
 * the code alone, so it may be cached by pc. */
static bool asm_layout(const uint8_t *entry, size_t entry_len, uint64_t start,
                       const uint8_t *at_pc, size_t pc_len, uint64_t pc, struct asm_state *out)
{
    struct insn ins;
    size_t n;
    /* In an epilogue: run it (an add to rsp, pops, ret): the return
     * address is above what it adds and pops, the registers it pops
     * under that. */
    struct asm_state ep = {0};
    uint64_t at[ASM_SAVES];
    for (size_t i = 0; i < pc_len && (n = insn_decode(at_pc + i, pc_len - i, &ins)) != 0;
         i += n) {
        if (ins.kind == IK_RET) {
            for (int k = 0; k < ep.n; k++)
                ep.below[k] = ep.down - at[k];
            *out = ep;
            return true;
        }
        if (ins.kind == IK_ADD_RSP && ins.imm >= 0 && ins.imm < (1 << 20) && i == 0) {
            ep.down += (uint64_t)ins.imm;
        } else if (ins.kind == IK_POP && ep.n < ASM_SAVES && is_callee_saved(ins.reg)) {
            ep.reg[ep.n] = ins.reg;
            at[ep.n++] = ep.down;
            ep.down += 8;
        } else {
            break;
        }
    }
    /* Else undo what the code from the entry to the pc did to rsp, in
     * straight-line order: its pushes and subtractions, less the pops and
     * additions that undo them (registers saved around a call, an
     * epilogue's); registers pushed, or stored in the frame (mov
     * %reg,disp(%rsp)), are taken from there. The first branch ends the
     * entry's straight line: the frame then is the body's, which a ret
     * ends a path of; what follows a ret starts from the body's frame
     * again. A pc past the bytes read: the frame as they leave it (the
     * body keeps rsp still). */
    if (pc < start)
        return false;
    struct asm_state cur = {0}, body = {0};
    bool have_body = false;
    uint64_t off = pc - start;
    for (size_t i = 0; i < entry_len && i < off; i += n) {
        if (!(n = insn_decode(entry + i, entry_len - i, &ins))) {
            if (insn_cut(entry + i, entry_len - i))
                break; /* (cut short by the end of what was read) */
            return false;
        }
        if ((ins.kind == IK_BRANCH || ins.kind == IK_RET) && !have_body) {
            body = cur;
            have_body = true;
        }
        /* (A register saved again holds by then what the routine made of
         * it: only its first save is the caller's.) */
        bool again = false;
        for (int j = 0; j < cur.n && ins.reg >= 0; j++)
            again |= cur.reg[j] == ins.reg;
        switch (ins.kind) {
        case IK_PUSH:
            if (cur.n == ASM_SAVES)
                return false;
            cur.down += 8;
            cur.reg[cur.n] = again ? -1 : ins.reg;
            cur.below[cur.n++] = cur.down;
            break;
        case IK_SAVE:
            /* (the entry's stores only: later ones are the body's spills) */
            if (have_body || again)
                break;
            if (cur.n == ASM_SAVES || ins.imm < 0 || (uint64_t)ins.imm + 8 > cur.down)
                return false;
            cur.reg[cur.n] = ins.reg;
            cur.below[cur.n++] = cur.down - (uint64_t)ins.imm;
            break;
        case IK_SUB_RSP:
            if (ins.imm <= 0 || ins.imm >= (1 << 20))
                return false;
            cur.down += (uint64_t)ins.imm;
            break;
        case IK_POP:
        case IK_ADD_RSP: {
            uint64_t up = ins.kind == IK_POP ? 8 : (uint64_t)ins.imm;
            if (up > cur.down)
                return false;
            cur.down -= up;
            /* (what is above rsp now is no longer the frame: a register
             * saved there was restored, by this pop or before the add) */
            int k = 0;
            for (int j = 0; j < cur.n; j++)
                if (cur.below[j] <= cur.down) {
                    cur.reg[k] = cur.reg[j];
                    cur.below[k++] = cur.below[j];
                }
            cur.n = k;
            break;
        }
        case IK_RET:
            if (cur.down != 0)
                return false; /* (a ret with a frame: not a path's end) */
            cur = body;
            break;
        case IK_RSP:
            return false;
        case IK_OTHER:
        case IK_BRANCH:
            break;
        }
    }
    *out = cur;
    return true;
}

bool unwind__asm_caller(const uint8_t *entry, size_t entry_len, uint64_t start,
                        const uint8_t *at_pc, size_t pc_len, const struct user_regs_struct *in,
                        unwind_read_fn read, void *ctx, struct user_regs_struct *out)
{
    struct asm_state f;
    *out = *in;
    return asm_layout(entry, entry_len, start, at_pc, pc_len, in->rip, &f) &&
           frame_caller(in->rsp + f.down, f.reg, f.below, f.n, read, ctx, out);
}

bool unwind__stg_run(const uint8_t *code, size_t len, uint64_t base,
                     const struct user_regs_struct *in, unwind_read_fn read, void *ctx,
                     struct user_regs_struct *out)
{
    uint64_t down = 0;        /* bytes taken off rsp since the entry */
    int64_t rax_down = -1;    /* rax is the entry's rsp less this (mov %rsp,%rax) */
    int64_t saved_at[16];     /* a register's copy: this far below the entry's rsp */
    bool reused[16] = {false};
    for (int r = 0; r < 16; r++)
        saved_at[r] = -1;
    *out = *in;
    for (size_t i = 0; i < len;) {
        const uint8_t *b = code + i;
        size_t left = len - i, n;
        if (base + i == in->rip) {
            int regs[16], nregs = 0;
            uint64_t below[16];
            for (int r = 0; r < 16; r++) {
                if (!reused[r] || !callee_saved(out, r))
                    continue; /* (the caller's rax and r8-r11 are nobody's) */
                if (saved_at[r] < 0)
                    return false;
                regs[nregs] = r;
                below[nregs++] = (uint64_t)saved_at[r];
            }
            return frame_caller(in->rsp + down, regs, below, nregs, read, ctx, out);
        }
        if (left >= 4 && b[0] == 0x48 && b[1] == 0x83 && b[2] == 0xec) {
            n = 4; /* sub $imm8,%rsp */
            down += (uint64_t)(int64_t)(int8_t)b[3];
        } else if (left >= 7 && b[0] == 0x48 && b[1] == 0x81 && b[2] == 0xec) {
            n = 7; /* sub $imm32,%rsp */
            down += (uint64_t)(int64_t)(int32_t)((uint32_t)b[3] | (uint32_t)b[4] << 8 |
                                                 (uint32_t)b[5] << 16 | (uint32_t)b[6] << 24);
        } else if (left >= 3 && b[0] == 0x48 && b[1] == 0x89 && b[2] == 0xe0) {
            n = 3; /* mov %rsp,%rax */
            rax_down = (int64_t)down;
        } else if (left >= 3 && (b[0] == 0x48 || b[0] == 0x4c) && b[1] == 0x89 &&
                   (b[2] & 7) == 0 && (b[2] >> 6) < 2) {
            /* mov %reg,(%rax) or mov %reg,disp8(%rax) */
            int mod = b[2] >> 6, reg = (b[2] >> 3 & 7) + (b[0] == 0x4c ? 8 : 0);
            n = mod == 1 ? 4 : 3;
            if (rax_down < 0 || left < n)
                return false;
            saved_at[reg] = rax_down - (mod == 1 ? (int8_t)b[3] : 0);
        } else if (left >= 3 && (b[0] == 0x48 || b[0] == 0x49) && b[1] == 0x89 &&
                   (b[2] >> 6) == 3) {
            n = 3; /* mov %reg,%reg: rax (not callee-saved) or r8-r15 */
            reused[(b[2] & 7) + (b[0] == 0x49 ? 8 : 0)] = true;
        } else {
            return false; /* (the jmp into Haskell code included) */
        }
        i += n;
    }
    return false;
}

static int read_word(void *ctx, uint64_t addr, uint64_t *out)
{
    unw_word_t v;
    if (access_mem(NULL, addr, &v, 0, ctx) < 0)
        return -1;
    *out = v;
    return 0;
}

typedef bool (*stg_code_fn)(const uint8_t *code, size_t len, uint64_t base,
                            const struct user_regs_struct *in, unwind_read_fn read, void *ctx,
                            struct user_regs_struct *out);

/* A thread stopped in StgReturn or StgRun (at base; see unwind__stg_return
 * and unwind__stg_run, run): the caller's registers, from the code in the
 * executable and the captured stack. */
static bool stg_code_caller(struct unwinder *u, uint64_t base, stg_code_fn run,
                            const struct user_regs_struct *in, struct user_regs_struct *out)
{
    uint8_t code[64];
    return base && in->rip >= base && in->rip < base + sizeof code &&
           modset__read(u->ms, base, code, sizeof code) == 0 &&
           run(code, sizeof code, base, in, read_word, u, out);
}

/* The sampled pc in a routine without unwind information that has not
 * moved its stack pointer (glibc's clone3 at its system call, which ends
 * its FDE there for the child's sake; a small assembly leaf): its return
 * address is at rsp, if what is there follows a call in C code. (A Haskell
 * caller is scan_for_haskell's, which checks rbp too.) The caller's
 * registers then, the callee-saved ones as the thread has them. */
static bool leaf_caller(struct unwinder *u, const struct user_regs_struct *in,
                        struct user_regs_struct *out)
{
    unw_proc_info_t pi;
    uint64_t ra;
    if (find_proc_info(u->as, in->rip, &pi, 0, u) == 0 || read_word(u, in->rsp, &ra) < 0 ||
        ra <= 8 || !modset__find(u->ms, ra - 1) || unwind__is_haskell_pc(u, ra - 1) ||
        !after_call(u, ra))
        return false;
    *out = *in;
    out->rip = ra;
    out->rsp = in->rsp + 8;
    return true;
}

/* A new thread at its first instruction, the child's side of clone or
 * clone3: a `syscall` just before the pc and `test %rax,%rax` at it (the
 * return that tells parent from child), in code glibc leaves without
 * unwind information for the child's sake. Its stack is new: nothing is
 * above it. (Its registers are a copy of its parent's, so /proc says it
 * is blocked in clone3 before it has run.) */
static bool clone_child(struct unwinder *u, uint64_t pc)
{
    static const uint8_t sig[] = {0x0f, 0x05, 0x48, 0x85, 0xc0};
    uint8_t b[sizeof sig];
    return pc >= 2 && modset__read(u->ms, pc - 2, b, sizeof b) == 0 &&
           memcmp(b, sig, sizeof sig) == 0;
}

/* The layout of a frame without unwind information at pc, in module m
 * (see unwind__asm_caller), from the code at the pc and from its
 * function's start by the module's symbol table; cached by pc, as the
 * same frames recur and the code does not change: for each sample of a
 * pc deep in an assembly routine, up to 16 KB of code would be decoded
 * again. NULL where it has none known. */
static const struct unwind_asm_layout *asm_layout_at(struct unwinder *u, struct module *m,
                                                     uint64_t pc)
{
    struct unwind_asm_layout *c =
        u->asm_cache ? &u->asm_cache[(pc ^ pc >> 10) & (UNWIND_ASM_CACHE - 1)] : &u->asm_one;
    if (c->m == m && c->pc == pc)
        return c->ok ? c : NULL;
    const struct sym *s = module__symbol(m, pc);
    size_t len = 0;
    struct asm_state f;
    if (!s)
        return NULL; /* (not cached: the symbol tables may come later) */
    uint64_t start = s->addr + (uint64_t)m->bias, off = pc - start;
    /* The routine's code in the file's image, as far as its symbol (or
     * its segment) goes, no copy; 16 KB at most, all of an assembly
     * routine, and a bound on the decoding a frame costs (in a program
     * without any CFI, every frame is decoded from its function's start). */
    const uint8_t *code = module__file_at(m, s->addr, &len);
    if (s->size > 0 && len > s->size)
        len = (size_t)s->size;
    if (len > 16384)
        len = 16384;
    c->m = m;
    c->pc = pc;
    c->ok = code && pc >= start && off < len &&
            asm_layout(code, len, start, code + off, len - off < 32 ? len - off : 32, pc, &f) &&
            f.down <= UINT32_MAX;
    /* (Only callee-saved registers are taken from a frame; more than it
     * holds, an epilogue popping one again and again, is no form known.) */
    c->n = 0;
    for (int k = 0; c->ok && k < f.n; k++) {
        if (!is_callee_saved(f.reg[k]))
            continue;
        c->ok = c->n < UNWIND_ASM_SAVES;
        if (c->ok) {
            c->reg[c->n] = (int8_t)f.reg[k];
            c->below[c->n++] = (uint32_t)f.below[k]; /* (below <= down) */
        }
    }
    c->down = c->ok ? (uint32_t)f.down : 0;
    return c->ok ? c : NULL;
}

/* The caller of a frame without unwind information, by the layout its code
 * gives: if what it gives follows a call in a mapped object. */
static bool asm_caller(struct unwinder *u, const struct user_regs_struct *in,
                       struct user_regs_struct *out)
{
    struct module *m = modset__find(u->ms, in->rip);
    const struct unwind_asm_layout *f = m ? asm_layout_at(u, m, in->rip) : NULL;
    int reg[UNWIND_ASM_SAVES];
    uint64_t below[UNWIND_ASM_SAVES];
    *out = *in;
    for (int k = 0; f && k < f->n; k++) {
        reg[k] = f->reg[k];
        below[k] = f->below[k];
    }
    if (!f || !frame_caller(in->rsp + f->down, reg, below, f->n, read_word, u, out))
        return false;
    return out->rip > 8 && out->rsp > in->rsp && modset__find(u->ms, out->rip - 1) &&
           after_call(u, out->rip);
}

/* The registers of the cursor's frame (at ip, sp): its callee-saved ones
 * as libunwind has them, the others as in base. */
static void frame_regs(unw_cursor_t *c, const struct user_regs_struct *base, uint64_t ip,
                       uint64_t sp, struct user_regs_struct *out)
{
    static const int saved[] = {UNW_X86_64_RBX, UNW_X86_64_RBP, UNW_X86_64_R12,
                                UNW_X86_64_R13, UNW_X86_64_R14, UNW_X86_64_R15};
    unsigned long long *dst[] = {&out->rbx, &out->rbp, &out->r12, &out->r13, &out->r14, &out->r15};
    *out = *base;
    out->rip = ip;
    out->rsp = sp;
    for (size_t k = 0; k < sizeof saved / sizeof *saved; k++) {
        unw_word_t v = 0;
        if (unw_get_reg(c, saved[k], &v) == 0)
            *dst[k] = v;
    }
}

void unwind__stack(struct unwinder *u, const struct user_regs_struct *regs, bool partial,
                   const struct memimg *img, struct raw_frame *out, int max,
                   struct unwind_result *res)
{
    unw_cursor_t c;
    unw_word_t ip, sp, prev_sp = 0;
    int n = 0;

    memset(res, 0, sizeof *res);
    u->regs = regs;
    u->partial = partial;
    u->img = img;
    u->stack_hi = regs->rsp;
    u->live_now = 0;
    u->missing = false;
    u->st.stacks++;
    if (max <= 0)
        return;
    quiet_signals = true;
    /* Stopped on its way back to the scheduler, or from it: StgReturn or
     * StgRun itself, then its caller's frames (see stg_code_caller). */
    struct user_regs_struct caller, leaf, asm_frame, asm_next;
    if (!partial && max > 1 &&
        (stg_code_caller(u, u->stg_return, unwind__stg_return, regs, &caller) ||
         stg_code_caller(u, u->stg_run, unwind__stg_run, regs, &caller))) {
        out[n++] = (struct raw_frame){regs->rip, FK_PC, 0};
        u->regs = &caller;
    }
    if (unw_init_remote(&c, u->as, u) < 0) {
        out[n++] = (struct raw_frame){WE_C_UNWIND, FK_INVALID, 0};
        res->error = true;
        goto done;
    }
    /* The frame under a signal handler's way back (__restore_rt) is the
     * code the signal interrupted, at the very instruction: a pc, not a
     * return address after a call; so is the way back itself. */
    bool interrupted = false;
    for (;;) {
        if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0)
            break;
        if (ip == 0) {
            res->bottom = n > 0;
            break;
        }
        unw_get_reg(&c, UNW_REG_SP, &sp);
        bool pc = n == 0 || interrupted;
        /* Return addresses point after the call: test the call itself. */
        if (unwind__is_haskell_pc(u, pc ? ip : ip - 1)) {
            unw_word_t rbp = 0;
            unw_get_reg(&c, UNW_X86_64_RBP, &rbp);
            res->reached_haskell = true;
            res->hs_pc = ip;
            res->hs_is_leaf = pc;
            res->hs_sp = rbp;
            res->hs_rsp = sp;
            break;
        }
        if (n == max - 1) {
            out[n++] = (struct raw_frame){0, FK_TRUNCATED, 0};
            res->truncated = true;
            break;
        }
        if (n > 0 && !modset__find(u->ms, ip - 1) &&
            (modset__refresh(u->ms, false), !modset__find(u->ms, ip - 1))) {
            /* A return address outside every mapped file: the unwind has
             * gone astray (typically a thread that has not run yet, whose
             * stack holds its start arguments, not frames). Stop there. */
            break;
        }
        bool signalled = n > 0 && pc; /* the code a signal interrupted */
        interrupted = n > 0 && is_sigreturn(u, ip);
        uint32_t kind = pc || interrupted ? FK_PC : FK_RET;
        out[n++] = (struct raw_frame){ip, kind, 0};
        if (n > 1 && sp <= prev_sp) {
            /* The stack pointer must grow towards the caller; anything else
             * is a corrupt unwind that would loop. */
            break;
        }
        prev_sp = sp;
        unw_word_t frame_rbp = 0;
        unw_get_reg(&c, UNW_X86_64_RBP, &frame_rbp);
        /* StgReturn or StgRun, where a signal landed (the runtime's tick):
         * their CFI describes the frame while Haskell code runs, not their
         * prologue and epilogue. The caller from their code, as for a
         * thread stopped there (stg_code_caller); no step of libunwind. */
        bool found = false;
        if (signalled && max - n > 1) {
            frame_regs(&c, u->regs, ip, sp, &asm_frame);
            found = stg_code_caller(u, u->stg_return, unwind__stg_return, &asm_frame, &asm_next) ||
                    stg_code_caller(u, u->stg_run, unwind__stg_run, &asm_frame, &asm_next);
            if (found)
                leaf = asm_next;
        }
        /* Code without unwind information: libunwind guesses its caller
         * through rbp, which such code (GMP's assembly) may use as it
         * pleases, and which can lead to a stale return address. Its
         * registers now, for a caller read from its code instead. */
        bool no_cfi = !found && !has_cfi(u, kind == FK_PC ? ip : ip - 1);
        if (no_cfi)
            frame_regs(&c, u->regs, ip, sp, &asm_frame);
        int r = 1;
        unw_word_t nip = 0;
        if (!found) {
            u->stepping = true;
            u->guessing = no_cfi;
            u->guess_hi = 0;
            u->guess_live = 0;
            r = unw_step(&c);
            u->stepping = false;
            u->guessing = false;
            unw_get_reg(&c, UNW_REG_IP, &nip);
            /* (libunwind guessed through rbp, which a leaf without CFI
             * leaves as its caller had it: no frame pointer in C.) */
            found = n == 1 && (r <= 0 || !modset__find(u->ms, nip)) &&
                    leaf_caller(u, u->regs, &leaf);
        }
        if (!found && no_cfi && asm_caller(u, &asm_frame, &asm_next)) {
            leaf = asm_next; /* (its prologue says its frame) */
            found = true;
        }
        bool astray = no_cfi && !found &&
                      (r <= 0 || nip == ip || nip <= 8 || !modset__find(u->ms, nip - 1) ||
                       !after_call(u, nip));
        if (no_cfi && !found && !astray) {
            /* (libunwind's guess taken: what it read was the stack) */
            u->live_now += u->guess_live;
            if (u->guess_hi > u->stack_hi)
                u->stack_hi = u->guess_hi;
        }
        if (astray && n == 1 && clone_child(u, ip)) {
            res->bottom = true;
            break;
        }
        if (found) {
            /* A caller found without libunwind: the unwind carries on from
             * its registers. */
            u->regs = &leaf;
            if (unw_init_remote(&c, u->as, u) < 0) {
                out[n++] = (struct raw_frame){WE_C_UNWIND, FK_INVALID, 0};
                res->error = true;
                break;
            }
            continue;
        }
        if (astray && u->ghc) {
            /* Stuck in code without unwind information, in a GHC program,
             * or given by libunwind a caller through rbp that is no return
             * address (GMP's routines use rbp as they please), and its
             * prologue not understood: is this C called from Haskell? */
            uint64_t ret, at;
            if (scan_for_haskell(u, sp, &ret, &at)) {
                res->reached_haskell = true;
                res->hs_pc = ret;
                /* rbp as this frame had it, unless the routine has used it
                 * since (checked by the caller against the STG stack). */
                res->hs_sp = frame_rbp;
                res->hs_rsp = at + 8;
                res->scanned = true;
                res->scan_lo = sp;
                res->scan_hi = at;
                break;
            }
        }
        /* For code without unwind information libunwind guesses a caller
         * (through rbp). A guess outside every mapped object is no caller:
         * the stack ends here as far as can be told. (A thread caught just
         * after clone3 returned in the child, code glibc leaves outside any
         * FDE, gave [unknown] after [unknown] to the frame limit.) */
        unw_proc_info_t here;
        if (r > 0 && !modset__find(u->ms, nip) &&
            find_proc_info(u->as, n == 1 ? ip : ip - 1, &here, 0, u) < 0)
            break;
        if (r == 0) {
            res->bottom = true;
            break;
        }
        if (r < 0) {
            u->st.errors++;
            if (n < max)
                out[n++] = (struct raw_frame){WE_C_UNWIND, FK_INVALID, 0};
            res->error = true;
            break;
        }
    }
done:
    res->n = n;
    res->stack_used = u->stack_hi - regs->rsp;
    res->live_reads = u->live_now;
    res->missing_regs = u->missing;
    u->st.frames += (unsigned long)n;
    u->regs = NULL;
    u->img = NULL;
    quiet_signals = false;
}

/* Words above a Haskell frame's rsp where StgRun's frame may start. */
#define STG_RSP_SLACK 8

/* Does the return address ra follow a call of StgRun (e8 rel32)? */
static bool called_stg_run(struct unwinder *u, uint64_t ra)
{
    uint8_t call[5];
    if (ra < 5 || modset__read(u->ms, ra - 5, call, sizeof call) < 0 || call[0] != 0xe8)
        return false;
    int32_t rel = (int32_t)((uint32_t)call[1] | (uint32_t)call[2] << 8 | (uint32_t)call[3] << 16 |
                            (uint32_t)call[4] << 24);
    return ra + (uint64_t)(int64_t)rel == u->stg_run;
}

bool unwind__below_stg(struct unwinder *u, const struct user_regs_struct *regs, uint64_t rsp,
                       const struct memimg *img, struct raw_frame *out, int max,
                       struct unwind_result *res)
{
    struct user_regs_struct in = *regs, caller;
    uint8_t code[64];
    bool ok = false;
    unsigned long live = 0;

    memset(res, 0, sizeof *res);
    if (!u->stg_return || !u->stg_run || max <= 0 ||
        modset__read(u->ms, u->stg_return, code, sizeof code) < 0)
        return false;
    /* Haskell code keeps rsp where StgRun left it, but for a C call it may
     * take a word or a few off it (to align it, or for arguments), as the
     * unwind of that call then says: the frame is the one whose return
     * address follows a call of StgRun. */
    for (int k = 0; k < STG_RSP_SLACK && !ok; k++) {
        in.rip = u->stg_return;
        in.rsp = rsp + 8 * (uint64_t)k;
        u->img = img;
        u->regs = &in;
        u->stack_hi = in.rsp;
        u->live_now = 0;
        ok = unwind__stg_return(code, sizeof code, u->stg_return, &in, read_word, u, &caller) &&
             called_stg_run(u, caller.rip);
        live = u->live_now; /* (the attempt that counts) */
        u->regs = NULL;
        u->img = NULL;
    }
    if (!ok)
        return false;
    unwind__stack(u, &caller, false, img, out, max, res);
    if (res->n > 0 && out[0].kind == FK_PC)
        out[0].kind = FK_RET; /* (a return address into the scheduler) */
    res->live_reads += live;
    /* (the stack it needed, from where the thread's rsp is) */
    res->stack_used = caller.rsp + res->stack_used > regs->rsp
                          ? caller.rsp + res->stack_used - regs->rsp
                          : 0;
    return true;
}
