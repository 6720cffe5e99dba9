# ghc_collectors - the garbage collectors other than the default copying one.
#
# The nonmoving collector (+RTS -xn) marks on an OS thread of its own,
# concurrently with the program: up to GHC 9.6 one started for each mark,
# without a Task until it syncs with the mutators at the mark's end (so it
# was taken for a foreign thread, [safe-ffi]), then with one that makes it
# look like an idle worker ([idle]); since 9.8 one thread for the program's
# life, "nonmoving-mark", that waits for each mark in waitCondition. Its
# marking, and its waits for the mutators to stop, are [gc], its role
# "nonmoving mark thread"; on 9.10 its wait for the next mark is [idle].
#
# The compacting collector (+RTS -c, or -M near its limit) threads every
# pointer to an object it moves into a chain that starts at the object's
# header: while it runs, a thread in a safe call (or returning from one,
# waiting for its capability) has a suspended-TSO pointer that leads to no
# TSO, and its Haskell stack cannot be found. Its sample keeps its tag, its
# C stack and the Haskell function that made the call, then an [invalid]
# frame counted as "stack being moved by the collector", never another
# error (it was "no Haskell stack pointer", after a walk of whatever the
# threaded pointer led to); so too a walk that reaches an underflow frame
# whose pointer to the next chunk is threaded (it was "too many stack
# chunks", now called "next stack chunk unreadable").
#
# The demo program (-N2; Haskell compute, allocation, unsafe and safe
# calls) for each GHC version here.
#
# Frequent collections (gcchurn.hs, +RTS -A256k -N2: two thousand a
# second, and the default area): a worker with nothing to do, asleep, is
# [idle] for all the collections around it. (Before: a worker asleep in
# yieldCapability under requestSync, having asked for a collection while
# another's was under way, was [gc] by those frames for as long as it
# slept, a whole run long, 1 run in 3; a worker or a bound thread whose
# capability a collection held was [gc] while it slept, work or no work,
# and so for good where it did not run again; and on GHC 9.10 a parallel
# collection's worker asleep in gcWorkerThread, waiting for the others,
# was [gc]: 39% of its samples, 8% on a CPU.)
. "$(dirname "$0")/../lib.sh"
require_ptrace

collectors() { # SUITE CASE-PREFIX
    local suite=$1 c=$2 prog
    prog=$(hs_build "$suite" demo_thr demo.hs demo_c.c -- -O1 -threaded -rtsopts) ||
        { fail "$c-build" "ghc could not build demo.hs"; return; }

    # Nonmoving: every stack in the mark thread's function, with --idle.
    hs_record "$suite" /dev/null "$T/err" -q -F 499 --idle --threads -f folded \
        -o "$T/xn.folded" -- "$prog" 3 +RTS -N2 -xn -RTS
    check_status "$c-nonmoving-record" $? "$T/err"
    local mark=';nonmovingConcurrentMark(Worker)?;'
    grep -E -- "$mark" "$T/xn.folded" >"$T/mark" || true
    local marking all gc
    marking=$(count_matching "$T/mark" "${mark}nonmovingMark_")
    all=$(total_count "$T/mark")
    gc=$(count_matching "$T/mark" "^tid [0-9]+ \([^)]*\);\[gc\];.*${mark}nonmovingMark_")
    check "$c-nonmoving-marked" "$marking samples of the mark thread marking in 3 s: $(head -c 600 "$T/mark" | tr '\n' '|')" \
        test "$marking" -ge 5
    check "$c-nonmoving-mark-gc" "$gc of the $marking samples marking are [gc]: $(grep -E -v '\[gc\]' "$T/mark" | cut -c1-300 | head -n 4 | tr '\n' '|')" \
        test "$gc" -eq "$marking"
    # All of them, but its wait for the next mark (9.8 on), idle there.
    local waiting idle allgc
    waiting=$(count_matching "$T/mark" "${mark}waitCondition;")
    idle=$(count_matching "$T/mark" "^tid [0-9]+ \([^)]*\);\[idle\];.*${mark}waitCondition;")
    allgc=$(count_matching "$T/mark" '^tid [0-9]+ \([^)]*\);\[gc\];')
    check "$c-nonmoving-tags" "of its $all samples, $allgc [gc] and $waiting waiting for a mark ($idle of those [idle]): $(grep -E -v '\[gc\]' "$T/mark" | cut -c1-300 | head -n 4 | tr '\n' '|')" \
        test "$((allgc + waiting))" -eq "$all" -a "$idle" -eq "$waiting"
    case $(ghc_version "$suite") in
    9.[0-7].*) ;;
    *)
        check "$c-nonmoving-idle-wait" "$waiting samples of the mark thread waiting for a mark: $(head -c 600 "$T/mark" | tr '\n' '|')" \
            test "$waiting" -ge 100
        ;;
    esac
    hs_record "$suite" /dev/null "$T/err" -q -F 499 -d 1.5 -f report -o "$T/xn.report" \
        -- "$prog" 3 +RTS -N2 -xn -RTS
    check_status "$c-nonmoving-record-report" $? "$T/err"
    check "$c-nonmoving-role" "no thread called the nonmoving mark thread: $(grep '^thread' "$T/xn.report" | tr '\n' '|')" \
        has_line "$T/xn.report" '^thread [0-9]+ \([^)]*\), nonmoving mark thread: '

    # Compacting: one recording, its report and its folded stacks.
    hs_record "$suite" /dev/null "$T/err" -q -F 999 -d 3 -f raw -o "$T/c.raw" \
        -- "$prog" 4 +RTS -N2 -c -RTS
    check_status "$c-compact-record" $? "$T/err"
    "$HSSPY" report -f report -o "$T/c.report" "$T/c.raw" 2>"$T/err"
    check_status "$c-compact-report" $? "$T/err"
    "$HSSPY" report -f folded -o "$T/c.folded" "$T/c.raw" 2>"$T/err"
    check_status "$c-compact-folded" $? "$T/err"
    # (A compacting collection updates every pointer to an object before it
    # moves it: for a moment, a chunk pointer can lead to where its chunk
    # is yet to be, which nothing tells from a chunk's header left over
    # there; one sample in a few thousand here, "next stack chunk
    # unreadable".)
    check "$c-compact-errors" "$(grep '^ *errors:' "$T/c.report")" \
        grep -Eq '^ *errors: *[0-9]+ \((next stack chunk unreadable: [0-9], )?stack being moved by the collector: [0-9]+\)(;|$)' "$T/c.report"
    local invalid shown errors
    invalid=$(count_matching "$T/c.folded" '\[invalid\]')
    # (the frames of the chunks walked before one the collector moves)
    shown=$(count_matching "$T/c.folded" '^\[(safe-ffi|rts)\];\[invalid\];([^;]*;)*Main\.[^;]*;(demo_[a-z]*|resumeThread|suspendThread)[; ]')
    check "$c-compact-samples" "$shown of the $invalid samples with an [invalid] frame are a call's C stack under the Haskell function that made it: $(grep -F '[invalid]' "$T/c.folded" | cut -c1-300 | head -n 4 | tr '\n' '|')" \
        test "$shown" -eq "$invalid"
    # Each is a walk that failed, counted: none the repeat of one by a
    # thread asleep since (in demo_wait's 5 ms, say), as if its stack were
    # still being moved.
    errors=$(sed -n 's/^ *errors: *\([0-9]*\).*/\1/p' "$T/c.report")
    check "$c-compact-not-repeated" "$invalid samples with an [invalid] frame, ${errors:-?} errors counted: $(grep -F '[invalid]' "$T/c.folded" | cut -c1-300 | head -n 4 | tr '\n' '|')" \
        test "$invalid" -gt 0 -a "$invalid" -le "${errors:-0}"
}

