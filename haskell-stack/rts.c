/* rts.c - locating, validating and capturing a GHC program's RTS state. */
#define _GNU_SOURCE
#include "haskell-stack/rts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "haskell-stack/stg_walk.h"
#include "sampler/log.h"
#include "sampler/remote.h"

/* A stack chunk is 32 KiB by default (+RTS -kc); the first one 1 KiB
 * (-ki). Sp and SpLim are believed to be a chunk's only within this much
 * of each other, and a chunk's size is remembered up to it (to guess what
 * to read); bigger chunks are read up to RTS_STACK_CAPTURE_BYTES. */
#define MAX_CHUNK_BYTES (256 * 1024)
#define MAX_CHUNKS 8
#define MAX_CAPS 256

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bool code_ranges__has(const struct code_ranges *c, uint64_t addr)
{
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->r[mid].lo <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && addr < c->r[lo - 1].hi;
}

static int add_range(struct code_ranges *c, uint64_t lo, uint64_t hi)
{
    struct code_range *v = realloc(c->r, (c->n + 1) * sizeof *v);
    if (!v)
        return -ENOMEM;
    c->r = v;
    c->r[c->n++] = (struct code_range){lo, hi};
    return 0;
}

static int cmp_range(const void *a, const void *b)
{
    const struct code_range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void sort_ranges(struct code_ranges *c)
{
    if (c->n > 1)
        qsort(c->r, c->n, sizeof *c->r, cmp_range);
}

void rts__free(struct rts *r)
{
    free(r->gc.r);
    free(r->waiting.r);
    free(r->sched.r);
    free(r->handlers.r);
    free(r->cmm.r);
    free(r->rts_calls.r);
    free(r->rts_work.r);
    free(r->mark.r);
    free(r->ending.r);
    free(r->starting.r);
    free(r->own_entry.r);
    free(r->init.r);
    free(r->wait_cond.r);
    free(r->yield_cap.r);
    free(r->gc_worker.r);
    free(r->resumed.r);
    free(r->events.r);
    free(r->epoll.r);
    free(r->walk_cache);
    memset(r, 0, sizeof *r);
}

/* ------------------------------------------------------------------------
 * Attach: symbols
 * ---------------------------------------------------------------------- */

enum wanted_sym {
    S_MainCapability,
    S_n_capabilities,
    S_capabilities,
    S_my_task,
    S_stg_TSO_info,
    S_stg_STACK_info,
    S_stg_underflow,
    S_stg_stop,
    S_CCS_MAIN,
    S_printStackChunk,
    S_generations,
    S_oldest_gen,
    S_end_tso_queue,
    S_StgReturn,
    S_StgRun,
    S_resumeThread,
    S_all_tasks,
    S_rts_shutdown,
    S_AP_STACK,
    S_AP_STACK_NOUPD,
    S_nonmoving_threads,
    S_nonmoving_old_threads,
    S_pending_sync,
    S_upd_frame,
    S_marked_upd_frame,
    S_bh_upd_frame,
    S__COUNT
};

static const char *const wanted_names[S__COUNT] = {
    "MainCapability", "n_capabilities", "capabilities",
    "my_task", "stg_TSO_info", "stg_STACK_info",
    "stg_stack_underflow_frame_info", "stg_stop_thread_info", "CCS_MAIN",
    "printStackChunk", "generations", "oldest_gen", "stg_END_TSO_QUEUE_closure",
    "StgReturn", "StgRun", "resumeThread", "all_tasks", "rts_shutdown",
    "stg_AP_STACK_info", "stg_AP_STACK_NOUPD_info", "nonmoving_threads",
    "nonmoving_old_threads", "pending_sync", "stg_upd_frame_info",
    "stg_marked_upd_frame_info", "stg_bh_upd_frame_info",
};

/* C functions whose presence on a C stack means the thread is collecting
 * garbage (or waiting for the others to stop for it); and those a program
 * calls to collect (System.Mem.performGC, C's hs_perform_gc), which first
 * wait for a capability to collect with. */
static const char *const gc_functions[] = {
    "GarbageCollect", "gcWorkerThread", "scheduleDoGC", "waitForGcThreads",
    "requestSync", "stopAllCapabilitiesWith", "nonmovingCollect", "performGC",
    "performMajorGC", "performBlockingMajorGC", NULL,
};

/* The non-threaded RTS waits for I/O and timers inside the scheduler. */
static const char *const waiting_functions[] = {"awaitEvent", NULL};

/* The scheduler and what enters it. C code called from Haskell (an unsafe
 * call) never calls these, so one of them between the sampled pc and the
 * first Haskell frame means the RTS is between two runs of Haskell code,
 * even though cap->in_haskell is already (or still) set: schedule() sets it
 * before dirty_TSO and dirty_STACK, well ahead of StgRun. */
static const char *const sched_functions[] = {
    "scheduleWorker", "scheduleWaitThread", "rts_inCall", "rts_evalLazyIO",
    "rts_evalIO",     "rts_evalStableIO",   "hs_main",    NULL,
};
/* ... and the RTS's static ones, whose names a program's own (global) C
 * functions may well share. StgRunIsImplementedInAssembler holds StgRun
 * and StgReturn, the assembly between schedule() and Haskell code, without
 * unwind information: a thread stopped there holds its capability with
 * in_haskell set, but runs neither Haskell code nor a foreign call. */
static const char *const sched_static_functions[] = {"schedule", "workerStart",
                                                     "StgRunIsImplementedInAssembler", NULL};
/* The RTS's signal handlers, static too: the non-threaded runtime's tick
 * (a SIGVTALRM up to GHC 9.0, delivered to whichever thread the kernel
 * picks, a thread C code started included), and those of the signals a
 * program handles. They run on top of whatever the thread was doing. */
static const char *const handler_static_functions[] = {
    "handle_tick", "generic_handler", "shutdown_handler", "backtrace_handler", NULL,
};

/* The RTS's functions that a program's own code calls as C functions
 * while it holds its capability (a safe foreign call's way out and back
 * in): the runtime's work, not a foreign call. (Those its Cmm code calls,
 * threadPaused, threadStackUnderflow, messageBlackHole, allocate..., are
 * known by their caller, the `cmm` ranges.) */
static const char *const rts_call_functions[] = {"suspendThread", "resumeThread", NULL};

/* The RTS's functions that compiled Haskell code calls itself, as C
 * functions, not through a foreign import (GHC's StgToCmm): the write
 * barrier of an IORef (and the nonmoving collector's), a CAF's first
 * entry, a spark (`par`), and in a -prof build the cost-centre stack's
 * upkeep at each entry. The runtime's work, not a foreign call: in a -prof
 * -fprof-auto program with no foreign import, three fifths of the samples
 * were tagged [unsafe-ffi] in pushCostCentre and enterFunCCS. */
static const char *const compiled_call_functions[] = {
    "dirty_MUT_VAR",  "updateRemembSetPushClosure_", "updateRemembSetPushThunk_",
    "newCAF",         "newSpark",                    "pushCostCentre",
    "enterFunCCS",    NULL,
};

/* A worker the runtime lets go of (it keeps a few spare workers per
 * capability; a worker back from a safe call beyond those ends) frees its
 * Task, then ends its thread: from then on its thread pointer leads to
 * freed memory. */
static const char *const ending_functions[] = {"workerTaskStop", "shutdownThread", NULL};

/* The start routines of the runtime's own OS threads, which run for a while
 * before the thread has a Task: a worker until it takes the Task its
 * creator made (workerStart), a forkOS thread until rts_lock makes one. */
static const char *const starting_functions[] = {"workerStart", "forkOS_createThreadWrapper",
                                                 NULL};
/* The runtime's start (hs_main calls hs_init_ghc; a C main calls hs_init
 * or hs_init_with_rtsopts, which call it). */
static const char *const init_functions[] = {"hs_init", "hs_init_ghc", "hs_init_with_rtsopts",
                                             NULL};

/* ... and from GHC 9.6 the one that names a thread the runtime starts, then
 * calls its start routine: static, in OSThreads.c, named as glibc's own. */
static const char *const osthreads_starting_functions[] = {"start_thread", NULL};

/* The function an OS thread of the nonmoving collector (+RTS -xn) runs,
 * static: up to GHC 9.8 a thread started for each concurrent mark, which
 * has no Task until it syncs with the mutators at the mark's end; since
 * 9.8 one thread for the program's life ("nonmoving-mark"), which waits
 * for the next mark in waitCondition, called from it directly. */
static const char *const mark_static_functions[] = {
    "nonmovingConcurrentMark", "nonmovingConcurrentMarkWorker", NULL,
};

struct sym_scan {
    struct rts *r;
    GElf_Sym found[S__COUNT];
    bool have[S__COUNT];
    bool in_osthreads; /* the symbols since the last FILE are OSThreads.c's */
    int64_t bias;
    int err;
};

static bool in_list(const char *const *list, const char *name)
{
    for (; *list; list++)
        if (strcmp(*list, name) == 0)
            return true;
    return false;
}

static bool scan_symbol(void *arg, const char *name, const GElf_Sym *s)
{
    struct sym_scan *sc = arg;
    struct rts *r = sc->r;
    uint64_t lo = s->st_value + (uint64_t)sc->bias, hi = lo + s->st_size;

    if (GELF_ST_TYPE(s->st_info) == STT_FILE) {
        sc->in_osthreads = strncmp(name, "OSThreads.", 10) == 0;
        return true;
    }

    for (int i = 0; i < S__COUNT; i++)
        if (!sc->have[i] && strcmp(name, wanted_names[i]) == 0) {
            sc->found[i] = *s;
            sc->have[i] = true;
        }
    /* The RTS's Cmm code: entry code and info tables, FUNC or OBJECT
     * symbols in .text (its closures, elsewhere, are never a pc). */
    if (strncmp(name, "stg_", 4) == 0 && s->st_size > 0 &&
        (GELF_ST_TYPE(s->st_info) == STT_FUNC || GELF_ST_TYPE(s->st_info) == STT_OBJECT))
        sc->err |= add_range(&r->cmm, lo, hi);
    if (GELF_ST_TYPE(s->st_info) != STT_FUNC || s->st_size == 0)
        return true;
    if (in_list(rts_call_functions, name))
        sc->err |= add_range(&r->rts_calls, lo, hi);
    if (in_list(compiled_call_functions, name))
        sc->err |= add_range(&r->rts_work, lo, hi);
    if (in_list(ending_functions, name))
        sc->err |= add_range(&r->ending, lo, hi);
    bool starting = in_list(starting_functions, name) ||
                    (sc->in_osthreads && GELF_ST_BIND(s->st_info) == STB_LOCAL &&
                     in_list(osthreads_starting_functions, name));
    if (starting)
        sc->err |= add_range(&r->starting, lo, hi);
    if (strcmp(name, "hs_main") == 0)
        r->hs_main = true;
    if (starting || strcmp(name, "hs_main") == 0)
        sc->err |= add_range(&r->own_entry, lo, hi);
    if (in_list(init_functions, name))
        sc->err |= add_range(&r->init, lo, hi);
    if (GELF_ST_BIND(s->st_info) == STB_LOCAL && in_list(mark_static_functions, name))
        sc->err |= add_range(&r->mark, lo, hi);
    if (strcmp(name, "waitCondition") == 0)
        sc->err |= add_range(&r->wait_cond, lo, hi);
    if (strcmp(name, "yieldCapability") == 0)
        sc->err |= add_range(&r->yield_cap, lo, hi);
    if (strcmp(name, "gcWorkerThread") == 0)
        sc->err |= add_range(&r->gc_worker, lo, hi);
    if (in_list(gc_functions, name))
        sc->err |= add_range(&r->gc, lo, hi);
    else if (in_list(waiting_functions, name))
        sc->err |= add_range(&r->waiting, lo, hi);
    else if (in_list(sched_functions, name) ||
             (GELF_ST_BIND(s->st_info) == STB_LOCAL && in_list(sched_static_functions, name)))
        sc->err |= add_range(&r->sched, lo, hi);
    else if (GELF_ST_BIND(s->st_info) == STB_LOCAL && in_list(handler_static_functions, name))
        sc->err |= add_range(&r->handlers, lo, hi);
    return true;
}

/* Does the executable load a shared library whose name starts with prefix
 * (DT_NEEDED)? A -dynamic GHC program needs libHSrts*.so. Its name (in the
 * file's string table) in *name, if name is not NULL. */
static bool needs_library(struct module *m, const char *prefix, const char **name)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(m->elf, scn)) != NULL) {
        GElf_Shdr sh;
        Elf_Data *d;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !(d = elf_getdata(scn, NULL)))
            continue;
        for (size_t i = 0; sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
            GElf_Dyn dyn;
            const char *nm;
            if (gelf_getdyn(d, (int)i, &dyn) && dyn.d_tag == DT_NEEDED &&
                (nm = elf_strptr(m->elf, sh.sh_link, dyn.d_un.d_val)) &&
                strncmp(nm, prefix, strlen(prefix)) == 0) {
                if (name)
                    *name = nm;
                return true;
            }
        }
    }
    return false;
}

