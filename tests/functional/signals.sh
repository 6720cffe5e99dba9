# signals - signals sent to the target while it is recorded are delivered,
# each exactly once, and a job-control stop/continue of the target neither
# hangs hsspy nor leaves the target stopped. A fault ends the target as it
# would have without hsspy, which says how it ended and passes a launched
# command's failure on in its exit status (as perf record does). A stop
# that lands at a handler's entry is sampled where the signal came.
. "$(dirname "$0")/../lib.sh"
require_ptrace

# A thread signalled every half millisecond (a timer, as a non-threaded
# GHC 9.0 program's runtime tick): each signal stops it until hsspy passes
# it on, and a tick's interrupt that follows closely stops it as it leaves
# the kernel, at its handler's first instruction. It is taken where the
# signal interrupted it: the handler, a few instructions, has next to no
# samples (before, 13-18% of them at 1 kHz; perf shows none), and the
# signals all reach it.
"$HSSPY" record -q -F 999 -f raw -o "$T/ticked.raw" -- "$W/ticked" 1.5 >"$T/ticked.out" 2>"$T/ticked.err"
check_status "ticked-record" $? "$T/ticked.err"
"$HSSPY" report -f folded -o "$T/ticked.folded" "$T/ticked.raw" 2>>"$T/ticked.err" &&
    "$HSSPY" report -f report -o "$T/ticked.report" "$T/ticked.raw" 2>>"$T/ticked.err"
check_status "ticked-report" $? "$T/ticked.err"
handler=$(count_matching "$T/ticked.folded" ';on_tick [0-9]+$')
spin=$(count_matching "$T/ticked.folded" ';main;spin( [0-9]+$|;__clock_gettime)')
all=$(total_count "$T/ticked.folded")
check "handler-entry-not-sampled" "$handler of $all samples in the handler, $spin in spin: $(sort -t' ' -k2 -rn "$T/ticked.folded" | head -n 3 | tr '\n' '|')" \
    test "$all" -ge 1000 -a "$((handler * 50))" -le "$all" -a "$((spin * 100))" -ge "$((all * 95))"
check "handler-entries-said" "the report does not count the stops at the handler's entry: $(grep -A1 'pause:' "$T/ticked.report" | tr -s ' ' | tr '\n' ' ')" \
    grep -Eq "; [0-9]+ found at a signal handler's entry, the signal just passed on" "$T/ticked.report"
ticks=$(sed -n 's/^ticks //p' "$T/ticked.out")
check "ticked-signals-taken" "the program's handler took ${ticks:-no} signals in 1.5 s of a signal each 0.5 ms" \
    test "${ticks:-0}" -ge 1000

# sixty IDLE PREFIX: sixty signals sent to a recorded sigcount (with IDLE
# sleeping threads) are each delivered once. It runs until the 60th signal
# (or 15 s): on a loaded machine sending them can take longer than the
# recording, and a target that had already exited would miss the last ones.
sixty() {
    local out=$T/count$1.out
    bg "$W/sigcount" 15 60 "$1" >"$out"
    target=$!
    wait_for_line "$out" '^ready$'
    "$HSSPY" record -q -F 1000 -p "$target" -d 2.5 -f report -o "$T/sig$1.report" 2>"$T/err" &
    h=$!
    sleep 0.3
    for i in $(seq 60); do kill -s RTMIN+1 "$target"; sleep 0.02; done
    wait "$h"
    check_status "${2}hsspy-ok" $? "$T/err"
    wait "$target"
    check "${2}delivered-exactly-once" "target says '$(tail -n1 "$out")', sent 60" \
        grep -q '^got 60$' "$out"
}
sixty 0 ""

# The same among 300 sleeping threads, which take most of the signals: with
# that many threads and one running, hsspy waits for each stop by asking
# the stopped thread alone, not every thread, and a signal that stops
# another one must still be passed on, once. (That it is passed on within
# the same tick, not the next, is not checked: only a timed test could.)
sixty 300 many-threads-
check "many-threads-sampled" "no samples of the 300 threads in the report" \
    grep -q 'thread samples from 30[0-9] threads' "$T/sig300.report"

