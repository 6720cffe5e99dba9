/* replay.c - reading a raw recording, naming its frames from the files on
 * this machine (those whose build-id still matches), and writing it in any
 * format: record once, analyse as often as wanted. */
#include "sampler/replay.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "out/raw.h"
#include "out/writer.h"
#include "sampler/log.h"
#include "sampler/output.h"
#include "symbolizer/modset.h"

/* Say which of the recording's files could not be used (not on this
 * machine: a container's, another machine's; or changed since), and
 * whether their frames keep the names the recording saved. */
static void tell_unopened(const struct profile *p, const struct modset *ms, size_t changed,
                          size_t unidentified, size_t kept)
{
    char list[512] = "";
    size_t n = 0, len = 0;

    for (size_t i = 0; i < p->nmodules; i++) {
        const struct prof_module *pm = &p->modules[i];
        const struct module *m = modset__find(ms, pm->lo);
        if (pm->blob || !pm->path || (m && m->lo == pm->lo))
            continue;
        if (n < 4 && len < sizeof list) {
            const char *base = strrchr(pm->path, '/') ? strrchr(pm->path, '/') + 1 : pm->path;
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", n ? ", " : "", base);
        }
        n++;
    }
    if (!n)
        return;
    if (n > 4 && len < sizeof list)
        snprintf(list + len, sizeof list - len, " and %zu more", n - 4);
    if (p->nsaved == p->nframes && p->nframes && unidentified == n)
        log__info("%zu of the recording's files %s no build-id to tell %s the same as the "
                  "recorded one%s (%s): %zu frame%s the names the recording saved",
                  n, n == 1 ? "has" : "have", n == 1 ? "it" : "them", n == 1 ? "" : "s",
                  list, kept, kept == 1 ? " keeps" : "s keep");
    else if (p->nsaved == p->nframes && p->nframes)
        log__info("%zu of the recording's files %s not on this machine or changed since%s "
                  "(%s): %zu frame%s the names the recording saved",
                  n, n == 1 ? "is" : "are",
                  unidentified ? ", or have no build-id to tell them the same" : "", list, kept,
                  kept == 1 ? " keeps" : "s keep");
    else
        log__warn("%zu of the recording's files %s (%s): their frames are left unnamed "
                  "(a recording by this hsspy saves the names)",
                  n, changed == n ? "changed since the recording (their build-id differs)"
                  : changed ? (n == 1 ? "is not on this machine or changed since the recording"
                                      : "are not on this machine or changed since the recording")
                  : n == 1  ? "is not on this machine"
                            : "are not on this machine",
                  list);
}

int replay__run(const struct replay_opts *o)
{
    const struct writer *w = writer__find(o->format);
    struct profile p;
    struct modset ms;
    struct saved_module *sm;
    char err[256];
    size_t changed = 0;
    FILE *out;
    int rc = 1;

    if (!w) {
        log__error("unknown format '%s' (see hsspy report --help)", o->format);
        return 2;
    }
    if (output__refused(o->output, w))
        return 2;
    if (strcmp(w->name, "raw") != 0 && output__same_file(o->output, o->input)) {
        log__error("%s is the recording being read: write the %s output to another file",
                   o->output, w->name);
        return 2;
    }
    const char *input = strcmp(o->input, "-") == 0 ? "standard input" : o->input;
    if (raw__read(o->input, &p, err, sizeof err) < 0) {
        log__error("cannot read %s: %s", input, err);
        return 1;
    }
    sm = calloc(p.nmodules ? p.nmodules : 1, sizeof *sm);
    if (!sm) {
        log__error("out of memory");
        profile__free(&p);
        return 1;
    }
    /* A file without a build-id cannot be told the same as the one
     * recorded: whatever is at its path now (rebuilt, another program)
     * would name its frames, wrongly and silently. Where the recording
     * saved the names, those are kept, as for a file that changed. */
    bool saved = p.nsaved == p.nframes && p.nframes;
    size_t unidentified = 0;
    for (size_t i = 0; i < p.nmodules; i++) {
        const struct prof_module *pm = &p.modules[i];
        bool unopened = saved && !pm->build_id_len && !pm->blob;
        sm[i] = (struct saved_module){.path = pm->path, .lo = pm->lo, .hi = pm->hi,
                                      .bias = pm->bias, .build_id = pm->build_id,
                                      .build_id_len = pm->build_id_len, .blob = pm->blob,
                                      .blob_len = pm->blob_len, .unopened = unopened};
        unidentified += unopened;
    }
    if (modset__init_saved(&ms, sm, p.nmodules, &changed) < 0) {
        log__error("out of memory");
        goto done;
    }
    if (profile__symbolize(&p, &ms) < 0) {
        log__error("out of memory naming the frames");
        goto done_ms;
    }
    tell_unopened(&p, &ms, changed, unidentified, profile__keep_saved(&p, &ms));
    if (!(out = output__open(o->output, w)))
        goto done_ms;
    output__start(out);
    /* (Options the recording was made with are the report's too.) */
    bool idle = o->idle || (p.made_with & PROF_MADE_IDLE),
         threads = o->threads || (p.made_with & PROF_MADE_THREADS);
    if (o->idle && p.made_known && !(p.made_with & PROF_MADE_IDLE) && !p.ghc_version[0])
        log__warn("%s was recorded without --idle: the stacks of its threads asleep in the "
                  "kernel were not read (record with --idle to see them)",
                  input);
    if (w->write(&p, &(struct out_opts){.threads = threads, .idle = idle, .sort = o->sort},
                 out) < 0 ||
        output__commit(out) < 0) {
        rc = output__failed(w);
        output__close(out);
        goto done_ms;
    }
    output__close(out);
    rc = 0;
done_ms:
    modset__free(&ms);
done:
    free(sm);
    profile__free(&p);
    return rc;
}
