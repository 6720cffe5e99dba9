/* stg_walk.c - the STG stack walk over a captured memory image.
 *
 * Frame sizes follow the RTS's own stack_frame_sizeW (ClosureMacros.h):
 * RET_FUN is 3 words plus its size field, RET_BIG 1 plus its large bitmap's
 * size, everything else 1 plus the small bitmap's size. */
#include "haskell-stack/stg_walk.h"

#include <string.h>

#include "sampler/remote.h"

/* Caps on one walk: words scanned for the first frame, frames visited
 * (emitted or not), stack chunks followed. */
#define SCAN_WORDS 16
#define MAX_STEPS 40000
#define MAX_CHUNKS 8

struct chunk {
    uint64_t start, end; /* the words of the chunk */
    /* Its captured words from mem_lo to end, when one region of the image
     * holds them all (as a capture takes them): read directly rather than
     * looked up in the image word by word. NULL: look up. */
    const uint8_t *mem;
    uint64_t mem_lo;
};

/* Find the captured bytes of c from sp to its end (see struct chunk). */
static void chunk_map(const struct stg_walk *w, struct chunk *c, uint64_t sp)
{
    c->mem_lo = sp;
    c->mem = sp < c->end ? memimg__ptr(w->img, sp, c->end - sp) : NULL;
}

/* A word of the chunk c (or anywhere in the image). */
static int word(const struct stg_walk *w, const struct chunk *c, uint64_t addr, uint64_t *out)
{
    if (c->mem && addr >= c->mem_lo && addr < c->end && c->end - addr >= 8) {
        memcpy(out, c->mem + (addr - c->mem_lo), 8);
        return 0;
    }
    return memimg__read_u64(w->img, addr, out);
}

static bool chunk_of(const struct stg_walk *w, uint64_t stack, struct chunk *c, uint64_t *sp)
{
    const struct rts_layout *L = w->rts->L;
    uint64_t size;
    if (!stack || !rts__field(w->img, stack, L->stack.stack_size, &size) || size == 0 ||
        size > RTS_MAX_CHUNK_WORDS)
        return false;
    c->start = stack + (uint64_t)L->stack.stack.off;
    c->end = c->start + size * 8;
    c->mem = NULL;
    if (sp && !rts__field(w->img, stack, L->stack.sp, sp))
        return false;
    return true;
}

/* Read from the executable's read-only segments: info tables never change. */
static bool read_static(const struct stg_walk *w, uint64_t addr, void *out, size_t len)
{
    struct module *m = modset__find(w->ms, addr);
    return m && m->is_haskell && module__read(m, addr, out, len) == 0;
}

/* What the info table at info says, read from the module. */
static void read_fact(const struct stg_walk *w, uint64_t info, struct stg_info_fact *f)
{
    const struct rts_layout *L = w->rts->L;
    struct module *m = modset__find(w->ms, info);
    uint32_t t;
    uint64_t layout;

    memset(f, 0, sizeof *f);
    f->info = info;
    f->haskell = m && m->is_haskell;
    if (!f->haskell || !read_static(w, info + (uint64_t)(int64_t)L->info.type.off, &t, 4))
        return;
    f->typed = true;
    f->type = t;
    if (info & 7 || !read_static(w, info + (uint64_t)(int64_t)L->info.layout.off, &layout, 8))
        return;
    f->laid = true;
    if (t == (uint32_t)L->closure_type.RET_FUN)
        return; /* sized by the frame itself */
    if (t == (uint32_t)L->closure_type.RET_BIG) {
        /* layout holds a 32-bit offset from the info pointer to the bitmap. */
        int32_t off = (int32_t)(uint32_t)layout;
        uint64_t size;
        if (read_static(w, info + (uint64_t)(int64_t)off, &size, 8) && size <= (1u << 20))
            f->size = (uint32_t)(1 + size);
        return;
    }
    if (t == (uint32_t)L->closure_type.RET_SMALL || t == (uint32_t)L->closure_type.UPDATE_FRAME ||
        t == (uint32_t)L->closure_type.CATCH_FRAME ||
        t == (uint32_t)L->closure_type.UNDERFLOW_FRAME ||
        t == (uint32_t)L->closure_type.STOP_FRAME ||
        t == (uint32_t)L->closure_type.ATOMICALLY_FRAME ||
        t == (uint32_t)L->closure_type.CATCH_RETRY_FRAME ||
        t == (uint32_t)L->closure_type.CATCH_STM_FRAME)
        f->size = (uint32_t)(1 + (layout & (uint64_t)L->misc.BITMAP_SIZE_MASK));
    /* RET_BCO (GHCi byte code) needs the BCO from the heap; anything else
     * is not a stack frame at all: size 0. */
}

