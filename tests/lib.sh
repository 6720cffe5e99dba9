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
lacks_line() { ! grep -E -q -- "$2" "$1"; }

# The sum of the counts of folded lines matching REGEX.
count_matching() {
    grep -E -- "$2" "$1" | awk '{ n += $NF } END { print n + 0 }'
}
total_count() { awk '{ n += $NF } END { print n + 0 }' "$1"; }

# check_copied NAME REPORT [any]: pass if no sample of REPORT (a `-f report`)
# went deeper than its C stack copy (no `beyond:` line) and, unless `any`,
# none was an error.
copied_whole() {
    ! grep -q '^ *beyond:' "$1" && { [ "${2:-}" = any ] || grep -Eq '^ *errors: *0(;|$)' "$1"; }
}
check_copied() {
    check "$1" "$(grep -E 'samples:|beyond:|errors:' "$2" | cut -c1-200 | tr '\n' '|')" \
        copied_whole "$2" "${3:-}"
}

# raw_reports RAW PREFIX ERR: PREFIX.folded and PREFIX.report written from
# the raw file RAW (their errors appended to ERR).
raw_reports() {
    "$HSSPY" report -f folded -o "$2.folded" "$1" 2>>"$3"
    "$HSSPY" report -f report -o "$2.report" "$1" 2>>"$3"
}

# What a sample in deepffi_c.c's or deepcall.c's deep_frame may end with
# (an ERE, to the end of the line): deep_frame itself, one frame under it (deep_work,
# memset, the PLT stub on the way, memset@plt), or at the stub's first call
# the dynamic linker binding it (_dl_runtime_resolve* and what it calls).
DEEP_FRAME_LEAF='deep_frame(;[_a-z0-9]+(@plt)?|;_dl_runtime_resolve[_a-z0-9]*(;[^; ]+)*)? [0-9]+$'

# check_rooted NAME FOLDED LEAF ROOTED MIN WHAT: at least MIN samples of
# FOLDED have a frame matching LEAF, and every one of them is a line
# matching ROOTED (WHAT says which, in the failure, with the others).
check_rooted() {
    local name=$1 f=$2 leaf=$3 rooted=$4 min=$5 what=$6 all n
    grep -E -- "$leaf" "$f" >"$f.leaf" || true
    all=$(total_count "$f.leaf")
    n=$(count_matching "$f.leaf" "$rooted")
    check "$name" "$n of $all samples in $what: $(grep -Ev -- "$rooted" "$f.leaf" | sort -t' ' -k2 -rn | head -n 4 | cut -c1-250 | tr '\n' '|')" \
        test "$all" -ge "$min" -a "$n" -eq "$all"
}

bg() { "$@" & BG_PIDS="$BG_PIDS $!"; }

# Wait until process PID has at least N threads (up to 5 s).
wait_for_threads() {
    local i
    for i in $(seq 1 100); do
        [ "$(ls "/proc/$1/task" 2>/dev/null | wc -l)" -ge "$2" ] && return 0
        sleep 0.05
    done
    return 1
}

# Wait until FILE has a line matching REGEX (up to 10 s).
wait_for_line() {
    local i
    for i in $(seq 1 200); do
        grep -E -q -- "$2" "$1" 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}

# switches_alone SECONDS: for a test whose threads nap (one voluntary
# context switch a nap), their switches beyond their naps over SECONDS
# without hsspy, by the test's own `voluntary` and `naps` functions.
switches_alone() {
    local v0 n0 v1 n1
    v0=$(voluntary)
    n0=$(naps)
    sleep "$1"
    n1=$(naps)
    v1=$(voluntary)
    echo $(((v1 - v0) - (n1 - n0)))
}

