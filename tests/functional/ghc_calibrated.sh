# ghc_calibrated - the tag shares match a workload's own measurement of how
# it spent its time (unsafe busy C, Haskell compute, safe busy C, safe
# sleep), within 3 points; FFI samples show their Haskell caller below the C
# frames; the RTS's own threads get their roles and count as idle. For
# every GHC version this machine has (ghc_targets in lib.sh).
. "$(dirname "$0")/../lib.sh"
require_ptrace

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

    hs_record "$suite" "$T/truth" "$T/err" -q -F 499 --threads -o "$T/calib.folded" -- "$prog" 5
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

    # FFI samples: the frame right above the first C frame is the Haskell
    # code that made the call.
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

    # The report names the RTS's threads and leaves their waits out as idle.
    # Recorded once they wait: a thread sampled in the instant the RTS
    # creates it has no Task yet, and is not waiting for anything.
    if hs_start "$suite" /dev/null /dev/null "$prog" 3 && sleep 0.5; then
        "$HSSPY" record -q -F 199 -d 2 -f report -o "$T/report" -p "$HS_PID" 2>"$T/err"
    fi
    kill "$HS_PID" 2>/dev/null
    check "$c-role-main" "no bound main thread holding a capability in the report" \
        grep -q '(calib), bound main thread (capability 0):' "$T/report"
    check "$c-role-ticker" "no ticker thread" grep -Eq '\(ghc_ticker\), ticker: .*' "$T/report"
    check "$c-role-io-manager" "no IO manager thread" grep -q ', IO manager: ' "$T/report"
    check "$c-role-timer-manager" "no timer manager thread" grep -q ', timer manager: ' "$T/report"
    # What the spec says, exactly: waiting for events in epoll/poll is idle
    # (an IO manager that wakes up to handle one does work, and is not).
    # Newer glibc adds its cancellation helpers (__syscall_cancel...) below.
    hs_record "$suite" /dev/null "$T/err" -q -F 199 --idle -o "$T/idle.folded" -- "$prog" 2
    local waits idle_waits
    waits=$(count_matching "$T/idle.folded" ';(epoll_wait|__poll)(;__[A-Za-z_]+)* [0-9]+$')
    idle_waits=$(count_matching "$T/idle.folded" '^\[idle\];.*;(epoll_wait|__poll)(;__[A-Za-z_]+)* [0-9]+$')
    check "$c-managers-idle" "$idle_waits of $waits samples waiting in epoll_wait/poll are [idle]" \
        test "$waits" -gt 100 -a "$idle_waits" -eq "$waits"
    check "$c-capability-section" "no capability 0 section in the report" \
        grep -Eq '^  capability 0: held [0-9.]+%' "$T/report"
}

ghc_targets
for suite in $GHC_TARGETS; do
    calibrated "$suite" "ghc-$(ghc_version "$suite")"
done
