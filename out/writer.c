/* writer.c - the table of output formats and what they share. */
#include "out/writer.h"

#include <stdio.h>
#include <string.h>

extern const struct writer writer_folded;
extern const struct writer writer_report;
extern const struct writer writer_calls;
extern const struct writer writer_trace;
extern const struct writer writer_dump;
extern const struct writer writer_json;
extern const struct writer writer_raw;
extern const struct writer writer_svg;

static const struct writer *const all[] = {
    &writer_folded,
    &writer_report,
    &writer_calls,
    &writer_trace,
    &writer_dump,
    &writer_json,
    &writer_raw,
    &writer_svg,
    NULL,
};

const struct writer *writer__find(const char *name)
{
    for (size_t i = 0; all[i]; i++)
        if (strcmp(all[i]->name, name) == 0)
            return all[i];
    return NULL;
}

const struct writer *const *writer__all(void) { return all; }

bool out__visible(const struct profile *p, const struct prof_sample *s, const struct out_opts *o)
{
    (void)p;
    return o->idle || !(s->flags & SAMPLE_IDLE);
}

int out__path(const struct profile *p, const struct prof_sample *s, const struct out_opts *o,
              const char **names, int max, char *scratch, int *first_code)
{
    int n = 0;
    uint32_t len;
    const uint32_t *ids = profile__stack_ids(p, s->stack, &len);

    if (o->threads && n < max) {
        const struct prof_thread *t = &p->threads[s->thread];
        snprintf(scratch, 128, "tid %d (%s)", (int)t->tid, t->comm);
        names[n++] = scratch;
    }
    if (s->tag != TAG_NONE && n < max) {
        static char tags[TAG__COUNT][24];
        if (!tags[s->tag][0])
            snprintf(tags[s->tag], sizeof tags[s->tag], "[%s]", sample_tag__str(s->tag));
        names[n++] = tags[s->tag];
    }
    *first_code = n;
    /* Stored innermost first; displayed outermost first. The code a
     * Haskell thread is running and the continuation it pushed usually
     * belong to the same function: one frame, not two. */
    for (uint32_t i = len; i-- > 0 && n < max;) {
        const char *name = profile__frame_name(p, ids[i]);
        if (n > *first_code && p->syms && p->syms[ids[i]].lang == LANG_HASKELL &&
            p->syms[ids[i + 1]].lang == LANG_HASKELL && strcmp(names[n - 1], name) == 0)
            continue;
        names[n++] = name;
    }
    return n;
}
