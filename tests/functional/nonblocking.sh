# nonblocking - --nonblocking: running threads are sampled by the kernel
# (a perf event on each CPU, at instants of wall time that take a new
# phase every few ticks) and stopped only at their first tick, and the
# profile still holds: a C program's call chains whole, launched or
# attached to (its C stacks copied by the kernel at the sample), and for a
# GHC program, for every GHC version this machine has, the tag shares
# within 3 points of the workload's own measurement (as ghc_calibrated asks
# of stops), FFI samples under their Haskell caller, the safe sleep not
# idle. The calibrated workload repeats 18 ms of work and 4 of sleep, a
# multiple of the 2 ms period of 499 Hz: events that sample each thread's
# own CPU time at fixed points of it were 3 to 5 points off, a different
# way each run. Where hsspy may not watch every CPU it refuses in one line
# and leaves the program alone. Skipped where perf events are not allowed.
# alone: compares tag shares with the workload's own timing within 3 points
. "$(dirname "$0")/../lib.sh"
require_ptrace

if ! perf_events_allowed; then
    skip "all" "perf events are not allowed here (perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid))"
    exit 0
fi
# (perf_events_allowed: the per-thread events of the default mode; every
# CPU needs more.)
if [ "$(id -u)" != 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 0 ]; then
    skip "all" "perf events on every CPU need root or perf_event_paranoid <= 0 (it is $(cat /proc/sys/kernel/perf_event_paranoid))"
    exit 0
fi
# (Root without CAP_PERFMON, as in some containers, is refused too.)
if ! "$HSSPY" record -q --nonblocking -d 0.1 -o /dev/null -- true 2>"$T/probe.err" &&
    grep -Eq -- '--nonblocking (samples every CPU by perf events, which needs|: perf events cannot sample every CPU)' "$T/probe.err"; then
    skip "all" "hsspy --nonblocking is refused here: $(cat "$T/probe.err")"
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
check "c-every-cpu" "$(grep '^ *nonblocking:' "$T/c.report")" \
    grep -q '^ *nonblocking: running threads sampled by the kernel (a perf event on each CPU)' "$T/c.report"
bg "$CH" 6 >"$T/attach.out"
pid=$!
wait_for_line "$T/attach.out" '^worker [0-9]+' || fail "attach-setup" "workload did not start"
"$HSSPY" record -q -F 199 -d 1.5 --nonblocking -p "$pid" -o "$T/a.folded" 2>"$T/a.err"
check_status "c-attach-exit-status" $? "$T/a.err"
total=$(total_count "$T/a.folded")
main=$(count_matching "$T/a.folded" '(^|;)main;outer;middle;leaf [0-9]+$')
worker=$(count_matching "$T/a.folded" '(^|;)start_thread;worker;outer;middle;leaf [0-9]+$')
check "c-attach-chains" "main chain $main, worker chain $worker of $total samples" \
    test "$main" -ge 50 -a "$worker" -ge 50 -a $((10 * (main + worker))) -ge $((9 * total))
"$HSSPY" record -q -F 199 -d 1.5 --nonblocking -p "$pid" -f report -o "$T/a.report" 2>"$T/a.err"
check_status "c-attach-report-exit-status" $? "$T/a.err"
stops_few "c-attach-not-stopped" "$T/a.report"
wait "$pid"
check_status "c-attach-target-exit" $?

# Whether each thread ran, and whether it is on a CPU, told by the same
# events' context-switch records: on a busy thread and 50 that wait on a
# condition variable (attached to once they wait), the waiters are seen not
# to have run at nearly every tick (taken without a stop, their stacks
# kept), through wait_forever, and never on a CPU.
bg "$W/waiters" 6 50 >"$T/w.out"
pid=$!
wait_for_line "$T/w.out" '^ready' || fail "waiters-setup" "workload did not start"
"$HSSPY" record -q -F 199 -d 1.5 --nonblocking --idle -p "$pid" -o "$T/w.folded" 2>"$T/w.err"
check_status "waiters-exit-status" $? "$T/w.err"
"$HSSPY" record -q -F 199 -d 1.5 --nonblocking --idle -p "$pid" -f report -o "$T/w.report" 2>"$T/w.err"
check_status "waiters-report-exit-status" $? "$T/w.err"
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
check "waiters-switches-per-cpu" "$(grep '^ *switches:' "$T/w.report")" \
    grep -Eq '^ *switches: .*told by the context-switch records of the per-CPU perf events for all 51 threads' "$T/w.report"
