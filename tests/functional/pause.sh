# pause - a stopped thread's pause is timed from when it left its CPU for
# the stop, as the per-CPU events' switch records (peeked while it is
# stopped) tell, not from when hsspy saw the stop: that moment depends on
# whether hsspy polled for it (a little before the switch is over) or slept
# until its SIGCHLD (long after). Two threads spin (work 2) on a machine
# hsspy shares with them, at 1 kHz: nearly every stop must be timed from
# its switch, with the time to stop ending there; without per-CPU events
# (--no-perf-events) none is, and the report says nothing of it. The
# registers of those stops come from the sample of that switch.
# alone: times stops, which another test's load would lengthen
. "$(dirname "$0")/../lib.sh"
require_ptrace

# timed REPORT: "all", "SWITCHED STOPS" or "none": the stops timed from
# their switch, as the report's pause lines say.
timed() {
    local switched
    if grep -q "each stop timed from the thread's switch off its CPU" "$1"; then
        echo all
        return
    fi
    switched=$(sed -n "s/.*; \([0-9]*\) of the \([0-9]*\) stops timed from the thread's switch off its CPU.*/\1 \2/p" "$1")
    echo "${switched:-none}"
}

# record CASE OPTIONS...: 1 s of work's spinners, attached (a program
# launched by hsspy runs on when -d ends: work would spin on into the
# tests after this one).
record() {
    local c=$1 pid
    shift
    bg "$W/work" 2 3000 >/dev/null
    pid=$!
    check "$c-started" "work did not start its two spinners in 5 s" wait_for_threads "$pid" 3
    "$HSSPY" record -q -F 1000 -d 1 "$@" -f report -o "$T/$c.report" -p "$pid" 2>"$T/err"
    check_status "$c-record" $? "$T/err"
    kill "$pid" 2>/dev/null
}
record default
record proc --no-perf-events
pause_lines() { grep -A1 '^ *pause:' "$1" | tr -s ' ' | tr '\n' ' '; }
check "default-paused" "no pause figures: $(pause_lines "$T/default.report")" \
    grep -q 'pause: *per stopped thread: mean [0-9.]* us, median [0-9.]* us' "$T/default.report"
if cpu_events_allowed; then
    t=$(timed "$T/default.report")
    ok=no
    case $t in
    all) ok=yes ;;
    none) ;;
    *) [ "${t% *}" -ge $((${t#* } * 9 / 10)) ] && ok=yes ;;
    esac
    check "default-from-switch" "stops timed from their switch: $t; $(pause_lines "$T/default.report")" \
        test $ok = yes
else
    skip "default-from-switch" "perf events on every CPU are not allowed here: stops are timed from when hsspy sees them"
fi
# The pause line counts the stops: with --no-perf-events the running
# spinner is stopped at every tick and the other one, waiting for the CPU
# hsspy takes, at most ticks too; with per-CPU events, as many stops as
# the line counts timed from their switch or not.
stops() { sed -n 's/^ *pause:.* (\([0-9]*\) stops)$/\1/p' "$1"; }
ticks=$(sed -n 's/.* \([0-9][0-9]*\) ticks.*/\1/p' "$T/proc.report" | head -n 1)
n=$(stops "$T/proc.report")
check "proc-stops-counted" "${n:-no} stops counted over ${ticks:-no} ticks: $(pause_lines "$T/proc.report")" \
    test "${n:-0}" -ge $((${ticks:-1} / 2)) -a "${n:-0}" -le $((${ticks:-0} * 3))
t=$(timed "$T/default.report")
case $t in
all | none) n=$(stops "$T/default.report"); [ -n "$n" ] && [ "$n" -gt 0 ] && ok=yes || ok=no ;;
*) [ "$(stops "$T/default.report")" = "${t#* }" ] && ok=yes || ok=no ;;
esac
check "default-stops-counted" "the stops counted and those timed disagree ($t): $(pause_lines "$T/default.report")" \
    test $ok = yes
check "proc-not-from-switch" "--no-perf-events, yet: $(pause_lines "$T/proc.report")" \
    test "$(timed "$T/proc.report")" = none
# The registers of a stop come from the sample of that switch, not from
# PTRACE_GETREGS (which waits for the switch to end), but at a thread's
# first stop (its thread pointer is not known yet) or if the sample is
# late; without per-CPU events, from PTRACE_GETREGS always.
regs_ring() { sed -n 's/.*; registers of \([0-9]*\) from the sample of that switch, not PTRACE_GETREGS.*/\1/p' "$1"; }
if cpu_events_allowed; then
    n=$(stops "$T/default.report")
    r=$(regs_ring "$T/default.report")
    check "default-regs-from-switch" "registers of ${r:-no} of ${n:-no} stops from their switch's sample: $(pause_lines "$T/default.report")" \
        test "${r:-0}" -ge $((${n:-1} * 3 / 4)) -a "${r:-0}" -le "${n:-0}"
else
    skip "default-regs-from-switch" "perf events on every CPU are not allowed here: PTRACE_GETREGS reads every stop's registers"
fi
check "proc-regs-read" "--no-perf-events, yet: $(pause_lines "$T/proc.report")" \
    test -z "$(regs_ring "$T/proc.report")"
# While that sample is awaited, the thread's C stack is read where it was
# at its last stop (the workload's thread spins in one place), and kept.
prefetched() { sed -n 's/.*; the C stack of \([0-9]*\) read while waiting for that sample, near the thread.s last stack pointers (\([0-9]*\) more read there.*/\1 \2/p' "$1"; }
if cpu_events_allowed; then
    read -r kept again <<EOF2
$(prefetched "$T/default.report")
EOF2
    check "default-stack-prefetched" "C stack of ${kept:-no} of ${r:-no} stops read while waiting, ${again:-no} read again: $(pause_lines "$T/default.report")" \
        test "${kept:-0}" -ge $((${r:-1} / 4)) -a "${kept:-0}" -ge 1 -a "${again:-1}" -le $((${kept:-0} / 4))
else
    skip "default-stack-prefetched" "perf events on every CPU are not allowed here: no sample of a switch to wait for"
fi
check "proc-not-prefetched" "--no-perf-events, yet: $(pause_lines "$T/proc.report")" \
    test -z "$(prefetched "$T/proc.report")"
check "proc-paused" "no pause figures: $(pause_lines "$T/proc.report")" \
    grep -q 'pause: *per stopped thread: mean [0-9.]* us' "$T/proc.report"