/* Where the IO and timer managers live: GHC.Event.* in base up to 9.8,
 * GHC.Internal.Event.* in ghc-internal since 9.10 (symbol prefixes of the
 * Z-encoded unit and module). */
static const struct {
    const char *events, *epoll;
} event_modules[] = {
    {"base_GHCziEvent", "base_GHCziEventziEPoll_"},
    {"ghczminternal_GHCziInternalziEvent", "ghczminternal_GHCziInternalziEventziEPoll_"},
};

static bool has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The code of the event modules (the IO and timer managers' loops). Their
 * local closures and continuations have no symbols and lie past the sized
 * entry code, so each binding's range runs to the next symbol. */
static int event_ranges(struct rts *r, struct module *m)
{
    module__symbol(m, m->lo); /* load the sorted table */
    const struct symtab *t = &m->syms;
    for (size_t i = 0; i < t->n; i++) {
        const char *nm = t->s[i].name;
        for (size_t k = 0; k < sizeof event_modules / sizeof event_modules[0]; k++) {
            if (!has_prefix(nm, event_modules[k].events))
                continue;
            uint64_t lo = t->s[i].addr + (uint64_t)m->bias;
            uint64_t hi =
                i + 1 < t->n ? t->s[i + 1].addr + (uint64_t)m->bias : lo + t->s[i].size;
            if (add_range(&r->events, lo, hi) < 0)
                return -ENOMEM;
            if (has_prefix(nm, event_modules[k].epoll) && add_range(&r->epoll, lo, hi) < 0)
                return -ENOMEM;
        }
    }
    return 0;
}

/* How far after a `call resumeThread` the code reloads Sp: GHC's
 * LOAD_THREAD_STATE, right after it (add $8,%rsp; mov %rax,%r13; the TSO
 * from BaseReg, its stackobj, then Sp), 18 bytes on. */
#define RESUME_RELOAD_MAX 64

/* A safe foreign call's way back into Haskell code: resumeThread takes the
 * capability back and returns BaseReg; the code after the call then loads
 * Sp (rbp), SpLim (r15) and the rest from the TSO's stack chunk. Until the
 * instruction that loads rbp has run, rbp and r15 are the ones from before
 * the call, and a collection during the call may have moved the chunk
 * since (a thread's first chunk is small, a copying collection moves it):
 * the thread holds its capability and runs Haskell code, but its Sp is the
 * one saved in the chunk. Those stretches of code, found once: each
 * `call rel32` whose target is resumeThread, up to and including the first
 * `mov disp8(%reg),%rbp` with the chunk's sp offset as displacement (REX.W
 * 8b /5, mod 01, no SIB). A call without that load within
 * RESUME_RELOAD_MAX bytes is not one of them. */
static int resumed_ranges(struct rts *r, struct module *m, uint64_t resume)
{
    int64_t sp_off = r->L->stack.sp.off;
    if (!resume || !rts_layout__has(r->L->stack.sp) || sp_off < 0 || sp_off > 127)
        return 0;
    for (size_t i = 0; i < m->nph; i++) {
        const GElf_Phdr *ph = &m->ph[i];
        size_t len;
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        const uint8_t *code = module__file_at(m, ph->p_vaddr, &len);
        if (!code)
            continue;
        uint64_t base = ph->p_vaddr + (uint64_t)m->bias;
        for (size_t k = 0; k + 5 <= len; k++) {
            if (code[k] != 0xe8)
                continue;
            int32_t rel = (int32_t)((uint32_t)code[k + 1] | (uint32_t)code[k + 2] << 8 |
                                    (uint32_t)code[k + 3] << 16 | (uint32_t)code[k + 4] << 24);
            uint64_t ret = base + k + 5;
            if (ret + (uint64_t)(int64_t)rel != resume)
                continue;
            for (size_t j = k + 5; j + 4 <= len && j < k + 5 + RESUME_RELOAD_MAX; j++)
                if ((code[j] == 0x48 || code[j] == 0x49) && code[j + 1] == 0x8b &&
                    (code[j + 2] & 0xf8) == 0x68 && (code[j + 2] & 7) != 4 &&
                    code[j + 3] == (uint8_t)sp_off) {
                    if (add_range(&r->resumed, ret, base + j + 1) < 0)
                        return -ENOMEM;
                    break;
                }
        }
    }
    sort_ranges(&r->resumed);
    return 0;
}

/* The executable's TLS block sits just below the thread pointer (x86_64,
 * TLS variant II); glibc places it at tp - off, off computed as in
 * _dl_determine_tlsoffset for the first module. */
static bool tls_offset(const struct module *m, uint64_t sym_value, int64_t *off)
{
    for (size_t i = 0; i < m->nph; i++) {
        const GElf_Phdr *ph = &m->ph[i];
        if (ph->p_type != PT_TLS)
            continue;
        uint64_t align = ph->p_align ? ph->p_align : 1;
        uint64_t firstbyte = (-ph->p_vaddr) & (align - 1);
        uint64_t block = ((ph->p_memsz - firstbyte + align - 1) & ~(align - 1)) + firstbyte;
        *off = -(int64_t)block + (int64_t)sym_value;
        return true;
    }
    return false;
}

/* ------------------------------------------------------------------------
 * Attach: validation against the live process
 * ---------------------------------------------------------------------- */

static bool read_word(pid_t pid, uint64_t addr, uint64_t *v)
{
    *v = 0;
    return remote__read(pid, addr, v, 8) == 0;
}

static bool read_field(pid_t pid, uint64_t base, struct rts_layout__field f, uint64_t *v)
{
    *v = 0;
    if (!rts_layout__has(f) || f.size == 0 || f.size > 8)
        return false;
    return remote__read(pid, base + (uint64_t)(int64_t)f.off, v, f.size) == 0;
}

static uint64_t cap_reg(const struct rts_layout *L, struct rts_layout__field reg)
{
    return (uint64_t)(L->capability.r.off + reg.off);
}

enum validity { VALID, INVALID, UNSURE };

/* Does the layout hold? INVALID (and why) when it surely does not; UNSURE
 * when a running capability looked inconsistent, which a capability changing
 * hands under our eyes can explain: the caller looks again later. */
static enum validity validate(struct rts *r, char *why, size_t size)
{
    const struct rts_layout *L = r->L;
    uint64_t n = 0, arr, cap, v;

    if (!read_field(r->pid, r->n_capabilities, (struct rts_layout__field){0, 4}, &n) || n == 0 ||
        n > MAX_CAPS) {
        snprintf(why, size, "n_capabilities is %llu", (unsigned long long)n);
        return INVALID;
    }
    arr = r->capabilities;
    if (!r->capabilities_is_array && !read_word(r->pid, r->capabilities, &arr)) {
        snprintf(why, size, "the capabilities array is unreadable");
        return INVALID;
    }
    for (uint64_t i = 0; i < n; i++) {
        if (!read_word(r->pid, arr + 8 * i, &cap) || !cap) {
            snprintf(why, size, "capability %llu is missing", (unsigned long long)i);
            return INVALID;
        }
        if (!read_field(r->pid, cap, L->capability.no, &v)) {
            snprintf(why, size, "capability %llu is unreadable", (unsigned long long)i);
            return INVALID;
        }
        if (v != i) {
            snprintf(why, size, "capability %llu says it is number %llu", (unsigned long long)i,
                     (unsigned long long)v);
            return INVALID;
        }
    }
    /* The Task holding a capability has a capability of its own (not
     * always this one: a GC leader holds them all), and a capability running
     * Haskell code points at a TSO. */
    uint64_t caps[MAX_CAPS];
    for (uint64_t i = 0; i < n; i++)
        read_word(r->pid, arr + 8 * i, &caps[i]);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t task, inh, tso, info, back;
        bool known = false;
        cap = caps[i];
        if (!read_field(r->pid, cap, L->capability.running_task, &task) || !task)
            continue;
        if (read_field(r->pid, task, L->task.cap, &back)) {
            for (uint64_t k = 0; k < n; k++)
                known |= back == caps[k];
            if (!known) {
                snprintf(why, size, "capability %llu's running Task has no capability",
                         (unsigned long long)i);
                return UNSURE;
            }
        }
        if (!read_field(r->pid, cap, L->capability.in_haskell, &inh) || !(inh & 0xff) ||
            !read_word(r->pid, cap + cap_reg(L, L->reg.rCurrentTSO), &tso) || !tso)
            continue;
        if (!read_word(r->pid, tso, &info) || info != r->stg_TSO_info) {
            snprintf(why, size, "capability %llu's current TSO is not a TSO",
                     (unsigned long long)i);
            return UNSURE;
        }
    }
    return VALID;
}