/* The facts of info: from the cache, or read (and cached). tmp holds them
 * when there is no cache. */
static const struct stg_info_fact *fact(const struct stg_walk *w, uint64_t info,
                                        struct stg_info_fact *tmp)
{
    struct stg_info_cache *c = w->cache;
    if (!c || !info) {
        read_fact(w, info, tmp);
        return tmp;
    }
    if (c->gen != w->ms->refreshes) {
        memset(c->e, 0, sizeof c->e);
        c->gen = w->ms->refreshes;
    }
    /* Four slots per bucket; a full bucket evicts by the address's bits. */
    uint64_t h = (info >> 3) * 0x9e3779b97f4a7c15ull;
    size_t b = (size_t)(h >> 40) & (STG_INFO_CACHE_SIZE - 1) & ~(size_t)3;
    for (size_t k = 0; k < 4; k++) {
        struct stg_info_fact *e = &c->e[b + k];
        if (e->info == info) {
            c->hits++;
            return e;
        }
        if (!e->info) {
            c->misses++;
            read_fact(w, info, e);
            return e;
        }
    }
    c->misses++;
    struct stg_info_fact *e = &c->e[b + ((info >> 3) & 3)];
    read_fact(w, info, e);
    return e;
}

uint64_t stg_walk__frame_size(const struct stg_walk *w, uint64_t info, uint64_t frame,
                              uint32_t *type)
{
    const struct rts_layout *L = w->rts->L;
    struct stg_info_fact tmp;
    const struct stg_info_fact *f = fact(w, info, &tmp);

    *type = 0;
    if (!f->haskell || !f->typed || !f->laid)
        return 0;
    *type = f->type;
    if (f->type == (uint32_t)L->closure_type.RET_FUN) {
        uint64_t size;
        if (memimg__read_u64(w->img, frame + (uint64_t)L->ret_fun.size.off, &size) < 0 ||
            size > (1u << 20))
            return 0;
        return (uint64_t)L->ret_fun.struct_size / 8 + size;
    }
    return f->size;
}

static bool plausible_info(const struct stg_walk *w, uint64_t info)
{
    struct stg_info_fact tmp;
    return fact(w, info, &tmp)->haskell;
}

/* The headers of the thunks update frames force, read from the live
 * process where the capture lacks them: for the update frames of a chunk
 * from the first that needs one, up to UPDATEE_BATCH of them in one
 * process_vm_readv rather than one each (a lazy program's stack holds
 * many). [lo, hi): the part of the chunk whose update frames were read. */
#define UPDATEE_BATCH 64
#define UPDATEE_SCAN 4096 /* frames looked at for them, at most */
struct updatees {
    uint64_t lo, hi;
    size_t n;
    uint64_t addr[UPDATEE_BATCH], info[UPDATEE_BATCH];
    bool ok[UPDATEE_BATCH];
};

/* The thunk the update frame at frame forces (0: none readable). */
static uint64_t updatee_of(const struct stg_walk *w, const struct chunk *c, uint64_t frame)
{
    uint64_t updatee;
    if (word(w, c, frame + (uint64_t)w->rts->L->update_frame.updatee.off, &updatee) < 0 ||
        !updatee || updatee & 7)
        return 0;
    return updatee;
}

/* Read ahead the headers of the thunks of the update frames from frame to
 * the chunk's end (or the batch's), those the capture lacks. */
static void read_updatees(const struct stg_walk *w, const struct chunk *c, uint64_t frame,
                          struct updatees *u)
{
    const struct rts_layout *L = w->rts->L;
    struct remote_req req[UPDATEE_BATCH];
    uint64_t sp = frame;
    u->n = 0;
    for (int k = 0; k < UPDATEE_SCAN && u->n < UPDATEE_BATCH && sp < c->end; k++) {
        uint64_t info, size, a, h;
        uint32_t t;
        if (word(w, c, sp, &info) < 0 || !(size = stg_walk__frame_size(w, info, sp, &t)) ||
            size > (c->end - sp) / 8 || t == (uint32_t)L->closure_type.STOP_FRAME ||
            t == (uint32_t)L->closure_type.UNDERFLOW_FRAME)
            break;
        if (t == (uint32_t)L->closure_type.UPDATE_FRAME && (a = updatee_of(w, c, sp)) &&
            memimg__read_u64(w->img, a, &h) < 0) {
            u->addr[u->n] = a;
            req[u->n] = (struct remote_req){a, &u->info[u->n], 8, 0};
            u->n++;
        }
        sp += size * 8;
    }
    u->lo = frame;
    u->hi = sp;
    remote__batch(w->live_pid, req, u->n);
    for (size_t i = 0; i < u->n; i++)
        u->ok[i] = req[i].got == 8;
}

