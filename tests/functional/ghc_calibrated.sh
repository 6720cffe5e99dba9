# ghc_calibrated - the tag shares match a workload's own measurement of how
# it spent its time (unsafe busy C, Haskell compute, safe busy C, safe
# sleep), within 3 points; FFI samples show their Haskell caller below the C
# frames; the RTS's own threads get their roles and count as idle. For
# every GHC version this machine has (ghc_targets in lib.sh).
# alone: compares tag shares with the workload's own timing within 3 points
. "$(dirname "$0")/../lib.sh"
require_ptrace

calibrated() { # SUITE CASE-PREFIX
    local suite=$1 c=$2 prog
    prog=$(hs_build "$suite" calib calib.hs calib_c.c -- -O2 -threaded -rtsopts) ||
        { fail "$c-build" "ghc could not build calib.hs"; return; }

    hs_record "$suite" "$T/truth" "$T/err" -q -F 499 --threads -o "$T/calib.folded" -- "$prog" 5
    check_status "$c-record-ok" $? "$T/err"
    calib_checks "$c" "$T/truth" "$T/calib.folded"

    # With waits between the bursts of work (threadDelay: the main OS
    # thread has nothing to do), under --idle: its waits are idle, and
    # are mostly found idle by where it waits, while its work is read in
    # full, so the shares of both still match the workload's.
    hs_record "$suite" "$T/truth" "$T/err" -q -F 499 --idle --threads -o "$T/idle.folded" -- \
        "$prog" 5 idle
    check_status "$c-waits-record-ok" $? "$T/err"
    local t_haskell t_idle main total
    read -r _ _ _ _ t_haskell _ _ <"$T/truth"
    t_idle=$(sed -n 's/^idle \([0-9.]*\)$/\1/p' "$T/truth")
    main=$(grep -E '^tid [0-9]+ \(calib\);' "$T/idle.folded")
    total=$(awk '{ n += $NF } END { print n + 0 }' <<<"$main")
    wshare() { echo "scale=4; $(grep -E "^tid [0-9]+ \\(calib\\);\\[$1\\];" <<<"$main" | awk '{ n += $NF } END { print n + 0 }') / $total" | bc; }
    if [ -z "$t_idle" ] || [ "${total:-0}" -lt 1000 ]; then
        fail "$c-waits" "calib idle printed '$(tr '\n' '|' <"$T/truth")', ${total:-no} samples of its main thread"
    else
        within "$c-waits-idle-share" "$(wshare idle)" "$t_idle"
        within "$c-waits-haskell-share" "$(wshare haskell)" "$t_haskell"
    fi

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
    # The runtime's threads that wake and wait again between ticks (the
    # ticker every 10 ms, workers) are found idle by where they wait, once
    # a sample read in full found them idle there: nothing read then.
    local ticks unread
    ticks=$(sed -n 's/.* \([0-9][0-9]*\) ticks.*/\1/p' "$T/report" | head -n1)
    unread=$(sed -n 's/.*; \([0-9]*\) of them idle by where they were blocked alone, nothing read.*/\1/p' "$T/report")
    check "$c-idle-unread" "${unread:-no} samples of idle threads needed no read over ${ticks:-no} ticks: $(grep blocked: "$T/report")" \
        test "${ticks:-0}" -ge 200 -a "${unread:-0}" -ge $((${ticks:-0} / 5))
    # What the spec says, exactly: the IO and timer managers waiting for
    # events in epoll/poll (called from GHC.Event's backends) are idle. One
    # that wakes up to handle one does work, and is not: its first polls
    # then do not wait (unsafe calls, holding its capability). The
    # program's own polls (fdReady's, before a write) are its work too.
    # Newer glibc adds its cancellation helpers (__syscall_cancel...) below.
    hs_record "$suite" /dev/null "$T/err" -q -F 199 --idle -o "$T/idle.folded" -- "$prog" 2
    local waits idle_waits polls at='GHC\.(Internal\.)?Event\.(EPoll|Poll)\.[^;]+;(epoll_wait|__poll)(;__[A-Za-z_]+)* [0-9]+$'
    waits=$(count_matching "$T/idle.folded" ";$at")
    idle_waits=$(count_matching "$T/idle.folded" "^\\[idle\\];(.*;)?$at")
    polls=$(count_matching "$T/idle.folded" "^\\[unsafe-ffi\\];(.*;)?$at")
    check "$c-managers-idle" "$idle_waits of $waits samples of the managers in epoll_wait/poll are [idle], $polls polling: $(grep -E ";$at" "$T/idle.folded" | grep -Ev '^\[(idle|unsafe-ffi)\]' | head -n 3 | tr '\n' '|')" \
        test "$waits" -gt 100 -a $((idle_waits + polls)) -eq "$waits" -a $((polls * 20)) -le "$waits"
    # The ticker's samples, most of them of its wait found again: all of it.
    local ticker idle_ticker
    ticker=$(count_matching "$T/idle.folded" ';itimer_thread_func;')
    idle_ticker=$(count_matching "$T/idle.folded" '^\[idle\];(__GI___clone3|clone);start_thread;itimer_thread_func(;[A-Za-z_]+)+ [0-9]+$')
    check "$c-ticker-idle" "$idle_ticker of $ticker samples of the ticker are [idle] in its wait: $(grep itimer_thread_func "$T/idle.folded" | head -n 3 | tr '\n' '|')" \
        test "$ticker" -gt 100 -a "$idle_ticker" -eq "$ticker"
    check "$c-capability-section" "no capability 0 section in the report" \
        grep -Eq '^  capability 0: held [0-9.]+%' "$T/report"
}

ghc_targets
for suite in $GHC_TARGETS; do
    calibrated "$suite" "ghc-$(ghc_version "$suite")"
done
