# nonblocking - --nonblocking: running threads are sampled by the kernel
# (a perf event each) and stopped only at their first tick, and the profile
# still holds: a C program's call chains whole (its C stacks copied by the
# kernel at the sample), and for a GHC program, for every GHC version this
# machine has, the tag shares within 3 points of the workload's own
# measurement (as ghc_calibrated asks of stops), FFI samples under their
# Haskell caller, the safe sleep not idle. Skipped where perf events are
# not allowed.
. "$(dirname "$0")/../lib.sh"
require_ptrace

if ! perf_events_allowed; then
    skip "all" "perf events are not allowed here (perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid)): --nonblocking stops threads as usual"
    exit 0
fi

# stops_few CASE REPORT: the report's nonblocking line says no thread was
# stopped past its first tick (stops <= threads seen), and most samples of
# running threads came from perf samples.
stops_few() {
    local line samples stops threads
    line=$(grep '^ *nonblocking:' "$2")
    samples=$(echo "$line" | sed -n 's/.*not stopped: \([0-9]*\) samples.*/\1/p')
    stops=$(echo "$line" | sed -n 's/.*; \([0-9]*\) stops in all.*/\1/p')
    threads=$(sed -n 's/^ *samples: .* from \([0-9]*\) threads.*/\1/p' "$2")
    check "$1" "stops ${stops:-?} for ${threads:-?} threads, ${samples:-?} perf samples: $line" \
        test -n "$stops" -a -n "$threads" -a "${samples:-0}" -ge 100 -a "${stops:-1}" -le "${threads:-0}"
}

# A C program: both threads' outer;middle;leaf chains, as when stopped.
CH=$W/chains
"$HSSPY" record -q -F 199 -d 2 --nonblocking -o "$T/c.folded" -- "$CH" 2.5 >/dev/null 2>"$T/c.err"
check_status "c-exit-status" $? "$T/c.err"
total=$(total_count "$T/c.folded")
main=$(count_matching "$T/c.folded" '^_start;__libc_start_main;__libc_start_call_main;main;outer;middle;leaf [0-9]+$')
worker=$(count_matching "$T/c.folded" '(^|;)start_thread;worker;outer;middle;leaf [0-9]+$')
check "c-chains" "main chain $main, worker chain $worker of $total samples: $(sort -t' ' -k2 -rn "$T/c.folded" | head -n 5 | tr '\n' '|')" \
    test "$main" -ge 50 -a "$worker" -ge 50 -a $((10 * (main + worker))) -ge $((9 * total))
"$HSSPY" record -q -F 199 -d 1.5 --nonblocking -f report -o "$T/c.report" -- "$CH" 2 >/dev/null 2>"$T/c.err"
check_status "c-report-exit-status" $? "$T/c.err"
stops_few "c-not-stopped" "$T/c.report"
check "c-no-errors" "$(grep '^ *errors:' "$T/c.report")" grep -Eq '^ *errors: +0$' "$T/c.report"

# --nonblocking goes with the records of context switches, not without.
"$HSSPY" record -q --nonblocking --no-perf-events -o /dev/null -- true 2>"$T/both.err"
rc=$?
check "with-no-perf-events-refused" "exit $rc, said: $(cat "$T/both.err")" \
    test "$rc" = 2 -a "$(wc -l <"$T/both.err")" = 1

within() { # NAME MEASURED TRUTH
    local d
    d=$(echo "($2 - $3) * 100" | bc -l | tr -d -)
    if [ "$(echo "$d <= 3" | bc -l)" = 1 ]; then
        pass "$1"
    else
        fail "$1" "hsspy says $2, the program measured $3 (off by $d points)"
    fi
}

calibrated() { # SUITE CASE-PREFIX
    local suite=$1 c=$2 prog
    prog=$(hs_build "$suite" calib calib.hs calib_c.c -- -O2 -threaded -rtsopts) ||
        { fail "$c-build" "ghc could not build calib.hs"; return; }
    hs_record "$suite" "$T/truth" "$T/err" -q -F 499 --threads --nonblocking \
        -o "$T/calib.folded" -- "$prog" 5
    check_status "$c-record-ok" $? "$T/err"
    local t_unsafe t_haskell t_safe main_tid total
    read -r _ _ t_unsafe _ t_haskell _ t_safe <"$T/truth"
    if [ -z "${t_safe:-}" ]; then
        fail "$c-truth" "calib printed no measurement: $(head -c 300 "$T/truth")"
        return
    fi
    main_tid=$(sed -n 's/^tid \([0-9]*\) (calib);.*/\1/p' "$T/calib.folded" | sort | uniq -c | sort -rn | awk 'NR == 1 { print $2 }')
    grep "^tid $main_tid " "$T/calib.folded" >"$T/main.folded"
    total=$(total_count "$T/main.folded")
    share() { echo "scale=4; $(count_matching "$T/main.folded" "^tid $main_tid \\(calib\\);\\[$1\\];") / $total" | bc; }
    if [ "${total:-0}" -lt 1000 ]; then
        fail "$c-enough-samples" "only $total samples of the main thread"
        return
    fi
    pass "$c-enough-samples"
    within "$c-haskell-share" "$(share haskell)" "$t_haskell"
    within "$c-unsafe-ffi-share" "$(share unsafe-ffi)" "$t_unsafe"
    within "$c-safe-ffi-share" "$(share safe-ffi)" "$t_safe"
    local ffi with_caller
    ffi=$(count_matching "$T/main.folded" ';\[(unsafe|safe)-ffi\];')
    with_caller=$(count_matching "$T/main.folded" ';\[(unsafe|safe)-ffi\];.*;Main\.[^;]*;calib_(busy|sleep)(;| )')
    if [ "$ffi" -gt 0 ] && [ $((100 * with_caller)) -ge $((90 * ffi)) ]; then
        pass "$c-ffi-haskell-caller"
    else
        fail "$c-ffi-haskell-caller" "$with_caller of $ffi FFI samples have a Main.* frame right above calib_busy/calib_sleep"
    fi
    check "$c-safe-sleep-not-idle" "the safe sleep was dropped as idle" \
        has_line "$T/main.folded" '\[safe-ffi\];.*calib_sleep;.*nanosleep'
    hs_record "$suite" /dev/null "$T/err" -q -F 499 --nonblocking -f report \
        -o "$T/calib.report" -- "$prog" 2
    check_status "$c-report-ok" $? "$T/err"
    stops_few "$c-not-stopped" "$T/calib.report"
}

ghc_targets
for suite in $GHC_TARGETS; do
    calibrated "$suite" "ghc-$(ghc_version "$suite")"
done