/* The info pointer of the thunk an update frame is forcing, or 0. A thunk
 * under evaluation may already be a BLACKHOLE; its header then names no
 * code and the frame is shown as an anonymous thunk. */
static uint64_t updatee_info(const struct stg_walk *w, const struct chunk *c, uint64_t frame,
                             struct updatees *u)
{
    const struct rts_layout *L = w->rts->L;
    uint64_t updatee = updatee_of(w, c, frame), info = 0;
    if (!updatee)
        return 0;
    if (memimg__read_u64(w->img, updatee, &info) < 0) {
        if (w->live_pid <= 0)
            return 0;
        if (frame < u->lo || frame >= u->hi)
            read_updatees(w, c, frame, u);
        size_t i = 0;
        while (i < u->n && u->addr[i] != updatee)
            i++;
        if (i < u->n) {
            if (!u->ok[i])
                return 0;
            info = u->info[i];
        } else if (remote__read(w->live_pid, updatee, &info, 8) < 0) {
            return 0;
        }
    }
    struct stg_info_fact tmp;
    const struct stg_info_fact *f = fact(w, info, &tmp);
    if (!f->haskell || !f->typed)
        return 0;
    uint32_t type = f->type;
    /* Only a thunk still names its code (THUNK .. THUNK_SELECTOR). */
    if (type < (uint32_t)L->closure_type.THUNK || type > (uint32_t)L->closure_type.THUNK_SELECTOR)
        return 0;
    return info;
}

static enum frame_kind kind_of(const struct rts_layout *L, uint32_t t)
{
    if (t == (uint32_t)L->closure_type.UPDATE_FRAME)
        return FK_HS_UPDATE;
    if (t == (uint32_t)L->closure_type.CATCH_FRAME)
        return FK_HS_CATCH;
    if (t == (uint32_t)L->closure_type.ATOMICALLY_FRAME)
        return FK_HS_ATOMICALLY;
    if (t == (uint32_t)L->closure_type.CATCH_STM_FRAME)
        return FK_HS_CATCH_STM;
    if (t == (uint32_t)L->closure_type.CATCH_RETRY_FRAME)
        return FK_HS_CATCH_RETRY;
    return FK_HS_RET;
}

/* Does a chain of frames starting at sp look real? Used only to pick the
 * first frame when sp may sit on spill slots: two frames must size and fit
 * (or the first must be the stop or an underflow frame). */
static bool frames_from(const struct stg_walk *w, uint64_t sp, const struct chunk *c)
{
    const struct rts_layout *L = w->rts->L;
    for (int k = 0; k < 2; k++) {
        uint64_t info, size;
        uint32_t t;
        if (sp >= c->end || word(w, c, sp, &info) < 0 || !plausible_info(w, info))
            return false;
        size = stg_walk__frame_size(w, info, sp, &t);
        if (!size || size > (c->end - sp) / 8)
            return false;
        if (t == (uint32_t)L->closure_type.STOP_FRAME ||
            t == (uint32_t)L->closure_type.UNDERFLOW_FRAME)
            return true;
        sp += size * 8;
    }
    return true;
}

bool stg_walk__plausible_sp(const struct stg_walk *w, uint64_t sp, uint64_t stack)
{
    struct chunk c;
    if (!chunk_of(w, stack, &c, NULL) || sp < c.start || sp >= c.end || sp & 7)
        return false;
    for (int k = 0; k < SCAN_WORDS; k++)
        if (frames_from(w, sp + 8 * (uint64_t)k, &c))
            return true;
    return false;
}

bool stg_walk__copy_index(const uint64_t *regs, int nregs, int k, const bool *ends)
{
    /* Below the end of the copy, the loop's bound, in a register too (the
     * loop compares them), from which the frames are whole; the bound
     * itself is none, whatever two registers differ by: a closure that
     * ends where its block does has the block's end (HpLim) a header past
     * 8 * bound from its start, and the bound passed for an index, the
     * true end lost (in about one run in forty of ghc_thunks' threaded
     * case on GHC 9.6: every sample [invalid]). */
    bool below = false;
    for (int j = 0; j < nregs && !below; j++)
        below = ends[j] && regs[j] > regs[k];
    /* The words it has copied: the distance its source pointer has come
     * from the closure's payload, a few words into it, both in registers. */
    for (int j = 0; below && j < nregs; j++)
        for (int l = 0; l < nregs; l++)
            if (regs[j] - regs[l] - 8 * regs[k] - 1 < 64)
                return true;
    return false;
}

