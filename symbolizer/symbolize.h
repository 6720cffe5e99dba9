/* symbolize.h - a name, an object and a source line for a raw frame.
 *
 *   struct frame_sym fs;
 *   symbolize__frame(ms, &(struct raw_frame){pc, FK_RET, 0}, &fs);
 *   // fs.name "Main.$wfib" / "leaf" / "libc.so.6+0x1234" / "[unknown]"
 *   frame_sym__free(&fs);
 *
 * Return addresses (FK_RET) are looked up at addr - 1, the call instruction,
 * so a call at the very end of a function is not named after the next one.
 * STG frames carry info pointers, which are the first instruction of their
 * code and are looked up as they are; when the executable was built with
 * -finfo-table-map, an info pointer's IPE entry names it (continuations
 * included, which have no symbol) as Module.binding with its source span.
 * A cost centre (FK_HS_CCS, --stack ccs) is named Module.label from the
 * CostCentre struct in the executable file (cost_centre.h), its srcloc as
 * file, line and span; one the file does not hold, "[cost centre 0x...]".
 */
#ifndef HSSPY_SYMBOLIZE_H
#define HSSPY_SYMBOLIZE_H

#include <stdbool.h>

#include "sampler/sample.h"
#include "symbolizer/modset.h"

enum frame_lang { LANG_C, LANG_HASKELL, LANG_RTS, LANG_NONE };

struct frame_sym {
    char *name;   /* display name, never NULL after symbolize__frame */
    char *symbol; /* the ELF symbol the name was made from ("Main_zdwfib_info"), or NULL */
    char *unit;   /* Haskell unit ("base", "ghc-prim"), NULL for the main unit and C */
    char *object; /* object file basename, NULL if unknown */
    char *file;   /* source file, NULL if unknown */
    int line;
    char *span;   /* a source span ("14:44-54", from IPE) instead of a line, or NULL */
    unsigned char lang; /* enum frame_lang */
};

/* Name one raw frame. Never fails: unknown addresses get "obj+0x..." or
 * "[unknown]". Returns 0, or -ENOMEM. */
int symbolize__frame(struct modset *ms, const struct raw_frame *f, struct frame_sym *out);
void frame_sym__free(struct frame_sym *fs);

/* The code address a frame is named from (a return address less one), or
 * false for frames that have none ([catch], [invalid], a blackhole). */
bool symbolize__code_addr(const struct raw_frame *f, uint64_t *addr);

#endif
