# unchanged - a thread that has not run since its last sample (its
# /proc/.../schedstat counters unchanged) is not stopped at all: its previous
# stack is used again. Three threads wait on a condition variable that is
# never signalled while the main thread spins; over a second at 200 Hz
# their context switches must stay where they were (each stop and resume
# would wake them: about 200 each), yet every tick still has a sample of
# each with its stack in wait_forever, and the report counts them. Three
# times: told by context-switch records (perf events: one per CPU where
# hsspy may watch every CPU, else one per thread), which the report names,
# with --per-thread-events by each thread's own, and with --no-perf-events
# by /proc schedstat alone.
# alone: counts the waiting threads' context switches
. "$(dirname "$0")/../lib.sh"
require_ptrace

bg "$W/waiters" 20 >"$T/out"
pid=$!
wait_for_line "$T/out" '^ready$' || { fail "setup" "waiters did not start"; exit 0; }

# The waiters' tids, and their context switches (voluntary + not) so far.
tids=""
for d in /proc/"$pid"/task/*; do
    [ "$(cat "$d/comm" 2>/dev/null)" = waiter ] && tids="$tids ${d##*/}"
done
switches() { awk '/ctxt_switches/ { n += $2 } END { print n + 0 }' "/proc/$pid/task/$1/status"; }
declare -A before
check "three-waiters" "waiter threads found: '$tids'" test "$(echo $tids | wc -w)" = 3

# check_mode NAME [OPTION]: record a second with OPTION, check it all.
check_mode() {
    local m=$1 t n all ticks repeated d told busy ok
    shift
    for t in $tids; do before[$t]=$(switches "$t"); done
    "$HSSPY" record -q -F 200 -d 1 --idle "$@" -f raw -o "$T/rec.raw" -p "$pid" 2>"$T/err"
    check_status "$m-record" $? "$T/err"

    for t in $tids; do
        d=$(($(switches "$t") - ${before[$t]}))
        # A few for the first sample, which has to stop it once to know its stack.
        check "$m-not-stopped-$t" "waiter $t was switched $d times during 200 ticks" test "$d" -le 10
    done

    "$HSSPY" report -f folded --threads --idle -o "$T/folded" "$T/rec.raw" 2>"$T/err"
    check_status "$m-report-folded" $? "$T/err"
    ticks=$("$HSSPY" report -f report -o - "$T/rec.raw" | tee "$T/report" |
        sed -n 's/.* \([0-9][0-9]*\) ticks.*/\1/p' | head -n1)
    check "$m-ticks" "no tick count in the report: $(grep -m1 rate "$T/report")" test "${ticks:-0}" -ge 100
    for t in $tids; do
        n=$(grep "^tid $t (waiter);" "$T/folded" | grep ';wait_forever;' | awk '{ n += $NF } END { print n + 0 }')
        all=$(grep "^tid $t (waiter);" "$T/folded" | awk '{ n += $NF } END { print n + 0 }')
        check "$m-stack-kept-$t" "waiter $t: $n samples in wait_forever, $all in all, $ticks ticks" \
            test "$n" -ge $((ticks * 95 / 100)) -a "$n" = "$all"
    done
    repeated=$(sed -n 's/^ *idle: *\([0-9]*\) samples of threads that had not run.*/\1/p' "$T/report")
    check "$m-counted" "the report counts ${repeated:-no} repeated samples, for 3 waiters over $ticks ticks" \
        test "${repeated:-0}" -ge $((3 * ticks * 95 / 100))
    # Which of the two told whether the threads ran.
    if told_by_records "$m-told" "$T/report" "$@"; then
        # (The spinning main thread, stopped every tick, may switch often
        # enough to lose its ring for a while; the waiters never do.)
        busy=$(sed -n 's/.*; \([0-9]*\) of them switched more than once a tick.*/\1/p' <<<"$told")
        ok=0
        grep -q "$(records_told "$@") 4 threads" <<<"$told" && [ "${busy:-0}" -le 1 ] && ok=1
        check "$m-told" "the report does not say the waiters' context-switch records told: $told" \
            test "$ok" = 1
    fi
}
check_mode records
check_mode thread --per-thread-events
check_mode proc --no-perf-events

kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null || true

# Where rings run out, /proc tells for the rest of the threads. An
# unprivileged user's rings may lock perf_event_mlock_kb of memory per CPU
# (516 KB by default) plus its RLIMIT_MEMLOCK, and each takes 8 KB: hsspy
# run as nobody with no RLIMIT_MEMLOCK, on a program of 40 waiters more
# than that allows, gives some threads rings and tells the others by
# /proc, and takes every waiter's samples without a stop either way.
mlock_kb=$(cat /proc/sys/kernel/perf_event_mlock_kb 2>/dev/null || echo 516)
many=$((mlock_kb * $(nproc) / 8 + 40))
if [ "$many" -gt 1000 ]; then
    skip "mixed" "$(nproc) CPUs allow $((many - 40)) rings to a user: too many waiter threads to run out of them"
elif [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null || ! command -v prlimit >/dev/null; then
    skip "mixed" "needs root (and setpriv, prlimit) to run hsspy and a program as another user"
elif ! perf_events_allowed || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 2 ]; then
    skip "mixed" "perf events are not allowed to other users than root here (perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid))"
elif [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 0 ]; then
    skip "mixed" "other users may watch every CPU here (perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid)): hsspy takes switches from per-CPU events, no ring per thread to run out of"
else
    mkdir -p "$T/nobody" && chmod 711 "$T" && chmod 777 "$T/nobody"
    prlimit --memlock=0:0 setpriv --reuid=65534 --regid=65534 --clear-groups \
        "$HSSPY" record -q -F 200 -d 1.5 --idle -f report -o "$T/nobody/report" \
        -- "$W/waiters" 2 "$many" >"$T/nobody/out" 2>"$T/err"
    check_status "mixed-record" $? "$T/err"
    told=$(grep '^ *switches:' "$T/nobody/report")
    by_rec=$(sed -n 's/.*records (perf events) for \([0-9]*\) threads; by \/proc for [0-9]* .*/\1/p' <<<"$told")
    by_proc=$(sed -n 's/.*records (perf events) for [0-9]* threads; by \/proc for \([0-9]*\) .*/\1/p' <<<"$told")
    check "mixed-told" "hsspy as nobody, $((many + 1)) threads: expected some told by records, the rest by /proc; the report says: $told" \
        test "${by_rec:-0}" -ge 1 -a "${by_proc:-0}" -ge 1 -a "$((${by_rec:-0} + ${by_proc:-0}))" -ge $((many + 1))
    ticks=$(sed -n 's/.* \([0-9][0-9]*\) ticks.*/\1/p' "$T/nobody/report" | head -n1)
    repeated=$(sed -n 's/^ *idle: *\([0-9]*\) samples of threads that had not run.*/\1/p' "$T/nobody/report")
    check "mixed-counted" "the report counts ${repeated:-no} repeated samples, for $many waiters over ${ticks:-no} ticks" \
        test "${ticks:-0}" -ge 100 -a "${repeated:-0}" -ge $((many * (ticks - 5) * 95 / 100))
fi
