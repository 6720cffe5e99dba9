# ghc_callback - Haskell calling C that calls Haskell back (a "wrapper"
# FunPtr), twice nested (callback.hs): outerLoop -> cb_drive -> middleWork
# -> cb_drive -> innerWork, each callback on the caller's OS thread through
# a new InCall of its Task. A sample in a callback's Haskell code is its own
# Haskell frames, the C frames from the scheduler down to the C code that
# called back, and the Haskell code that made that call, down to the
# outermost: before, it was the callback's Haskell frames alone. A sample
# in cb_drive's spin under middleWork is [safe-ffi] down to outerLoop too.
# The C function GHC writes for the "wrapper" import, between cb_drive and
# the runtime, is named `Main.mkCallback (wrapper)`; innerFib, not
# exported, `Main.<local>` (not the binding before it).
# In the non-threaded runtime, which never lets go of its capability, a
# safe call was [rts] without its Haskell caller; it is [safe-ffi] with it.
# And a callback waiting for a capability (gdb parks the thread in
# waitForCapability called from rts_lock): it holds none, and its new
# InCall has no TSO yet, but it is still in the safe call it was made from:
# [safe-ffi] down to outerLoop (it was an idle worker, no Haskell frames).
# Threaded and not, for every GHC version here.
. "$(dirname "$0")/../lib.sh"
require_ptrace

callbacks() { # SUITE CASE-PREFIX
    local suite=$1 c=$2 rts prog f flags
    for rts in threaded single; do
        flags=(-O1 -rtsopts)
        [ "$rts" = threaded ] && flags+=(-threaded)
        prog=$(hs_build "$suite" "callback-$rts" callback.hs callback_c.c -- "${flags[@]}") ||
            { fail "$c-$rts-build" "ghc could not build callback.hs"; continue; }
        f="$T/$rts.folded"
        hs_record "$suite" "$T/out" "$T/err" -q -F 499 -o "$f" -- "$prog" 2
        check_status "$c-$rts-record" $? "$T/err"
        check "$c-$rts-target-ok" "the target says: $(cat "$T/out")" grep -q '^callback done$' "$T/out"
        local top=';Main\.(\$w)?outerLoop;cb_drive;'
        local mid='Main\.(\$w)?middleWork;cb_drive;'
        check "$c-$rts-inner-joined" "no [haskell] sample in innerWork joined to middleWork and outerLoop: $(grep innerWork "$f" | head -n 2 | tr '\n' '|')" \
            has_line "$f" "^\\[haskell\\];.*$top.*;stg_forceIO_info;.*$mid.*;stg_forceIO_info;.*Main\\.(\\\$w)?innerWork"
        check "$c-$rts-middle-joined" "no [haskell] sample in middleWork joined to outerLoop: $(grep middleWork "$f" | head -n 2 | tr '\n' '|')" \
            has_line "$f" "^\\[haskell\\];.*$top.*;stg_forceIO_info;.*Main\\.(\\\$w)?middleWork(;[^;]*)? [0-9]+$"
        check "$c-$rts-middle-safe-call" "no [safe-ffi] sample in cb_spin under middleWork and outerLoop" \
            has_line "$f" "^\\[safe-ffi\\];.*$top.*;$mid""cb_spin [0-9]+$"
        check "$c-$rts-outer-safe-call" "no [safe-ffi] sample in cb_spin under outerLoop" \
            has_line "$f" "^\\[safe-ffi\\];.*$top""cb_spin [0-9]+$"
        # innerFib, which Main does not export, has no symbol: its code,
        # past the end of the binding before it (outerLoop's worker on
        # 9.0), is Main.<local>, not that binding.
        check "$c-$rts-local-named" "innerWork's callee is not Main.<local>: $(grep -o 'innerWork;[^;]*$' "$f" | sort -u | head -n 3 | tr '\n' '|')" \
            has_line "$f" 'Main\.(\$w)?innerWork;Main\.<local> [0-9]+$'
        # The C function GHC writes for the "wrapper" import, which the
        # FunPtr calls, named after the import.
        check "$c-$rts-wrapper-named" "cb_drive calls no frame named Main.mkCallback (wrapper): $(grep -o 'cb_drive;[^;]*' "$f" | sort -u | head -n 3 | tr '\n' '|')" \
            has_line "$f" ';cb_drive;Main\.mkCallback \(wrapper\);'
        # Every sample in a callback reaches the outermost call (but a
        # sample with a walk error, which ends there).
        local in_cb joined
        in_cb=$(count_matching "$f" '(middle|inner)Work' )
        joined=$(count_matching "$f" "^\\[[a-z-]+\\];.*$top.*(middle|inner)Work")
        check "$c-$rts-all-joined" "$joined of $in_cb samples in a callback reach outerLoop: $(grep -E '(middle|inner)Work' "$f" | grep -Ev "$top" | head -n 3 | tr '\n' '|')" \
            test "$in_cb" -ge 50 -a "$((joined * 100))" -ge "$((in_cb * 98))"
    done
}

