#!/bin/bash
# bench.sh - `make bench`: what hsspy costs the program it profiles, next to
# what users would pick instead, and how hsspy itself holds up; every figure
# beside its goal (issue 7).
#
#  0. The floor: what this machine charges, without hsspy, for what a tick
#     is made of (tests/bench/stopcost.c): a sleep and its wake-up, a stop
#     of a thread running on another CPU and of one waiting for a CPU (its
#     PTRACE_INTERRUPT, wait4, PTRACE_GETREGS, PTRACE_CONT), a
#     process_vm_readv, a /proc read. Where an inter-processor interrupt
#     goes through a hypervisor, the stop of a running thread alone can
#     cost tens of microseconds, whatever the sampler.
#  1. Overhead. A fixed amount of work (tests/workloads/hs/bench.hs, +RTS
#     -N2, about 8 OS threads: Haskell compute, allocation, unsafe and safe
#     foreign calls) is timed alone, under `hsspy record` at 100 Hz and
#     1 kHz (and at 1 kHz with --realtime, and with --nice 0: the
#     normal priority, where the default is nice -10), under `perf record -g` at the same rates, and built with
#     -prof -fprof-auto running with +RTS -p, under `hsspy record
#     --nonblocking` at 100 Hz and 1 kHz (running threads sampled by the
#     kernel, not stopped); and, as a control, beside a
#     loop (tests/bench/burn.c) that takes the CPU hsspy took per tick at
#     1 kHz and does nothing else: what that much CPU costs a program that
#     fills the machine, whoever takes it. Then with a CPU to spare: the
#     program alone and under hsspy at 100 Hz and 1 kHz (and 1 kHz
#     --nonblocking), pinned to CPU 0
#     (BENCH_CPU, read by bench_c.c) while hsspy runs on CPU 1, so that
#     what hsspy costs it is its stops, not its CPU. The program times itself (from
#     its first fork to its last join), so start-up, attach and the
#     writing of profiles at exit are left out alike. Rounds are
#     interleaved, each in a new random order, so that the noise of a shared
#     machine hits every configuration alike; ratios are of medians, and
#     "paired" is the median of each round's ratio to that round's run
#     alone (less sensitive to a machine that is slow for minutes). Beside
#     it, an interval for the paired median from the rounds' order
#     statistics (no assumption on how the noise is spread; with 7 rounds,
#     the 2nd to the 6th of the sorted ratios, 87.5%). A slowdown goal is
#     met when both medians and the whole interval are within it, not met
#     when both medians and the whole interval are above it; otherwise
#     this machine's noise allows either, and the line says so.
#  2. hsspy's own figures at 1 kHz, from its report of those runs: pause
#     per stopped thread (median, p99), rate achieved, missed ticks, its CPU,
#     how many samples were taken without stopping the thread, how much
#     of the program's memory was copied, and in how many calls per stop;
#     for --nonblocking, how many samples came from perf samples, how many
#     stops were left, and the walk errors (stacks read late).
#  3. Scale: hsspy's CPU per tick on a program of 200 idle threads and a
#     busy one (tests/workloads/waiters), told which threads ran by
#     per-CPU context-switch records (where hsspy may watch every CPU), by
#     a ring per thread (--per-thread-events), by /proc (--no-perf-events),
#     and with --nonblocking by its sampling events' records; and on
#     1000 idle threads at 1 kHz; on 50 threads blocked in 1 ms sleeps and
#     a busy one (tests/workloads/nappers), at 100 Hz and 1 kHz, hsspy's
#     CPU per tick, the stops a tick and their pause. Then an
#     RSS_MINUTES-long recording (default 10) at 1 kHz of the same
#     workload repeated without end (`hsspy record -p PID -f raw`): hsspy's
#     peak RSS (the kernel's high-water mark for the whole run, writing
#     included) and the rate it sustained; then the time `hsspy report`
#     takes on a raw file of RAW_SAMPLES (default 1 M) samples, cut from that
#     recording (or, if it has fewer, that recording's samples repeated;
#     the output says which), and on the whole recording.
#
# Figures, not pass/fail: a shared machine is too noisy for timed asserts,
# and none of this is part of `make check`.
#
#   make bench                  about 24 min (7 rounds, 10 min of recording)
#   QUICK=1 make bench          about 7 min (3 rounds, 1 min of recording)
#   ROUNDS=N SCALE=K RSS_MINUTES=M RAW_SAMPLES=N make bench
set -eu
cd "$(dirname "$0")/../.."
ROOT=$PWD
QUICK=${QUICK:-0}
if [ "$QUICK" = 1 ]; then
    ROUNDS=${ROUNDS:-3}
    RSS_MINUTES=${RSS_MINUTES:-1}
else
    ROUNDS=${ROUNDS:-7}
    RSS_MINUTES=${RSS_MINUTES:-10}
