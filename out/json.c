/* json.c - `hsspy dump --json`: what the dump writer prints, as one JSON
 * document for programs: the target, then every OS thread (tid, name,
 * role, tag, /proc state, frames innermost first) and every Haskell thread
 * (id, label, status, what it is blocked on, frames). Each frame has its raw
 * address, kind, name, object, file and line where known. */
#include <inttypes.h>
#include <stdio.h>

#include "out/text.h"
#include "out/writer.h"

static const char *kind_name(uint32_t k)
{
    static const char *const names[FK__COUNT] = {
        [FK_PC] = "pc",         [FK_RET] = "ret",           [FK_HS_RET] = "stg",
        [FK_HS_UPDATE] = "update", [FK_HS_CATCH] = "catch",  [FK_HS_ATOMICALLY] = "atomically",
        [FK_HS_CATCH_STM] = "catchSTM", [FK_HS_CATCH_RETRY] = "catchRetry",
        [FK_HS_CCS] = "ccs",    [FK_INVALID] = "invalid",   [FK_TRUNCATED] = "truncated",
    };
    return k < FK__COUNT && names[k] ? names[k] : "?";
}

static void frames(const struct profile *p, uint32_t stack, FILE *f)
{
    uint32_t n;
    const uint32_t *ids = profile__stack_ids(p, stack, &n);
    fputs("\"frames\": [", f);
    for (uint32_t k = 0; k < n; k++) {
        const struct raw_frame *r = &p->frames[ids[k]];
        const struct frame_sym *s = p->syms ? &p->syms[ids[k]] : NULL;
        fprintf(f, "%s\n      {\"address\": \"0x%" PRIx64 "\", \"kind\": \"%s\", \"name\": ",
                k ? "," : "", r->addr, kind_name(r->kind));
        text__json(f, profile__frame_name(p, ids[k]));
        if (s && s->object) {
            fputs(", \"object\": ", f);
            text__json(f, s->object);
        }
        if (s && s->file) {
            fputs(", \"file\": ", f);
            text__json(f, s->file);
            fprintf(f, ", \"line\": %d", s->line);
        }
        fputc('}', f);
    }
    fputs(n ? "\n    ]" : "]", f);
}

static int write_json(const struct profile *p, const struct out_opts *o, FILE *f)
{
    fprintf(f, "{\n  \"pid\": %d,\n  \"command\": ", (int)p->pid);
    text__json(f, p->cmdline);
    fputs(",\n  \"ghc\": ", f);
    if (p->ghc_version[0])
        text__json(f, p->ghc_version);
    else
        fputs("null", f);
    /* (Child processes, not in the dump: to dump one by its pid.) */
    fputs(",\n  \"children\": [", f);
    for (size_t i = 0; i < p->nkids; i++) {
        fprintf(f, "%s{\"pid\": %d, \"parent\": %d, \"command\": ", i ? ", " : "",
                (int)p->kids[i].pid, (int)p->kids[i].parent);
        text__json(f, p->kids[i].cmd);
        fputc('}', f);
    }
    fputs("],\n  \"threads\": [", f);
    struct prof_iter it;
    struct prof_sample smp;
    if (profile__iter(p, &it) < 0)
        return -1;
    size_t shown = 0;
    while (profile__next(&it, &smp)) {
        const struct prof_sample *s = &smp;
        if (!out__visible(p, s, o))
            continue; /* (idle, without --idle: as every format has it) */
        const struct prof_thread *t = &p->threads[s->thread];
        fprintf(f, "%s\n    {\"tid\": %d, \"name\": ", shown++ ? "," : "", (int)t->tid);
        text__json(f, t->comm);
        fputs(", \"role\": ", f);
        text__json(f, t->role);
        fputs(", \"tag\": ", f);
        text__json(f, sample_tag__str(s->tag));
        fprintf(f, ", \"state\": \"%c\",\n     ", s->state ? s->state : '?');
        frames(p, s->stack, f);
        fputc('}', f);
    }
    profile__iter_free(&it);
    fputs(shown ? "\n  ],\n  \"haskell_threads_missing\": "
                      : "],\n  \"haskell_threads_missing\": ",
          f);
    if (p->green_short[0])
        text__json(f, p->green_short);
    else
        fputs("null", f);
    fputs(",\n  \"haskell_threads\": [", f);
    for (size_t i = 0; i < p->ngreen; i++) {
        const struct prof_green *g = &p->green[i];
        fprintf(f, "%s\n    {\"id\": %" PRIu64 ", \"label\": ", i ? "," : "", g->id);
        if (g->label[0])
            text__json(f, g->label);
        else
            fputs("null", f);
        fputs(", \"status\": ", f);
        text__json(f, g->status);
        if (g->blocked_on)
            fprintf(f, ", \"mvar\": \"0x%" PRIx64 "\"", g->blocked_on);
        if (g->owner_id)
            fprintf(f, ", \"black_hole_owner\": %" PRIu64, g->owner_id);
        /* (Running: its stack is its OS thread's, in "threads".) */
        pid_t on = profile__green_runner(p, g);
        if (on) {
            fprintf(f, ", \"on_thread\": %d, \"frames\": []}", (int)on);
            continue;
        }
        fputs(",\n     ", f);
        frames(p, g->stack, f);
        fputc('}', f);
    }
    fputs(p->ngreen ? "\n  ]\n}\n" : "]\n}\n", f);
    return 0;
}

const struct writer writer_json = {
    .name = "json",
    .help = "every sample's stack as JSON, as hsspy dump --json writes (its Haskell threads: dump only)",
    .text = true,
    .write = write_json,
};