static void warn_c_only(const struct rts *r, const char *what, const char *todo)
{
    log__error("pid %d is a GHC %s program, but %s; %s. Profiling C stacks only.", (int)r->pid,
               r->version[0] ? r->version : "(unknown version)", what, todo);
}

int rts__attach(struct rts *r, struct modset *ms, pid_t pid)
{
    struct module *m = ms->main;
    struct sym_scan sc;

    memset(r, 0, sizeof *r);
    r->ms = ms;
    r->pid = pid;
    /* (A -dynamic executable has no runtime of its own: it loads it, from
     * libHSrts_thr-ghc9.0.2.so, say, which gives the version where its
     * .comment, stripped as distributions do, does not.) */
    const char *rtslib = NULL;
    if (!m || (!module__is_ghc(m) && !needs_library(m, "libHSrts", &rtslib)))
        return 0;
    r->ghc = true;
    r->mod = m;
    snprintf(r->version, sizeof r->version, "%s", m->ghc_version);
    const char *v = rtslib ? strstr(rtslib, "-ghc") : NULL;
    if (!r->version[0] && v) {
        size_t n = 0;
        for (v += 4; n < sizeof r->version - 1 && ((v[n] >= '0' && v[n] <= '9') || v[n] == '.');
             n++)
            r->version[n] = v[n];
        r->version[n] = 0;
        if (n && r->version[n - 1] == '.')
            r->version[n - 1] = 0; /* (".so" follows) */
    }
    if (!(r->walk_cache = calloc(1, sizeof *r->walk_cache))) {
        log__error("out of memory");
        return -ENOMEM;
    }

    memset(&sc, 0, sizeof sc);
    sc.r = r;
    sc.bias = m->bias;
    symtab__each(m->elf, scan_symbol, &sc);
    if (sc.err) {
        log__error("out of memory reading the symbols of %s", m->path);
        return -ENOMEM;
    }
    if (sc.have[S_StgReturn]) {
        uint8_t code[16];
        r->stg_return = sc.found[S_StgReturn].st_value + (uint64_t)m->bias;
        /* mov %rbx,%rax; add $RESERVED_C_STACK_BYTES,%rsp; ... */
        for (size_t i = 0; module__read(m, r->stg_return, code, sizeof code) == 0 && i + 7 <= sizeof code;
             i++)
            if (code[i] == 0x48 && code[i + 1] == 0x81 && code[i + 2] == 0xc4) {
                r->c_reserved = (uint32_t)code[i + 3] | (uint32_t)code[i + 4] << 8 |
                                (uint32_t)code[i + 5] << 16 | (uint32_t)code[i + 6] << 24;
                break;
            }
    }
    if (sc.have[S_StgRun])
        r->stg_run = sc.found[S_StgRun].st_value + (uint64_t)m->bias;
    sort_ranges(&r->gc);
    sort_ranges(&r->waiting);
    sort_ranges(&r->sched);
    sort_ranges(&r->handlers);
    sort_ranges(&r->cmm);
    sort_ranges(&r->rts_calls);
    sort_ranges(&r->rts_work);
    sort_ranges(&r->mark);
    sort_ranges(&r->ending);
    sort_ranges(&r->starting);
    sort_ranges(&r->own_entry);
    sort_ranges(&r->init);
    sort_ranges(&r->wait_cond);
    sort_ranges(&r->yield_cap);
    sort_ranges(&r->gc_worker);
    if (event_ranges(r, m) < 0) {
        log__error("out of memory reading the symbols of %s", m->path);
        return -ENOMEM;
    }

    if (!sc.have[S_MainCapability] || !sc.have[S_n_capabilities]) {
        if (rtslib || needs_library(m, "libHSrts", NULL))
            warn_c_only(r, "it was linked with -dynamic (its RTS is a shared library without a "
                           "symbol table)",
                        "link it statically (the GHC default) to see Haskell stacks");
        else
            warn_c_only(r, "its executable has no symbol table (stripped)",
                        "profile an unstripped build to see Haskell stacks");
        return 0;
    }
    if (!sc.have[S_capabilities] || !sc.have[S_my_task] || !sc.have[S_stg_TSO_info] ||
        !sc.have[S_stg_STACK_info] || !sc.have[S_stg_underflow] || !sc.have[S_stg_stop]) {
        if (!module__has_symtab(m))
            warn_c_only(r, "its executable is stripped: only the symbols its dynamic symbol "
                           "table exports are left, not the runtime's own that hsspy needs "
                           "(capabilities, my_task)",
                        "profile an unstripped build to see Haskell stacks");
        else
            warn_c_only(r, "its symbol table lacks RTS symbols hsspy needs (capabilities, "
                           "my_task, stg_TSO_info, ...)",
                        "profile an unstripped build");
        return 0;
    }
    r->threaded = GELF_ST_TYPE(sc.found[S_my_task].st_info) == STT_TLS;
    r->profiled = sc.have[S_CCS_MAIN];
    if (r->profiled)
        r->ccs_main = sc.found[S_CCS_MAIN].st_value + (uint64_t)m->bias;
    r->L = rts_layout__find(r->version, r->threaded, r->profiled, sc.have[S_printStackChunk]);
    if (!r->version[0]) {
        warn_c_only(r, "its executable does not say which GHC built it (its .comment section "
                       "was removed)",
                    "profile a build that keeps it (strip -R .comment removes it)");
        return 0;
    }
    if (!r->L) {
        char known[128] = "";
        warn_c_only(r, "hsspy has no RTS layout for this GHC version",
                    (snprintf(known, sizeof known, "supported versions: %s",
                              rts_layout__supported()),
                     known));
        return 0;
    }

    uint64_t bias = (uint64_t)m->bias;
    r->n_capabilities = sc.found[S_n_capabilities].st_value + bias;
    r->capabilities = sc.found[S_capabilities].st_value + bias;
    /* Capability **capabilities (9.0, 9.10) or Capability *capabilities[]
     * (9.6): the table says which, from the RTS's own declaration; the
     * symbol's size must then be what that declaration makes it. */
    r->capabilities_is_array = r->L->symbol_is_array.capabilities == 1;
    if (r->L->symbol_size.capabilities > 0 &&
        sc.found[S_capabilities].st_size != (uint64_t)r->L->symbol_size.capabilities) {
        char what[200];
        snprintf(what, sizeof what,
                 "its runtime does not match hsspy's GHC %s layout (the symbol capabilities "
                 "is %llu bytes, the layout says %d)",
                 r->version, (unsigned long long)sc.found[S_capabilities].st_size,
                 r->L->symbol_size.capabilities);
        warn_c_only(r, what, "please report this with the output of `ghc --info`");
        r->validation_failures++;
        return 0;
    }
    r->main_capability = sc.found[S_MainCapability].st_value + bias;
    r->stg_TSO_info = sc.found[S_stg_TSO_info].st_value + bias;
    r->stg_STACK_info = sc.found[S_stg_STACK_info].st_value + bias;
    r->stg_underflow_info = sc.found[S_stg_underflow].st_value + bias;
    r->stg_stop_info = sc.found[S_stg_stop].st_value + bias;
    for (int k = 0; k < 3; k++)
        if (sc.have[S_upd_frame + k])
            r->upd_frame_info[k] = sc.found[S_upd_frame + k].st_value + bias;
    if (sc.found[S_stg_stop].st_size > 0 && sc.found[S_stg_stop].st_size < 4096)
        r->stg_stop_end = r->stg_stop_info + sc.found[S_stg_stop].st_size;
    if (sc.have[S_generations] && sc.have[S_oldest_gen] && sc.have[S_end_tso_queue]) {
        r->generations = sc.found[S_generations].st_value + bias;
        r->oldest_gen = sc.found[S_oldest_gen].st_value + bias;
        r->end_tso_queue = sc.found[S_end_tso_queue].st_value + bias;
        /* (The nonmoving collector's lists of the oldest generation's
         * threads while it marks: static words of its own.) */
        for (int k = 0; k < 2; k++) {
            const GElf_Sym *nm = &sc.found[k ? S_nonmoving_old_threads : S_nonmoving_threads];
            if (sc.have[k ? S_nonmoving_old_threads : S_nonmoving_threads] &&
                GELF_ST_TYPE(nm->st_info) == STT_OBJECT && nm->st_size == 8)
                *(k ? &r->nonmoving_old_threads : &r->nonmoving_threads) = nm->st_value + bias;
        }
    }
    /* (Static in Capability.c: a PendingSync *, the sync under way.) */
    if (r->threaded && sc.have[S_pending_sync] &&
        GELF_ST_TYPE(sc.found[S_pending_sync].st_info) == STT_OBJECT &&
        sc.found[S_pending_sync].st_size == 8)
        r->pending_sync = sc.found[S_pending_sync].st_value + bias;
    for (int k = 0; k < 2; k++) {
        const GElf_Sym *ap = &sc.found[k ? S_AP_STACK_NOUPD : S_AP_STACK];
        if (sc.have[k ? S_AP_STACK_NOUPD : S_AP_STACK] && ap->st_size > 0 && ap->st_size < 4096) {
            r->ap_stack[k].lo = ap->st_value + bias;
            r->ap_stack[k].hi = ap->st_value + bias + ap->st_size;
        }
    }
    if (sc.have[S_all_tasks])
        r->all_tasks = sc.found[S_all_tasks].st_value + bias;
    /* (RtsStartup.c's static bool, set as hs_exit begins) */
    if (sc.have[S_rts_shutdown] && GELF_ST_TYPE(sc.found[S_rts_shutdown].st_info) == STT_OBJECT &&
        sc.found[S_rts_shutdown].st_size == 1)
        r->rts_shutdown = sc.found[S_rts_shutdown].st_value + bias;
    r->pthread_tid_off = -1;
    r->my_task_is_tls = r->threaded;
    if (r->threaded) {
        if (!tls_offset(m, sc.found[S_my_task].st_value, &r->my_task_tls_off)) {
            warn_c_only(r, "its executable has no TLS segment for my_task",
                        "this build is not one hsspy understands");
            return 0;
        }
    } else {
        r->my_task = sc.found[S_my_task].st_value + bias;
    }
    if (resumed_ranges(r, m, sc.have[S_resumeThread]
                                 ? sc.found[S_resumeThread].st_value + bias
                                 : 0) < 0) {
        log__error("out of memory reading the code of %s", m->path);
        return -ENOMEM;
    }
    /* Validated at the first sample (rts__poll), not here: the target is
     * traced already, and reading it now would only delay its signals. */
    r->pending = true;
    r->pending_since_ns = now_ns();
    return 0;
}

