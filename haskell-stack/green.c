/* green.c - finding, reading and describing all Haskell threads. */
#include "haskell-stack/green.h"

#include <string.h>

#define MAX_GENERATIONS 16
#define MAX_TSOS 100000

size_t green__capture(const struct rts *r, pid_t pid, struct memimg *img, uint64_t *tsos,
                      size_t max)
{
    const struct rts_layout *L = r->L;
    uint64_t gens = 0, oldest = 0, n = 0;

    if (!r->usable || !r->generations || L->generation.struct_size <= 0 ||
        !rts__grab(pid, img, r->generations, 8) || !rts__grab(pid, img, r->oldest_gen, 8) ||
        memimg__read_u64(img, r->generations, &gens) < 0 ||
        memimg__read_u64(img, r->oldest_gen, &oldest) < 0 || !gens || oldest < gens)
        return 0;
    uint64_t ngen = (oldest - gens) / (uint64_t)L->generation.struct_size + 1;
    if (ngen > MAX_GENERATIONS)
        return 0;
    for (uint64_t g = 0; g < ngen && n < max; g++) {
        uint64_t gen = gens + g * (uint64_t)L->generation.struct_size, tso;
        if (!rts__grab(pid, img, gen, (size_t)L->generation.struct_size) ||
            !rts__field(img, gen, L->generation.threads, &tso))
            continue;
        for (size_t steps = 0; tso && tso != r->end_tso_queue && n < max && steps < MAX_TSOS;
             steps++) {
            uint64_t info, next, why, bi;
            rts__grab_stack(r, pid, img, tso);
            if (memimg__read_u64(img, tso, &info) < 0 || info != r->stg_TSO_info)
                break; /* not a TSO: the list is not what it should be */
            tsos[n++] = tso;
            /* A black hole's owner: message -> black hole -> indirectee,
             * the owning TSO or a blocking queue naming it. */
            if (rts__field(img, tso, L->tso.why_blocked, &why) &&
                why == (uint64_t)L->why_blocked.BlockedOnBlackHole &&
                rts__field(img, tso, L->tso.block_info, &bi) && bi &&
                rts__grab(pid, img, bi, (size_t)L->msg_black_hole.struct_size)) {
                uint64_t bh, ind;
                if (rts__field(img, bi, L->msg_black_hole.bh, &bh) && bh &&
                    rts__grab(pid, img, bh, (size_t)L->ind.struct_size) &&
                    rts__field(img, bh, L->ind.indirectee, &ind) && ind &&
                    rts__grab(pid, img, ind, (size_t)L->blocking_queue.struct_size)) {
                    uint64_t owner;
                    if (rts__field(img, ind, L->blocking_queue.owner, &owner) && owner)
                        rts__grab(pid, img, owner, (size_t)L->tso.struct_size);
                }
            }
            if (!rts__field(img, tso, L->tso.global_link, &next))
                break;
            tso = next;
        }
    }
    return (size_t)n;
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