# The /proc state letter of a pid ("" if gone).
proc_state() { sed -n 's/^State:[[:space:]]*\([A-Za-z]\).*/\1/p' "/proc/$1/status" 2>/dev/null; }
tracer_of() { sed -n 's/^TracerPid:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null; }

# build_hs NAME SOURCES... [-- GHC FLAGS...]: compile tests/workloads/hs/SOURCES
# into $W/hs/NAME once
# (rebuilt when a source is newer); prints the binary's path. The sources
# are named from their directory: GHC writes the object of a C source
# given by an absolute path beside it, not under -outputdir.
build_hs() {
    local name=$1; shift
    local srcs=() flags=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do srcs+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    flags=("$@")
    local out=$W/hs/$name obj=$W/hs/obj-$name
    local stale=0 s
    [ -x "$out" ] || stale=1
    for s in "${srcs[@]}"; do [ "$ROOT/tests/workloads/hs/$s" -nt "$out" ] && stale=1; done
    if [ $stale = 1 ]; then
        mkdir -p "$obj"
        (cd "$ROOT/tests/workloads/hs" &&
            ghc -v0 -outputdir "$obj" -o "$out" "${flags[@]}" "${srcs[@]}") >&2 || return 1
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

# May hsspy open perf events on its target's threads (its context-switch
# records)? As root, or where perf_event_paranoid is 2 or less (Debian's
# kernels set 3).
perf_events_allowed() {
    [ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)" -le 2 ]
}

# Whether hsspy may watch every CPU here (root with CAP_PERFMON or
# CAP_SYS_ADMIN, or perf_event_paranoid <= 0): then, unless told otherwise,
# it takes context switches from per-CPU events, not from an event per
# thread. Asked of hsspy itself, as --nonblocking needs the same.
cpu_events_allowed() {
    if [ -z "${CPU_EVENTS_ALLOWED:-}" ]; then
        CPU_EVENTS_ALLOWED=no
        "$HSSPY" record -q --nonblocking -d 0.05 -o /dev/null -- true 2>/dev/null && CPU_EVENTS_ALLOWED=yes
    fi
    [ "$CPU_EVENTS_ALLOWED" = yes ]
}

# The "switches:" line's words for records that told about every thread,
# given hsspy's options: per-CPU events', or each thread's own.
records_told() {
    case " $* " in
    *" --per-thread-events "*) echo 'records (perf events) for all' ;;
    *) if cpu_events_allowed; then echo 'records of the per-CPU perf events for all'; else echo 'records (perf events) for all'; fi ;;
    esac
}

# told_by_records CASE REPORT [OPTION]: sets $told to the report's
# "switches:" line (which told whether threads ran) and returns 0 when the
# caller is to check it; else decides CASE itself and returns 1: with
# --no-perf-events the report must have no such line, and where perf events
# are not allowed CASE is skipped.
told_by_records() {
    told=$(grep '^ *switches:' "$2")
    if [ "${3:-}" = --no-perf-events ]; then
        check "$1" "--no-perf-events, yet the report says: $told" test -z "$told"
        return 1
    fi
    if ! perf_events_allowed; then
        skip "$1" "perf events are not allowed here (perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid)); /proc told"
        return 1
    fi
}

# ---------------------------------------------------------------------------
# GHC versions. A GHC test runs its checks once per GHC this machine has:
# the host's (Debian 12: 9.0.2) and those of the Debian chroots that
# tests/chroot.sh builds (trixie: 9.6.6, sid: 9.10.3). A chroot's programs
# are built and run inside it, as in a container (their own root, their own
# glibc), and profiled from here by PID. Each version's results are their
# own lines: "ghc-9.6.6-haskell-share".
#
#   ghc_targets                       GHC_TARGETS="host trixie sid"; one SKIP
#                                     line for each version missing here
#   ghc_version SUITE                 "9.6.6"
#   hs_build SUITE NAME SRCS -- FLAGS build a workload; print the path to run
#   hs_start SUITE OUT ERR PROG ARGS  start it in the background: HS_PID
#   hs_record SUITE OUT ERR HSSPY-ARGS... -- PROG ARGS
#                                     profile it from start to end (status of
#                                     hsspy; the program's stdout in OUT)
#   hs_run SUITE CMD ARGS             run a command where the program runs
#                                     (a chroot's gdb for a chroot's program)
# ---------------------------------------------------------------------------
declare -A GHC_VERSION=()
GHC_TARGETS=""