/* Where glibc keeps a thread's kernel id in its struct pthread: the
 * descriptor it exports for debuggers (libthread_db), {bits, count,
 * offset}, in libc (libpthread before glibc 2.34, the executable if linked
 * statically). Looked for again only when new modules were mapped. */
static void find_pthread_tid(struct rts *r)
{
    if (r->pthread_tid_off > 0 || (r->pthread_tid_gen && r->pthread_tid_gen == r->ms->refreshes))
        return;
    r->pthread_tid_gen = r->ms->refreshes ? r->ms->refreshes : 1;
    for (size_t i = 0; i < r->ms->nmods; i++) {
        struct module *m = r->ms->mods[i];
        GElf_Sym s;
        uint32_t d[3];
        if (!m->name || (strncmp(m->name, "libc.so", 7) != 0 &&
                         strncmp(m->name, "libpthread.so", 13) != 0 && m != r->ms->main))
            continue;
        if (module__find_symbol(m, "_thread_db_pthread_tid", &s) && s.st_size == sizeof d &&
            module__read(m, s.st_value + (uint64_t)m->bias, d, sizeof d) == 0 && d[0] == 32 &&
            d[1] == 1 && d[2] > 0 && d[2] < 4096 && d[2] % 4 == 0) {
            r->pthread_tid_off = (int32_t)d[2];
            return;
        }
    }
}

/* Tasks looked at, at most: a list that does not end is not followed on. */
#define MAX_TASKS 4096

size_t rts__thread_pointers(struct rts *r, struct rts_thread_pointer *out, size_t max)
{
    if (!r->usable || !r->my_task_is_tls || !r->all_tasks || !max)
        return 0;
    find_pthread_tid(r);
    if (r->pthread_tid_off <= 0)
        return 0;
    const struct rts_layout *L = r->L;
    uint64_t task;
    size_t n = 0;
    if (!read_word(r->pid, r->all_tasks, &task))
        return 0;
    for (int k = 0; task && !(task & 7) && k < MAX_TASKS && n < max; k++) {
        uint64_t id, next;
        if (!read_field(r->pid, task, L->task.id, &id) ||
            !read_field(r->pid, task, L->task.all_next, &next))
            break;
        uint32_t tid = 0;
        if (id && !(id & 7) && remote__read(r->pid, id + (uint64_t)r->pthread_tid_off, &tid, 4) == 0 &&
            tid > 0 && tid <= INT32_MAX)
            out[n++] = (struct rts_thread_pointer){(pid_t)tid, id};
        task = next;
    }
    return n;
}

