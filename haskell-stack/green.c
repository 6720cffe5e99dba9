/* green.c - finding, reading and describing all Haskell threads. */
#include "haskell-stack/green.h"

#include <stdlib.h>
#include <string.h>

#define MAX_GENERATIONS 16
#define MAX_TSOS 100000

/* The TSOs found so far, and on which list: a thread caught between two
 * lists as a collector moves it is on both (or one list runs into the
 * other), but one met twice on the same list is a cycle. Open
 * addressing. */
struct seen_set {
    uint64_t *slot;
    uint8_t *list;
    size_t mask;
};

/* The list tso was met on before (it is now noted as met on `list`), or
 * -1 if it was not. */
static int seen_on(struct seen_set *s, uint64_t tso, uint8_t list)
{
    for (size_t i = (size_t)((tso >> 3) * 0x9e3779b97f4a7c15ull) & s->mask;; i = (i + 1) & s->mask) {
        if (s->slot[i] == tso)
            return s->list[i];
        if (!s->slot[i]) {
            s->slot[i] = tso;
            s->list[i] = list;
            return -1;
        }
    }
}

/* What a black hole a thread waits for takes to name its owner:
 * message -> black hole -> indirectee, the owning TSO or a blocking
 * queue naming it. */
static void grab_owner(const struct rts *r, pid_t pid, struct memimg *img, uint64_t tso)
{
    const struct rts_layout *L = r->L;
    uint64_t why, bi, bh, ind, owner;
    if (rts__field(img, tso, L->tso.why_blocked, &why) &&
        why == (uint64_t)L->why_blocked.BlockedOnBlackHole &&
        rts__field(img, tso, L->tso.block_info, &bi) && bi &&
        rts__grab(pid, img, bi, (size_t)L->msg_black_hole.struct_size) &&
        rts__field(img, bi, L->msg_black_hole.bh, &bh) && bh &&
        rts__grab(pid, img, bh, (size_t)L->ind.struct_size) &&
        rts__field(img, bh, L->ind.indirectee, &ind) && ind &&
        rts__grab(pid, img, ind, (size_t)L->blocking_queue.struct_size) &&
        rts__field(img, ind, L->blocking_queue.owner, &owner) && owner)
        rts__grab(pid, img, owner, (size_t)L->tso.struct_size);
}

/* A thread's label (9.6 on: a ByteArray# the TSO points to), copied for
 * green__read: its header, then as much of its bytes as a label keeps.
 * (Before, read only where some other copy happened to hold it: labels
 * came and went from one dump to the next.) */
static void grab_label(const struct rts *r, pid_t pid, struct memimg *img, uint64_t tso)
{
    const struct rts_layout *L = r->L;
    uint64_t label, len;
    uint64_t head = (uint64_t)L->arr_words.payload.off;
    if (!rts_layout__has(L->tso.label) || !rts__field(img, tso, L->tso.label, &label) ||
        !label || !rts__grab(pid, img, label, (size_t)head) ||
        !rts__field(img, label, L->arr_words.bytes, &len) || !len)
        return;
    size_t take = len < sizeof ((struct green_thread *)0)->label - 1
                      ? (size_t)len
                      : sizeof ((struct green_thread *)0)->label - 1;
    rts__grab(pid, img, label + head, take);
}

/* The TSOs of one list (linked by global_link, from head), each copied
 * with its stack. In the middle of a copying collection a TSO of a list
 * the collector is emptying may have been copied already: its header is
 * then a forwarding pointer (tagged 1) to the copy, which is the thread
 * now, while the link to follow is the old one's. */
