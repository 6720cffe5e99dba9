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
# Usage: tests/run.sh [SUBSTRING...]   (run only tests whose name contains one)
set -u
cd "$(dirname "$0")/.." || exit 1

log=$(mktemp)
trap 'rm -f "$log" "$log.err"' EXIT
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

run_one() { # name timeout command...
    local name=$1 limit=$2; shift 2
    local start=$SECONDS left token="$name.$$.$RANDOM"
    : >"$log"
    HSSPY_TEST_RUN=$token timeout --kill-after=10 "$limit" "$@" 2>"$log.err" |
        tee -a "$log" | grep -E '^(PASS|FAIL|SKIP):'
    local rc=${PIPESTATUS[0]}
    # (a process killed as its test ended may take a moment to go)
    left=$(leftovers "$token")
    [ -n "$left" ] && sleep 1 && left=$(leftovers "$token")
    if [ -n "$left" ]; then
        echo "FAIL: $name: left processes running: $(echo "$left" | head -n 5 | tr '\n' ' ')" |
            tee -a "$log"
        echo "$left" | awk '{ print $1 }' | xargs -r kill -9 2>/dev/null
    fi
    local p f s
    p=$(grep -c '^PASS:' "$log"); f=$(grep -c '^FAIL:' "$log"); s=$(grep -c '^SKIP:' "$log")
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
            echo "FAIL: $name: timed out after ${limit}s"
        else
            echo "FAIL: $name: exited with status $rc without reporting a failure"
        fi
        sed 's/^/    /' "$log.err" | tail -n 20
        f=1
    elif [ "$f" -gt 0 ]; then
        sed 's/^/    /' "$log.err" | tail -n 20
    fi
    passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
    echo "      ($name: $((SECONDS - start))s)" >&2
    rm -f "$log.err"
}

for t in build/tests/test_*; do
    [ -x "$t" ] || continue
    name=$(basename "$t")
    selected "$name" "$@" || continue
    run_one "$name" 300 "$t"
done
for t in tests/functional/*.sh; do
    [ -f "$t" ] || continue
    name=$(basename "$t" .sh)
    selected "$name" "$@" || continue
    run_one "$name" 600 bash "$t"
done

if [ "$skipped" -gt 0 ]; then
    echo "$passed passed, $failed failed, $skipped skipped"
else
    echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
