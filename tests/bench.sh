#!/bin/bash
# bench.sh - `make bench`: what hsspy costs the program it profiles.
#
# A fixed amount of CPU work (tests/workloads/work.c) is timed alone and
# under `hsspy record` at 100 Hz and 1 kHz, interleaved round by round so
# machine noise hits all three alike; the slowdown is the ratio of medians.
# The per-thread pause comes from hsspy's own report of the 1 kHz runs.
# Figures, not pass/fail: shared machines are too noisy for timed asserts.
set -eu
cd "$(dirname "$0")/.."
HSSPY=./hsspy
WORK=build/workloads/work
ROUNDS=${ROUNDS:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

bench() { # THREADS MILLIONS
    local threads=$1 work=$2 r
    : >"$tmp/alone"; : >"$tmp/100"; : >"$tmp/1000"; : >"$tmp/pause"; : >"$tmp/p99"
    for r in $(seq "$ROUNDS"); do
        "$WORK" "$threads" "$work" | awk '{ print $2 }' >>"$tmp/alone"
        "$HSSPY" record -q -F 100 -f report -o "$tmp/rep100" -- "$WORK" "$threads" "$work" |
            awk '{ print $2 }' >>"$tmp/100"
        "$HSSPY" record -q -F 1000 -f report -o "$tmp/rep1000" -- "$WORK" "$threads" "$work" |
            awk '{ print $2 }' >>"$tmp/1000"
        sed -n 's/.*per stopped thread: .*median \([0-9.]*\) us, p99 \([0-9.]*\) us.*/\1 \2/p' \
            "$tmp/rep1000" >>"$tmp/pause"
        sed -n 's/.*rate: .*asked, \([0-9.]*\) Hz achieved.* \([0-9]*\) missed/\1 \2/p' \
            "$tmp/rep1000" >>"$tmp/rate"
    done
    local a h k
    a=$(median <"$tmp/alone"); h=$(median <"$tmp/100"); k=$(median <"$tmp/1000")
    printf '  %d thread(s), %s M iterations each: alone %.0f ms; 100 Hz %.0f ms (x%.3f, %+.1f%%); 1 kHz %.0f ms (x%.3f, %+.1f%%)\n' \
        "$threads" "$work" "$a" "$h" "$(echo "$h / $a" | bc -l)" "$(echo "($h / $a - 1) * 100" | bc -l)" \
        "$k" "$(echo "$k / $a" | bc -l)" "$(echo "($k / $a - 1) * 100" | bc -l)"
    printf '    pause per stopped thread at 1 kHz: median %s us, p99 %s us (median over rounds)\n' \
        "$(awk '{ print $1 }' "$tmp/pause" | median)" "$(awk '{ print $2 }' "$tmp/pause" | median)"
    printf '    achieved rate at 1 kHz: %s Hz (median), missed ticks: %s (median)\n' \
        "$(awk '{ print $1 }' "$tmp/rate" | median)" "$(awk '{ print $2 }' "$tmp/rate" | median)"
    : >"$tmp/rate"
}

command -v bc >/dev/null || { echo "bench: needs bc (apt-get install bc)" >&2; exit 1; }
echo "hsspy bench: $(nproc) CPUs, $ROUNDS rounds, medians (goals: <= 1% at 100 Hz, <= 5% at 1 kHz)"
: >"$tmp/rate"
bench 1 2000
bench 2 2000