/* Has hs_exit begun? It frees what the layout is checked on (capabilities,
 * Tasks): a check then says nothing of the layout, failed or passed (freed
 * memory can still hold what was there). So has a runtime that had
 * capabilities and has none now, or whose memory cannot be read any more
 * (the process is on its way out: a check then fails on every read, which
 * said "does not match the layout; please report this"). Says so. */
static bool warned_shut_down(const struct rts *r)
{
    uint64_t down = 0, n = 0;
    bool gone = !read_field(r->pid, r->n_capabilities, (struct rts_layout__field){0, 4}, &n) ||
                n == 0;
    if (!gone &&
        (!r->rts_shutdown ||
         !read_field(r->pid, r->rts_shutdown, (struct rts_layout__field){0, 1}, &down) || !down))
        return false;
    warn_c_only(r, "its runtime has shut down (the program is exiting)",
                "attach to it while it runs Haskell code");
    return true;
}

void rts__poll(struct rts *r)
{
    char why[160];
    uint64_t n = 0;

    if (!r->pending)
        return;
    /* Before hs_init has run (a program hsspy just started) there are no
     * capabilities yet: nothing to validate, and no Haskell to sample. */
    if (!read_field(r->pid, r->n_capabilities, (struct rts_layout__field){0, 4}, &n) || n == 0) {
        if (now_ns() - r->pending_since_ns > 10000000000ull) {
            r->pending = false;
            warn_c_only(r, "its runtime has not started within 10 s (n_capabilities is 0)",
                        "attach again once it runs Haskell code");
        }
        return;
    }
    /* Once hs_exit has begun, what the check reads is being freed: a
     * check that passes on what free() left says nothing either. */
    if (warned_shut_down(r)) {
        r->pending = false;
        return;
    }
    enum validity v = validate(r, why, sizeof why);
    if (v == UNSURE && ++r->unsure < 50)
        return; /* look again at the next sample */
    r->pending = false;
    if (v != VALID && warned_shut_down(r))
        return;
    if (v != VALID) {
        char what[240];
        snprintf(what, sizeof what, "its runtime does not match hsspy's GHC %s layout (%s)",
                 r->version, why);
        warn_c_only(r, what, "please report this with the output of `ghc --info`");
        r->validation_failures++;
        return;
    }
    r->usable = true;
}

/* ------------------------------------------------------------------------
 * Per-thread capture (the thread is stopped)
 * ---------------------------------------------------------------------- */

/* Copy [addr, addr+len) into the image; true if all of it arrived. */
bool rts__grab(pid_t pid, struct memimg *img, uint64_t addr, size_t len)
{
    uint8_t *p;
    struct remote_req q;
    if (!addr || len == 0)
        return false;
    memimg__note(img, addr, len); /* read ahead at this thread's next capture */
    /* (Read at this stop already, or read ahead; not at another thread's,
     * from another moment: a Capability, which every thread's view reads.) */
    if (memimg__ptr_own(img, addr, len))
        return true;
    p = memimg__add(img, addr, len);
    if (!p)
        return false;
    q = (struct remote_req){addr, p, len, 0};
    remote__batch(pid, &q, 1);
    memimg__set_len(img, addr, q.got);
    return q.got == len;
}

bool rts__field(const struct memimg *img, uint64_t base, struct rts_layout__field f,
                uint64_t *out)
{
    *out = 0;
    if (!base || !rts_layout__has(f) || f.size == 0 || f.size > 8)
        return false;
    return memimg__read(img, base + (uint64_t)(int64_t)f.off, out, f.size) == 0;
}

static uint64_t task_slot(const struct rts *r, const struct user_regs_struct *regs)
{
    return r->my_task_is_tls ? regs->fs_base + (uint64_t)r->my_task_tls_off : r->my_task;
}

/* The update frames' thunks in a stack copy [from, end), nearest Sp first,
 * added to u (up to RTS_UPDATEE_CAPTURE, and looked for in the first
 * RTS_UPDATEE_SCAN bytes from Sp only: this runs while the thread is
 * stopped): a word that is an update frame's info pointer starts one (no
 * other word of a live stack is one), its thunk in the frame's updatee
 * word. */
struct updatees {
    size_t n;
    size_t scanned; /* bytes */
    uint64_t addr[RTS_UPDATEE_CAPTURE];
};

static void find_updatees(const struct rts *r, const struct memimg *img, uint64_t from,
                          uint64_t end, struct updatees *u)
{
    const struct rts_layout *L = r->L;
    if (!rts_layout__has(L->update_frame.updatee) || L->update_frame.updatee.off <= 0 ||
        L->update_frame.updatee.off % 8 ||
        !r->upd_frame_info[0] || u->scanned >= RTS_UPDATEE_SCAN || end <= from)
        return;
    size_t len = end - from < RTS_UPDATEE_SCAN - u->scanned ? (size_t)(end - from)
                                                             : RTS_UPDATEE_SCAN - u->scanned;
    const uint8_t *p = memimg__ptr_own(img, from, len);
    if (!p)
        return;
    u->scanned += len;
    size_t off = (size_t)L->update_frame.updatee.off, words = len / 8, k = off / 8;
    for (size_t i = 0; i + k < words && u->n < RTS_UPDATEE_CAPTURE; i++) {
        uint64_t w, a;
        memcpy(&w, p + i * 8, 8);
        if (w != r->upd_frame_info[0] && w != r->upd_frame_info[1] && w != r->upd_frame_info[2])
            continue;
        memcpy(&a, p + i * 8 + off, 8);
        if (!a || a & 7)
            continue;
        size_t j = 0;
        while (j < u->n && u->addr[j] != a)
            j++;
        if (j == u->n)
            u->addr[u->n++] = a;
    }
}

/* Copy the headers (info pointers) of u's thunks, in one process_vm_readv,
 * but those read already. With note (a thread running Haskell code), they
 * are noted for its next capture, which reads them ahead with its stack:
 * a thread still forcing the same thunks then (two samples of three with
 * update frames in the bench workload; a lazy fold's change every sample)
 * needs no read after its stack's for them. */
static void grab_updatees(pid_t pid, struct memimg *img, const struct updatees *u, bool note)
{
    struct remote_req q[RTS_UPDATEE_CAPTURE];
    size_t n = 0;
    for (size_t i = 0; i < u->n; i++) {
        if (note)
            memimg__note(img, u->addr[i], 8);
        if (memimg__ptr_own(img, u->addr[i], 8))
            continue;
        uint8_t *p = memimg__add(img, u->addr[i], 8);
        if (!p)
            break;
        q[n++] = (struct remote_req){u->addr[i], p, 8, 0};
    }
    if (!n)
        return;
    remote__batch(pid, q, n);
    for (size_t i = 0; i < n; i++)
        if (q[i].got < 8)
            memimg__set_len(img, q[i].addr, 0);
}

/* Copy the stack chunk holding a TSO's stack, from its live end to its end,
 * and the chunks after it (underflow frames). The live end is the chunk's
 * saved sp; but a running TSO's is stale, its Sp is in rbp: sp_hint is
 * rbp, or all of the chunk when rbp is not in it (in an unsafe foreign
 * call, C code may use rbp for anything, and Sp is known only once the C
 * frames are unwound, after the thread has resumed); up to
 * RTS_STACK_CAPTURE_BYTES in all. Then the headers of the thunks of the
 * update frames nearest Sp (find_updatees, grab_updatees). */
