# ghc_resume - back from a safe call, before the code reloads Sp.
#
# resumeThread gives a safe call's thread its capability back; the code
# after the call then loads Sp (rbp) and SpLim from the TSO's stack chunk,
# a few instructions later. Until that load, rbp still points where the
# chunk was before the call, and a collection during the call may have
# moved it (resume.hs: each call runs a major collection, which moves the
# thread's small first chunk). gdb parks the main thread right after
# resumeThread returns (finish): it holds its capability and runs Haskell
# code with a stale rbp, [haskell] down to main; before, its samples were
# [haskell];[invalid] ("no Haskell stack pointer"), and in a compacting
# collection's run one in thousands of a safe call's returns came out so.
# And the collections those calls run: [gc], C frames from rs_collect, then
# the Haskell code that made the call (before, the C frames alone).
# Threaded and not, for every GHC version here.
. "$(dirname "$0")/../lib.sh"
require_ptrace

resumed() { # SUITE CASE-PREFIX
    local suite=$1 c=$2 rts prog flags pid tid rbp chunk end
    for rts in threaded single; do
        flags=(-O1 -rtsopts)
        [ "$rts" = threaded ] && flags+=(-threaded)
        prog=$(hs_build "$suite" "resume-$rts" resume.hs resume_c.c -- "${flags[@]}") ||
            { fail "$c-$rts-build" "ghc could not build resume.hs"; continue; }
        # Its collections, in the safe call's C code (hs_perform_gc, as
        # System.Mem.performGC): [gc] down to the Haskell code that made
        # the call (it was the C frames alone, from rs_collect).
        local f=$T/gc.folded gc joined
        hs_record "$suite" "$T/out" "$T/err" -q -F 499 -o "$f" -- "$prog" 1.5
        check_status "$c-$rts-gc-record" $? "$T/err"
        gc=$(count_matching "$f" '^\[gc\];')
        joined=$(count_matching "$f" '^\[gc\];(\[catch\];)?Main\.main[0-9]*;Main\.(\$w)?collectLoop;Main\.[^;]*;rs_collect;perform(Blocking)?MajorGC;')
        check "$c-$rts-gc-caller" "$joined of $gc [gc] samples reach collectLoop: $(grep '^\[gc\]' "$f" | grep -v collectLoop | head -n 3 | cut -c1-300 | tr '\n' '|')" \
            test "$gc" -ge 50 -a "$((joined * 100))" -ge "$((gc * 95))"

        hs_start "$suite" "$T/out" "$T/prog.err" "$prog" 60 ||
            { fail "$c-$rts-setup" "resume did not start: $(cat "$T/prog.err")"; continue; }
        pid=$HS_PID
        sleep 0.3
        gdb_park "$suite" "$pid" park_resume "$T/gdb.out" 'break resumeThread thread 1
continue
finish
printf "rbp %#lx\n", $rbp'
        tid=$PARKED_TID
        if [ -z "$tid" ]; then
            fail "$c-$rts-parked" "gdb did not park the main thread after resumeThread: $(tail -n 4 "$T/gdb.out" | tr '\n' '|')"
            kill -9 "$pid"; continue
        fi
        pass "$c-$rts-parked"
        "$HSSPY" record -q -F 499 -d 0.5 --threads -p "$pid" >"$T/folded" 2>"$T/rec.err"
        check_status "$c-$rts-record" $? "$T/rec.err"
        "$HSSPY" record -q -F 99 -d 0.1 -f dump -p "$pid" >"$T/dump" 2>"$T/dump.err"
        kill -9 "$pid"; wait "$pid" 2>/dev/null || true
        # The case meant: rbp outside the chunk the thread is on now.
        rbp=$(sed -n 's/^rbp 0x\([0-9a-f]*\)$/\1/p' "$T/gdb.out")
        read -r chunk end < <(sed -n "/^thread $tid /,/^$/s/.*stack chunk 0x\\([0-9a-f]*\\) ending at 0x\\([0-9a-f]*\\),.*/\\1 \\2/p" "$T/dump" | head -n 1)
        check "$c-$rts-moved" "the chunk did not move during the call (rbp ${rbp:-?}, chunk ${chunk:-?} to ${end:-?})" \
            test -n "$rbp" -a -n "$chunk" -a -n "$end" -a \( $((16#${rbp:-0} < 16#${chunk:-0})) = 1 -o $((16#${rbp:-0} >= 16#${end:-0})) = 1 \)
        check "$c-$rts-haskell" "the parked thread's samples are not [haskell] down to main: $(grep "^tid $tid " "$T/folded" | head -n 3 | tr '\n' '|')" \
            has_line "$T/folded" "^tid $tid \\([^)]*\\);\\[haskell\\];(\\[catch\\];)?Main\\.main[0-9]*;Main\\.(\\\$w)?collectLoop;Main\\.[^;]* [0-9]+$"
        check "$c-$rts-no-invalid" "the parked thread has samples with an [invalid] frame: $(grep "^tid $tid " "$T/folded" | grep -F '[invalid]' | head -n 3 | tr '\n' '|')" \
            lacks_line "$T/folded" "^tid $tid .*\\[invalid\\]"
    done
}

ghc_targets
for suite in $GHC_TARGETS; do
    resumed "$suite" "ghc-$(ghc_version "$suite")"
done