fi
SCALE=${SCALE:-1}
RAW_SAMPLES=${RAW_SAMPLES:-1000000}
HSSPY=$ROOT/hsspy
RESIZE=$ROOT/build/bench/raw_resize
BURN=$ROOT/build/bench/burn
STOPCOST=$ROOT/build/bench/stopcost
HS=$ROOT/build/workloads/hs
BENCH=$HS/bench
PROF=$HS/bench_prof
tmp=$(mktemp -d /tmp/hsspy-bench.XXXXXX)
bg_pid=""
burn_pid=""
cleanup() {
    if [ -n "$bg_pid" ]; then kill "$bg_pid" 2>/dev/null || true; wait "$bg_pid" 2>/dev/null || true; fi
    if [ -n "$burn_pid" ]; then kill "$burn_pid" 2>/dev/null || true; wait "$burn_pid" 2>/dev/null || true; fi
    rm -rf "$tmp"
}
trap cleanup EXIT
t_start=$SECONDS

say() { echo "bench: $*" >&2; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (!NR) print "?"; else print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
range() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR) printf "%s-%s", lo, hi }'; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
calc() { echo "$*" | bc -l; }
# field REPORTS SED-EXPR: one value per report, their median
field() { sed -n "$2" "$1" | median; }
# met VALUE OP GOAL: "met" or "NOT met"
met() { if [ "$(calc "$1 $2 $3")" = 1 ]; then echo "met"; else echo "NOT met"; fi; }
# interval: the paired ratios, one a line, in; "LO HI LEVEL" out: the
# innermost order statistics r(k) and r(n+1-k) that still hold the median
# with a probability of at least 85% whatever the noise's distribution
# (the binomial sign test: 1 - 2 P(Bin(n, 1/2) < k)); with fewer than 4
# rounds none do, and it is the lowest and highest, at what they hold.
interval() {
    sort -g | awk '{ v[NR] = $1 }
    END {
        n = NR; if (!n) { print "? ? ?"; exit }
        k = 1; cov = 1 - 2 / 2 ^ n; c = 1; tail = 1 # tail: sum of C(n, i), i < k
        for (j = 2; j <= (n + 1) / 2; j++) {
            c = c * (n - j + 2) / (j - 1); t = tail + c
            if (1 - 2 * t / 2 ^ n < 0.85) break
            k = j; tail = t; cov = 1 - 2 * t / 2 ^ n
        }
        printf "%s %s %.1f\n", v[k], v[n + 1 - k], 100 * cov
    }'
}
# met_both RATIO PAIRED LO HI GOAL: a slowdown goal is met when both
# medians and the paired interval are within it, not met when all are
# above it; otherwise the noise of the rounds allows either
met_both() {
    local r p l h
    r=$(met "$1" "<=" "$5") p=$(met "$2" "<=" "$5") l=$(met "$3" "<=" "$5") h=$(met "$4" "<=" "$5")
    if [ "$r $p $h" = "met met met" ]; then
        echo "met"
    elif [ "$r $p $l" = "NOT met NOT met NOT met" ]; then
        echo "NOT met"
    else
        echo "not shown: the noise allows either"
    fi
}

# --- tools -----------------------------------------------------------------
install_missing() { # COMMAND PACKAGE
    command -v "$1" >/dev/null 2>&1 && return 0
    [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || return 1
    say "installing $2 (for $1)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$2" >/dev/null 2>&1 ||
        { apt-get update -q >/dev/null 2>&1 &&
          DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$2" >/dev/null 2>&1; }
    command -v "$1" >/dev/null 2>&1
}
install_missing bc bc || { echo "bench: needs bc (apt-get install bc)" >&2; exit 1; }
install_missing ghc ghc || { echo "bench: needs ghc (apt-get install ghc ghc-prof)" >&2; exit 1; }
[ -x /usr/bin/time ] || install_missing /usr/bin/time time ||
    { echo "bench: needs GNU time, /usr/bin/time (apt-get install time)" >&2; exit 1; }

# --- the workload, normal and profiled ------------------------------------
build() { # OUT FLAGS...
    local out=$1; shift
    local src=$ROOT/tests/workloads/hs
    if [ ! -x "$out" ] || [ "$src/bench.hs" -nt "$out" ] || [ "$src/bench_c.c" -nt "$out" ]; then
        mkdir -p "$out.obj"
        # Named from their directory, so that bench_c.o goes to -outputdir.
        (cd "$src" && ghc -v0 -outputdir "$out.obj" -o "$out" "$@" bench.hs bench_c.c) >&2
    fi
}
build "$BENCH" -O2 -g -threaded -rtsopts
build "$PROF" -O2 -prof -fprof-auto -threaded -rtsopts ||
    { echo "bench: cannot build the -prof workload (apt-get install ghc-prof)" >&2; exit 1; }

# --- perf: installed, and able to sample here? ------------------------------
perf_ok=0 perf_why=""
if ! install_missing perf linux-perf; then
    perf_why="perf is not installed (apt-get install linux-perf)"
elif ! perf record -q -g -F 1000 -o "$tmp/probe.data" -- sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i + 1)); done' >/dev/null 2>"$tmp/probe.err"; then
    perf_why="perf cannot sample here: $(grep -v '^$' "$tmp/probe.err" | head -n1)"