# Job control: stop the target mid-recording, then continue it.
# (8 s: still running when checked after the recording, even on a busy machine)
bg "$W/chains" 8 >"$T/chains.out"
target=$!
wait_for_line "$T/chains.out" '^worker '
"$HSSPY" record -q -F 500 -p "$target" -d 2 -o "$T/jc.folded" 2>"$T/err" &
h=$!
sleep 0.4
kill -STOP "$target"
sleep 0.5
st=$(proc_state "$target")
check "stop-honoured" "target state '$st' after SIGSTOP (expected stopped)" \
    test "$st" = T -o "$st" = t
kill -CONT "$target"
# hsspy must finish on time although the target was stopped for a while.
for i in $(seq 100); do kill -0 "$h" 2>/dev/null || break; sleep 0.05; done
if kill -0 "$h" 2>/dev/null; then
    fail "no-hang" "hsspy still running 3 s after its 2 s recording began"
    kill -9 "$h"
else
    pass "no-hang"
fi
wait "$h"
check_status "hsspy-ok-after-stop" $? "$T/err"
sleep 0.1
st=$(proc_state "$target")
check "running-after-cont" "target state '$st' after SIGCONT and detach" \
    test "$st" = R -o "$st" = S
check "sampled-after-cont" "no samples of the chains" \
    has_line "$T/jc.folded" ';outer;middle;leaf [0-9]+$'
wait "$target"
check_status "target-exits-normally" $?

# A process stopped before hsspy comes (Ctrl-Z): a dump shows each
# thread where the stop found it, state T, and leaves the process in its
# stop, untraced, for SIGCONT to end; a recording, in which nothing runs,
# says so in one line and exits 1. (Before: a dump of no thread at all, a
# recording of no sample, exit status 0 and no word.)
bg "$W/chains" 8 >"$T/stopped.out"
target=$!
wait_for_line "$T/stopped.out" '^worker '
sleep 0.2 # (both in their chains by now, not still starting)
kill -STOP "$target"
for i in $(seq 50); do [ "$(proc_state "$target")" = T ] && break; sleep 0.02; done
"$HSSPY" dump -p "$target" >"$T/stopped.dump" 2>"$T/err"
check_status "stopped-dump" $? "$T/err"
check "stopped-dump-threads" "$(grep -c '^thread .*, state T$' "$T/stopped.dump") threads in state T: $(grep '^thread' "$T/stopped.dump" | tr '\n' '|')" \
    test "$(grep -c '^thread .*, state T$' "$T/stopped.dump")" -eq 2
check "stopped-dump-stacks" "not both chains: $(grep -E ' (leaf|middle|outer|main|worker) ' "$T/stopped.dump" | awk '{print $4}' | tr '\n' ' ')" \
    test "$(grep -cE '^ +#[0-9]+ +0x[0-9a-f]+ +(pc|ret) +(leaf|middle|outer) ' "$T/stopped.dump")" -ge 4
st=$(proc_state "$target"); tr=$(tracer_of "$target")
check "stopped-dump-left-stopped" "target state '$st', tracer '$tr' after the dump" \
    test "$st" = T -a "$tr" = 0
"$HSSPY" record -F 199 -d 0.5 -p "$target" -o "$T/stopped.folded" 2>"$T/stopped.err"
rc=$?
check "stopped-record-status" "exit status $rc (expected 1)" test "$rc" -eq 1
check "stopped-record-said" "said: $(tr '\n' '|' <"$T/stopped.err")" \
    grep -q "^hsspy: pid $target was stopped (SIGSTOP, or Ctrl-Z in its shell) all through the recording: nothing ran to sample; continue it (kill -CONT $target)" "$T/stopped.err"
# (Not then that no thread ran, and --idle would keep their stacks.)
check "stopped-record-not-asleep" "said: $(tr '\n' '|' <"$T/stopped.err")" \
    lacks_line "$T/stopped.err" "no thread of pid"
st=$(proc_state "$target"); tr=$(tracer_of "$target")
check "stopped-record-left-stopped" "target state '$st', tracer '$tr' after the recording" \
    test "$st" = T -a "$tr" = 0
kill -CONT "$target"
sleep 0.1
st=$(proc_state "$target")
check "stopped-continues" "target state '$st' after SIGCONT" test "$st" = R -o "$st" = S
kill "$target"; wait "$target" 2>/dev/null

