/* dump.c - `hsspy dump`: every OS thread of one snapshot, with its role,
 * tag, /proc state and whole stack, innermost frame first, each frame with
 * its raw address, kind, name, object and source line. Meant for reading (a
 * hung program) and for comparing against other stack printers. */
#include <inttypes.h>
#include <stdlib.h>

#include "out/writer.h"

static const char *kind_name(uint32_t k)
{
    switch (k) {
    case FK_PC: return "pc";
    case FK_RET: return "ret";
    case FK_HS_RET: return "stg";
    case FK_HS_UPDATE: return "update";
    case FK_HS_CATCH: return "catch";
    case FK_HS_ATOMICALLY: return "atomically";
    case FK_HS_CATCH_STM: return "catchSTM";
    case FK_HS_CATCH_RETRY: return "catchRetry";
    case FK_HS_CCS: return "ccs";
    case FK_INVALID: return "invalid";
    case FK_TRUNCATED: return "truncated";
    default: return "?";
    }
}

static void frame_line(const struct profile *p, int i, uint32_t id, FILE *f)
{
    const struct raw_frame *r = &p->frames[id];
    const struct frame_sym *s = p->syms ? &p->syms[id] : NULL;
    /* (No address: an update frame whose thunk is a black hole already, an
     * error, the cut of a walk. Not 0x0000000000000000.) */
    if (r->kind == FK_INVALID || r->kind == FK_TRUNCATED || !r->addr)
        fprintf(f, "  #%-3d %-18s %-10s %s", i, "-", kind_name(r->kind), profile__frame_name(p, id));
    else
        fprintf(f, "  #%-3d 0x%016" PRIx64 " %-10s %s", i, r->addr, kind_name(r->kind),
                profile__frame_name(p, id));
    if (r->kind == FK_INVALID)
        fprintf(f, " (%s)", walk_error__str((enum walk_error)r->addr));
    if (s && s->object)
        fprintf(f, "  [%s]", s->object);
    if (s && s->file && s->span)
        fprintf(f, "  %s:%s", s->file, s->span);
    else if (s && s->file)
        fprintf(f, "  %s:%d", s->file, s->line);
    fputc('\n', f);
}

static int write_dump(const struct profile *p, const struct out_opts *o, FILE *f)
{
    fprintf(f, "hsspy dump of pid %d: %s\n", (int)p->pid, p->cmdline);
    if (p->ghc_version[0])
        fprintf(f, "runtime: GHC %s\n", p->ghc_version);
    struct prof_iter it;
    struct prof_sample smp;
    if (profile__iter(p, &it) < 0)
        return -1;
    while (profile__next(&it, &smp)) {
        const struct prof_sample *s = &smp;
        if (!out__visible(p, s, o))
            continue; /* (idle, without --idle: as every format has it) */
        const struct prof_thread *t = &p->threads[s->thread];
        uint32_t n;
        const uint32_t *ids = profile__stack_ids(p, s->stack, &n);

        fprintf(f, "\nthread %d (%s)", (int)t->tid, t->comm);
        if (t->role[0])
            fprintf(f, ": %s", t->role);
        if (s->tag != TAG_NONE)
            fprintf(f, ", %s", sample_tag__str(s->tag));
        fprintf(f, ", state %c\n", s->state);
        if (t->tso)
            fprintf(f, "  haskell thread: tso 0x%" PRIx64 ", stack chunk 0x%" PRIx64
                       " ending at 0x%" PRIx64 ", saved sp 0x%" PRIx64 "\n",
                    t->tso, t->stack, t->stack_end, t->stack_sp);
        for (uint32_t k = 0; k < n; k++)
            frame_line(p, (int)k, ids[k], f);
        if (n == 0)
            fprintf(f, "  (no stack)\n");
    }
    profile__iter_free(&it);
    if (p->ngreen || p->green_short[0]) {
        fprintf(f, "\nhaskell threads: %zu", p->ngreen);
        if (p->green_short[0])
            fprintf(f, " (perhaps not all: %s)", p->green_short);
        fputc('\n', f);
    }
    for (size_t i = 0; i < p->ngreen; i++) {
        const struct prof_green *g = &p->green[i];
        uint32_t n;
        const uint32_t *ids = profile__stack_ids(p, g->stack, &n);
        fprintf(f, "\nhaskell thread %" PRIu64, g->id);
        if (g->label[0])
            fprintf(f, " \"%s\"", g->label);
        fprintf(f, ": %s", g->status);
        if (g->blocked_on)
            fprintf(f, ", MVar 0x%" PRIx64, g->blocked_on);
        if (g->owner_id)
            fprintf(f, ", evaluated by haskell thread %" PRIu64, g->owner_id);
        pid_t on = profile__green_runner(p, g);
        if (on) {
            fprintf(f, ", on thread %d (its stack is that thread's, above)\n", (int)on);
            continue;
        }
        fputc('\n', f);
        for (uint32_t k = 0; k < n; k++)
            frame_line(p, (int)k, ids[k], f);
    }
    if (p->nkids)
        fprintf(f, "\nchild processes (not in this dump; hsspy dump -p PID for one):\n");
    for (size_t i = 0; i < p->nkids; i++)
        fprintf(f, "  pid %d (child of %d): %s\n", (int)p->kids[i].pid, (int)p->kids[i].parent,
                p->kids[i].cmd);
    return 0;
}

const struct writer writer_dump = {
    .name = "dump",
    .help = "every sample's whole stack with addresses, a block each (as `hsspy dump` prints)",
    .text = true,
    .write = write_dump,
};
