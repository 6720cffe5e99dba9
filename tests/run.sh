#!/bin/bash
# run.sh - run every test and print the tally.
#
# Unit tests are the binaries build/tests/test_*; functional tests are the
# scripts tests/functional/*.sh. Both print one line per case:
#   PASS: <test>: <case>
#   FAIL: <test>: <case>: <why>
#   SKIP: <test>: <case>: <why>
# A test that dies without saying so counts as one failure, and so does one
# that leaves processes running (they are killed). The last line is
# "N passed, N failed, N skipped".
#
# Tests run two at a time (HSSPY_TEST_JOBS=N for N), those marked
# "# alone: WHY" first and by themselves (below).
#
# Usage: tests/run.sh [SUBSTRING...]   (run only tests whose name contains one)
set -u
cd "$(dirname "$0")/.." || exit 1

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
passed=0 failed=0 skipped=0

selected() {
    [ $# -eq 1 ] && return 0
    local name=$1; shift
    for pat in "$@"; do
        case "$name" in *"$pat"*) return 0 ;; esac
    done
    return 1
}

# The processes still running that carry TOKEN in their environment, one
# "pid comm" line each. Each test runs with its own token, which every
# process it starts inherits whatever becomes of its parent or session
# (setsid, daemonizing, reparenting to init), so a test's workloads left
# running once it ended are found, and nothing else is: not the runner's
# own processes, not kernel threads, not another test's. Zombies have no
# environment left (init does not reap everywhere). A spinner outliving its
# test takes CPU from every test after it.
leftovers() { # TOKEN
    grep -lzx "HSSPY_TEST_RUN=$1" /proc/[0-9]*/environ 2>/dev/null |
        while IFS=/ read -r _ _ pid _; do
            echo "$pid $(cat "/proc/$pid/comm" 2>/dev/null)"
        done
}

# run_one NAME TIMEOUT COMMAND...: run one test; what it says (its result
# lines, and its error output if it failed) into $dir/NAME.report, its
# tally ("PASSED FAILED SKIPPED") into $dir/NAME.tally, how long it took
# into $dir/NAME.time.
run_one() {
    local name=$1 limit=$2; shift 2
    local log="$dir/$name" start=$SECONDS left token="$name.$$.$RANDOM"
    HSSPY_TEST_RUN=$token timeout --kill-after=10 "$limit" "$@" 2>"$log.err" |
        grep -E '^(PASS|FAIL|SKIP):' >"$log.report"
    local rc=${PIPESTATUS[0]}
    # (a process killed as its test ended may take a moment to go)
    left=$(leftovers "$token")
    [ -n "$left" ] && sleep 1 && left=$(leftovers "$token")
    if [ -n "$left" ]; then
        echo "FAIL: $name: left processes running: $(echo "$left" | head -n 5 | tr '\n' ' ')" \
            >>"$log.report"
        echo "$left" | awk '{ print $1 }' | xargs -r kill -9 2>/dev/null
    fi
    local p f s
    p=$(grep -c '^PASS:' "$log.report"); f=$(grep -c '^FAIL:' "$log.report")
    s=$(grep -c '^SKIP:' "$log.report")
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
            echo "FAIL: $name: timed out after ${limit}s"
        else
            echo "FAIL: $name: exited with status $rc without reporting a failure"
        fi >>"$log.report"
        f=1
    fi
    [ "$f" -gt 0 ] && sed 's/^/    /' "$log.err" | tail -n 20 >>"$log.report"
    echo "$((SECONDS - start))" >"$log.time"
    echo "$p $f $s" >"$log.t" && mv "$log.t" "$log.tally"
}

# Tests run JOBS at a time (HSSPY_TEST_JOBS, 2 unless set), but those whose
# script has a line "# alone: WHY" (they measure time or CPU shares that
# another test's workloads would take) run first, one at a time, with
# nothing beside them. Each test's lines are printed, together, as it ends.
JOBS=${HSSPY_TEST_JOBS:-2}
declare -A name_of=() printed=()
pids=() # the tests' run_one processes not yet seen gone

finish() { # print and count the tests that have ended
    local t name p f s
    for t in "$dir"/*.tally; do
        [ -e "$t" ] || continue
        name=$(basename "$t" .tally)
        cat "$dir/$name.report"
        echo "      ($name: $(cat "$dir/$name.time")s)" >&2
        read -r p f s <"$t"
        passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
        rm -f "$dir/$name".*
        printed[$name]=1
    done
}

# Wait for a test to end, and print it. Which tests still run is told by
# their processes (kill -0; one ended but not yet waited for still counts,
# and the next wait returns at once), not by the shell's job table (which
# once said none ran while one did: the run ended without it). A run_one
# gone without its tally (killed) is a failure.
reap() {
    local p gone=() alive=()
    # (127: the shell knows of no child to wait for: look again soon)
    wait -n 2>/dev/null || [ $? -ne 127 ] || sleep 0.2
    for p in "${pids[@]}"; do
        if kill -0 "$p" 2>/dev/null; then alive+=("$p"); else gone+=("$p"); fi
    done
    pids=("${alive[@]}")
    finish # (after the look: the gone wrote their tallies before it)
    for p in "${gone[@]}"; do
        [ -n "${printed[${name_of[$p]}]:-}" ] && continue
        echo "FAIL: ${name_of[$p]}: its runner ended without a tally"
        failed=$((failed + 1))
    done
}

start_one() { # NAME TIMEOUT COMMAND...
    while [ ${#pids[@]} -ge "$JOBS" ]; do reap; done
    run_one "$@" &
    pids+=($!)
    name_of[$!]=$1
}

drain() { while [ ${#pids[@]} -gt 0 ]; do reap; done; }

unit=() alone=() rest=()
for t in build/tests/test_*; do
    [ -x "$t" ] || continue
    selected "$(basename "$t")" "$@" && unit+=("$t")
done
for t in tests/functional/*.sh; do
    [ -f "$t" ] || continue
    selected "$(basename "$t" .sh)" "$@" || continue
    if grep -q '^# alone: ' "$t"; then alone+=("$t"); else rest+=("$t"); fi
done
for t in "${alone[@]}"; do
    start_one "$(basename "$t" .sh)" 600 bash "$t"
    drain
done
for t in "${unit[@]}"; do
    start_one "$(basename "$t")" 300 "$t"
done
for t in "${rest[@]}"; do
    start_one "$(basename "$t" .sh)" 600 bash "$t"
done
drain

if [ "$skipped" -gt 0 ]; then
    echo "$passed passed, $failed failed, $skipped skipped"
else
    echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