ticks=$(sed -n 's/.* Hz achieved, \([0-9]*\) ticks.*/\1/p' "$T/w.report")
idle=$(sed -n 's/^ *idle: *\([0-9]*\) samples of threads that had not run.*/\1/p' "$T/w.report")
check "waiters-not-run" "${idle:-?} samples of threads that had not run, of 50 waiters at ${ticks:-?} ticks" \
    test -n "$ticks" -a "${idle:-0}" -ge $((50 * ${ticks:-1} * 9 / 10))
oncpu=$(grep -Ec '^thread [0-9]+ \(waiter\): [0-9]+ samples, on CPU 0\.0%' "$T/w.report")
check "waiters-not-on-cpu" "$oncpu of 50 waiters shown on a CPU 0.0% of their samples: $(grep -m2 '(waiter)' "$T/w.report" | tr '\n' '|')" \
    test "$oncpu" = 50
main=$(count_matching "$T/w.folded" ';main;spin_main [0-9]+$')
waiting=$(count_matching "$T/w.folded" ';start_thread;waiter;wait_forever;pthread_cond_wait(;[^ ]*)? [0-9]+$')
check "waiters-through-wait-forever" "$waiting waiter samples through wait_forever, $main of the busy thread (spin_main): $(sort -t' ' -k2 -rn "$T/w.folded" | head -n3 | cut -c1-200 | tr '\n' '|')" \
    test "$main" -ge 100 -a "$waiting" -ge $((50 * main * 9 / 10)) -a $((waiting + main)) -ge $((99 * $(total_count "$T/w.folded") / 100))

# Threads that nap 2 ms at a time run between any two ticks, and are
# nearly never on a CPU at a sampling instant: each repeats its last
# sample. The fpnap thread's C stack, blocked in its nap, needs the
# registers of a stop (its syscall file's sp and pc do not unwind it): its
# first sample without one failed, and it was then repeated, nothing, at
# every tick (2 or 3 samples in 73 ticks at 49 Hz); it is stopped instead.
"$HSSPY" record -q -F 49 -d 1.5 --nonblocking --idle --threads -o "$T/n.folded" \
    -- "$W/napper" 2 >/dev/null 2>"$T/n.err"
check_status "nappers-exit-status" $? "$T/n.err"
main=$(count_matching "$T/n.folded" '^tid [0-9]+ \(napper\);.*;main;spin_main [0-9]+$')
for th in nap fpnap; do
    n=$(count_matching "$T/n.folded" "^tid [0-9]+ \\($th\\);")
    case $th in
    nap) where=$(count_matching "$T/n.folded" '^tid [0-9]+ \(nap\);.*;napper;nap_outer;nap_inner;clock_nanosleep( |;)') ;;
    fpnap) where=$(count_matching "$T/n.folded" '^tid [0-9]+ \(fpnap\);.*;fp_napper;nap_framed( |;)') ;;
    esac
    check "nappers-$th-every-tick" "$th: $n samples, $where where it naps; the main thread $main: $(grep "($th)" "$T/n.folded" | sort -t' ' -k3 -rn | head -n 3 | cut -c1-160 | tr '\n' '|')" \
        test "$main" -ge 50 -a "$n" -ge $((main * 9 / 10)) -a "$where" -ge $((n * 9 / 10))
done