/* Do the frames from `from`, one after another, start one at `to`
 * (within 64 frames)? */
static bool frames_lead_to(const struct stg_walk *w, const struct chunk *c, uint64_t from,
                           uint64_t to)
{
    for (int k = 0; k < 64 && from < to; k++) {
        uint64_t info, size;
        uint32_t t;
        if (word(w, c, from, &info) < 0 || !(size = stg_walk__frame_size(w, info, from, &t)))
            return false;
        from += 8 * size;
    }
    return from == to;
}

uint64_t stg_walk__restored_sp(const struct stg_walk *w, uint64_t sp, uint64_t stack,
                               const uint64_t *regs, int nregs, bool update_frame)
{
    const struct rts_layout *L = w->rts->L;
    struct chunk c;
    uint64_t found = 0, cands[4];
    int nfound = 0;
    bool ends[STG_RESTORE_REGS] = {false}; /* a whole walk from sp + 8 * regs[k] */
    if (!chunk_of(w, stack, &c, NULL) || sp < c.start || sp >= c.end || sp & 7 ||
        nregs > STG_RESTORE_REGS)
        return 0;
    chunk_map(w, &c, sp);
    for (int k = 0; k < nregs; k++) {
        uint64_t x = sp + 8 * regs[k], info, updatee;
        uint32_t t;
        bool seen = false; /* (two registers with one value) */
        for (int j = 0; j < k; j++)
            seen |= regs[j] == regs[k];
        if (!regs[k] || regs[k] >= (c.end - sp) / 8 || seen)
            continue;
        if (update_frame) {
            /* The update frame it pushed, for the closure it entered. */
            if (word(w, &c, x, &info) < 0 || !plausible_info(w, info) ||
                !stg_walk__frame_size(w, info, x, &t) ||
                t != (uint32_t)L->closure_type.UPDATE_FRAME || !(updatee = updatee_of(w, &c, x)))
                continue;
            for (int j = 0; j < nregs; j++)
                if (regs[j] == updatee)
                    return x;
            continue;
        }
        /* No frame of its own: the frames from there must be whole (see
         * below when several registers give such an end). Nothing is read
         * from the live process for this. */
        struct stg_walk trial = *w;
        struct raw_frame scratch[64];
        struct stg_result res;
        trial.live_pid = 0;
        stg_walk__run(&trial, x, stack, STG_EXACT, scratch, 64, &res);
        ends[k] = res.err == WE_NONE;
    }
    /* What the copy is writing over may be frames popped before, whole
     * too: the loop's index is no end. */
    for (int k = 0; !update_frame && k < nregs; k++) {
        uint64_t x = sp + 8 * regs[k];
        bool seen = false; /* (two registers with one value) */
        for (int j = 0; j < nfound; j++)
            seen |= cands[j] == x;
        if (!ends[k] || seen || stg_walk__copy_index(regs, nregs, k, ends))
            continue;
        if (nfound == (int)(sizeof cands / sizeof cands[0]))
            return 0;
        cands[nfound++] = x;
    }
    /* More than one: words the copy has not reached yet can be frames
     * too, popped before (a copy of the same frames at the same place, an
     * earlier round's), and a register a little short of the end (the
     * bound less a header) can start a whole walk in them that runs into
     * the true end. The deepest is the end, then, if the frames from each
     * other one lead there; else nothing is sure. */
    for (int k = 0; k < nfound; k++)
        if (cands[k] > found)
            found = cands[k];
    for (int k = 0; k < nfound; k++)
        if (!frames_lead_to(w, &c, cands[k], found))
            return 0;
    return found;
}

static bool same_frame(const struct raw_frame *a, const struct raw_frame *b)
{
    return a->addr == b->addr && a->kind == b->kind;
}

int stg_walk__fold(struct raw_frame *out, int *n)
{
    for (int p = 1; p <= STG_FOLD_PERIOD && 2 * p <= *n; p++) {
        int k = 0;
        while (k < p && same_frame(&out[*n - 1 - k], &out[*n - 1 - p - k]))
            k++;
        if (k == p) {
            *n -= p;
            return p;
        }
    }
    return 0;
}

static void fail(struct stg_result *res, struct raw_frame *out, int max, enum walk_error e)
{
    res->err = e;
    if (res->n < max)
        out[res->n++] = (struct raw_frame){(uint64_t)e, FK_INVALID, 0};
}