elif [ "$(perf script -i "$tmp/probe.data" 2>/dev/null | grep -c .)" -eq 0 ]; then
    perf_why="perf records no samples here (no perf_event access in this VM or container?)"
else
    perf_ok=1
fi
rm -f "$tmp/probe.data"

# --- 0. the floor: what this machine charges for a stop, without hsspy ------
say "measuring what a stop costs here, without hsspy (load $(load))"
floor_why=""
for i in 1 2 3; do
    "$STOPCOST" 1000 >"$tmp/floor.$i" 2>"$tmp/floor.err" ||
        { floor_why="$(head -n1 "$tmp/floor.err")"; floor_why="not measured (${floor_why:-stopcost failed})"; break; }
done
# floor NAME: its median over the three runs
floor() { cat "$tmp"/floor.? | sed -n "s/^$1 //p" | median; }

# --- 1. overhead: interleaved rounds ----------------------------------------
CONFIGS="alone h100 h1k h1kr h1k0 n100 n1k burn prof"
[ $perf_ok = 1 ] && CONFIGS="alone h100 h1k h1kr h1k0 n100 n1k burn p100 p1k prof"
# With a CPU to spare: the program on CPU 0 only, hsspy on CPU 1, so that
# what hsspy costs the program is its stops alone, not its CPU.
spare=0
[ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null && spare=1 && CONFIGS="$CONFIGS alone1 h1001 h1k1 n1k1"
declare -A LABEL=(
    [alone]="alone"
    [h100]="hsspy record -F 100"
    [h1k]="hsspy record -F 1000"
    [h1kr]="  same, --realtime"
    [h1k0]="  same, --nice 0"
    [n100]="hsspy record -F 100 --nonblocking"
    [n1k]="hsspy record -F 1000 --nonblocking"
    [n1k1]="  same, --nonblocking"
    [burn]="control: hsspy's CPU, no stops"
    [alone1]="alone, on CPU 0 only"
    [h1001]="hsspy -F 100 on CPU 1"
    [h1k1]="hsspy -F 1000 on CPU 1"
    [p100]="perf record -g -F 100"
    [p1k]="perf record -g -F 1000"
    [prof]="-prof -fprof-auto, +RTS -p"
)
ARGS=("$SCALE" +RTS -N2 -RTS)

elapsed() { sed -n 's/^elapsed_ms \([0-9.]*\)$/\1/p' | tail -n1; }

run_cfg() { # CONFIG: one timed run; its time appended to $tmp/CONFIG.ms
    local c=$1 ms
    case $c in
    alone) ms=$("$BENCH" "${ARGS[@]}" | elapsed) ;;
    alone1) ms=$(BENCH_CPU=0 "$BENCH" "${ARGS[@]}" | elapsed) ;;
    h100 | h1k | h1kr | h1k0 | h1001 | h1k1 | n100 | n1k | n1k1)
        local hz=1000 opt=() pin=()
        [ "$c" = h100 ] || [ "$c" = h1001 ] || [ "$c" = n100 ] && hz=100
        [ "$c" = h1kr ] && opt=(--realtime)
        [ "$c" = h1k0 ] && opt=(--nice 0)
        [ "${c:0:1}" = n ] && opt=(--nonblocking)
        # (the program pins itself to CPU 0 as it starts: bench_c.c)
        [ "$c" = h1k1 ] || [ "$c" = h1001 ] || [ "$c" = n1k1 ] && pin=(env BENCH_CPU=0 taskset -c 1)
        ms=$("${pin[@]}" "$HSSPY" record -q "${opt[@]}" -F $hz -f report -o "$tmp/rep" -- "$BENCH" "${ARGS[@]}" | elapsed)
        cat "$tmp/rep" >>"$tmp/$c.reports"
        ;;
    p100 | p1k)
        local hz=100; [ "$c" = p1k ] && hz=1000
        ms=$(perf record -q -g -F $hz -o "$tmp/perf.data" -- "$BENCH" "${ARGS[@]}" 2>/dev/null | elapsed)
        rm -f "$tmp/perf.data"
        ;;
    prof) ms=$(cd "$tmp" && "$PROF" "${ARGS[@]}" +RTS -p -RTS | elapsed); rm -f "$tmp"/*.prof ;;
    burn)
        # hsspy's CPU per tick at 1 kHz so far (130 us before its first run)
        local us=130
        [ -s "$tmp/h1k.reports" ] &&
            us=$(field "$tmp/h1k.reports" 's/.*of one CPU while recording (\([0-9.]*\) us per tick.*/\1/p')
        us=${us%.*}
        echo "$us" >>"$tmp/burn.us"
        "$BURN" "$us" &
        burn_pid=$!
        ms=$("$BENCH" "${ARGS[@]}" | elapsed)
        kill "$burn_pid"
        wait "$burn_pid" 2>/dev/null || true
        burn_pid=""
        ;;
    esac
    [ -n "$ms" ] || { echo "bench: the $c run printed no time" >&2; exit 1; }
    echo "$ms" >>"$tmp/$c.ms"
}