# A missing version is a failure where the chroots can be built (as root,
# which CI is: it must run them), a SKIP saying why elsewhere;
# HSSPY_REQUIRE_GHC_VERSIONS=1 or 0 decides instead.
ghc_targets() {
    local list=$ROOT/build/ghc-targets suite ver ok reason require
    require=${HSSPY_REQUIRE_GHC_VERSIONS:-$([ "$(id -u)" = 0 ] && echo 1 || echo 0)}
    [ -s "$list" ] || "$ROOT/tests/ghc-targets.sh" >/dev/null 2>"$T/ghc-targets.err"
    GHC_TARGETS=""
    while read -r suite ver ok reason; do
        if [ "$ok" = ok ]; then
            GHC_TARGETS="$GHC_TARGETS $suite"
            GHC_VERSION[$suite]=$ver
        elif [ "$require" = 1 ]; then
            fail "ghc-$ver" "required, but unavailable: $reason"
        else
            skip "ghc-$ver" "$reason"
        fi
    done <"$list"
}

ghc_version() { echo "${GHC_VERSION[$1]}"; }

# Where a chroot's workloads are built (bind-mounted at /hsspy/build inside)
chroot_build_dir() { echo "$W/$1"; }

# hs_build SUITE NAME SOURCES... [-- GHC FLAGS...]: on the host, build_hs;
# in a chroot, the same with the chroot's ghc, into $W/SUITE/hs, printing
# the path the chroot sees (/hsspy/build/hs/NAME).
hs_build() {
    local suite=$1; shift
    if [ "$suite" = host ]; then
        build_hs "$@"
        return
    fi
    local name=$1; shift
    local srcs=() flags=() s stale=0
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do srcs+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    flags=("$@")
    local dir
    dir=$(chroot_build_dir "$suite")
    [ -x "$dir/hs/$name" ] || stale=1
    for s in "${srcs[@]}"; do
        [ "$ROOT/tests/workloads/hs/$s" -nt "$dir/hs/$name" ] && stale=1
    done
    if [ $stale = 1 ]; then
        mkdir -p "$dir/hs/obj-$name"
        "$ROOT/tests/chroot.sh" exec "$suite" -b "$ROOT/tests/workloads/hs:/hsspy/src" \
            -b "$dir:/hsspy/build" -w /hsspy/src -- ghc -v0 -outputdir "/hsspy/build/hs/obj-$name" \
            -o "/hsspy/build/hs/$name" "${flags[@]}" "${srcs[@]}" >&2 || return 1
    fi
    echo "/hsspy/build/hs/$name"
}

# hs_run SUITE CMD ARGS...: run CMD on the host, or inside the chroot
# (with the workloads at /hsspy/build), in the foreground.
hs_run() {
    local suite=$1; shift
    if [ "$suite" = host ]; then
        "$@"
    else
        "$ROOT/tests/chroot.sh" exec "$suite" -b "$(chroot_build_dir "$suite"):/hsspy/build" -- "$@"
    fi
}

