# unchanged - a thread that has not run since its last sample (its
# /proc/.../schedstat counters unchanged) is not stopped at all: its previous
# stack is used again. Three threads wait on a condition variable that is
# never signalled while the main thread spins; over a second at 200 Hz
# their context switches must stay where they were (each stop and resume
# would wake them: about 200 each), yet every tick still has a sample of
# each with its stack in wait_forever, and the report counts them.
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
for t in $tids; do before[$t]=$(switches "$t"); done
check "three-waiters" "waiter threads found: '$tids'" test "$(echo $tids | wc -w)" = 3

"$HSSPY" record -q -F 200 -d 1 --idle -f raw -o "$T/rec.raw" -p "$pid" 2>"$T/err"
check_status "record" $? "$T/err"

for t in $tids; do
    d=$(($(switches "$t") - ${before[$t]}))
    # A few for the first sample, which has to stop it once to know its stack.
    check "not-stopped-$t" "waiter $t was switched $d times during 200 ticks" test "$d" -le 10
done

"$HSSPY" report -f folded --threads --idle -o "$T/folded" "$T/rec.raw" 2>"$T/err"
check_status "report-folded" $? "$T/err"
ticks=$("$HSSPY" report -f report -o - "$T/rec.raw" | tee "$T/report" |
    sed -n 's/.* \([0-9][0-9]*\) ticks.*/\1/p' | head -n1)
check "ticks" "no tick count in the report: $(grep -m1 rate "$T/report")" test "${ticks:-0}" -ge 100
for t in $tids; do
    n=$(grep "^tid $t (waiter);" "$T/folded" | grep ';wait_forever;' | awk '{ n += $NF } END { print n + 0 }')
    all=$(grep "^tid $t (waiter);" "$T/folded" | awk '{ n += $NF } END { print n + 0 }')
    check "stack-kept-$t" "waiter $t: $n samples in wait_forever, $all in all, $ticks ticks" \
        test "$n" -ge $((ticks * 95 / 100)) -a "$n" = "$all"
done
repeated=$(sed -n 's/^ *idle: *\([0-9]*\) samples of threads that had not run.*/\1/p' "$T/report")
check "counted" "the report counts ${repeated:-no} repeated samples, for 3 waiters over $ticks ticks" \
    test "${repeated:-0}" -ge $((3 * ticks * 95 / 100))

kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null || true