static void grab_chunks(const struct rts *r, pid_t pid, struct memimg *img, uint64_t stack,
                        bool running, uint64_t sp_hint)
{
    const struct rts_layout *L = r->L;
    uint64_t size, sp;
    size_t left = RTS_STACK_CAPTURE_BYTES;
    struct updatees u = {0};

    for (int chunk = 0; chunk < MAX_CHUNKS && stack; chunk++) {
        if (!rts__grab(pid, img, stack, (size_t)L->stack.stack.off) ||
            !rts__field(img, stack, L->stack.stack_size, &size) ||
            !rts__field(img, stack, L->stack.sp, &sp))
            break;
        uint64_t start = stack + (uint64_t)L->stack.stack.off, end = start + size * 8;
        if (size == 0 || size > RTS_MAX_CHUNK_WORDS)
            break;
        uint64_t from = chunk == 0 && running ? sp_hint : sp;
        if (from < start || from >= end) /* Sp not known: from the oldest frames */
            from = end - start > left ? end - left : start;
        from &= ~(uint64_t)7;
        /* (what is left of the budget: the walk ends there, truncated) */
        size_t len = end - from < left ? (size_t)(end - from) : left;
        bool whole = rts__grab(pid, img, from, len);
        if (whole)
            find_updatees(r, img, from, from + len, &u);
        if (!whole || len == left)
            break;
        left -= len;
        /* A chunk that continues in another ends with an underflow frame:
         * {stg_stack_underflow_frame_info, next_chunk}. */
        uint64_t info, next;
        uint64_t uf = end - (uint64_t)L->underflow_frame.struct_size;
        if (memimg__read_u64(img, uf + (uint64_t)L->underflow_frame.info.off, &info) < 0 ||
            info != r->stg_underflow_info ||
            memimg__read_u64(img, uf + (uint64_t)L->underflow_frame.next_chunk.off, &next) < 0)
            break;
        stack = next;
    }
    grab_updatees(pid, img, &u, running);
}

/* The TSO, copied, and its stack chunk (0 if unreadable). */
static uint64_t tso_stack(const struct rts *r, pid_t pid, struct memimg *img, uint64_t tso)
{
    uint64_t stack;
    if (rts__grab(pid, img, tso, (size_t)r->L->tso.struct_size) &&
        rts__field(img, tso, r->L->tso.stackobj, &stack))
        return stack;
    return 0;
}

void rts__grab_stack(const struct rts *r, pid_t pid, struct memimg *img, uint64_t tso)
{
    grab_chunks(r, pid, img, tso_stack(r, pid, img, tso), false, 0);
}

/* Where the stack chunk (the StgStack object) of a thread running Haskell
 * code starts, from its registers alone: SpLim (r15) is the chunk's first
 * word plus RESERVED_STACK_WORDS, and Sp (rbp) is above SpLim, within a
 * chunk's length. 0 when they cannot be that (C code keeps other values in
 * those registers). */
static uint64_t chunk_of_splim(const struct rts_layout *L, const struct user_regs_struct *regs)
{
    uint64_t lim = regs->r15, sp = regs->rbp;
    uint64_t reserved = (uint64_t)L->misc.RESERVED_STACK_WORDS * 8;
    uint64_t hdr = (uint64_t)L->stack.stack.off;
    if (!rts_layout__has(L->stack.stack) || L->stack.stack.off <= 0 || (lim | sp) & 7 ||
        lim < reserved + hdr + 4096 || lim > UINT64_MAX - 2 * MAX_CHUNK_BYTES || sp < lim ||
        sp - lim >= MAX_CHUNK_BYTES)
        return 0;
    return lim - reserved - hdr;
}

/* The stack chunk a thread running Haskell code is on, from its registers
 * and a header already in the image (read ahead, or guessed by
 * rts__guess_stack): chunk_of_splim's, if its header is a STACK's and Sp
 * lies inside it. 0 otherwise (C code, in an unsafe call, keeps other
 * values in those registers), or when the header was not read. */
static uint64_t stack_of_regs(const struct rts *r, const struct user_regs_struct *regs,
                              const struct memimg *img)
{
    const struct rts_layout *L = r->L;
    uint64_t obj = chunk_of_splim(L, regs), info, size;
    if (!obj)
        return 0;
    uint64_t start = obj + (uint64_t)L->stack.stack.off;
    if (memimg__read_u64(img, obj + (uint64_t)(int64_t)L->header.info.off, &info) < 0 ||
        info != r->stg_STACK_info || !rts__field(img, obj, L->stack.stack_size, &size) ||
        size == 0 || size * 8 > MAX_CHUNK_BYTES ||
        regs->r15 - start >= size * 8 || regs->rbp >= start + size * 8)
        return 0;
    return obj;
}

/* GHC's default stack chunk (-kc32k), object bytes. */
#define DEFAULT_CHUNK_BYTES (32 * 1024)
/* Sp this close to the chunk's header: read both as one range. */
#define GUESS_JOIN_BYTES 4096

size_t rts__guess_stack(const struct rts *r, const struct user_regs_struct *regs,
                        struct memimg_note *out, size_t max)
{
    uint64_t obj = r->usable && max >= 2 ? chunk_of_splim(r->L, regs) : 0, sp = regs->rbp;
    if (!obj)
        return 0; /* read nothing rather than something unreadable */
    uint64_t hdr = (uint64_t)r->L->stack.stack.off;
    uint64_t end = obj + (r->chunk_bytes ? r->chunk_bytes : DEFAULT_CHUNK_BYTES);
    if (end <= sp)
        end = obj + DEFAULT_CHUNK_BYTES; /* a chunk bigger than the last seen */
    if (end <= sp) {
        out[0] = (struct memimg_note){obj, (uint32_t)hdr};
        return 1; /* bigger than that too: its live part is read once known */
    }
    if (sp - obj <= GUESS_JOIN_BYTES) {
        out[0] = (struct memimg_note){obj, (uint32_t)(end - obj)};
        return 1;
    }
    out[0] = (struct memimg_note){obj, (uint32_t)hdr};
    out[1] = (struct memimg_note){sp, (uint32_t)(end - sp)};
    return 2;
}

void rts__saw_stack(struct rts *r, const struct rts_view *v)
{
    if (v->stack && v->stack_end > v->stack && v->stack_end - v->stack <= MAX_CHUNK_BYTES)
        r->chunk_bytes = (uint32_t)(v->stack_end - v->stack);
}

/* resumeThread, once it has its capability back, clears the Task's
 * suspended TSO and sets the capability's rCurrentTSO only some
 * instructions later: in between, the TSO is in a register of its own
 * (one the C compiler chose; rbx in Debian's builds). The values of the
 * registers C code keeps across calls that point at a TSO, for a thread
 * stopped in resumeThread itself: at most REG_TSOS. */
#define REG_TSOS 6
static size_t tso_candidates(const struct user_regs_struct *regs, uint64_t *out)
{
    uint64_t v[REG_TSOS] = {regs->rbx, regs->rbp, regs->r12, regs->r13, regs->r14, regs->r15};
    size_t n = 0;
    for (size_t i = 0; i < REG_TSOS; i++)
        if (v[i] && !(v[i] & 7))
            out[n++] = v[i];
    return n;
}

static uint64_t tso_in_registers(const struct rts *r, const struct user_regs_struct *regs,
                                 const struct memimg *img)
{
    uint64_t c[REG_TSOS], info;
    size_t n = tso_candidates(regs, c);
    for (size_t i = 0; i < n; i++)
        if (memimg__read_u64(img, c[i] + (uint64_t)(int64_t)r->L->header.info.off, &info) == 0 &&
            info == r->stg_TSO_info)
            return c[i];
    return 0;
}

/* The C stack copied for a thread in a callback from where StgRun's frame is
 * when its Haskell code runs: room for that frame and the C frames down to
 * the Haskell code that called out. */
#define CALLBACK_C_STACK 8192

/* A PendingSync (rts/Capability.h, unchanged since GHC 8.10): the kind of
 * sync (an enum: 1 and 2 a collection, sequential and parallel; 3 the
 * nonmoving collector's flush), the capabilities idle in it, the Task that
 * asked for it, which holds every capability it stopped. */
#define PENDING_SYNC_SIZE 24
#define PENDING_SYNC_TASK 16
enum { SYNC_GC_SEQ = 1, SYNC_GC_PAR = 2, SYNC_FLUSH_UPD_REM_SET = 3 };

/* The C stack copied for a thread in a call C code made into Haskell, from
 * where the outermost call's StgRun frame is: room for that frame, the
 * runtime's way in and the C code below it (see rts__own_call). */
#define CALLERS_C_STACK 16384

bool rts__own_call(const struct rts *r, const struct memimg *img, uint64_t task,
                   uint64_t incall, pid_t tid)
{
    uint64_t worker;
    if (rts_layout__has(r->L->task.worker) && rts__field(img, task, r->L->task.worker, &worker) &&
        (worker & 0xff))
        return true;
    if (r->hs_main && tid == r->pid)
        return true;
    size_t k = (size_t)tid % RTS_OWN_CALLS;
    return tid > 0 && incall && r->own_calls[k].tid == tid && r->own_calls[k].incall == incall;
}

void rts__saw_own_call(struct rts *r, pid_t tid, uint64_t incall)
{
    size_t k = (size_t)tid % RTS_OWN_CALLS;
    r->own_calls[k].tid = tid;
    r->own_calls[k].incall = incall;
}