void stg_walk__run(const struct stg_walk *w, uint64_t sp, uint64_t stack, enum stg_start start,
                   struct raw_frame *out, int max, struct stg_result *res)
{
    const struct rts_layout *L = w->rts->L;
    struct chunk c;
    struct updatees upd;
    upd.lo = upd.hi = 0;
    upd.n = 0;
    int chunks = 1, steps = 0;
    /* The stack copied is RTS_STACK_CAPTURE_BYTES from sp on, through the
     * chunks: spent, of the chunks left; entry, where this one was entered. */
    uint64_t spent = 0, entry = sp;

    memset(res, 0, sizeof *res);
    if (max <= 0)
        return;
    if (!chunk_of(w, stack, &c, NULL) || sp < c.start || sp >= c.end || sp & 7) {
        fail(res, out, max, WE_NO_SP);
        return;
    }
    chunk_map(w, &c, sp);
    if (start == STG_SCAN_TOP) {
        int k = 0;
        while (k < SCAN_WORDS && !frames_from(w, sp + 8 * (uint64_t)k, &c))
            k++;
        if (k == SCAN_WORDS) {
            fail(res, out, max, WE_BAD_INFO);
            return;
        }
        res->skipped_words = k;
        sp += 8 * (uint64_t)k;
    }
    for (;;) {
        uint64_t info, size;
        uint32_t t;

        if (++steps > MAX_STEPS || res->n >= max - 1) {
            res->truncated = true;
            out[res->n++] = (struct raw_frame){0, FK_TRUNCATED, 0};
            return;
        }
        if (sp >= c.end) {
            fail(res, out, max, WE_BAD_FRAME); /* ran off the chunk: no stop frame */
            return;
        }
        if (word(w, &c, sp, &info) < 0) {
            /* The copy ended before sp: it has the frames of this chunk up
             * to here, or it stopped at its size. (Where the copy began is
             * not known here: in C code rbp, which it starts from, may lie
             * above or below the Sp the unwind found.) */
            if (sp > entry || spent + (sp - entry) >= RTS_STACK_CAPTURE_BYTES) {
                res->truncated = true; /* (the rest was not copied) */
                out[res->n++] = (struct raw_frame){0, FK_TRUNCATED, 0};
                return;
            }
            fail(res, out, max, WE_STACK_READ);
            return;
        }
        if (!plausible_info(w, info) || !(size = stg_walk__frame_size(w, info, sp, &t))) {
            fail(res, out, max, WE_BAD_INFO);
            return;
        }
        if (size > (c.end - sp) / 8) {
            fail(res, out, max, WE_BAD_FRAME);
            return;
        }
        if (t == (uint32_t)L->closure_type.STOP_FRAME)
            return;
        if (t == (uint32_t)L->closure_type.UNDERFLOW_FRAME) {
            uint64_t next, nsp;
            if (++chunks > MAX_CHUNKS) {
                res->truncated = true;
                out[res->n++] = (struct raw_frame){0, FK_TRUNCATED, 0};
                return;
            }
            bool got = word(w, &c, sp + (uint64_t)L->underflow_frame.next_chunk.off, &next) == 0;
            if (got && rts__threaded(next, w->rts->stg_STACK_info)) {
                fail(res, out, max, WE_GC_MOVING); /* (a compacting collection) */
                return;
            }
            spent += c.end - entry;
            if (got && spent >= RTS_STACK_CAPTURE_BYTES && !chunk_of(w, next, &c, &nsp)) {
                res->truncated = true; /* the chunk after the copy's end */
                out[res->n++] = (struct raw_frame){0, FK_TRUNCATED, 0};
                return;
            }
            if (!got || !chunk_of(w, next, &c, &nsp) || nsp < c.start || nsp >= c.end || nsp & 7) {
                fail(res, out, max, WE_CHUNKS);
                return;
            }
            sp = entry = nsp;
            chunk_map(w, &c, sp);
            continue;
        }
        enum frame_kind k = kind_of(L, t);
        struct raw_frame f = {info, k, 0};
        if (k == FK_HS_UPDATE)
            f.addr = updatee_info(w, &c, sp, &upd);
        /* RET_FUN is the RTS's frame for a function applied to arguments on
         * the stack: it says nothing the frames around it do not. A repeat
         * of the frames just before is a level of recursion: shown once, or
         * a 20000-deep foldr would drown everything else. */
        if (w->exact) {
            out[res->n++] = f;
        } else if (t != (uint32_t)L->closure_type.RET_FUN) {
            out[res->n++] = f;
            res->folded += stg_walk__fold(out, &res->n);
        }
        sp += size * 8;
    }
}