# The first tick stops every thread, which wakes each waiter from its wait:
# it goes back, in the kernel, once it gets a CPU. With the waiters and the
# busy thread on one CPU and hsspy on another, at 1 kHz, many get it only
# ticks later, and a perf sample of one on its way back (or a repeat of it
# while it waited for the CPU) showed it on a CPU, at the first ticks, in
# about half the runs. What our stop made it do is not its own: its sample
# from the stop stands until it is back. (A sample on its way back has the
# pc two bytes before the stop's, the kernel's restart of the call at its
# `syscall`: it was taken for the thread gone elsewhere, about one run in
# twelve.)
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
    bg taskset -c 0 "$W/waiters" 6 50 >"$T/p.out"
    pid=$!
    wait_for_line "$T/p.out" '^ready' || fail "pinned-setup" "workload did not start"
    taskset -c 1 "$HSSPY" record -q -F 1000 -d 1 --nonblocking --idle -p "$pid" -f report \
        -o "$T/p.report" 2>"$T/p.err"
    check_status "pinned-exit-status" $? "$T/p.err"
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    oncpu=$(grep -Ec '^thread [0-9]+ \(waiter\): [0-9]+ samples, on CPU 0\.0%' "$T/p.report")
    check "pinned-waiters-not-on-cpu" "$oncpu of 50 waiters shown on a CPU 0.0% of their samples: $(grep -E '\(waiter\): .*on CPU 0\.[0-9]*[1-9]' "$T/p.report" | head -n 2 | tr '\n' '|')" \
        test "$oncpu" = 50
else
    skip "pinned-waiters-not-on-cpu" "needs taskset and two CPUs"
fi

# Not allowed to watch every CPU (another user than root, where
# perf_event_paranoid is above 0): one line saying what to do, a non-zero
# exit, and the command never run.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
    [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 0 ]; then
    mkdir -p "$T/bin" "$T/nobody" && chmod 755 "$T" "$T/bin" && chmod 777 "$T/nobody" &&
        cp "$HSSPY" "$T/bin/hsspy"
    setpriv --reuid=65534 --regid=65534 --clear-groups "$T/bin/hsspy" record -q --nonblocking \
        -o /dev/null -- /bin/sh -c "touch $T/nobody/ran" >/dev/null 2>"$T/refused.err"
    rc=$?
    check "refused-one-line" "exit $rc, said: $(cat "$T/refused.err")" \
        test "$rc" != 0 -a "$(wc -l <"$T/refused.err")" = 1
    check "refused-says-what-to-do" "said: $(cat "$T/refused.err")" \
        grep -q -- '--nonblocking .*root, CAP_PERFMON or perf_event_paranoid <= 0.*: run as root, or leave --nonblocking out' "$T/refused.err"
    check "refused-command-not-run" "the command ran" test ! -e "$T/nobody/ran"
else
    skip "refused" "needs root (to run hsspy as another user), setpriv and perf_event_paranoid above 0"
fi

# --nonblocking goes with the records of context switches, not without.
"$HSSPY" record -q --nonblocking --no-perf-events -o /dev/null -- true 2>"$T/both.err"
rc=$?
check "with-no-perf-events-refused" "exit $rc, said: $(cat "$T/both.err")" \
    test "$rc" = 2 -a "$(wc -l <"$T/both.err")" = 1
# Nor with --per-thread-events (its own events record the switches), which
# in turn does not go with --no-perf-events; the command is never run.
for other in --nonblocking --no-perf-events; do
    rm -f "$T/ran"
    "$HSSPY" record -q --per-thread-events "$other" -o /dev/null -- touch "$T/ran" 2>"$T/both.err"
    rc=$?
    check "per-thread-events-with$other-refused" "exit $rc, said: $(cat "$T/both.err")" \
        test "$rc" = 2 -a "$(wc -l <"$T/both.err")" = 1 -a ! -e "$T/ran"
done

calibrated() { # SUITE CASE-PREFIX
    local suite=$1 c=$2 prog
    prog=$(hs_build "$suite" calib calib.hs calib_c.c -- -O2 -threaded -rtsopts) ||
        { fail "$c-build" "ghc could not build calib.hs"; return; }
    hs_record "$suite" "$T/truth" "$T/err" -q -F 499 --threads --nonblocking \
        -o "$T/calib.folded" -- "$prog" 5
    check_status "$c-record-ok" $? "$T/err"
    calib_checks "$c" "$T/truth" "$T/calib.folded"
    hs_record "$suite" /dev/null "$T/err" -q -F 499 --nonblocking -f report \
        -o "$T/calib.report" -- "$prog" 2
    check_status "$c-report-ok" $? "$T/err"
    stops_few "$c-not-stopped" "$T/calib.report"
}

ghc_targets
for suite in $GHC_TARGETS; do
    calibrated "$suite" "ghc-$(ghc_version "$suite")"
done