# ended HOW STATUS: a launched crasher (3 threads spinning) ends its way
# at 0.5 s, recorded at 1 kHz; hsspy's exit status is STATUS and it says
# how the command ended. Before, hsspy exited 0 and said nothing: a crash
# under hsspy went unseen.
# The recording is raw, and its report's exit: line says the same.
ended() {
    local how=$1 want=$2 line=$3 exit_line=$4 rc
    "$HSSPY" record -F 1000 -f raw -o "$T/end-$how.raw" -- "$W/crasher" 0.5 "$how" >/dev/null 2>"$T/end-$how.err"
    rc=$?
    check "launched-$how-status" "hsspy exited $rc, not $want: $(tr '\n' '|' <"$T/end-$how.err")" test "$rc" = "$want"
    check "launched-$how-said" "no line saying '$line': $(tr '\n' '|' <"$T/end-$how.err")" \
        grep -Eq "^hsspy: warning: '[^']*crasher' \(pid [0-9]+\) $line" "$T/end-$how.err"
    "$HSSPY" report -f folded -o "$T/end-$how.folded" "$T/end-$how.raw" 2>/dev/null
    "$HSSPY" report -f report -o "$T/end-$how.report" "$T/end-$how.raw" 2>/dev/null
    check "launched-$how-sampled" "no samples of the spinning threads" has_line "$T/end-$how.folded" ';spin [0-9]+$'
    check "launched-$how-report" "report says: $(grep 'exit:' "$T/end-$how.report")" \
        grep -Eq "^ *exit: *the command $exit_line\$" "$T/end-$how.report"
}
ended segv 139 'was killed by signal 11 \(SIGSEGV: Segmentation fault\)' 'was killed by signal 11 \(SIGSEGV\)'
ended abort 134 'was killed by signal 6 \(SIGABRT: Aborted\)' 'was killed by signal 6 \(SIGABRT\)'
ended 7 7 'exited with status 7' 'exited with status 7'
"$HSSPY" record -F 1000 -o /dev/null -- "$W/crasher" 0.2 0 2>"$T/end-0.err"
check_status "launched-success-status" $? "$T/end-0.err"
check "launched-success-quiet" "a line on how a successful command ended: $(tr '\n' '|' <"$T/end-0.err")" \
    lacks_line "$T/end-0.err" 'crasher.*(exited|killed)'

# Attached: the fault reaches the program (its parent sees it die of
# SIGSEGV), hsspy says so and exits 0 (not its command).
bg "$W/crasher" 1 segv >"$T/crash.out"
target=$!
wait_for_line "$T/crash.out" '^ready$'
"$HSSPY" record -F 1000 -p "$target" -f report -o "$T/att.report" 2>"$T/att.err"
check_status "attached-hsspy-ok" $? "$T/att.err"
check "attached-report" "report says: $(grep 'exit:' "$T/att.report")" \
    grep -Eq "^ *exit: *the process was killed by signal 11 \(SIGSEGV\)$" "$T/att.report"
wait "$target"
rc=$?
check "attached-fault-delivered" "the target's parent saw status $rc, not 139 (SIGSEGV)" test "$rc" = 139
check "attached-said" "no line saying how pid $target ended: $(tr '\n' '|' <"$T/att.err")" \
    grep -q "^hsspy: warning: pid $target was killed by signal 11 (SIGSEGV" "$T/att.err"

# Ctrl-C at the terminal: SIGINT to hsspy's process group, which a
# launched command shares (as under perf record). The recording is
# written, and how the command ended is said and passed on (before:
# nothing said, exit 0, as if it ran on).
cat >"$T/ctrlc.py" <<'PY'
import os, signal, subprocess, sys, time
p = subprocess.Popen(sys.argv[1:], start_new_session=True, stdout=subprocess.DEVNULL)
time.sleep(1.5)
os.killpg(p.pid, signal.SIGINT)
print(p.wait())
PY
rc=$(python3 "$T/ctrlc.py" "$HSSPY" record -o "$T/ctrlc.folded" -- "$W/chains" 20 2>"$T/ctrlc.err")
check "ctrl-c-command-said" "exit $rc: $(tr '\n' '|' <"$T/ctrlc.err")" \
    eval '[ "$rc" = 130 ] && grep -q "^hsspy: warning: .*chains. (pid [0-9]*) was killed by signal 2 (SIGINT" "$T/ctrlc.err" && has_line "$T/ctrlc.folded" ";main;outer;middle;leaf [0-9]+$"'