# Each thread that hardly ran (on a CPU under 5% of at least 50 samples)
# has under a fifth of them [gc], over 2 runs with -A256k; and over 2 with
# the default allocation area (longer collections), no worker is [gc]
# asleep on a condition in gcWorkerThread (GHC 9.2 on; before, it spun).
idle_through_collections() { # SUITE CASE-PREFIX
    local suite=$1 c=$2-frequent prog run bad="" asleep=0 n
    prog=$(hs_build "$suite" gcchurn gcchurn.hs -- -O1 -threaded -rtsopts) ||
        { fail "$c-build" "ghc could not build gcchurn.hs"; return; }
    for run in 1 2; do
        hs_record "$suite" /dev/null "$T/err" -q -F 199 -f report -o "$T/churn.report" \
            -- "$prog" 1 +RTS -N2 -A256k -RTS
        check_status "$c-$run-record" $? "$T/err"
        bad+=$(grep -A1 '^thread ' "$T/churn.report" | paste - - - 2>/dev/null |
            awk '{ n = 0; cpu = -1; gc = 0
                   for (i = 1; i < NF; i++) {
                       if ($(i + 1) ~ /^samples,?$/) n = $i
                       if ($i == "CPU") { cpu = $(i + 1); sub(/[%,]+$/, "", cpu) }
                       if ($i == "gc") { gc = $(i + 1); sub(/%$/, "", gc) } }
                   if (n >= 50 && cpu >= 0 && cpu + 0 < 5 && gc + 0 >= 20) print }' |
            tr -s ' ' | cut -c1-200)
    done
    check "$c-idle-not-gc" "threads that hardly ran, mostly [gc]: $bad" test -z "$bad"
    # (A few are [gc]: woken, on their way to collect, state R; more on a
    # loaded machine, 12 of 94 once in a full test run. A fifth at most,
    # as for the threads above: before the fix, 114 of 127.)
    local waits=0
    for run in 3 4; do
        hs_record "$suite" /dev/null "$T/err" -q -F 199 --threads --idle -o "$T/churn.folded" \
            -- "$prog" 1 +RTS -N2 -RTS
        check_status "$c-$run-record" $? "$T/err"
        grep -v '^tid [0-9]* (gcchurn);' "$T/churn.folded" >"$T/workers.folded" || true
        n=$(count_matching "$T/workers.folded" '^tid [0-9]+ \([^)]*\);\[gc\];.*;gcWorkerThread;([^;]*;)*waitCondition;')
        asleep=$((asleep + n))
        n=$(count_matching "$T/workers.folded" '^tid [0-9]+ \([^)]*\);\[[a-z-]+\];.*;gcWorkerThread;([^;]*;)*waitCondition;')
        waits=$((waits + n))
    done
    check "$c-worker-asleep-not-gc" "$asleep of $waits samples of workers asleep in gcWorkerThread are [gc]: $(grep -E '\[gc\];.*;gcWorkerThread;([^;]*;)*waitCondition;' "$T/churn.folded" | head -n 2 | cut -c1-250 | tr '\n' '|')" \
        test "$((5 * asleep))" -le "$waits"
}

ghc_targets
for suite in $GHC_TARGETS; do
    collectors "$suite" "ghc-$(ghc_version "$suite")"
    idle_through_collections "$suite" "ghc-$(ghc_version "$suite")"
done
