/* symbolize.c - raw frame -> display name, using modules, Z-decoding and C++
 * demangling. */
#define _GNU_SOURCE
#include "symbolizer/symbolize.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer/cost_centre.h"
#include "symbolizer/demangle.h"
#include "symbolizer/dwarf_lines.h"
#include "symbolizer/ipe.h"
#include "symbolizer/zdecode.h"

static const char *fixed_name(enum frame_kind k)
{
    switch (k) {
    case FK_HS_CATCH: return "[catch]";
    case FK_HS_ATOMICALLY: return "[atomically]";
    case FK_HS_CATCH_STM: return "[catchSTM]";
    case FK_HS_CATCH_RETRY: return "[catchRetry]";
    case FK_INVALID: return "[invalid]";
    case FK_TRUNCATED: return "[truncated]";
    default: return NULL;
    }
}

static bool is_rts_symbol(const char *s)
{
    return strncmp(s, "stg_", 4) == 0 || strcmp(s, "StgRun") == 0 ||
           strcmp(s, "StgReturn") == 0;
}

bool symbolize__code_addr(const struct raw_frame *f, uint64_t *addr)
{
    if (fixed_name((enum frame_kind)f->kind) || f->kind == FK_HS_CCS ||
        (f->kind == FK_HS_UPDATE && f->addr == 0))
        return false;
    *addr = f->kind == FK_RET && f->addr > 0 ? f->addr - 1 : f->addr;
    return true;
}

/* An STG frame's (or an update frame's thunk's) info pointer with an IPE
 * entry: "Module.binding" and its source span. Entries GHC could not tie
 * to a binding (no label) are named from their table when that is a
 * binding's own, otherwise left to the symbols. */
static bool ipe_name(struct module *m, const struct raw_frame *f, struct frame_sym *out)
{
    const struct ipe_entry *e = ipe__lookup(m, f->addr);
    char buf[600];
    const char *suffix = f->kind == FK_HS_UPDATE ? " (thunk)" : "";

    if (!e)
        return false;
    if (e->label[0]) {
        snprintf(buf, sizeof buf, "%s.%s%s", e->module, e->label, suffix);
    } else {
        size_t n = strlen(e->table_name);
        if (strncmp(e->table_name, "block_", 6) == 0 || n <= 5 ||
            strcmp(e->table_name + n - 5, "_info") != 0)
            return false;
        snprintf(buf, sizeof buf, "%s.%.*s%s", e->module, (int)(n - 5), e->table_name, suffix);
    }
    out->name = strdup(buf);
    out->lang = LANG_HASKELL;
    if (e->unit[0] && strcmp(e->unit, "main") != 0)
        out->unit = strdup(e->unit);
    if (e->src_file[0]) {
        out->file = strdup(e->src_file);
        out->line = ipe__span_line(e->src_span);
        if (e->src_span[0])
            out->span = strdup(e->src_span);
    }
    return true;
}

/* A cost centre (--stack ccs): "Module.label" from the CostCentre in the
 * executable file, its srcloc as file, line and span. One the program made
 * while running is in no file: "[cost centre 0x...]". */
static int ccs_name(struct modset *ms, const struct raw_frame *f, struct frame_sym *out)
{
    struct module *m = modset__find(ms, f->addr);
    /* The CostCentre layout is the same in every RTS variant. */
    const struct rts_layout *L =
        m && m->is_haskell ? rts_layout__find(m->ghc_version, false, true, false) : NULL;
    struct cost_centre cc;
    char buf[2 * COST_CENTRE__MAX_STR + 2];

    if (!L || cost_centre__read(m, L, f->addr, &cc) < 0) {
        snprintf(buf, sizeof buf, "[cost centre 0x%llx]", (unsigned long long)f->addr);
        out->name = strdup(buf);
        out->lang = LANG_HASKELL;
        return out->name ? 0 : -ENOMEM;
    }
    if (cc.module[0])
        snprintf(buf, sizeof buf, "%s.%s", cc.module, cc.label);
    else
        snprintf(buf, sizeof buf, "%s", cc.label);
    out->name = strdup(buf);
    out->object = strdup(m->name);
    out->lang = LANG_HASKELL;
    const char *span;
    int line;
    if (cost_centre__srcloc(cc.srcloc, buf, sizeof buf, &line, &span)) {
        out->file = strdup(buf);
        out->line = line;
        out->span = strdup(span);
        if (!out->file || !out->span)
            return -ENOMEM;
    }
    return out->name && out->object ? 0 : -ENOMEM;
}

/* An update frame's name is its thunk's code's, marked so. */
static void thunk_suffix(const struct raw_frame *f, char *buf, size_t size)
{
    if (f->kind == FK_HS_UPDATE) {
        size_t l = strlen(buf);
        snprintf(buf + l, size - l, " (thunk)");
    }
}

