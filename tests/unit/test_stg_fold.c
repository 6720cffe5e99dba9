/* The STG walker's folding of recursion (stg_walk__fold): frames are fed
 * one by one, innermost first, as the walk writes them, and what stays
 * must be each stack with every run of a repeated frame, or of a repeated
 * cycle of up to STG_FOLD_PERIOD frames, written once. Frames are letters
 * here: 'T' an update frame (kind FK_HS_UPDATE), the others return frames
 * (FK_HS_RET) at the letter's address. */
#include <string.h>

#include "haskell-stack/stg_walk.h"
#include "tests/unit/unit.h"

/* Walk `in` frame by frame; the folded frames as letters in `out`. */
static int fold(const char *in, char *out, size_t outsz)
{
    struct raw_frame f[256];
    int n = 0, folded = 0;
    for (const char *c = in; *c && n < 256; c++) {
        f[n++] = (struct raw_frame){(uint64_t)*c, *c == 'T' ? FK_HS_UPDATE : FK_HS_RET, 0};
        folded += stg_walk__fold(f, &n);
    }
    size_t k = 0;
    for (int i = 0; i < n && k + 1 < outsz; i++)
        out[k++] = (char)f[i].addr;
    out[k] = 0;
    return folded;
}

#define FOLDS_TO(in, want, nfolded)                                         \
    do {                                                                    \
        char got_[256];                                                     \
        int nf_ = fold(in, got_, sizeof got_);                              \
        if (strcmp(got_, want) != 0 || nf_ != (nfolded))                    \
            UNIT_FAIL("%s folded to %s (%d frames dropped), expected %s (%d)", \
                      in, got_, nf_, want, nfolded);                        \
    } while (0)

TEST(single_frame_recursion)
{
    FOLDS_TO("ABBBBBC", "ABC", 4);
    FOLDS_TO("AAAA", "A", 3);
}

TEST(lazy_fold_alternation)
{
    /* A forced chain of (+) thunks: update frame, integerAdd's return frame. */
    FOLDS_TO("TaTaTaTaTaM", "TaM", 8);
}

TEST(cycles_up_to_the_period)
{
    FOLDS_TO("xABCABCABCy", "xABCy", 6);
    FOLDS_TO("ABCDABCDABCD", "ABCD", 8);
    /* Five frames repeated: longer than any recursion folded. */
    FOLDS_TO("ABCDEABCDE", "ABCDEABCDE", 0);
}

TEST(no_repeat_no_change)
{
    FOLDS_TO("ABCDEFG", "ABCDEFG", 0);
    FOLDS_TO("ABAC", "ABAC", 0);
    FOLDS_TO("", "", 0);
}

TEST(nested_recursion)
{
    /* Recursion inside recursion: f calls g recursively, each level of g
     * under another level of f. Inner runs fold first, then the cycle. */
    FOLDS_TO("ggggfggggfggggfM", "gfM", 13);
}

TEST(kind_tells_frames_apart)
{
    /* An update frame and a return frame at one address are not a repeat. */
    struct raw_frame f[2] = {{0x10, FK_HS_UPDATE, 0}, {0x10, FK_HS_RET, 0}};
    int n = 2;
    CHECK_EQ_INT(stg_walk__fold(f, &n), 0);
    CHECK_EQ_INT(n, 2);
}

UNIT_MAIN()

/* stg_walk__copy_index, on the registers of a thread parked halfway
 * through stg_AP_STACK_NOUPD_info's copy (GHC 9.6, threaded; rax..r15 but
 * rbp and rsp, as hs_sample gives them): rax the loop's bound (3946 words,
 * the end of the copy, from which the frames are whole), rdx its index
 * (1973). rcx, the end of the block the closure in rdi ends in, is a
 * header past 8 * 3946 from it: the bound was taken for an index, and
 * every sample was [invalid]. */
TEST(copy_index_not_the_bound)
{
    uint64_t regs[STG_RESTORE_REGS] = {0xf6a, 0x42005c2dc8, 0x42005bf000, 0x7b5, 0x473c,
                                       0x7d1890, 0x1, 0x42005b74a8, 0x1, 0x1, 0x4200305ae8,
                                       0xa91798, 0x42004fe000, 0x420056f0c0};
    bool ends[STG_RESTORE_REGS] = {[0] = true, [3] = true}; /* whole walks from both */
    CHECK(!stg_walk__copy_index(regs, 14, 0, ends)); /* the bound */
    CHECK(stg_walk__copy_index(regs, 14, 3, ends));  /* the index */
    CHECK(!stg_walk__copy_index(regs, 14, 6, ends)); /* 1: no pair 9..72 bytes apart */
    /* Another count in a register, above the bound, is no bound for it
     * unless the frames from there are whole. */
    regs[8] = 4000;
    CHECK(!stg_walk__copy_index(regs, 14, 0, ends));
    ends[8] = true;
    CHECK(stg_walk__copy_index(regs, 14, 0, ends));
    /* The index with the source pointer in a register (its copied words
     * past the payload) too. */
    regs[8] = 1;
    ends[8] = false;
    regs[4] = 0x42005b74a8 + 16 + 8 * 0x7b5;
    CHECK(stg_walk__copy_index(regs, 14, 3, ends));
    /* No end above it: no index. */
    ends[0] = false;
    CHECK(!stg_walk__copy_index(regs, 14, 3, ends));
}
