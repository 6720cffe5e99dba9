# blocked - a thread that has run since the last sample but is blocked in a
# system call when the next is taken is sampled without a stop: its pc and
# sp come from /proc/PID/task/TID/syscall, its stack is read while it
# sleeps, and the capture is kept only if its scheduler counters show it
# did not run meanwhile. The napper's "nap" thread sleeps 2 ms at a time
# (one voluntary context switch per nap); a stop would wake it twice more
# (to stop, and to go back to sleep after the resume). Over a second at
# 200 Hz its switches must match its naps (give or take what it switches
# in a second alone), yet its samples must show where
# it sleeps, and the report must count them. The "fpnap" thread sleeps in
# a function whose frame is found from rbp, which /proc does not give: its
# first such sample lacks its caller (counted, and an error), and from then
# on it is stopped there, with whole stacks; where the per-CPU events
# sample the registers of each switch, rbp comes with those of its switch
# to sleep: it is not stopped (at most its first sample, if its syscall
# file named its call, lacks rbp). Where the per-CPU events sample
# the registers of each switch, the call a thread sleeps in is named by
# those registers once its syscall file has shown them. Without --idle a thread of a
# program not GHC's asleep in a call is idle, its stack never shown: then
# nothing of it is read at all (with --idle, every time).
# alone: counts the nappers' context switches, which another test's load would add to
. "$(dirname "$0")/../lib.sh"
require_ptrace

