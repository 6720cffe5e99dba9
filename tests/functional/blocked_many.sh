# blocked_many - many threads blocked in short calls (a server's threads
# in short reads, a program's safe foreign calls) are sampled without
# stopping them, however long it takes to read them all. nappers runs 50
# threads that each sleep 1 ms at a time: reading them one after another
# takes long enough that many wake up and sleep again between the tick's
# look at them and their turn to be read, and such a copy is not of one
# instant. Each is then looked at again and, asleep in a call again, read
# again (the report counts it), not stopped (a stop cuts its sleep short,
# costs it two more switches and hsspy a wait): before, 2300 to 2900 of
# some 7000 samples in a second and a half were stops. Checked from the
# outside too: the threads' voluntary context switches stay one a nap,
# give or take what they switch alone. A busy thread, stopped at each
# tick, is captured and resumed between two reads of blocked threads, not
# held stopped until they are all read (the report counts it: before, it
# waited for all 50, a millisecond or so). Whether a thread ran while it
# was read is told by the per-CPU events' switch records (which, with so
# many switches, the rings lose until hsspy reads them between ticks as
# they fill: /proc tells then), then by /proc alone.
# alone: counts the nappers' context switches, which another test's load would add to
. "$(dirname "$0")/../lib.sh"
require_ptrace

bg "$W/nappers" 50 60 1 >"$T/out"
pid=$!
wait_for_line "$T/out" '^ready$' || { fail "setup" "nappers did not start"; exit 0; }
tids=$(for d in /proc/"$pid"/task/*; do
    [ "$(cat "$d/comm" 2>/dev/null)" = nap ] && echo "${d##*/}"
done)
check "nap-threads" "nappers $pid has $(echo $tids | wc -w) threads named nap, not 50" \
    test "$(echo $tids | wc -w)" -eq 50
# Voluntary context switches of all nap threads.
voluntary() {
    local t n=0
    for t in $tids; do
        n=$((n + $(awk '/^voluntary_ctxt_switches/ { print $2 }' "/proc/$pid/task/$t/status")))
    done
    echo "$n"
}
# naps N: the nappers' count, asked for with SIGUSR1.
naps() {
    local before
    before=$(grep -c '^naps ' "$T/out")
    kill -USR1 "$pid"
    for _ in $(seq 200); do
        [ "$(grep -c '^naps ' "$T/out")" -gt "$before" ] && break
        sleep 0.01
    done
    grep '^naps ' "$T/out" | tail -n1 | cut -d' ' -f2
}

check_mode() {
    local m=$1 v0 n0 v1 n1 alone dv dn ticks blocked again stopped all n between lost
    shift
    # Their switches beyond one a nap over a second and a half alone, the
    # mean of a measure before the recording and one after (one alone
    # varies by a thousand or more from run to run: 5,700 to 7,800).
    alone=$(switches_alone 1.5)

    v0=$(voluntary)
    n0=$(naps)
    "$HSSPY" record -q --idle -F 100 -d 1.5 "$@" -f raw -o "$T/rec.raw" -p "$pid" 2>"$T/err"
    check_status "$m-record" $? "$T/err"
    n1=$(naps)
    v1=$(voluntary)
    dv=$((v1 - v0)) dn=$((n1 - n0))
    alone=$(((alone + $(switches_alone 1.5)) / 2))
    [ "$alone" -lt 0 ] && alone=0
    "$HSSPY" report -f report -o "$T/report" "$T/rec.raw" 2>"$T/err" &&
        "$HSSPY" report -f folded --threads --idle -o "$T/folded" "$T/rec.raw" 2>>"$T/err"
    check_status "$m-report" $? "$T/err"
    ticks=$(sed -n 's/.* \([0-9][0-9]*\) ticks.*/\1/p' "$T/report" | head -n1)
    blocked=$(sed -n 's/^ *blocked: *\([0-9]*\) samples of threads blocked in a system call.*/\1/p' "$T/report")
    again=$(sed -n 's/.*; \([0-9]*\) times a thread that ran while it was read was read again.*/\1/p' "$T/report")
    stopped=$(sed -n 's/.*; \([0-9]*\) were stopped after all (they ran while being read.*/\1/p' "$T/report")
    check "$m-ticks" "no tick count in the report: $(grep -m1 rate "$T/report")" test "${ticks:-0}" -ge 100
    # Most nap threads' samples are taken without a stop (those on a CPU or
    # waiting for one at the tick are stopped), nearly none stopped after all.
    check "$m-unstopped" "${blocked:-no} samples of blocked threads without a stop, ${stopped:-0} stopped after all, over ${ticks:-no} ticks: $(grep blocked: "$T/report")" \
        test "${blocked:-0}" -ge $((ticks * 50 * 70 / 100)) -a "${stopped:-0}" -le $((${blocked:-0} / 20))
    # So many switches fill the per-CPU events' rings, sized by the tick,
    # before the next tick reads them: once a tick finds records lost, the
    # waits between ticks read a ring as soon as it is half full (before,
    # lost at 149 ticks of 150, /proc telling for every thread then).
    if [ "$m" = records ] && cpu_events_allowed; then
        lost=$(sed -n 's/.*; records lost at \([0-9]*\) ticks.*/\1/p' "$T/report")
        check "$m-records-kept" "records lost at ${lost:-0} of ${ticks:-no} ticks: $(grep switches: "$T/report")" \
            test "${lost:-0}" -le $((ticks / 4))
    fi
    check "$m-read-again" "no thread that ran while it was read was read again: $(grep blocked: "$T/report")" \
        test "${again:-0}" -ge 1
    between=$(sed -n 's/.*; \([0-9]*\) resumed between reads of threads blocked in calls.*/\1/p' "$T/report")
    check "$m-busy-between" "${between:-no} stops resumed between reads of blocked threads over ${ticks:-no} ticks (the busy thread's, one a tick): $(grep -A1 'pause:' "$T/report" | tr -s ' ' | tr '\n' ' ')" \
        test "${between:-0}" -ge $((ticks / 2))
    # One switch a nap, give or take: a stop adds two (before, some 5,500
    # more than alone, against 300 to 1,000 now, of 72,000 naps).
    check "$m-switches" "the nap threads were switched $dv times for $dn naps ($alone more than their naps alone over as long)" \
        test "$dn" -gt 10000 -a "$dv" -le $((dn + alone + dn / 25))
    # And the samples show where they sleep.
    grep '(nap);' "$T/folded" >"$T/nap"
    n=$(count_matching "$T/nap" ';start_thread;napper;nap_outer;nap_inner;clock_nanosleep( |;)')
    all=$(total_count "$T/nap")
    check "$m-stacks" "nap threads: $n of $all samples in napper;nap_outer;nap_inner;clock_nanosleep ($ticks ticks): $(sort -t' ' -k2 -rn "$T/nap" | head -n 3 | tr '\n' '|')" \
        test "$all" -ge $((ticks * 50 * 95 / 100)) -a "$n" -ge $((all * 95 / 100))
    grep '(busy);' "$T/folded" >"$T/busy"
    n=$(count_matching "$T/busy" ';start_thread;busy;busy_work( |;|$)')
    all=$(total_count "$T/busy")
    check "$m-busy-stacks" "busy thread: $n of $all samples in busy;busy_work ($ticks ticks): $(sort -t' ' -k2 -rn "$T/busy" | head -n 3 | tr '\n' '|')" \
        test "$all" -ge $((ticks * 9 / 10)) -a "$n" -ge $((all * 95 / 100))
}
check_mode records
check_mode proc --no-perf-events

kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null || true