int symbolize__frame(struct modset *ms, const struct raw_frame *f, struct frame_sym *out)
{
    const char *fixed = fixed_name((enum frame_kind)f->kind);
    uint64_t addr = f->addr;
    struct module *m;
    const struct sym *s;
    char buf[600];
    bool local = false;

    memset(out, 0, sizeof *out);
    out->lang = LANG_NONE;
    if (fixed || (f->kind == FK_HS_UPDATE && addr == 0)) {
        /* An update frame whose thunk is already a blackhole. */
        out->name = strdup(fixed ? fixed : "[thunk]");
        out->lang = f->kind == FK_HS_UPDATE ? LANG_HASKELL : LANG_NONE;
        return out->name ? 0 : -ENOMEM;
    }
    if (f->kind == FK_HS_CCS)
        return ccs_name(ms, f, out);
    symbolize__code_addr(f, &addr);
    m = modset__locate(ms, &addr);
    if (!m) {
        out->name = strdup("[unknown]");
        return out->name ? 0 : -ENOMEM;
    }
    out->object = strdup(m->name);
    if ((f->kind == FK_HS_RET || f->kind == FK_HS_UPDATE) && ipe_name(m, f, out))
        return out->name && out->object ? 0 : -ENOMEM;
    if (module__plt_name(m, addr, buf, sizeof buf)) {
        /* A stub of the file's PLT, on the way to another file's function
         * (whatever symbol comes before: crt's sizeless _init would stretch
         * over the stubs that follow it). */
        out->name = strdup(buf);
        out->lang = LANG_C;
        return out->name && out->object ? 0 : -ENOMEM;
    }
    s = module__symbol(m, addr);
    bool haskell_code = f->kind >= FK_HS_RET && f->kind <= FK_HS_CATCH_RETRY;
    /* (A sizeless C symbol such as crt's frame_dummy can sit right before
     * a module's first, local, Haskell code.) */
    if (m->is_haskell &&
        (!s || ((haskell_code || s->size == 0) && !zdecode__symbol(s->name, &(struct zdecoded){0})))) {
        /* Code of local (non-exported) bindings, and of their local
         * functions and thunks, has no symbol of its own (GHC gives it
         * assembler-local labels); a module's code is contiguous. After a
         * Haskell binding's symbol with a size (GHC's, from 9.0: a
         * binding's code, its continuations included), past its end: local
         * code of its module; after one without (another compiler's), its
         * code; after no Haskell binding, local code of the module of the
         * binding after it. */
        const struct sym *near = module__symbol_nearest(m, addr);
        const struct sym *next = module__symbol_next(m, addr);
        struct zdecoded z;
        bool near_hs = near && zdecode__symbol(near->name, &z);
        if (near_hs && near->size == 0) {
            s = near;
        } else if (near_hs || (next && zdecode__symbol(next->name, &z))) {
            snprintf(buf, sizeof buf, "%s.<local>", z.module);
            local = true;
            s = NULL;
        }
    }
    if ((m->is_haskell && module__haskell_function(m, addr, buf, sizeof buf)) || local) {
        /* (-g: DWARF knows the binding even for code without a symbol.) */
        thunk_suffix(f, buf, sizeof buf);
        out->name = strdup(buf);
        out->lang = LANG_HASKELL;
    } else if (!s && modset__is_sigreturn(ms, addr)) {
        /* (glibc's own name for it, local, in its debug symbols only) */
        out->name = strdup("__restore_rt");
        out->lang = LANG_C;
    } else if (!s) {
        /* No name: the file's offset of its function's first address, if
         * its unwind information knows the function (so that its samples
         * make one frame, as a name would), else of the address itself. */
        uint64_t at = addr;
        module__cfi_function(m, addr, &at);
        snprintf(buf, sizeof buf, "%s+0x%llx", m->name,
                 (unsigned long long)(at - (uint64_t)m->bias));
        out->name = strdup(buf);
        out->lang = LANG_C;
    } else {
        struct zdecoded z;
        char exported[sizeof z.name];
        if (zdecode__symbol(s->name, &z)) {
            if (zdecode__foreign_export(&z, exported, sizeof exported))
                snprintf(buf, sizeof buf, "%s.%s (foreign export)", z.module, exported);
            else
                snprintf(buf, sizeof buf, "%s.%s", z.module, z.name);
            if (z.unit[0])
                out->unit = strdup(z.unit);
            out->lang = LANG_HASKELL;
        } else if (zdecode__wrapper(s->name, &z)) {
            /* The way in from C through a "wrapper" FunPtr. */
            snprintf(buf, sizeof buf, "%s.%s (wrapper)", z.module, z.name);
            if (z.unit[0])
                out->unit = strdup(z.unit);
            out->lang = LANG_HASKELL;
        } else {
            /* "__libc_start_main@@GLIBC_2.34": the version is noise here.
             * C++ is demangled: "_ZL11depth_throwi" is depth_throw(int). */
            char plain[sizeof buf];
            snprintf(plain, sizeof plain, "%.*s", (int)strcspn(s->name, "@"), s->name);
            if (!demangle__cxx(plain, buf, sizeof buf))
                snprintf(buf, sizeof buf, "%s", plain);
            out->lang = is_rts_symbol(s->name) ? LANG_RTS : LANG_C;
        }
        out->symbol = strndup(s->name, sizeof buf - 1); /* (cut where names are) */
        thunk_suffix(f, buf, sizeof buf);
        out->name = strdup(buf);
    }
    const char *file;
    int line;
    if (module__line(m, addr, &file, &line)) {
        out->file = strdup(file);
        if (out->file)
            dwarf_lines__clean_path(out->file);
        out->line = line;
    }
    return out->name ? 0 : -ENOMEM;
}

void frame_sym__free(struct frame_sym *fs)
{
    free(fs->name);
    free(fs->symbol);
    free(fs->unit);
    free(fs->object);
    free(fs->file);
    free(fs->span);
    memset(fs, 0, sizeof *fs);
}