static enum green_short walk_list(const struct rts *r, pid_t pid, struct memimg *img,
                                  uint64_t tso, struct seen_set *seen, uint8_t list,
                                  uint64_t *tsos, size_t *n, size_t max)
{
    const struct rts_layout *L = r->L;
    size_t tso_size = (size_t)L->tso.struct_size;
    for (size_t steps = 0; tso && tso != r->end_tso_queue; steps++) {
        uint64_t info, next, at = tso;
        if (*n == max || steps == MAX_TSOS)
            return GREEN_MAX;
        if (!rts__grab(pid, img, tso, tso_size))
            return memimg__room(img, tso_size) ? GREEN_BROKEN : GREEN_NO_ROOM;
        if (memimg__read_u64(img, tso, &info) < 0)
            return GREEN_BROKEN;
        if ((info & 7) == 1) {
            at = info - 1;
            if (!rts__grab(pid, img, at, tso_size))
                return memimg__room(img, tso_size) ? GREEN_BROKEN : GREEN_NO_ROOM;
            if (memimg__read_u64(img, at, &info) < 0)
                return GREEN_BROKEN;
        }
        if (info != r->stg_TSO_info)
            return GREEN_BROKEN; /* not a TSO: the list is not what it should be */
        int before = seen_on(seen, at, list);
        if (before == list)
            return GREEN_BROKEN; /* a cycle */
        if (before < 0) {
            rts__grab_stack(r, pid, img, at);
            grab_owner(r, pid, img, at);
            grab_label(r, pid, img, at);
            tsos[(*n)++] = at;
            if (!memimg__room(img, 1))
                return GREEN_NO_ROOM; /* (this one's stack may be short) */
        }
        if (!rts__field(img, tso, L->tso.global_link, &next))
            return GREEN_BROKEN;
        tso = next;
    }
    return GREEN_WHOLE;
}

/* The worse of two reasons for a short list (the first that applies). */
static enum green_short worse(enum green_short a, enum green_short b)
{
    return a != GREEN_WHOLE ? a : b;
}

size_t green__capture(const struct rts *r, pid_t pid, struct memimg *img, uint64_t *tsos,
                      size_t max, enum green_short *why)
{
    const struct rts_layout *L = r->L;
    uint64_t gens = 0, oldest = 0;
    size_t n = 0;
    enum green_short w = GREEN_WHOLE;
    bool in_gc = false;

    *why = GREEN_WHOLE;
    if (!r->usable || !r->generations || L->generation.struct_size <= 0 ||
        !rts__grab(pid, img, r->generations, 8) || !rts__grab(pid, img, r->oldest_gen, 8) ||
        memimg__read_u64(img, r->generations, &gens) < 0 ||
        memimg__read_u64(img, r->oldest_gen, &oldest) < 0 || !gens || oldest < gens)
        return 0;
    uint64_t ngen = (oldest - gens) / (uint64_t)L->generation.struct_size + 1;
    if (ngen > MAX_GENERATIONS)
        return 0;
    struct seen_set seen = {NULL, NULL, 0};
    size_t slots = 1024;
    uint8_t list = 0;
    while (slots < 2 * max)
        slots *= 2;
    seen.slot = calloc(slots, sizeof *seen.slot);
    seen.list = malloc(slots);
    seen.mask = slots - 1;
    if (!seen.slot || !seen.list) {
        free(seen.slot);
        free(seen.list);
        return 0;
    }
    /* Every live TSO is on one generation's threads list, but while a
     * copying collection is under way, on its old_threads until the
     * collector has found it alive; while the nonmoving collector marks
     * (+RTS -xn), the oldest generation's are on its own two lists. */
    for (uint64_t g = 0; g < ngen; g++) {
        uint64_t gen = gens + g * (uint64_t)L->generation.struct_size, head, old;
        if (!rts__grab(pid, img, gen, (size_t)L->generation.struct_size) ||
            !rts__field(img, gen, L->generation.threads, &head)) {
            w = worse(w, GREEN_BROKEN);
            continue;
        }
        w = worse(w, walk_list(r, pid, img, head, &seen, list++, tsos, &n, max));
        if (rts__field(img, gen, L->generation.old_threads, &old) && old &&
            old != r->end_tso_queue) {
            in_gc = true;
            w = worse(w, walk_list(r, pid, img, old, &seen, list++, tsos, &n, max));
        }
    }
    for (int k = 0; k < 2; k++) {
        uint64_t word = k ? r->nonmoving_old_threads : r->nonmoving_threads, head;
        if (word && rts__grab(pid, img, word, 8) && memimg__read_u64(img, word, &head) == 0)
            w = worse(w, walk_list(r, pid, img, head, &seen, list++, tsos, &n, max));
    }
    free(seen.slot);
    free(seen.list);
    /* (Short in the middle of a collection: because of it.) */
    *why = in_gc && (w == GREEN_WHOLE || w == GREEN_BROKEN) ? GREEN_IN_GC : w;
    return n;
}

const char *green__short_str(enum green_short why)
{
    switch (why) {
    case GREEN_WHOLE:
        return "";
    case GREEN_IN_GC:
        return "taken during a garbage collection, which moves them from list to list";
    case GREEN_NO_ROOM:
        return "hsspy's room for their stacks ran out";
    case GREEN_MAX:
        return "hsspy reads at most that many";
    case GREEN_BROKEN:
        return "a list of them was not what it should be (the runtime changing it?)";
    }
    return "";
}