load_before=$(load)
say "$ROUNDS rounds of: $CONFIGS (load $load_before)"
read -r -a cfgs <<<"$CONFIGS"
for r in $(seq 0 $((ROUNDS - 1))); do
    line=""
    # A new random order each round: on this kind of machine a run right
    # after a heavy one (-prof's, say) is slower, so a fixed or rotated
    # order would always handicap the same configuration.
    for c in $(printf '%s\n' "${cfgs[@]}" | shuf); do
        run_cfg "$c"
        line="$line $c $(tail -n1 "$tmp/$c.ms")"
    done
    say "round $((r + 1)):$line ms (load $(load))"
done
load_after=$(load)

# --- 2. per-sample figures, from hsspy's reports ------------------------------
hsspy_figures() { # CONFIG -> sets F_* from that config's reports
    local f=$tmp/$1.reports
    F_PAUSE_MED=$(field "$f" 's/.*per stopped thread: .*median \([0-9.]*\) us.*/\1/p')
    F_PAUSE_P99=$(field "$f" 's/.*per stopped thread: .*p99 \([0-9.]*\) us.*/\1/p')
    F_RATE=$(field "$f" 's/.*Hz asked, \([0-9.]*\) Hz achieved.*/\1/p')
    F_MISSED=$(sed -n 's/.*achieved, \([0-9]*\) ticks, \([0-9]*\) missed.*/\2 \1/p' "$f" |
        awk '{ print 100 * $1 / ($1 + $2) }' | median)
    F_CPU=$(field "$f" 's/.*hsspy: *\([0-9.]*\)% of one CPU.*/\1/p')
    F_TICK=$(field "$f" 's/.*of one CPU while recording (\([0-9.]*\) us per tick.*/\1/p')
    F_PRIO=$(sed -n 's/.*of one CPU while recording ([0-9.]* us per tick[^)]*), at \(.*\)$/\1/p' "$f" |
        sort | uniq -c | sort -rn | sed -n '1s/^ *[0-9]* //p')
    F_THREADS=$(field "$f" 's/.*thread samples from \([0-9]*\) threads.*/\1/p')
    F_SAMPLES=$(field "$f" 's/.*samples: *\([0-9]*\) thread samples.*/\1/p')
    F_REPEATED=$(sed -n 's/.*idle: *\([0-9]*\) samples of threads that had not run.*/\1/p' "$f" | median)
    F_SOFT=$(sed -n 's/.*blocked: *\([0-9]*\) samples of threads blocked in a system call.*/\1/p' "$f" | median)
    F_REFUSED=$(sed -n 's/.*blocked: .*; \([0-9]*\) were stopped after all.*/\1/p' "$f" | median)
    F_PREEMPT=$(sed -n 's/.*preempted: *\([0-9]*\) samples of threads waiting for a CPU.*/\1/p' "$f" | median)
    F_PREEMPT_REFUSED=$(sed -n 's/.*preempted: .*; \([0-9]*\) were stopped after all.*/\1/p' "$f" | median)
    F_COPIED=$(field "$f" 's/.*copied: *\([0-9.]*\) KB .*per thread.*/\1/p')
    F_COPIED_TICK=$(field "$f" 's/.*copied: .*, \([0-9.]*\) KB per tick.*/\1/p')
    F_READS=$(field "$f" 's/.*memory read in \([0-9.]*\) process_vm_readv calls per stop.*/\1/p')
    F_READS_WAITING=$(field "$f" 's/.*calls per stop (\([0-9.]*\) of them while its registers were awaited.*/\1/p')
    F_RINGS=$(sed -n 's/.*records (perf events) for \(all \)*\([0-9]*\) threads.*/\2/p' "$f" | median)
    F_CPUWIDE=$(sed -n 's/.*records of the per-CPU perf events for all \([0-9]*\) threads.*/\1/p' "$f" | median)
    F_BUSY=$(sed -n 's/.*; \([0-9]*\) of them switched more than once a tick.*/\1/p' "$f" | median)
    F_ERRORS=$(sed -n 's/^ *errors: *\([0-9]*\).*/\1/p' "$f" | median)
    F_PS=$(sed -n 's/.*not stopped: \([0-9]*\) samples.*/\1/p' "$f" | median)
    F_STALE=$(sed -n 's/.*, \([0-9]*\) repeated (it ran, but was on no CPU.*/\1/p' "$f" | median)
    F_STOPS=$(sed -n 's/.*; \([0-9]*\) stops in all.*/\1/p' "$f" | median)
}