# hs_start SUITE OUT ERR PROG ARGS...: start PROG in the background with
# its stdout in OUT and stderr in ERR; HS_PID is its PID once it runs PROG
# (a chroot's program gets there through unshare and sh, which exec, so
# attaching earlier would see it exec). "Runs" means its libc is mapped
# (or, for a static executable, that it has started a second thread, as
# GHC's runtime does):
# /proc/PID/exe changes while execve is still under way, and a tracer
# that attaches then is told of that very exec, which hsspy takes for the
# program replacing itself. Returns 1 if it never got there.
hs_start() {
    local suite=$1 out=$2 err=$3; shift 3
    local prog=$1 i exe
    if [ "$suite" = host ]; then
        "$@" >"$out" 2>"$err" &
    else
        "$ROOT/tests/chroot.sh" exec "$suite" -b "$(chroot_build_dir "$suite"):/hsspy/build" \
            -- "$@" >"$out" 2>"$err" &
    fi
    HS_PID=$!
    BG_PIDS="$BG_PIDS $HS_PID"
    for i in $(seq 1 400); do
        # (readlink can fail for a moment while the process execs)
        exe=$(readlink "/proc/$HS_PID/exe" 2>/dev/null)
        [ "${exe##*/}" = "${prog##*/}" ] &&
            { grep -q '/libc\.so' "/proc/$HS_PID/maps" 2>/dev/null ||
                [ "$(ls "/proc/$HS_PID/task" 2>/dev/null | wc -l)" -ge 2 ]; } &&
            return 0
        kill -0 "$HS_PID" 2>/dev/null || return 1
        sleep 0.025
    done
    return 1
}

# gdb_park SUITE PID NAME OUT STOP: gdb attaches to PID (where it runs: a
# chroot's gdb for a chroot's program), stops a thread as the gdb commands
# STOP say, parks it there in a two-byte loop (jmp .) and detaches; its
# script is NAME.gdb, its output OUT. PARKED_TID is the parked thread's LWP
# (gdb's current thread), "" if gdb parked none.
gdb_park() {
    local suite=$1 pid=$2 name=$3 out=$4 stop=$5 dir script
    # gdb reads its script where the program runs (a chroot's build folder).
    if [ "$suite" = host ]; then dir=$T; else dir=$(chroot_build_dir "$suite"); fi
    printf 'set pagination off\n%s\ndelete\nprintf "parked %%d\\n", $_thread\ninfo threads\nset *(unsigned short *)$pc = 0xfeeb\ndetach\n' \
        "$stop" >"$dir/$name.gdb"
    script=$dir/$name.gdb
    [ "$suite" = host ] || script=/hsspy/build/$name.gdb
    hs_run "$suite" timeout 60 gdb -p "$pid" -batch -x "$script" >"$out" 2>&1
    PARKED_TID=
    if grep -q '^parked' "$out"; then
        # ("Thread 0x7f... (LWP 123)", or "LWP 123" where gdb could not
        # load libthread_db for the program)
        PARKED_TID=$(sed -n -E 's/^\* *[0-9]+ +(Thread 0x[0-9a-f]+ \(LWP ([0-9]+)\)|LWP ([0-9]+)) .*/\2\3/p' "$out" | head -n1)
    fi
}

# record_parked CASE WHAT GDB-OUT PID TID PATTERN FOLDED [ARGS...]: if gdb
# parked thread TID (gdb_park's output GDB-OUT matches PATTERN), record the
# program PID for 0.5 s at 499 Hz with --threads and ARGS into FOLDED
# (CASE-record: hsspy's status) and return 0; if not, fail CASE saying
# that gdb did not park WHAT, kill the program and return 1.
record_parked() {
    local c=$1 what=$2 out=$3 pid=$4 tid=$5 pat=$6 folded=$7
    shift 7
    if [ -z "$tid" ] || ! grep -q -- "$pat" "$out"; then
        fail "$c" "gdb did not park $what: $(grep -E '^(parked|\*)|rror|Breakpoint' "$out" | head -n 4 | tr '\n' '|')"
        kill -9 "$pid"
        wait "$pid" 2>/dev/null
        return 1
    fi
    sleep 0.2
    "$HSSPY" record -q -F 499 -d 0.5 --threads "$@" -p "$pid" >"$folded" 2>"$folded.err"
    check_status "$c-record" $? "$folded.err"
    return 0 # (parked: the caller checks the samples and kills the program)
}

