# ghc_calibrated - the tag shares match a workload's own measurement of how
# it spent its time (unsafe busy C, Haskell compute, safe busy C, safe
# sleep), within 3 points; FFI samples show their Haskell caller below the C
# frames; the RTS's own threads get their roles and count as idle.
. "$(dirname "$0")/../lib.sh"
require_ptrace

prog=$(build_hs calib calib.hs calib_c.c -- -O2 -threaded -rtsopts) ||
    { fail "build" "ghc could not build calib.hs"; exit 0; }

"$HSSPY" record -q -F 499 --threads -o "$T/calib.folded" -- "$prog" 5 >"$T/truth" 2>"$T/err"
check_status "record-ok" $? "$T/err"
read -r _ _ t_unsafe _ t_haskell _ t_safe < "$T/truth"
main_tid=$(sed -n 's/^tid \([0-9]*\) (calib);.*/\1/p' "$T/calib.folded" | sort | uniq -c | sort -rn | awk 'NR == 1 { print $2 }')
main() { grep "^tid $main_tid " "$T/calib.folded"; }
main >"$T/main.folded"
total=$(total_count "$T/main.folded")
share() { echo "scale=4; $(count_matching "$T/main.folded" "^tid $main_tid \\(calib\\);\\[$1\\];") / $total" | bc; }
s_haskell=$(share haskell); s_unsafe=$(share unsafe-ffi); s_safe=$(share safe-ffi)

within() { # NAME MEASURED TRUTH
    local d
    d=$(echo "($2 - $3) * 100" | bc -l | tr -d -)
    if [ "$(echo "$d <= 3" | bc -l)" = 1 ]; then
        pass "$1"
    else
        fail "$1" "hsspy says $2, the program measured $3 (off by $d points)"
    fi
}
if [ "${total:-0}" -lt 1000 ]; then
    fail "enough-samples" "only $total samples of the main thread"
else
    pass "enough-samples"
fi
within "haskell-share" "$s_haskell" "$t_haskell"
within "unsafe-ffi-share" "$s_unsafe" "$t_unsafe"
within "safe-ffi-share" "$s_safe" "$t_safe"

# FFI samples: the frame right above the first C frame is the Haskell code
# that made the call.
ffi=$(count_matching "$T/main.folded" ';\[(unsafe|safe)-ffi\];')
with_caller=$(count_matching "$T/main.folded" ';\[(unsafe|safe)-ffi\];.*;Main\.[^;]*;calib_(busy|sleep)(;| )')
if [ "$ffi" -gt 0 ] && [ $((100 * with_caller)) -ge $((90 * ffi)) ]; then
    pass "ffi-haskell-caller"
else
    fail "ffi-haskell-caller" "$with_caller of $ffi FFI samples have a Main.* frame right above calib_busy/calib_sleep"
fi
check "safe-sleep-not-idle" "the safe sleep was dropped as idle" \
    has_line "$T/main.folded" '\[safe-ffi\];.*calib_sleep;.*nanosleep'

# The report names the RTS's threads and leaves their waits out as idle.
"$HSSPY" record -q -F 199 -f report -o "$T/report" -- "$prog" 2 >/dev/null 2>"$T/err"
check "role-main" "no bound main thread holding a capability in the report" \
    grep -q '(calib), bound main thread (capability 0):' "$T/report"
check "role-ticker" "no ticker thread" grep -Eq '\(ghc_ticker\), ticker: .*' "$T/report"
check "role-io-manager" "no IO manager thread" grep -q ', IO manager: ' "$T/report"
check "role-timer-manager" "no timer manager thread" grep -q ', timer manager: ' "$T/report"
# What the spec says, exactly: waiting for events in epoll/poll is idle
# (an IO manager that wakes up to handle one does work, and is not).
"$HSSPY" record -q -F 199 --idle -o "$T/idle.folded" -- "$prog" 2 >/dev/null 2>"$T/err"
waits=$(count_matching "$T/idle.folded" ';(epoll_wait|__poll) [0-9]+$')
idle_waits=$(count_matching "$T/idle.folded" '^\[idle\];.*;(epoll_wait|__poll) [0-9]+$')
check "managers-idle" "$idle_waits of $waits samples waiting in epoll_wait/poll are [idle]" \
    test "$waits" -gt 100 -a "$idle_waits" -eq "$waits"
check "capability-section" "no capability 0 section in the report" \
    grep -Eq '^  capability 0: held [0-9.]+%' "$T/report"