# --- 3. scale: many idle threads; a long recording, then reports of raw files -----
WAITERS=$ROOT/build/workloads/waiters
# idle_tick HZ [OPTION]: hsspy's CPU per tick on 200 idle threads (IDLE_N)
# and a busy one, median of 3 recordings of 3 s. Attached once every
# thread waits: the first tick, which the report counts apart, then stops
# and reads each of them in full, and the rest is the steady cost (launched
# instead, the threads would start during the recording, and their first
# stops, several times a steady sample's cost, would count as ticks').
idle_tick() {
    local i w
    for i in 1 2 3; do
        "$WAITERS" 5 "${IDLE_N:-200}" >"$tmp/w.out" &
        w=$!
        for _ in $(seq 250); do grep -q ready "$tmp/w.out" && break; sleep 0.02; done
        "$HSSPY" record -q -F "$1" -d 3 ${2:+"$2"} -f report -o "$tmp/w.rep" -p "$w" >/dev/null
        wait "$w"
        sed -n 's/.*of one CPU while recording (\([0-9.]*\) us per tick.*/\1/p' "$tmp/w.rep"
    done | median
}
say "hsspy on 200 idle threads (load $(load))"
idle_rec100=$(idle_tick 100) idle_proc100=$(idle_tick 100 --no-perf-events)
idle_rec1k=$(idle_tick 1000)
# (what told, in the default mode: per-CPU records where allowed)
idle_how=$(sed -n 's/.*told by \(the context-switch records of the per-CPU perf events\|its context-switch records (perf events)\).*/\1/p' "$tmp/w.rep")
idle_proc1k=$(idle_tick 1000 --no-perf-events)
idle_nb100=$(idle_tick 100 --nonblocking) idle_nb1k=$(idle_tick 1000 --nonblocking)
idle_pt100=$(idle_tick 100 --per-thread-events) idle_pt1k=$(idle_tick 1000 --per-thread-events)
idle_many1k=$(IDLE_N=1000 idle_tick 1000)