# hs_record SUITE OUT ERR HSSPY-RECORD-ARGS... -- PROG ARGS...: profile PROG
# from its start to its end. On the host hsspy launches it (`record --`);
# in a chroot, hsspy attaches by PID as soon as it runs. Returns hsspy's
# exit status.
hs_record() {
    local suite=$1 out=$2 err=$3; shift 3
    local args=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do args+=("$1"); shift; done
    shift
    if [ "$suite" = host ]; then
        "$HSSPY" record "${args[@]}" -- "$@" >"$out" 2>"$err"
        return
    fi
    hs_start "$suite" "$out" "$T/hs_record.prog.err" "$@" ||
        { echo "$1 did not start in the $suite chroot: $(cat "$T/hs_record.prog.err")" >"$err"; return 1; }
    local rc
    "$HSSPY" record "${args[@]}" -p "$HS_PID" 2>"$err"
    rc=$?
    wait "$HS_PID" 2>/dev/null
    return $rc
}

# ---------------------------------------------------------------------------
# The calibrated workload (tests/workloads/hs/calib.hs), profiled with
# -F 499 --threads into a folded file: its main thread's tag shares against
# the workload's own measurement, and its FFI samples' callers.
#
#   calib_checks CASE TRUTH FOLDED   CASE-enough-samples, CASE-haskell-share,
#                                    CASE-unsafe-ffi-share, CASE-safe-ffi-share
#                                    (each within 3 points), CASE-ffi-haskell-caller,
#                                    CASE-safe-sleep-not-idle
# ---------------------------------------------------------------------------
within() { # NAME MEASURED TRUTH
    local d
    d=$(echo "($2 - $3) * 100" | bc -l | tr -d -)
    if [ "$(echo "$d <= 3" | bc -l)" = 1 ]; then
        pass "$1"
    else
        fail "$1" "hsspy says $2, the program measured $3 (off by $d points)"
    fi
}

calib_checks() {
    local c=$1 truth=$2 folded=$3 t_unsafe t_haskell t_safe main_tid total
    read -r _ _ t_unsafe _ t_haskell _ t_safe <"$truth"
    if [ -z "${t_safe:-}" ]; then
        fail "$c-truth" "calib printed no measurement: $(head -c 300 "$truth")"
        return
    fi
    main_tid=$(sed -n 's/^tid \([0-9]*\) (calib);.*/\1/p' "$folded" | sort | uniq -c | sort -rn | awk 'NR == 1 { print $2 }')
    grep "^tid $main_tid " "$folded" >"$T/main.folded"
    total=$(total_count "$T/main.folded")
    share() { echo "scale=4; $(count_matching "$T/main.folded" "^tid $main_tid \\(calib\\);\\[$1\\];") / $total" | bc; }
    if [ "${total:-0}" -lt 1000 ]; then
        fail "$c-enough-samples" "only $total samples of the main thread"
        return
    fi
    pass "$c-enough-samples"
    within "$c-haskell-share" "$(share haskell)" "$t_haskell"
    within "$c-unsafe-ffi-share" "$(share unsafe-ffi)" "$t_unsafe"
    within "$c-safe-ffi-share" "$(share safe-ffi)" "$t_safe"

    # FFI samples: the frame right above the first C frame is the Haskell
    # code that made the call.
    local ffi with_caller
    ffi=$(count_matching "$T/main.folded" ';\[(unsafe|safe)-ffi\];')
    with_caller=$(count_matching "$T/main.folded" ';\[(unsafe|safe)-ffi\];.*;Main\.[^;]*;calib_(busy|sleep)(;| )')
    if [ "$ffi" -gt 0 ] && [ $((100 * with_caller)) -ge $((90 * ffi)) ]; then
        pass "$c-ffi-haskell-caller"
    else
        fail "$c-ffi-haskell-caller" "$with_caller of $ffi FFI samples have a Main.* frame right above calib_busy/calib_sleep"
    fi
    check "$c-safe-sleep-not-idle" "the safe sleep was dropped as idle" \
        has_line "$T/main.folded" '\[safe-ffi\];.*calib_sleep;.*nanosleep'
}
