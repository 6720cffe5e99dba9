# ghc_blocked - a Haskell thread that keeps napping in a foreign call is
# nearly always blocked in its sleep when a sample is taken, though it ran
# since the last one. In a safe call it is sampled without a stop (its Sp
# is in its suspended TSO); in an unsafe call its Sp is in a register,
# which the per-CPU events' sample of its switch to sleep holds, where
# hsspy may watch every CPU: sampled without a stop too; without those
# (--no-perf-events) only a stop gives it, so hsspy stops it after all,
# and from then on stops it there without trying to copy it first. A safe
# call that waits in
# epoll_wait, which a stop would break, is never stopped at all, not even
# at hsspy's first tick: its thread pointer, which only a stop's registers
# give, is found from the runtime's Tasks, and with it the Task and the
# suspended TSO. Either way its samples show the Haskell functions above
# the C ones, tagged as the call is, and the report counts which way they
# were taken, and what each sample copied of the program's memory. For
# every GHC version here.
. "$(dirname "$0")/../lib.sh"
require_ptrace

nap() { # SUITE CASE-PREFIX MODE
    local suite=$1 c=$2-$3 mode=$3 prog
    prog=$(hs_build "$suite" nap nap.hs nap_c.c -- -O1 -threaded -rtsopts) ||
        { fail "$c-build" "ghc could not build nap.hs"; return; }
    # (-ki64k: its first stack chunk is 64 KB, of which it uses a little.
    # In epoll mode no thread runs after its first capture, which copies
    # up to 32 KB of C stack: 13 to 16.3 KB a thread sampled, so there the
    # chunk is 256 KB, whose copy would add some 18 KB a thread, and the
    # bound 24 KB.)
    local ki=64k bound=16
    [ "$mode" = epoll ] && ki=256k bound=24
    hs_start "$suite" "$T/out" /dev/null "$prog" 20 "$mode" +RTS -N2 "-ki$ki" -RTS &&
        wait_for_line "$T/out" '^ready' || { fail "$c-setup" "nap did not start"; return; }
    # Two recordings, each named while the program runs (a chroot's files
    # are not on this machine's paths for a later `hsspy report`).
    "$HSSPY" record -q -F 200 -d 1 --idle --threads -f folded -o "$T/folded" -p "$HS_PID" 2>"$T/err"
    check_status "$c-record" $? "$T/err"
    "$HSSPY" record -q -F 200 -d 1 -f report -o "$T/report" -p "$HS_PID" 2>"$T/err"
    check_status "$c-record-report" $? "$T/err"
    if [ "$mode" = unsafe ]; then
        "$HSSPY" record -q -F 200 -d 1 --no-perf-events -f report -o "$T/report.proc" \
            -p "$HS_PID" 2>"$T/err"
        check_status "$c-record-proc" $? "$T/err"
    fi
    kill "$HS_PID" 2>/dev/null
    wait "$HS_PID" 2>/dev/null
    local ticks tag n all
    ticks=$(sed -n 's/.* \([0-9][0-9]*\) ticks.*/\1/p' "$T/report" | head -n1)
    grep "^tid $HS_PID " "$T/folded" >"$T/main"
    tag=safe-ffi c_frames='nap_c;nap_sleep;'
    [ "$mode" = unsafe ] && tag=unsafe-ffi
    [ "$mode" = epoll ] && c_frames='nap_epoll;nap_wait;[^;]*epoll_wait'
    n=$(count_matching "$T/main" "^tid [0-9]+ \([^)]*\);\[$tag\];.*;Main\.([\$]w)?middle[0-9]*;Main\.([\$]w)?inner[0-9]*;$c_frames")
    all=$(total_count "$T/main")
    check "$c-stack" "$n of the napping thread's $all samples ($ticks ticks) are [$tag] in Main.middle;Main.inner;$c_frames: $(sort -t' ' -k2 -rn "$T/main" | head -n 3 | cut -c1-300 | tr '\n' '|')" \
        test "${ticks:-0}" -ge 100 -a "$all" -ge $((ticks * 9 / 10)) -a "$n" -ge $((all * 9 / 10))
    local line soft refused
    line=$(grep '^ *blocked:' "$T/report")
    soft=$(echo "$line" | sed -n 's/^ *blocked: *\([0-9]*\) samples.*/\1/p')
    refused=$(echo "$line" | sed -n 's/.*; \([0-9]*\) were stopped after all.*/\1/p')
    if [ "$mode" = safe ]; then
        check "$c-not-stopped" "${soft:-no} samples taken without a stop over $ticks ticks: $line" \
            test "${soft:-0}" -ge $((ticks * 7 / 10))
    elif [ "$mode" = epoll ]; then
        : # (it does not run between two ticks: its samples repeat the first)
    else
        # With the registers of its switch to sleep, its Sp among them:
        # not stopped (after its first tick's stop, for its thread
        # pointer), as in a safe call. (Stopped at every tick, it would be
        # some 200 "stopped after all"; the count is of every thread, one
        # that woke while it was read included: 0 to 2 on a quiet machine,
        # 3 seen once under a full test run. A twentieth of the ticks.)
        if cpu_events_allowed; then
            check "$c-not-stopped" "${soft:-no} samples taken without a stop over $ticks ticks, ${refused:-none} stopped after all: $line" \
                test "${soft:-0}" -ge $((ticks * 7 / 10)) -a "${refused:-0}" -le $((ticks / 20))
        fi
        # Without them: the first try of each pc it blocks at is refused;
        # later ones are not tried (soft samples are only the other
        # threads').
        local pticks
        pticks=$(sed -n 's/.* \([0-9][0-9]*\) ticks.*/\1/p' "$T/report.proc" | head -n1)
        line=$(grep '^ *blocked:' "$T/report.proc")
        soft=$(echo "$line" | sed -n 's/^ *blocked: *\([0-9]*\) samples.*/\1/p')
        refused=$(echo "$line" | sed -n 's/.*; \([0-9]*\) were stopped after all.*/\1/p')
        check "$c-stopped" "over $pticks ticks ${soft:-no} samples without a stop, ${refused:-none} stopped after all (--no-perf-events): $line" \
            test "${pticks:-0}" -ge 100 -a "${refused:-0}" -ge 1 -a "${refused:-0}" -le 10
        check "$c-proc-no-errors" "$(grep '^ *errors:' "$T/report.proc")" has_line "$T/report.proc" '^ *errors: *0'
    fi
    check "$c-no-errors" "$(grep '^ *errors:' "$T/report")" has_line "$T/report" '^ *errors: *0'
    # Its STG stack is copied from Sp (saved in its TSO in a safe call, in
    # rbp in an unsafe one) to the end of its chunk: a few hundred bytes
    # here, with its C stack and the runtime's words a few KB; not the
    # whole chunk.
    local kb
    kb=$(sed -n 's/^ *copied: *\([0-9.]*\) KB .*per thread.*/\1/p' "$T/report")
    check "$c-copied" "${kb:-no} KB copied per thread sampled (at most $bound): $(grep '^ *copied:' "$T/report")" \
        test "$(echo "${kb:-999}" | cut -d. -f1)" -lt "$bound"
}

ghc_targets
for suite in $GHC_TARGETS; do
    v=$(ghc_version "$suite")
    nap "$suite" "ghc-$v" safe
    nap "$suite" "ghc-$v" unsafe
    nap "$suite" "ghc-$v" epoll
done