# nap_figures HZ: on 50 threads sleeping 1 ms at a time and a busy one
# (tests/workloads/nappers: blocked at nearly every tick, but run between
# any two), 3 recordings of 3 s, medians: hsspy's CPU per tick, stops per
# tick, the stopped threads' pause (median, p99), samples of blocked
# threads per tick (taken without a stop).
NAPPERS=$ROOT/build/workloads/nappers
nap_figures() {
    local i w
    : >"$tmp/nap.figs"
    for i in 1 2 3; do
        "$NAPPERS" 50 5 1 >"$tmp/n.out" &
        w=$!
        for _ in $(seq 250); do grep -q ready "$tmp/n.out" && break; sleep 0.02; done
        "$HSSPY" record -q --idle -F "$1" -d 3 -f report -o "$tmp/n.rep" -p "$w" >/dev/null
        kill "$w" 2>/dev/null || true
        wait "$w" 2>/dev/null || true
        awk '
            /^ *rate:/ { for (k = 1; k <= NF; k++) if ($k == "ticks,") t = $(k - 1) }
            /per stopped thread:/ { for (k = 1; k <= NF; k++) {
                if ($k == "median") m = $(k + 1); if ($k == "p99") q = $(k + 1)
                if ($k == "stops)") s = substr($(k - 1), 2) } }
            /of one CPU while recording/ { sub(/.*recording \(/, ""); u = $1 }
            /^ *blocked:/ { b = $2 }
            END { printf "%s %.1f %s %s %.1f\n", u, s / t, m, q, b / t }' "$tmp/n.rep" >>"$tmp/nap.figs"
    done
    local k out=""
    for k in 1 2 3 4 5; do
        out="$out $(awk -v k=$k '{ print $k }' "$tmp/nap.figs" | tr -d ',' | median)"
    done
    echo "$out"
}
say "hsspy on 50 threads blocked in short sleeps (load $(load))"
read -r nap_us100 nap_stops100 nap_med100 nap_p99_100 nap_blk100 <<<"$(nap_figures 100)"
read -r nap_us1k nap_stops1k nap_med1k nap_p99_1k nap_blk1k <<<"$(nap_figures 1000)"

say "recording $RSS_MINUTES min at 1 kHz for the peak RSS (load $(load))"
"$BENCH" "$SCALE" 0 +RTS -N2 -RTS >/dev/null &
bg_pid=$!
sleep 1
/usr/bin/time -f "%M" -o "$tmp/rss" \
    "$HSSPY" record -q -F 1000 -d "$(calc "$RSS_MINUTES * 60")" -f raw -o "$tmp/long.raw" -p "$bg_pid"
kill "$bg_pid" 2>/dev/null || true
wait "$bg_pid" 2>/dev/null || true
bg_pid=""
rss_kb=$(tail -n1 "$tmp/rss")
"$HSSPY" report -q "$tmp/long.raw" -o "$tmp/long.report"
hsspy_figures_long() {
    local f=$tmp/long.report
    L_RATE=$(field "$f" 's/.*Hz asked, \([0-9.]*\) Hz achieved.*/\1/p')
    L_MISSED=$(sed -n 's/.*achieved, \([0-9]*\) ticks, \([0-9]*\) missed.*/\2 \1/p' "$f" |
        awk '{ print 100 * $1 / ($1 + $2) }')
    L_SAMPLES=$(field "$f" 's/.*samples: *\([0-9]*\) thread samples.*/\1/p')
    L_CPU=$(field "$f" 's/.*hsspy: *\([0-9.]*\)% of one CPU.*/\1/p')
    L_PAUSE_MED=$(field "$f" 's/.*per stopped thread: .*median \([0-9.]*\) us.*/\1/p')
}
hsspy_figures_long

say "making a raw file of $RAW_SAMPLES samples (load $(load))"
resized=$("$RESIZE" "$tmp/long.raw" "$tmp/m.raw" "$RAW_SAMPLES")
# time_report FILE FORMAT: median of 3 runs, in seconds (and peak RSS, MB)
time_report() {
    local i
    : >"$tmp/times"
    for i in 1 2 3; do
        /usr/bin/time -f "%e %M" -o "$tmp/t1" "$HSSPY" report -q -f "$2" -o /dev/null "$1"
        tail -n1 "$tmp/t1" >>"$tmp/times"
    done
    echo "$(awk '{ print $1 }' "$tmp/times" | median) $(awk '{ print $2 / 1024 }' "$tmp/times" | median)"
}
say "timing hsspy report (load $(load))"
read -r rep_s rep_mb <<<"$(time_report "$tmp/m.raw" report)"
read -r fold_s fold_mb <<<"$(time_report "$tmp/m.raw" folded)"
other=""
for fmt in svg calls pprof speedscope trace; do
    read -r s _ <<<"$(time_report "$tmp/m.raw" $fmt)"
    other="$other $fmt $s s,"
done
read -r long_s long_mb <<<"$(time_report "$tmp/long.raw" report)"
raw_mb=$(calc "$(stat -c %s "$tmp/m.raw") / 1048576")
load_end=$(load)

# --- the figures ---------------------------------------------------------------
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
virt=$(systemd-detect-virt 2>/dev/null || true)
printf '\nhsspy bench, %s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
printf 'machine: %s CPUs (%s)%s, Linux %s, %s MB RAM; GHC %s\n' "$(nproc)" "$cpu" \
    "${virt:+, virtualized ($virt)}" "$(uname -r)" \
    "$(awk '/^MemTotal/ { printf "%d", $2 / 1024 }' /proc/meminfo)" "$(ghc --numeric-version)"
printf 'load average (1, 5, 15 min): %s before, %s after the rounds, %s at the end\n' \
    "$load_before" "$load_after" "$load_end"
printf 'workload: tests/workloads/hs/bench.hs %s +RTS -N2 (a fixed amount of work)\n' "$SCALE"

printf '\n0. what this machine charges, without hsspy (tests/bench/stopcost.c: a tracer and a\n'
printf '   spinning child, once a millisecond; the tracer'"'"'s CPU per operation, median of 3x1000)\n'
if [ -n "$floor_why" ]; then
    printf '   %s\n' "$floor_why"
else
    printf '   a system call %s us; a 1 ms sleep and its wake-up %s us; process_vm_readv of 8 KB %s us;\n' \
        "$(floor syscall)" "$(floor sleep)" "$(floor vm_readv)"
    printf '   a read of /proc/PID/task/TID/syscall %s us\n' "$(floor proc_syscall)"
    for w in running waiting; do
        [ -n "$(floor ${w}_all | grep -v '?')" ] || continue
        case $w in
        running) printf '   a stop of a thread running on another CPU: %s us' "$(floor running_all)" ;;
        waiting) printf '   a stop of a thread waiting for the tracer'"'"'s CPU: %s us' "$(floor waiting_all)" ;;
        esac
        printf ' (PTRACE_INTERRUPT %s, wait4 %s,\n     PTRACE_GETREGS %s, PTRACE_CONT %s); the thread held stopped %s us\n' \
            "$(floor ${w}_interrupt)" "$(floor ${w}_wait)" "$(floor ${w}_getregs)" "$(floor ${w}_cont)" \
            "$(floor ${w}_pause)"
    done
    [ "$(floor running_all)" = "?" ] ||
        printf '   so a tick that stops one running thread and reads its stack costs at least %s us\n' \
            "$(calc "$(floor sleep) + $(floor running_all) + $(floor vm_readv)")"