/* The thread id of the owner of the black hole a thread waits for. */
static uint64_t black_hole_owner(const struct rts *r, const struct memimg *img, uint64_t bi)
{
    const struct rts_layout *L = r->L;
    uint64_t bh, ind, info, owner = 0, id;
    if (!rts__field(img, bi, L->msg_black_hole.bh, &bh) ||
        !rts__field(img, bh, L->ind.indirectee, &ind) || !ind ||
        memimg__read_u64(img, ind, &info) < 0)
        return 0;
    /* The indirectee is the owning TSO itself, or a BLOCKING_QUEUE. */
    if (info == r->stg_TSO_info)
        owner = ind;
    else if (!rts__field(img, ind, L->blocking_queue.owner, &owner))
        return 0;
    return rts__field(img, owner, L->tso.id, &id) ? id : 0;
}

int green__read(const struct rts *r, struct modset *ms, const struct memimg *img, uint64_t tso,
                struct green_thread *g, struct raw_frame *out, int max)
{
    const struct rts_layout *L = r->L;
    uint64_t v;
    struct stg_walk w = {r, img, ms, 0, true, r->walk_cache};
    struct stg_result res;

    memset(g, 0, sizeof *g);
    g->tso = tso;
    if (rts__field(img, tso, L->tso.id, &v))
        g->id = v;
    if (rts__field(img, tso, L->tso.why_blocked, &v))
        g->why_blocked = (uint32_t)v;
    if (rts__field(img, tso, L->tso.what_next, &v))
        g->what_next = (uint32_t)v;
    rts__field(img, tso, L->tso.block_info, &g->block_info);
    if (g->why_blocked == (uint32_t)L->why_blocked.BlockedOnBlackHole)
        g->owner_id = black_hole_owner(r, img, g->block_info);
    /* 9.6 and later keep a label (a ByteArray#) in the TSO. */
    uint64_t label;
    if (rts_layout__has(L->tso.label) && rts__field(img, tso, L->tso.label, &label) && label) {
        uint64_t len;
        if (rts__field(img, label, L->arr_words.bytes, &len) && len > 0) {
            size_t take = len < sizeof g->label - 1 ? (size_t)len : sizeof g->label - 1;
            if (memimg__read(img, label + (uint64_t)L->arr_words.payload.off, g->label, take) == 0)
                g->label[take] = 0;
        }
    }
    if (!rts__field(img, tso, L->tso.stackobj, &g->stack) ||
        !rts__field(img, g->stack, L->stack.sp, &g->sp))
        return 0;
    /* A finished thread keeps no useful stack. */
    if (g->what_next == (uint32_t)L->what_next.ThreadComplete ||
        g->what_next == (uint32_t)L->what_next.ThreadKilled)
        return 0;
    stg_walk__run(&w, g->sp, g->stack, STG_EXACT, out, max, &res);
    return res.n;
}

const char *green__status(const struct rts *r, uint32_t why, uint32_t what_next)
{
    const struct rts_layout *L = r->L;
    if (what_next == (uint32_t)L->what_next.ThreadComplete)
        return "finished";
    if (what_next == (uint32_t)L->what_next.ThreadKilled)
        return "killed";
#define IS(name) (L->why_blocked.name >= 0 && why == (uint32_t)L->why_blocked.name)
    if (IS(NotBlocked))
        return "running or runnable";
    if (IS(BlockedOnMVar))
        return "blocked on an MVar (takeMVar/putMVar)";
    if (IS(BlockedOnMVarRead))
        return "blocked on an MVar (readMVar)";
    if (IS(BlockedOnBlackHole))
        return "blocked on a thunk another thread is evaluating (black hole)";
    if (IS(BlockedOnRead))
        return "blocked reading a file descriptor";
    if (IS(BlockedOnWrite))
        return "blocked writing a file descriptor";
    if (IS(BlockedOnDelay))
        return "in threadDelay";
    if (IS(BlockedOnSTM))
        return "blocked in STM (retry)";
    if (IS(BlockedOnDoProc))
        return "waiting for a process";
    if (IS(BlockedOnCCall))
        return "in a foreign call";
    if (IS(BlockedOnCCall_Interruptible))
        return "in an interruptible foreign call";
    if (IS(BlockedOnMsgThrowTo))
        return "blocked throwing an exception to another thread";
    if (IS(ThreadMigrating))
        return "moving to another capability";
#undef IS
    return "in an unknown state";
}