bg "$W/napper" 20 >"$T/out"
pid=$!
wait_for_line "$T/out" '^ready$' || { fail "setup" "napper did not start"; exit 0; }
tid="" fptid=""
for d in /proc/"$pid"/task/*; do
    case $(cat "$d/comm" 2>/dev/null) in
    nap) tid=${d##*/} ;;
    fpnap) fptid=${d##*/} ;;
    esac
done
check "nap-threads" "no threads named nap and fpnap in napper $pid" test -n "$tid" -a -n "$fptid"
voluntary() { awk '/^voluntary_ctxt_switches/ { print $2 }' "/proc/$pid/task/$tid/status"; }
# naps N: the napper's count, asked for with SIGUSR1.
naps() {
    local before
    before=$(grep -c '^naps ' "$T/out")
    kill -USR1 "$pid"
    wait_for_line "$T/out" "^naps" && for _ in $(seq 100); do
        [ "$(grep -c '^naps ' "$T/out")" -gt "$before" ] && break
        sleep 0.02
    done
    grep '^naps ' "$T/out" | tail -n1 | cut -d' ' -f2
}

# record_unstopped NAME OPTION...: record a second at 200 Hz with OPTION
# into $T/rec.raw; the nap thread must not have been stopped: switched
# once a nap, give or take what it switches alone ($alone). A few stops
# are expected: the first sample (its thread pointer is not known before
# one), and captures spoiled by the thread waking up while it was read
# (more on a loaded machine). Stopping it at every tick would add about
# 400.
record_unstopped() {
    local m=$1 v0 n0 v1 n1 dv dn
    shift
    v0=$(voluntary)
    n0=$(naps)
    "$HSSPY" record -q -F 200 -d 1 "$@" -f raw -o "$T/rec.raw" -p "$pid" 2>"$T/err"
    check_status "$m-record" $? "$T/err"
    n1=$(naps)
    v1=$(voluntary)
    dv=$((v1 - v0)) dn=$((n1 - n0))
    check "$m-not-stopped" "the nap thread was switched $dv times for $dn naps in 200 ticks ($alone more than its naps alone)" \
        test "$dn" -gt 100 -a "$dv" -le $((dn + alone + 100))
}

# check_mode NAME [OPTION]: record a second with OPTION, check it all.
# Three times: whether the nap thread ran while it was read told by
# context-switch records (per-CPU events' where hsspy may watch every CPU),
# by its own (--per-thread-events), then with --no-perf-events by /proc
# schedstat.
check_mode() {
    local m=$1 ticks n all blocked short told known
    shift
    # Its switches beyond one a nap over a second alone first: none on most
    # machines, but about 100 on a VM seen here.
    alone=$(switches_alone 1)
    record_unstopped "$m" --idle "$@"

    "$HSSPY" report -f folded --threads --idle -o "$T/folded" "$T/rec.raw" 2>"$T/err"
    check_status "$m-report-folded" $? "$T/err"
    "$HSSPY" report -f report -o "$T/report" "$T/rec.raw" 2>"$T/err"
    ticks=$(sed -n 's/.* \([0-9][0-9]*\) ticks.*/\1/p' "$T/report" | head -n1)
    check "$m-ticks" "no tick count in the report: $(grep -m1 rate "$T/report")" test "${ticks:-0}" -ge 100
    grep "^tid $tid (nap);" "$T/folded" >"$T/nap"
    n=$(count_matching "$T/nap" ';napper;nap_outer;nap_inner;clock_nanosleep( |;)')
    all=$(total_count "$T/nap")
    check "$m-stack" "nap thread: $n of $all samples in napper;nap_outer;nap_inner;clock_nanosleep ($ticks ticks): $(sort -t' ' -k2 -rn "$T/nap" | head -n 3 | tr '\n' '|')" \
        test "$all" -ge $((ticks * 95 / 100)) -a "$n" -ge $((all * 95 / 100))
    blocked=$(sed -n 's/^ *blocked: *\([0-9]*\) samples of threads blocked in a system call.*/\1/p' "$T/report")
    check "$m-counted" "the report counts ${blocked:-no} samples taken without a stop of a blocked thread, over $ticks ticks: $(grep blocked: "$T/report")" \
        test "${blocked:-0}" -ge $((ticks * 70 / 100))
    check "$m-read-with-idle" "with --idle, blocked threads' stacks were not all read: $(grep blocked: "$T/report")" \
        lacks_line "$T/report" 'idle by where they were blocked'
    # With the per-CPU events' samples of switches, the nap thread's call
    # (the same clock_nanosleep from the same frame each nap) is named by
    # the registers it left its CPU with, its syscall file read only the
    # first time; without them, /proc names every call.
    known=$(sed -n 's/.*; \([0-9]*\) times a blocked thread'"'"'s call was named by the registers.*/\1/p' "$T/report")
    if [ $# -eq 0 ] && cpu_events_allowed; then
        check "$m-calls-known" "the calls of ${known:-no} blocked threads were named by their switch's registers over $ticks ticks: $(grep blocked: "$T/report")" \
            test "${known:-0}" -ge $((ticks * 70 / 100))
    else
        check "$m-calls-read" "without per-CPU events, calls were named by registers: $(grep blocked: "$T/report")" \
            test -z "$known"
    fi

    grep "^tid $fptid (fpnap);" "$T/folded" >"$T/fpnap"
    n=$(count_matching "$T/fpnap" ';fp_napper;nap_framed$|;fp_napper;nap_framed ')
    all=$(total_count "$T/fpnap")
    check "$m-framed-stack" "fpnap thread: $n of $all samples in fp_napper;nap_framed: $(sort -t' ' -k2 -rn "$T/fpnap" | head -n 3 | tr '\n' '|')" \
        test "$all" -ge $((ticks * 95 / 100)) -a "$n" -ge $((all - 2))
    short=$(sed -n 's/.*; \([0-9]*\) lacked registers.*/\1/p' "$T/report")
    # The nap thread, given a CPU every 2 ms (2.5 times a tick), costs the
    # program more with a ring than without: its ring is closed. Per-CPU
    # events have no ring to close: they tell for every thread.
    if told_by_records "$m-told" "$T/report" "$@"; then
        if [ "$(records_told "$@")" = 'records (perf events) for all' ]; then
            check "$m-told" "the nap thread kept its ring: $told" \
                grep -q 'records (perf events) for all [0-9]* threads; [1-9][0-9]* of them switched more than once a tick' <<<"$told"
        else
            check "$m-told" "not told by the per-CPU events for every thread, or a ring was closed: $told" \
                grep -Eq 'records of the per-CPU perf events for all [0-9]+ threads$' <<<"$told"
        fi
    fi
    if [ $# -eq 0 ] && cpu_events_allowed; then
        # (at most its first, if /proc named its call: then it has no
        # registers but pc and sp) and both napping threads sampled
        # without a stop, fpnap too
        check "$m-framed-counted" "the report counts ${short:-no} samples that lacked registers (at most 1 expected: they came with its switch's sample) and ${blocked:-no} samples of blocked threads over $ticks ticks (two threads): $(grep -E 'blocked:|errors:' "$T/report" | tr '\n' '|')" \
            test "${short:-0}" -le 1 -a "${blocked:-0}" -ge $((ticks * 17 / 10))
    else
        check "$m-framed-counted" "the report counts ${short:-no} samples that lacked registers (1 expected: fpnap's first): $(grep -E 'blocked:|errors:' "$T/report" | tr '\n' '|')" \
            test "${short:-0}" -ge 1 -a "${short:-0}" -le 2
    fi
}
check_mode records
check_mode thread --per-thread-events
check_mode proc --no-perf-events

# Without --idle: the nap thread, asleep in a call at nearly every tick, is
# idle there, and nothing of it is read (still not stopped, and counted);
# its samples, idle, are left out of the profile.
record_unstopped no-idle
"$HSSPY" report -f report -o "$T/report" "$T/rec.raw" 2>"$T/err" &&
    "$HSSPY" report -f folded --threads -o "$T/folded" "$T/rec.raw" 2>>"$T/err"
check_status "no-idle-report" $? "$T/err"
ticks=$(sed -n 's/.* \([0-9][0-9]*\) ticks.*/\1/p' "$T/report" | head -n1)
unread=$(sed -n 's/.*; \([0-9]*\) of them idle by where they were blocked alone, nothing read.*/\1/p' "$T/report")
check "no-idle-unread" "${unread:-no} samples of blocked threads needed no read over ${ticks:-no} ticks: $(grep blocked: "$T/report")" \
    test "${ticks:-0}" -ge 100 -a "${unread:-0}" -ge $((ticks * 70 / 100))
# The burst thread is busy a fifth of the time, asleep the rest: its
# samples while it sleeps, idle, are left out, not its busy ones repeated.
grep '^tid [0-9]* (burst);' "$T/folded" >"$T/burst"
n=$(count_matching "$T/burst" ';burster;burst_work( |;)')
all=$(total_count "$T/burst")
check "no-idle-burst" "burst thread: $all samples over $ticks ticks, $n in burster;burst_work: $(sort -t' ' -k2 -rn "$T/burst" | head -n 3 | tr '\n' '|')" \
    test "$all" -ge $((ticks / 10)) -a "$all" -le $((ticks * 35 / 100)) -a "$n" -ge $((all * 9 / 10))

kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null || true