fi

printf '\n1. wall time of the workload, median of %d interleaved rounds (min-max)\n' "$ROUNDS"
a=$(median <"$tmp/alone.ms")
level=$(seq "$ROUNDS" | interval | cut -d' ' -f3)
printf '   (interval: where the paired median lies, with a probability of %s%%, from the rounds alone)\n' "$level"
printf '   %-32s %9s ms %-15s %7s %7s %-13s  %s\n' "configuration" "median" "(min-max)" "ratio" "paired" " interval" "goal"
for c in $CONFIGS; do
    base=alone
    if [ "$c" = alone1 ]; then
        printf '   with a CPU to spare: the program on CPU 0 only, hsspy on CPU 1 (ratios to the first row below)\n'
        a=$(median <"$tmp/alone1.ms")
    fi
    [ "$c" = alone1 ] || [ "$c" = h1k1 ] || [ "$c" = h1001 ] || [ "$c" = n1k1 ] && base=alone1
    m=$(median <"$tmp/$c.ms")
    ratio=$(calc "$m / $a")
    paste "$tmp/$c.ms" "$tmp/$base.ms" | awk '{ print $1 / $2 }' >"$tmp/$c.paired"
    paired=$(median <"$tmp/$c.paired")
    read -r lo hi _ < <(interval <"$tmp/$c.paired")
    goal=""
    case $c in
    h100 | h1001 | n100) goal="<= 1.01: $(met_both "$ratio" "$paired" "$lo" "$hi" 1.01)" ;;
    h1k | h1k1 | n1k | n1k1) goal="<= 1.05: $(met_both "$ratio" "$paired" "$lo" "$hi" 1.05)" ;;
    burn) goal="($(median <"$tmp/burn.us") us of CPU per ms)" ;;
    esac
    printf '   %-32s %9.0f ms %-15s %7.3f %7.3f %-13s  %s\n' "${LABEL[$c]}" "$m" "($(range <"$tmp/$c.ms"))" \
        "$ratio" "$paired" "$(printf ' %.3f-%.3f' "$lo" "$hi")" "$goal"
done
[ $perf_ok = 1 ] || printf '   perf: %s\n' "$perf_why"

printf '\n2. hsspy per sample (its own report, median over the rounds)\n'
figs="h1k h1kr h1k0 h100"
[ $spare = 1 ] && figs="h1k h1kr h1k0 h1k1 h100"
for c in $figs; do
    hsspy_figures $c
    hz=1000; [ $c = h100 ] && hz=100
    how=""; [ $c = h1kr ] && how=", --realtime"
    [ $c = h1k0 ] && how=", --nice 0"
    [ $c = h1k1 ] && how=", on CPU 1, the program on CPU 0"
    printf '   at %4d Hz%s: pause per stopped thread median %s us (goal <= 30: %s), p99 %s us;\n' \
        $hz "$how" "$F_PAUSE_MED" "$(met "$F_PAUSE_MED" "<=" 30)" "$F_PAUSE_P99"
    printf '              rate %s Hz, missed ticks %.2f%%%s; hsspy %s%% of one CPU, %s us per tick,\n' \
        "$F_RATE" "$F_MISSED" \
        "$([ $c != h100 ] && echo " (goal <= 1%: $(met "$F_MISSED" "<=" 1))")" "$F_CPU" "$F_TICK"
    printf '              at %s\n' "${F_PRIO:-?}"
    printf '              %s samples of %s threads; not stopped: %s that had not run since their last\n' \
        "$F_SAMPLES" "$F_THREADS" "${F_REPEATED:-0}"
    printf '              sample (previous stack reused), %s blocked in a call\n' \
        "${F_SOFT:-0}"
    printf '              (copied while they slept; %s more were stopped after all), %s waiting\n' \
        "${F_REFUSED:-0}" "${F_PREEMPT:-0}"
    printf '              for a CPU since preempted (from that switch'"'"'s registers; %s more were\n' \
        "${F_PREEMPT_REFUSED:-0}"
    printf '              stopped after all)\n'
    printf '              copied from its memory: %s KB per thread sampled, %s KB per tick;\n' \
        "$F_COPIED" "$F_COPIED_TICK"
    printf '              %s process_vm_readv calls per stop, while the thread was stopped\n' \
        "${F_READS:-?}"
    printf '              (%s of them while its registers were awaited);\n' "${F_READS_WAITING:-0}"
    if [ "${F_CPUWIDE:-?}" != "?" ]; then
        printf '              which threads ran told by per-CPU context-switch records, for %s\n' \
            "$F_CPUWIDE"
        printf '              threads (no event per thread); walk errors %s\n' "${F_ERRORS:-0}"
    else
        printf '              context-switch records on %s threads, %s of them closed for a while\n' \
            "${F_RINGS:-no}" "${F_BUSY:-0}"
        printf '              (switching more than once a tick); walk errors %s\n' "${F_ERRORS:-0}"
    fi
