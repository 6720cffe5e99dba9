# ghc_waking - a thread our stop woke from a call, whose call then ended
# for real (the data it waited for came while it was stopped): resumed, it
# does not go back into that call, but on with its work and to sleep in
# another. The samples must follow it there, not repeat the one of the
# stop (the sample of a thread on its way back into its call is repeated,
# without a stop, until it is back: that must not hold for one that went
# elsewhere). stopwake.hs's main thread polls a pipe (an unsafe call, so
# it is stopped at each tick), and its C watcher writes to the pipe when
# it sees it stopped; then it sleeps 2 s in another call (sw_doze). The
# watcher's write comes before the resume or after, as the race goes; a
# few runs, each of which must follow the thread. Told which threads ran
# by a ring per thread (--per-thread-events), then by /proc alone
# (--no-perf-events): where hsspy may watch every CPU (the default), the
# per-CPU events' sample of the thread's switch to sleep holds its
# registers, Sp among them, and it is not stopped in its poll at all
# (ghc_blocked), nor then woken. A ring per thread says that the thread
# slept again, not where: its syscall file does (before, the stop's
# sample was repeated through the doze in 3 runs of 20).
# alone: its watcher must see a stop while it lasts, which another test's load delays
. "$(dirname "$0")/../lib.sh"
require_ptrace

prog=$(build_hs stopwake stopwake.hs stopwake_c.c -- -O1 -threaded -rtsopts) ||
    { fail "build" "ghc could not build stopwake.hs"; exit 0; }
# runs MODE: four runs told which threads ran as MODE says; at least two
# must see the thread woken while stopped, and each such run follow it.
runs() {
    local mode=$1 m=${1#--} conclusive=0 run pid rc all poll doze
    for run in 1 2 3 4; do
        "$prog" 0.0002 2 >"$T/out" 2>"$T/prog.err" &
        pid=$!
        BG_PIDS="$BG_PIDS $pid"
        wait_for_line "$T/out" '^ready' || { fail "$m-run-$run-setup" "stopwake did not start"; continue; }
        "$HSSPY" record -q -F 199 -d 3 "$mode" --threads --idle -p "$pid" -o "$T/folded" 2>"$T/err"
        rc=$?
        wait "$pid"
        if [ $rc -ne 0 ]; then
            fail "$m-run-$run-record" "exit status $rc: $(tr '\n' '|' <"$T/err")"
            continue
        fi
        if ! grep -q '^woken while stopped' "$T/out"; then
            continue # (the watcher saw no third stop: nothing was tested)
        fi
        conclusive=$((conclusive + 1))
        all=$(count_matching "$T/folded" '^tid [0-9]+ \(stopwake\);')
        poll=$(count_matching "$T/folded" '^tid [0-9]+ \(stopwake\);.*;sw_await(;[^ ]*)? [0-9]+$')
        doze=$(count_matching "$T/folded" '^tid [0-9]+ \(stopwake\);.*;sw_doze;[^ ]*nanosleep[^ ]* [0-9]+$')
        check "$m-run-$run-followed" "of the main thread's $all samples, $poll in sw_await's poll, $doze in sw_doze's nanosleep (2 of its 3 s): $(grep '(stopwake)' "$T/folded" | cut -c1-200 | tr '\n' '|')" \
            test "$doze" -ge 300 -a "$doze" -ge $((all * 6 / 10)) -a "$poll" -le $((all / 5))
    done
    check "$m-conclusive" "only $conclusive of 4 runs saw the thread woken while stopped" \
        test "$conclusive" -ge 2
}
runs --per-thread-events
runs --no-perf-events
