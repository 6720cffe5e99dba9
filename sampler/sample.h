/* sample.h - the raw sample model shared by the walkers, the symbolizer and
 * the writers: frames as addresses and kinds, and the tag of a sample.
 *
 * Walkers produce raw frames innermost first; nothing here has a name yet.
 * The symbolizer names each distinct raw frame once, after recording.
 */
#ifndef HSSPY_SAMPLE_H
#define HSSPY_SAMPLE_H

#include <stdint.h>

enum frame_kind {
    FK_PC,            /* an exact pc: the innermost frame */
    FK_RET,           /* a C return address: named from addr - 1 */
    FK_HS_RET,        /* an STG return frame: addr is the continuation's info pointer */
    FK_HS_UPDATE,     /* an update frame: addr is the info pointer of the thunk being forced */
    FK_HS_CATCH,      /* catch# frame (addr: its info pointer) */
    FK_HS_ATOMICALLY, /* atomically# frame */
    FK_HS_CATCH_STM,  /* catchSTM# frame */
    FK_HS_CATCH_RETRY,/* catchRetry# (orElse) frame */
    FK_HS_CCS,        /* a cost centre (addr: the CostCentre's address) */
    FK_INVALID,       /* a walk failed here; addr is the reason (enum walk_error) */
    FK_TRUNCATED,     /* the walk stopped at its depth cap */
    FK__COUNT
};

/* Why a walk failed; stored in FK_INVALID frames and counted in the report. */
#define WALK_ERRORS(X)                                                     \
    X(WE_NONE, "no error")                                                 \
    X(WE_NO_REGS, "registers unreadable")                                  \
    X(WE_C_UNWIND, "C unwind failed")                                      \
    X(WE_STACK_READ, "stack memory not captured")                          \
    X(WE_BAD_INFO, "not an info pointer")                                  \
    X(WE_BAD_FRAME, "frame does not fit its stack chunk")                  \
    X(WE_CHUNKS, "next stack chunk unreadable")                            \
    X(WE_NO_SP, "no Haskell stack pointer")                                \
    X(WE_RTS_STATE, "RTS state unreadable")                                \
    X(WE_CCS, "cost-centre stack unreadable")                             \
    X(WE_GC_MOVING, "stack being moved by the collector")                 \
    X(WE_NOT_STOPPED, "did not stop (a vfork's parent, an uninterruptible wait)")

enum walk_error {
#define X(e, s) e,
    WALK_ERRORS(X)
#undef X
    WE__COUNT
};

const char *walk_error__str(enum walk_error e);

/* What a thread was doing when sampled (GHC programs; TAG_NONE otherwise). */
#define SAMPLE_TAGS(X)                                                     \
    X(TAG_NONE, "")                                                        \
    X(TAG_HASKELL, "haskell")                                              \
    X(TAG_UNSAFE_FFI, "unsafe-ffi")                                        \
    X(TAG_SAFE_FFI, "safe-ffi")                                            \
    X(TAG_GC, "gc")                                                        \
    X(TAG_RTS, "rts")                                                      \
    X(TAG_IDLE, "idle")

enum sample_tag {
#define X(e, s) e,
    SAMPLE_TAGS(X)
#undef X
    TAG__COUNT
};

const char *sample_tag__str(enum sample_tag t);

/* What a thread was, for the RTS, at one sample (GHC programs). */
#define THREAD_ROLES(X)                                                    \
    X(ROLE_NONE, "")                                                       \
    X(ROLE_CAP, "capability")                                              \
    X(ROLE_SAFE_FFI, "safe-FFI worker")                                    \
    X(ROLE_IO_MANAGER, "IO manager")                                       \
    X(ROLE_TIMER_MANAGER, "timer manager")                                 \
    X(ROLE_TICKER, "ticker")                                               \
    X(ROLE_IDLE_WORKER, "idle worker")                                     \
    X(ROLE_FOREIGN, "foreign thread")                                      \
    X(ROLE_MARK, "nonmoving mark thread")

enum thread_role {
#define X(e, s) e,
    THREAD_ROLES(X)
#undef X
    ROLE__COUNT
};

const char *thread_role__str(enum thread_role r);

struct raw_frame {
    uint64_t addr;
    uint32_t kind; /* enum frame_kind */
    uint32_t aux;  /* kind-specific (unused: 0) */
};

/* Frames per sample, Haskell and C together; deeper walks end in FK_TRUNCATED. */
#define MAX_FRAMES 512

#endif