done
hsspy_figures n1k
printf '   at 1000 Hz, --nonblocking: %s samples of %s threads, %s from perf samples (their\n' \
    "$F_SAMPLES" "$F_THREADS" "${F_PS:-0}"
printf '              Haskell stacks read while they ran on), %s repeated (on no CPU at an instant),\n' \
    "${F_STALE:-0}"
printf '              %s stops in all; walk errors %s (%s%% of samples); rate %s Hz, missed\n' \
    "${F_STOPS:-?}" "${F_ERRORS:-0}" "$(printf '%.2f' "$(calc "100 * ${F_ERRORS:-0} / $F_SAMPLES")")" "$F_RATE"
printf '              ticks %.2f%%; hsspy %s%% of one CPU, %s us per tick\n' "$F_MISSED" "$F_CPU" "$F_TICK"

printf '\n3. scale\n'
printf '   hsspy per tick on 200 idle threads and a busy one: %s us at 100 Hz, %s us at 1 kHz,\n' \
    "$idle_rec100" "$idle_rec1k"
printf '     told which threads ran by %s; by /proc (--no-perf-events)\n' \
    "$(echo "${idle_how:-context-switch records}" | sed 's/the context-switch records of the per-CPU perf events/per-CPU context-switch records/; s/its context-switch records (perf events)/a ring per thread/')"
printf '     %s us at 100 Hz, %s us at 1 kHz; with --nonblocking (the per-CPU events'"'"' switch\n' \
    "$idle_proc100" "$idle_proc1k"
printf '     records, no event per thread) %s us at 100 Hz, %s us at 1 kHz; with a ring per thread\n' \
    "$idle_nb100" "$idle_nb1k"
printf '     (--per-thread-events) %s us at 100 Hz, %s us at 1 kHz\n' "$idle_pt100" "$idle_pt1k"
printf '   the same with 1000 idle threads: %s us at 1 kHz\n' "$idle_many1k"
printf '   50 threads sleeping 1 ms at a time and a busy one (nappers; --idle): hsspy per tick\n'
printf '     %s us at 100 Hz, %s us at 1 kHz; stops a tick %s and %s (pause median %s and %s us,\n' \
    "$nap_us100" "$nap_us1k" "$nap_stops100" "$nap_stops1k" "$nap_med100" "$nap_med1k"
printf '     p99 %s and %s); samples of blocked threads taken without a stop, a tick: %s and %s\n' \
    "$nap_p99_100" "$nap_p99_1k" "$nap_blk100" "$nap_blk1k"
printf '   %s min recording at 1 kHz (hsspy record -p PID -f raw): peak RSS %.1f MB (goal <= 50: %s)\n' \
    "$RSS_MINUTES" "$(calc "$rss_kb / 1024")" "$(met "$rss_kb / 1024" "<=" 50)"
printf '     rate %s Hz sustained, missed ticks %.2f%% (goal <= 1%%: %s), %s samples, hsspy %s%% of one CPU,\n' \
    "$L_RATE" "$L_MISSED" "$(met "$L_MISSED" "<=" 1)" "$L_SAMPLES" "$L_CPU"
printf '     pause median %s us\n' "$L_PAUSE_MED"
printf '   hsspy report of %s samples (%.0f MB raw file; %s of the recording above):\n' \
    "$RAW_SAMPLES" "$raw_mb" "$(echo "$resized" | sed 's/^kept \([0-9]*\) -> \([0-9]*\).*/the first \2 samples of \1/; s/^repeated \([0-9]*\) -> .*/its \1 samples repeated in time/')"
printf '     -f report %s s (goal <= 2 s: %s, peak RSS %.0f MB), -f folded %s s;\n' \
    "$rep_s" "$(met "$rep_s" "<=" 2)" "$rep_mb" "$fold_s"
printf '     other formats:%s\n' "${other%,}"
printf '   hsspy report of the whole recording (%s samples): %s s, peak RSS %.0f MB\n' \
    "$L_SAMPLES" "$long_s" "$long_mb"
printf '\nmake bench took %d min %d s (QUICK=%s ROUNDS=%s SCALE=%s RSS_MINUTES=%s RAW_SAMPLES=%s)\n' \
    $(((SECONDS - t_start) / 60)) $(((SECONDS - t_start) % 60)) "$QUICK" "$ROUNDS" "$SCALE" \
    "$RSS_MINUTES" "$RAW_SAMPLES"