waiting() { # SUITE CASE-PREFIX
    local suite=$1 c=$2-waiting prog tid pid
    prog=$(hs_build "$suite" callback-threaded callback.hs callback_c.c -- -O1 -rtsopts -threaded) ||
        { fail "$c-build" "ghc could not build callback.hs"; return; }
    hs_start "$suite" "$T/out" "$T/prog.err" "$prog" 60 +RTS -N2 -RTS ||
        { fail "$c-setup" "callback did not start"; return; }
    pid=$HS_PID
    sleep 0.3
    gdb_park "$suite" "$pid" park_cb "$T/gdb.out" 'break waitForCapability
continue
while !$_caller_is("rts_lock")
  continue
end'
    tid=$PARKED_TID
    if [ -z "$tid" ]; then
        fail "$c-parked" "gdb did not park a thread in waitForCapability: $(tail -n 4 "$T/gdb.out" | tr '\n' '|')"
        kill -9 "$pid"; return
    fi
    pass "$c-parked"
    sleep 0.2
    "$HSSPY" record -q -F 499 -d 0.5 --threads --idle -p "$pid" >"$T/folded" 2>"$T/rec.err"
    check_status "$c-record" $? "$T/rec.err"
    check "$c-safe-ffi" "the parked callback's samples are not [safe-ffi] down to outerLoop: $(grep "^tid $tid " "$T/folded" | head -n 3 | tr '\n' '|')" \
        grep -Eq "^tid $tid \([^)]*\);\[safe-ffi\];.*;Main\.(\\\$w)?outerLoop;cb_drive;(.*;)?rts_lock;waitForCapability [0-9]+$" "$T/folded"
    kill -9 "$pid"; wait "$pid" 2>/dev/null || true
}

# Calls nested 12 deep (nest.hs): nestLoop -> nest_drive -> nestLevel ->
# nest_drive -> ... -> nestFib. Up to 8 calls out are followed: a sample
# in nest_spin with 9 nest_drive frames reaches nestLoop; one nested deeper
# ends in [truncated] after 8 calls out. Before, such a stack ended there
# unmarked, rooted at stg_forceIO_info as if that were the outermost frame.
nested() { # SUITE CASE-PREFIX
    local suite=$1 c=$2-nested prog f="$T/nest.folded"
    prog=$(hs_build "$suite" nest nest.hs nest_c.c -- -O1 -rtsopts -threaded) ||
        { fail "$c-build" "ghc could not build nest.hs"; return; }
    hs_record "$suite" "$T/out" "$T/err" -q -F 499 -o "$f" -- "$prog" 2 12
    check_status "$c-record" $? "$T/err"
    check "$c-target-ok" "the target says: $(cat "$T/out")" grep -q '^nest done$' "$T/out"
    local in_calls marked joined deep deep_marked
    # nest_drive frames on a line: the calls shown.
    drives() { awk -v k="$2" '{ if (gsub(/;nest_drive;/, "&") >= k) n += $NF } END { print n + 0 }' "$1"; }
    in_calls=$(count_matching "$f" 'Main\.(\$w)?nestLevel;')
    marked=$(count_matching "$f" '^\[[a-z-]+\];\[truncated\];.*Main\.(\$w)?nestLevel;')
    joined=$(count_matching "$f" '^\[[a-z-]+\];.*;Main\.(\$w)?nestLoop;.*Main\.(\$w)?nestLevel;')
    check "$c-outermost-or-truncated" "$joined + $marked of $in_calls samples in the calls reach nestLoop or end in [truncated]: $(grep -E 'nestLevel;' "$f" | grep -Ev '^\[[a-z-]+\];(\[truncated\];|.*nestLoop;)' | head -n 2 | cut -c 1-300 | tr '\n' '|')" \
        test "$in_calls" -ge 200 -a "$(((joined + marked) * 100))" -ge "$((in_calls * 98))"
    check "$c-ninth-joined" "no sample in nest_spin 9 calls deep reaches nestLoop: $(grep -E 'nestLoop;' "$f" | awk '{ print gsub(/;nest_drive;/, "&") }' | sort -n | uniq -c | tr '\n' ' ')" \
        test "$(grep -E '^\[[a-z-]+\];.*;Main\.(\$w)?nestLoop;.*;nest_spin [0-9]+$' "$f" >"$T/joined"; drives "$T/joined" 9)" -gt 0
    grep -E 'Main\.(\$w)?nestFib' "$f" >"$T/fib" || true
    deep=$(total_count "$T/fib")
    deep_marked=$(grep -E '^\[[a-z-]+\];\[truncated\];' "$T/fib" >"$T/fib.marked"; drives "$T/fib.marked" 8)
    check "$c-deepest-truncated" "$deep_marked of $deep samples in nestFib, 12 calls in, end in [truncated] after 8 calls out: $(grep -Ev '^\[[a-z-]+\];\[truncated\];' "$T/fib" | head -n 2 | cut -c 1-300 | tr '\n' '|')" \
        test "$deep" -ge 50 -a "$((deep_marked * 100))" -ge "$((deep * 98))"
}

ghc_targets
for suite in $GHC_TARGETS; do
    callbacks "$suite" "ghc-$(ghc_version "$suite")"
    nested "$suite" "ghc-$(ghc_version "$suite")"
    waiting "$suite" "ghc-$(ghc_version "$suite")"
done
