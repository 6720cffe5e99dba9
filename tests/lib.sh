# lib.sh - shared helpers of the functional tests (sourced, not run).
#
# A functional test builds or picks a workload with known function names,
# profiles it with the real ./hsspy, and checks the frames it reports:
#   pass NAME | fail NAME WHY | skip NAME WHY   -- one result line each
#   has_line FILE REGEX                           -- grep -E -q
#   build_hs NAME SRC... -- GHCFLAGS...           -- compile a Haskell workload
set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
HSSPY=$ROOT/hsspy
W=$ROOT/build/workloads
TEST_NAME=$(basename "$0" .sh)
T=$(mktemp -d "/tmp/hsspy-$TEST_NAME.XXXXXX")
BG_PIDS=""

cleanup() {
    local p
    for p in $BG_PIDS; do { kill -9 "$p"; wait "$p"; } 2>/dev/null; done
    rm -rf "$T"
}
trap cleanup EXIT

pass() { echo "PASS: $TEST_NAME: $1"; }
fail() { echo "FAIL: $TEST_NAME: $1: $2"; }
skip() { echo "SKIP: $TEST_NAME: $1: $2"; }

# check NAME WHY-IF-FAILED COMMAND... : pass if the command succeeds.
check() {
    local name=$1 why=$2; shift 2
    if "$@"; then pass "$name"; else fail "$name" "$why"; fi
}

# check_status NAME RC [ERRFILE]: pass if RC (an exit status, captured
# right after the command) is 0; else say it, with ERRFILE's contents.
check_status() {
    local name=$1 rc=$2 err=${3:-}
    if [ "$rc" -eq 0 ]; then
        pass "$name"
    else
        fail "$name" "exit status $rc${err:+: $(tr '\n' '|' <"$err")}"
    fi
}

has_line() { grep -E -q -- "$2" "$1"; }

# The sum of the counts of folded lines matching REGEX.
count_matching() {
    grep -E -- "$2" "$1" | awk '{ n += $NF } END { print n + 0 }'
}
total_count() { awk '{ n += $NF } END { print n + 0 }' "$1"; }

bg() { "$@" & BG_PIDS="$BG_PIDS $!"; }

# Wait until FILE has a line matching REGEX (up to 10 s).
wait_for_line() {
    local i
    for i in $(seq 1 200); do
        grep -E -q -- "$2" "$1" 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}

# The /proc state letter of a pid ("" if gone).
proc_state() { sed -n 's/^State:[[:space:]]*\([A-Za-z]\).*/\1/p' "/proc/$1/status" 2>/dev/null; }
tracer_of() { sed -n 's/^TracerPid:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null; }

# build_hs NAME SOURCES... [-- GHC FLAGS...]: compile tests/workloads/hs/SOURCES
# into $W/hs/NAME once
# (rebuilt when a source is newer); prints the binary's path.
build_hs() {
    local name=$1; shift
    local srcs=() flags=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do srcs+=("$ROOT/tests/workloads/hs/$1"); shift; done
    [ $# -gt 0 ] && shift
    flags=("$@")
    local out=$W/hs/$name obj=$W/hs/obj-$name
    local stale=0 s
    [ -x "$out" ] || stale=1
    for s in "${srcs[@]}"; do [ "$s" -nt "$out" ] && stale=1; done
    if [ $stale = 1 ]; then
        mkdir -p "$obj"
        ghc -v0 -outputdir "$obj" -o "$out" "${flags[@]}" "${srcs[@]}" >&2 || return 1
    fi
    echo "$out"
}

# Can this machine ptrace at all? (containers without CAP_SYS_PTRACE cannot.)
require_ptrace() {
    if ! "$HSSPY" record -q -d 0.2 -o /dev/null -- sleep 0.5 2>"$T/ptrace-probe"; then
        skip "all" "ptrace is not permitted here: $(head -n1 "$T/ptrace-probe")"
        exit 0
    fi
}
