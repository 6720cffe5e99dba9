# ghc_stg_reference - hsspy's STG frames equal the RTS's own stack printer's,
# frame by frame. A -debug build of deep.hs stops in a blocking safe call
# deep inside a known recursion (alpha/beta/gamma, update and catch frames);
# hsspy dumps its stack, then gdb calls the debug RTS's printStackChunk on the
# same stack chunk, and the two lists must agree: every return frame's info
# pointer, every update and catch frame, in the same order. For every GHC
# version this machine has (a chroot's program gets the chroot's gdb). Then
# stacks bigger than what is copied of them, and where the copy starts
# elsewhere than the walk.
. "$(dirname "$0")/../lib.sh"
require_ptrace
command -v gdb >/dev/null || { skip "all" "gdb is not installed"; exit 0; }

# compare SUITE PROG CASE-PREFIX MODE: run deep.hs blocking in a MODE (safe
# or unsafe) call, and compare hsspy's dump of the main thread's STG frames
# with printStackChunk's.
compare() {
    local suite=$1 prog=$2 c=$3 mode=$4 extra=""
    [ "$mode" = unsafe ] && extra=unsafe
    # One big first chunk (-ki), so the whole stack is one chunk for the printer.
    hs_start "$suite" "$T/out" "$T/printer" "$prog" 23 60 $extra +RTS -ki256k -RTS ||
        { fail "$c-$mode-setup" "deep did not start"; return; }
    local pid=$HS_PID
    wait_for_line "$T/out" '^ready$' || { fail "$c-$mode-setup" "deep did not reach its blocking call"; return; }

    "$HSSPY" dump -q -p "$pid" >"$T/dump" 2>"$T/dump.err"
    check "$c-$mode-dump-ok" "hsspy dump failed: $(cat "$T/dump.err")" test -s "$T/dump"

    # The main thread's section of the dump.
    sed -n '/^thread '"$pid"' /,/^$/p' "$T/dump" >"$T/main"
    local chunk_end sp
    read -r chunk_end sp < <(sed -n 's/.*ending at \(0x[0-9a-f]*\), saved sp \(0x[0-9a-f]*\).*/\1 \2/p' "$T/main")
    if [ -z "${chunk_end:-}" ]; then
        fail "$c-$mode-haskell-thread" "the dump shows no Haskell thread for the main thread: $(head -c 600 "$T/main")"
        kill "$pid"; return
    fi
    pass "$c-$mode-haskell-thread"
    local tag=safe-ffi
    [ "$mode" = unsafe ] && tag=unsafe-ffi
    check "$c-$mode-tagged" "main thread not tagged $tag: $(head -n1 "$T/main")" grep -q ", $tag," "$T/main"

    # hsspy's STG frames: "stg ADDR", "update", "catch ADDR".
    awk '$3 == "stg" { print "stg", $2 } $3 == "update" { print "update" } $3 == "catch" { print "catch", $2 }' \
        "$T/main" >"$T/hsspy.frames"

    # Where the printer starts: the saved sp of a thread suspended in a safe
    # call; in an unsafe call the TSO's sp is stale and Sp is in rbp, which
    # gdb recovers by unwinding deep_block's C frame with its CFI.
    local gdb_sp="$sp"
    if [ "$mode" = unsafe ]; then
        gdb_sp='$rbp'
    fi
    hs_run "$suite" timeout 60 gdb -p "$pid" -batch -ex "frame function deep_block" -ex "up" \
        -ex "call (void)printStackChunk((void*)$gdb_sp, (void*)$chunk_end)" >"$T/gdb.out" 2>&1

    # The RTS's frames. RET_SMALL prints the info *table*, which ends where
    # the info pointer (the return address hsspy shows) begins: 16 bytes on.
    local line a
    while IFS= read -r line; do
        case "$line" in
        *RET_SMALL\ \(0x*)
            a=${line#*RET_SMALL (0x}; a=${a%%)*}
            printf 'stg 0x%016x\n' $((16#$a + 16)) ;;
        *UPDATE_FRAME\(*) echo update ;;
        *CATCH_FRAME\(0x*)
            a=${line#*CATCH_FRAME(0x}; a=${a%%,*}
            printf 'catch 0x%016x\n' $((16#$a)) ;;
        *STOP_FRAME*) break ;;
        stg_*|RET_*) echo "other $line" ;;
        esac
    done <"$T/printer" >"$T/rts.frames"

    local n_rts n_hs
    n_rts=$(wc -l <"$T/rts.frames"); n_hs=$(wc -l <"$T/hsspy.frames")
    if [ "$n_rts" -lt 20 ]; then
        fail "$c-$mode-printer-output" "printStackChunk printed $n_rts frames (gdb: $(tail -n 3 "$T/gdb.out" | tr '\n' '|'))"
    elif diff -u "$T/rts.frames" "$T/hsspy.frames" >"$T/diff"; then
        pass "$c-$mode-frames-equal"
    else
        fail "$c-$mode-frames-equal" "hsspy $n_hs frames, printStackChunk $n_rts; first differences: $(grep '^[-+][a-z]' "$T/diff" | head -n 6 | tr '\n' '|')"
    fi
    check "$c-$mode-update-frames" "no update frame among the $n_hs frames" grep -q '^update' "$T/hsspy.frames"
    check "$c-$mode-catch-frames" "no catch frame among the $n_hs frames" grep -q '^catch' "$T/hsspy.frames"
    # The names: the recursion is in Main, and the Haskell caller of the C
    # function is right above it.
    check "$c-$mode-names" "no Main.* frame named in the dump" grep -q ' stg  *Main\.' "$T/main"
    check "$c-$mode-c-to-haskell" "deep_block's caller is not Haskell code" \
        awk '/ deep_block /{ getline; exit !($0 ~ / ret  *Main\./) }' "$T/main"
    kill "$pid"
}

# The same stack grown through the default small first chunk (-ki1k) spans
# several chunks joined by underflow frames: the walk must follow them and
# find exactly the same frames.
across_chunks() { # SUITE PROG CASE-PREFIX
    same_frames "$1" "$3-across-chunks" "$T/one-chunk.frames" "across chunks" "$2" 23 60
}

# same_frames SUITE CASE REFERENCE WHERE PROG ARGS...: start deep.hs, and
# check that hsspy's dump of its main thread's STG frames equals the
# frames in the file REFERENCE (found in one 256 KB chunk).
same_frames() {
    local suite=$1 c=$2 ref=$3 where=$4
    shift 4
    if hs_start "$suite" "$T/same.out" /dev/null "$@" && wait_for_line "$T/same.out" '^ready$'; then
        "$HSSPY" dump -q -p "$HS_PID" | sed -n '/^thread '"$HS_PID"' /,/^$/p' |
            awk '$3 == "stg" { print "stg", $2 } $3 == "update" { print "update" } $3 == "catch" { print "catch", $2 }' \
                >"$T/same.frames"
        if diff -q "$ref" "$T/same.frames" >/dev/null; then
            pass "$c"
        else
            fail "$c" "$(wc -l <"$T/same.frames") frames $where, $(wc -l <"$ref") in one chunk: $(head -n 3 "$T/same.frames" | tr '\n' '|')"
        fi
    else
        fail "$c" "deep did not reach its blocking call"
    fi
    kill "$HS_PID" 2>/dev/null
}

# every_sample SUITE CASE REGEX WHAT PROG ARGS...: start PROG (which says
# "ready" as it blocks), record it 0.3 s, and check that every one of its
# main thread's samples (20 at least) is "tid PID (comm);" then REGEX.
every_sample() {
    local suite=$1 c=$2 re=$3 what=$4 all n
    shift 4
    if hs_start "$suite" "$T/every.out" /dev/null "$@" && wait_for_line "$T/every.out" '^ready$'; then
        "$HSSPY" record -q -F 199 -d 0.3 --threads -o "$T/every.folded" -p "$HS_PID" 2>"$T/every.err"
        all=$(count_matching "$T/every.folded" "^tid $HS_PID ")
        n=$(count_matching "$T/every.folded" "^tid $HS_PID \\([^)]*\\);$re")
        check "$c" "of $all samples, $n $what: $(grep "^tid $HS_PID " "$T/every.folded" | head -c 300 | tr '\n' '|') $(head -n 2 "$T/every.err")" \
            test "$all" -ge 20 -a "$n" -eq "$all"
    else
        fail "$c" "${1##*/} did not reach its blocking call"
    fi
    kill "$HS_PID" 2>/dev/null
}

# A first chunk bigger than what hsspy copies of a stack (+RTS -ki1m, as
# -kc1m makes every chunk): the same frames, read from Sp on (in an unsafe
# call, where Sp is known only after the copy, from the chunk's oldest
# end). A stack deeper than the copy (20000 levels, some 480 KB) ends in
# [truncated] where the copy ends, never in [invalid].
big_chunk() { # SUITE PROG CASE-PREFIX
    local suite=$1 prog=$2 c=$3 mode extra
    for mode in safe unsafe; do
        extra=""
        [ "$mode" = unsafe ] && extra=unsafe
        same_frames "$suite" "$c-big-chunk-$mode" "$T/$mode.frames" "in a 1 MB chunk" \
            "$prog" 23 60 $extra +RTS -ki1m -RTS
        every_sample "$suite" "$c-deeper-than-copy-$mode" \
            "\\[$mode-ffi\\];\\[truncated\\];(Main\\.[^;]*;|\\[thunk\\];)+(\\[catch\\];)?(Main\\.[^;]*;|\\[thunk\\];)*deep_block;" \
            "[$mode-ffi];[truncated] over Main frames and deep_block" "$prog" 20000 60 $extra +RTS -ki4m -RTS
    done
}

# An unsafe call to C code holding in rbp an address 64 KB below Sp, inside
# a 4 MB chunk (sink.hs, low-rbp): the copy starts at rbp, the walk at the
# Sp the unwind restores. A stack of 1000 levels is whole; one of 20000
# (some 480 KB) ends in [truncated] where the copy ended, never [invalid].
low_rbp() { # SUITE CASE-PREFIX
    local suite=$1 c=$2 prog
    prog=$(hs_build "$suite" sink sink.hs deep_c.c sink_c.c -- -O1 -threaded -rtsopts) ||
        { fail "$c-low-rbp-build" "ghc could not build sink.hs"; return; }
    every_sample "$suite" "$c-low-rbp-1000" \
        '\[unsafe-ffi\];\[catch\];Main\.[^;]*;Main\.[^;]*sink;sink_block_low_rbp;deep_block;' \
        "[unsafe-ffi] whole from main to sink_block_low_rbp" "$prog" 1000 60 low-rbp +RTS -ki4m -RTS
    every_sample "$suite" "$c-low-rbp-20000" \
        '\[unsafe-ffi\];\[truncated\];Main\.[^;]*sink;sink_block_low_rbp;deep_block;' \
        "[unsafe-ffi];[truncated] over sink and sink_block_low_rbp" "$prog" 20000 60 low-rbp +RTS -ki4m -RTS
}

ghc_targets
for suite in $GHC_TARGETS; do
    c="ghc-$(ghc_version "$suite")"
    prog=$(hs_build "$suite" deep_debug deep.hs deep_c.c -- -O1 -debug -threaded -rtsopts) ||
        { fail "$c-build" "ghc -debug could not build deep.hs"; continue; }
    compare "$suite" "$prog" "$c" safe
    cp "$T/hsspy.frames" "$T/one-chunk.frames"
    cp "$T/hsspy.frames" "$T/safe.frames"
    compare "$suite" "$prog" "$c" unsafe
    cp "$T/hsspy.frames" "$T/unsafe.frames"
    across_chunks "$suite" "$prog" "$c"
    big_chunk "$suite" "$prog" "$c"
    low_rbp "$suite" "$c"
done