/* The InCalls a callback left (see rts__outer), and the stacks of their
 * suspended TSOs: nothing to read but one field of the InCall already
 * copied, unless calls nest. How many there are; *outermost gets the last
 * InCall read (incall itself when it is in no other). */
static int grab_outer_calls(const struct rts *r, pid_t pid, struct memimg *img, uint64_t incall,
                            uint64_t *outermost)
{
    const struct rts_layout *L = r->L;
    uint64_t prev, tso;
    int n = 0;
    *outermost = incall;
    if (!rts_layout__has(L->incall.prev_stack))
        return 0;
    for (; n < RTS_OUTER_CALLS && incall; n++) {
        if (!rts__field(img, incall, L->incall.prev_stack, &prev) || !prev || prev == incall ||
            !rts__grab(pid, img, prev, (size_t)L->incall.struct_size))
            return n;
        if (rts__field(img, prev, L->incall.suspended_tso, &tso) && tso &&
            !rts__threaded(tso, r->stg_TSO_info))
            rts__grab_stack(r, pid, img, tso);
        incall = prev;
        *outermost = prev;
    }
    return n;
}

void rts__capture_thread(const struct rts *r, pid_t pid, pid_t tid,
                         const struct user_regs_struct *regs, struct memimg *img)
{
    const struct rts_layout *L = r->L;
    uint64_t slot = task_slot(r, regs), task, incall = 0, cap = 0, tso = 0, v;

    if (!r->usable || !rts__grab(pid, img, slot, 8) || memimg__read_u64(img, slot, &task) < 0 || !task)
        return;
    if (!rts__grab(pid, img, task, (size_t)L->task.struct_size))
        return;
    rts__field(img, task, L->task.incall, &incall);
    rts__field(img, task, L->task.cap, &cap);
    if (incall && rts__grab(pid, img, incall, (size_t)L->incall.struct_size)) {
        /* In a callback: the C stack below its Haskell code's (StgRun's
         * frame, then the scheduler's, the runtime's way in, the C code
         * that called back, up to the Haskell code of the call it is in),
         * and so on for each call it is nested in, which the unwind reads
         * after the thread has resumed. Each level is StgRun's reserve
         * and some C frames further up the stack. */
        uint64_t outermost;
        int outer = grab_outer_calls(r, pid, img, incall, &outermost);
        for (int i = 1; i <= outer && r->c_reserved; i++)
            rts__grab(pid, img, regs->rsp + (uint64_t)i * r->c_reserved,
                      (size_t)i * CALLBACK_C_STACK);
        /* Below the outermost, the C code that made it, to the thread's
         * start; unless the runtime made it itself. */
        if (r->c_reserved && !rts__own_call(r, img, task, outermost, tid))
            rts__grab(pid, img, regs->rsp + (uint64_t)(outer + 1) * r->c_reserved,
                      (size_t)outer * CALLBACK_C_STACK + CALLERS_C_STACK);
    }
    uint64_t suspended = 0;
    if (incall)
        rts__field(img, incall, L->incall.suspended_tso, &suspended);
    if (cap && rts__grab(pid, img, cap, (size_t)L->capability.struct_size) && r->threaded &&
        !suspended && rts__field(img, cap, L->capability.running_task, &v) && v != task) {
        /* Not held by it, and in no safe call: waiting for it, for a
         * collection? (rts_view.gc_sync) */
        if (v)
            rts__grab(pid, img, v + (uint64_t)(int64_t)L->task.cap.off, 8);
        /* (A bound thread's: is its Haskell thread blocked? See work_after.) */
        uint64_t bound;
        if (incall && rts__field(img, incall, L->incall.tso, &bound) && bound &&
            rts_layout__has(L->tso.why_blocked))
            rts__grab(pid, img, bound + (uint64_t)(int64_t)L->tso.why_blocked.off,
                      (size_t)L->tso.why_blocked.size);
        if (r->pending_sync && rts__grab(pid, img, r->pending_sync, 8) &&
            memimg__read_u64(img, r->pending_sync, &v) == 0 && v)
            rts__grab(pid, img, v, PENDING_SYNC_SIZE);
    }
    /* The whole Capability and TSO are copied: with them the CCCS of a
     * -prof program (cap->r.rCCCS, tso->prof.cccs) for rts__view. */
    if (suspended) {
        rts__grab_stack(r, pid, img, suspended); /* in a safe call: its saved sp is right */
        return;
    }
    if (!cap || !rts__field(img, cap, L->capability.running_task, &v) || v != task)
        return;
    if (rts__field(img, cap, L->capability.in_haskell, &v) && (v & 0xff)) {
        if (memimg__read_u64(img, cap + cap_reg(L, L->reg.rCurrentTSO), &tso) == 0 && tso) {
            /* Running Haskell code: its registers say which chunk it is
             * on, so the TSO (which a collection may have moved since the
             * last sample: another read while it is stopped) is not
             * needed; but for the few instructions back from a safe call
             * where they are the ones from before it. */
            if (code_ranges__has(&r->resumed, regs->rip)) {
                rts__grab_stack(r, pid, img, tso);
                return;
            }
            uint64_t stack = stack_of_regs(r, regs, img);
            grab_chunks(r, pid, img, stack ? stack : tso_stack(r, pid, img, tso), true,
                        regs->rbp);
        }
    } else if (code_ranges__has(&r->rts_calls, regs->rip)) {
        /* Back from a safe call, its TSO in a register (see
         * tso_in_registers). */
        uint64_t c[REG_TSOS];
        size_t n = tso_candidates(regs, c);
        for (size_t i = 0; i < n; i++)
            rts__grab(pid, img, c[i] + (uint64_t)(int64_t)L->header.info.off, 8);
        if ((tso = tso_in_registers(r, regs, img)) != 0)
            rts__grab_stack(r, pid, img, tso);
    }
}

/* ------------------------------------------------------------------------
 * After the stop: reading it back
 * ---------------------------------------------------------------------- */

bool rts__threaded(uint64_t ptr, uint64_t info)
{
    return ptr == info || (ptr & 7) == 1 || (ptr & 7) == 2;
}

/* The rest of v for a thread in a safe call, from v->suspended_tso: the
 * TSO it left, that TSO's chunk and saved sp, its CCCS. */
static void suspended_view(const struct rts *r, const struct memimg *img, struct rts_view *v)
{
    const struct rts_layout *L = r->L;
    uint64_t x;

    /* A compacting collection (+RTS -c, or -M near its limit) threads
     * every pointer to an object it moves into a chain that starts at
     * the object's header: while it runs, the pointer to a suspended
     * TSO may lead anywhere, and nothing leads back to the TSO. (Its
     * header alone says nothing: a copying collection leaves a
     * forwarding pointer there, and the fields as they were.) */
    if (rts__threaded(v->suspended_tso, r->stg_TSO_info)) {
        v->tso_moving = true;
        v->cccs_missing = r->profiled;
        return;
    }
    v->tso = v->suspended_tso;
    v->tso_in_gc =
        memimg__read_u64(img, v->tso + (uint64_t)(int64_t)L->header.info.off, &x) == 0 &&
        x != r->stg_TSO_info;
    /* Its CCCS was saved in its TSO. */
    if (r->profiled)
        v->cccs_missing = !rts__field(img, v->tso, L->tso.prof_cccs, &v->cccs);
    if (rts__field(img, v->tso, L->tso.stackobj, &x) && rts__threaded(x, r->stg_STACK_info)) {
        v->tso_moving = true; /* (the TSO not yet, its chunk already) */
        v->tso = 0;
        return;
    }
    if (v->tso && rts__field(img, v->tso, L->tso.stackobj, &v->stack)) {
        rts__field(img, v->stack, L->stack.sp, &v->saved_sp);
        if (rts__field(img, v->stack, L->stack.stack_size, &x))
            v->stack_end = v->stack + (uint64_t)L->stack.stack.off + 8 * x;
    }
}

bool rts__nested(const struct rts *r, const struct memimg *img, const struct rts_view *in)
{
    uint64_t prev;
    return in->incall && rts_layout__has(r->L->incall.prev_stack) &&
           rts__field(img, in->incall, r->L->incall.prev_stack, &prev) && prev && prev != in->incall;
}

bool rts__outer(const struct rts *r, const struct memimg *img, const struct rts_view *in,
                struct rts_view *out)
{
    const struct rts_layout *L = r->L;
    uint64_t prev;

