# ghc_parallel - a -N4 program with parallel, allocation-heavy Haskell work
# on every capability: gc samples appear, and every capability shows up
# (held by some thread, in the report's capability section); with
# sequential collections, the workers waiting for theirs are [gc]. For every
# GHC version this machine has (9.6 keeps its capabilities in an array,
# 9.0 and 9.10 behind a pointer).
. "$(dirname "$0")/../lib.sh"
require_ptrace

parallel() { # SUITE CASE-PREFIX
    local suite=$1 c=$2 prog gc held cap
    prog=$(hs_build "$suite" par par.hs -- -O1 -threaded -rtsopts) ||
        { fail "$c-build" "ghc could not build par.hs"; return; }

    hs_record "$suite" /dev/null "$T/err" -q -F 299 -o "$T/par.folded" -- "$prog" 3 +RTS -N4 -RTS
    check_status "$c-record-ok" $? "$T/err"
    gc=$(count_matching "$T/par.folded" '^\[gc\];')
    check "$c-gc-samples" "no [gc] samples (tags: $(cut -d';' -f1 "$T/par.folded" | sort | uniq -c | tr '\n' ' '))" \
        test "$gc" -ge 10
    check "$c-gc-in-collector" "[gc] samples do not show the collector (GarbageCollect / gcWorkerThread)" \
        has_line "$T/par.folded" '^\[gc\];.*(GarbageCollect|gcWorkerThread)'
    check "$c-haskell-samples" "no [haskell] samples in the Map-building code" \
        has_line "$T/par.folded" '^\[haskell\];.*(Main\.|Data\.Map\.)'

    hs_record "$suite" /dev/null "$T/err" -q -F 299 -f report -o "$T/par.report" -- "$prog" 3 +RTS -N4 -RTS
    for cap in 0 1 2 3; do
        held=$(sed -n "s/^  capability $cap: held \\([0-9.]*\\)%.*/\\1/p" "$T/par.report")
        if [ -n "$held" ] && [ "$(echo "$held > 0" | bc -l)" = 1 ]; then
            pass "$c-capability-$cap"
        else
            fail "$c-capability-$cap" "capability $cap not held in any sample: $(sed -n '/^capabilities/,$p' "$T/par.report" | tr '\n' '|')"
        fi
    done
    check "$c-no-capability-4" "a capability 4 in a -N4 program" \
        test "$(grep -c '^  capability 4:' "$T/par.report")" -eq 0

    # Sequential collections (-qg): one worker collects holding every
    # capability, the others wait in yieldCapability for theirs, as an idle
    # worker waits for work; but every forkOn thread always has work: of
    # those waits asleep, most are the collection's, [gc] (before: all
    # [idle], 60-77% of each worker's samples with -N4 on two CPUs; some
    # are still [idle], a worker handing its capability over between
    # collections). (Not asleep, woken and waiting for a CPU to take its
    # capability, [rts]: on two CPUs, half of them or more.) Five seconds:
    # a handover is caught a few times a second (once only, in 3 s, in a
    # full test run).
    local waits gcwaits
    hs_record "$suite" /dev/null "$T/err" -q -F 299 --idle -o "$T/seq.folded" -- "$prog" 5 +RTS -N4 -qg -RTS
    check_status "$c-seq-record-ok" $? "$T/err"
    waits=$(count_matching "$T/seq.folded" '^\[[a-z-]+\];.*;scheduleWorker;schedule;yieldCapability;waitCondition;')
    gcwaits=$(count_matching "$T/seq.folded" '^\[gc\];.*;scheduleWorker;schedule;yieldCapability;waitCondition;')
    # A worker in yieldCapability not waiting (waking the Task it hands its
    # capability to) runs the runtime's code: [rts] (or [gc]), not [idle]
    # (before, all of them: 3 to 87 samples a run). (A few may be: the
    # registers of a switch and the state /proc gave are of two moments.)
    local busy idlebusy
    busy=$(grep -E '^\[[a-z-]+\];.*;yieldCapability;' "$T/seq.folded" |
        grep -Ev 'waitCondition|lll_lock_wait|futex_abstimed_wait|futex_wait' | awk '{ s += $NF } END { print s + 0 }')
    idlebusy=$(grep -E '^\[idle\];.*;yieldCapability;' "$T/seq.folded" |
        grep -Ev 'waitCondition|lll_lock_wait|futex_abstimed_wait|futex_wait' | awk '{ s += $NF } END { print s + 0 }')
    check "$c-seq-handover-not-idle" "$idlebusy of $busy samples of workers in yieldCapability, not waiting, [idle]: $(grep -E ';yieldCapability;' "$T/seq.folded" | grep -Ev 'waitCondition|lll_lock_wait|futex' | head -n 2 | tr '\n' '|')" \
        test "$busy" -ge 3 -a "$((10 * idlebusy))" -le "$busy"
    local idlewaits
    idlewaits=$(count_matching "$T/seq.folded" '^\[idle\];.*;scheduleWorker;schedule;yieldCapability;waitCondition;')
    check "$c-seq-gc-waits" "$gcwaits of $waits samples of workers waiting for their capability are [gc], $idlewaits [idle]: $(grep -E ';scheduleWorker;schedule;yieldCapability;waitCondition;' "$T/seq.folded" | sort -t' ' -k2 -nr | head -n 3 | tr '\n' '|')" \
        test "$waits" -ge 50 -a "$gcwaits" -ge 25 -a "$gcwaits" -ge "$((2 * idlewaits))"
}

ghc_targets
for suite in $GHC_TARGETS; do
    parallel "$suite" "ghc-$(ghc_version "$suite")"
done