    memset(out, 0, sizeof *out);
    out->cap_no = -1;
    if (!rts__nested(r, img, in) || !rts__field(img, in->incall, L->incall.prev_stack, &prev) ||
        !rts__field(img, prev, L->incall.suspended_tso, &out->suspended_tso) ||
        !out->suspended_tso)
        return false;
    out->task = in->task;
    out->incall = prev;
    suspended_view(r, img, out);
    return true;
}

static void thread_state(const struct rts *r, const struct user_regs_struct *regs,
                         const struct memimg *img, struct rts_view *v);

/* Is capability cap, which another Task waits for, held (holder; 0: free)
 * for a collection? Either a collection's sync is under way (pending_sync:
 * the capabilities are being stopped, each left free for the Task that
 * asked, or taken by it), or holder holds cap as one of several, its own
 * capability another (task->cap): only a Task that stops every capability
 * does (a sequential collection, a nonmoving one's flush; pending_sync is
 * reset as the collection itself begins). (A capability the runtime's
 * setNumCapabilities or forkProcess stops is counted so too.) */
static bool gc_sync_holds(const struct rts *r, const struct memimg *img, uint64_t holder,
                          uint64_t cap, bool *as_another)
{
    uint64_t own;
    *as_another = false;
    if (holder && rts__field(img, holder, r->L->task.cap, &own) && own && own != cap)
        return *as_another = true;
    uint64_t sync, task;
    uint32_t type;
    return r->pending_sync && memimg__read_u64(img, r->pending_sync, &sync) == 0 && sync &&
           memimg__read(img, sync, &type, sizeof type) == 0 &&
           (type == SYNC_GC_SEQ || type == SYNC_GC_PAR || type == SYNC_FLUSH_UPD_REM_SET) &&
           memimg__read_u64(img, sync + PENDING_SYNC_TASK, &task) == 0 && task &&
           (!holder || task == holder);
}

/* A Task waiting for capability cap while a collection holds it: has it
 * work to take up once the collection gives it back? (Else it is idle: a
 * spare worker asleep on an idle capability, which a collection takes as
 * well; a bound thread's Task whose Haskell thread is blocked, in
 * threadDelay, say. It slept before the collection and sleeps on after
 * it.) A bound Task has, if its Haskell thread is not blocked; a worker,
 * if the capability has threads to run or Tasks coming back to it from
 * safe calls (one spare worker is given it then). */
static bool work_after(const struct rts *r, const struct memimg *img, uint64_t cap,
                       uint64_t incall)
{
    const struct rts_layout *L = r->L;
    uint64_t tso = 0, why, n;
    if (incall && rts__field(img, incall, L->incall.tso, &tso) && tso)
        return !rts__field(img, tso, L->tso.why_blocked, &why) ||
               why == (uint64_t)L->why_blocked.NotBlocked;
    if (rts__field(img, cap, L->capability.n_run_queue, &n) && n)
        return true;
    return rts__field(img, cap, L->capability.returning_tasks_hd, &n) && n;
}

bool rts__view(const struct rts *r, const struct user_regs_struct *regs,
               const struct memimg *img, struct rts_view *v)
{
    const struct rts_layout *L = r->L;
    uint64_t x;

    memset(v, 0, sizeof *v);
    v->cap_no = -1;
    if (memimg__read_u64(img, task_slot(r, regs), &v->task) < 0)
        return false;
    if (!v->task)
        return true;
    /* A Task's id is its thread's pthread_t, the address fs points at:
     * one with another id was freed (a worker the runtime let go of frees
     * its Task, then ends its thread) and may hold anything. */
    if (r->threaded && rts_layout__has(L->task.id) && rts__field(img, v->task, L->task.id, &x) &&
        x != regs->fs_base) {
        v->task_stale = true;
        return true;
    }
    if (!rts__field(img, v->task, L->task.cap, &v->cap) ||
        !rts__field(img, v->task, L->task.incall, &v->incall))
        return false;
    if (v->cap) {
        if (!rts__field(img, v->cap, L->capability.no, &x))
            return false;
        v->cap_no = x < MAX_CAPS ? (int)x : -1;
        if (!rts__field(img, v->cap, L->capability.running_task, &x))
            return false;
        v->holds_cap = x == v->task;
        if (v->holds_cap && rts__field(img, v->cap, L->capability.in_haskell, &x))
            v->in_haskell = (x & 0xff) != 0;
        bool as_another;
        v->work_after = work_after(r, img, v->cap, v->incall);
        v->gc_sync = !v->holds_cap && gc_sync_holds(r, img, x, v->cap, &as_another) &&
                     v->work_after;
        v->cap_collected = v->gc_sync && as_another;
    }
    if (v->incall && !rts__field(img, v->incall, L->incall.suspended_tso, &v->suspended_tso))
        return false;
    v->bound = v->incall && rts__field(img, v->incall, L->incall.tso, &x) && x;
    if (v->suspended_tso) {
        suspended_view(r, img, v);
        return true;
    }
    if (v->holds_cap && v->in_haskell &&
               memimg__read_u64(img, v->cap + cap_reg(L, L->reg.rCurrentTSO), &x) == 0) {
        v->tso = x;
        v->resumed = x && code_ranges__has(&r->resumed, regs->rip);
    } else if (v->holds_cap && !v->in_haskell && code_ranges__has(&r->rts_calls, regs->rip)) {
        v->tso = tso_in_registers(r, regs, img);
        v->resuming = v->tso != 0;
    }
    thread_state(r, regs, img, v);
    return true;
}

/* v's CCCS and chunk, once its TSO is known: those a running thread left in
 * its capability and registers, or (resuming, resumed) those in its TSO. */
static void thread_state(const struct rts *r, const struct user_regs_struct *regs,
                         const struct memimg *img, struct rts_view *v)
{
    const struct rts_layout *L = r->L;
    uint64_t x;
    bool saved = v->resuming || v->resumed; /* its sp and CCCS are in it */
    if (r->profiled && v->tso) {
        /* A running thread's CCCS is in its capability's register table
         * (never in a machine register on x86_64); a resuming one's was
         * saved in its TSO. */
        bool got = saved
                       ? rts__field(img, v->tso, L->tso.prof_cccs, &v->cccs)
                       : rts_layout__has(L->reg.rCCCS) &&
                             memimg__read_u64(img, v->cap + cap_reg(L, L->reg.rCCCS),
                                              &v->cccs) == 0;
        v->cccs_missing = !got;
    }
    /* A running thread's chunk as its capture found it: from its registers
     * if they say, else from its TSO. */
    if (v->tso && ((!saved && (v->stack = stack_of_regs(r, regs, img)) != 0) ||
                   rts__field(img, v->tso, L->tso.stackobj, &v->stack))) {
        rts__field(img, v->stack, L->stack.sp, &v->saved_sp);
        if (rts__field(img, v->stack, L->stack.stack_size, &x))
            v->stack_end = v->stack + (uint64_t)L->stack.stack.off + 8 * x;
    }
}

void rts__view_resumed(const struct rts *r, const struct memimg *img, struct rts_view *v)
{
    if (!v->tso || v->suspended_tso || v->resumed || v->resuming)
        return;
    v->resumed = true;
    v->stack = v->saved_sp = v->stack_end = v->cccs = 0;
    v->cccs_missing = false;
    thread_state(r, NULL, img, v);
}

bool rts__sp_in_register(const struct rts *r, const struct user_regs_struct *regs,
                         const struct memimg *img)
{
    struct rts_view v;
    if (!rts__view(r, regs, img, &v))
        return true;
    return v.holds_cap && v.in_haskell;
}

/* Tasks seen that were not their thread's before any was: beyond these,
 * the layout is wrong, not the Tasks. */
#define STALE_TASKS_TRUSTED 16

bool rts__check_task(struct rts *r, const struct user_regs_struct *regs,
                     const struct memimg *img, const struct rts_view *v)
{
    uint64_t id;
    if (!r->usable || r->task_checked || !v->task)
        return r->usable;
    /* (A Task freed under a thread that is ending says nothing of the
     * layout, unless no Task looks like its thread's at all.) */
    if (v->task_stale && ++r->stale_tasks < STALE_TASKS_TRUSTED)
        return r->usable;
    r->task_checked = true;
    /* glibc's pthread_t is the address of the thread's TCB, which is what
     * fs points at: a Task found through my_task must carry it as its id. */
    if (r->threaded && rts_layout__has(r->L->task.id) &&
        (!rts__field(img, v->task, r->L->task.id, &id) || id != regs->fs_base)) {
        r->usable = false;
        if (warned_shut_down(r))
            return false;
        r->validation_failures++;
        warn_c_only(r, "the Task its my_task slot points at does not belong to the thread",
                    "please report this with the output of `ghc --info`");
    }
    return r->usable;
}
