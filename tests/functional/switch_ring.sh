# switch_ring - the per-CPU switch events' rings are read once a tick, so a
# longer tick needs a larger ring: at 20 Hz, four threads napping 100 us at
# a time (switcher: thousands of switches a second, a record and a sample of
# registers each) overflowed the 16 pages a ring had at every tick (80 of
# 80 on a 2-CPU VM), and hsspy asked /proc instead. With rings sized by the
# tick, no tick loses records, and the nappers' samples (with --idle, a
# sample of each at every tick, its stack read) are all where they nap.
# At 2 Hz no ring is large enough (they stop growing at 128 pages): a ring
# half full wakes hsspy (polling it between ticks) to read it early, and
# none is lost either. So too with --nonblocking, whose rings also hold the
# samples' stacks: the newest of each thread's is copied out before its
# ring is released (before, at 2 Hz they lost records at 7 ticks of 8).
# alone: counts the rings' lost records at rates another test's switches would change
. "$(dirname "$0")/../lib.sh"
require_ptrace

if ! cpu_events_allowed; then
    skip "all" "perf events on every CPU are not allowed here: a ring per thread tells"
    exit 0
fi
# (The rings share a budget of 1024 pages: past 8 CPUs, each gets fewer
# than the 128 this load needs on the CPUs it runs on.)
if [ "$(nproc)" -gt 8 ]; then
    skip "all" "$(nproc) CPUs: each ring gets less than this load needs at 20 Hz"
    exit 0
fi

# in_nap CASE FOLDED: the nappers sampled at (nearly) every one of $ticks
# ticks, four of them, each sample in its nap.
in_nap() {
    local all in_nap
    grep 'switch_loop' "$2" >"$T/nappers"
    all=$(total_count "$T/nappers")
    in_nap=$(count_matching "$T/nappers" ';switch_loop;switch_nap(;|$| )')
    check "$1" "$in_nap of $all nappers' samples in switch_loop;switch_nap" \
        test "$all" -ge $((4 * ticks * 9 / 10)) -a "$in_nap" = "$all"
}

# read_early CASE-PREFIX REPORT: a recording at 2 Hz (sets $ticks) whose
# rings were read between ticks, at least once between two ticks but when
# half full, not at every switch (some 70 in 4 s on a 2-CPU VM, for some
# 80000 switches), and lost no record.
read_early() {
    local drains
    ticks=$(sed -n 's/.* \([0-9][0-9]*\) ticks.*/\1/p' "$2" | head -n1)
    check "$1-ticks" "${ticks:-no} ticks in 4 s at 2 Hz" test "${ticks:-0}" -ge 6
    drains=$(sed -n 's/.*; their rings read \([0-9]*\) times between ticks, half full.*/\1/p' "$2")
    check "$1-drained" "$(grep -m1 'switches:' "$2" || echo 'no switches: line')" \
        test "${drains:-0}" -ge "$ticks" -a "${drains:-0}" -le 4000
    check "$1-none-lost" "$(grep -m1 'switches:' "$2")" lacks_line "$2" 'records lost at'
}

"$HSSPY" record -q -F 20 --idle -f raw -o "$T/rec.raw" -- "$W/switcher" 4 100 4 >"$T/out" 2>"$T/err"
check_status "record" $? "$T/err"
"$HSSPY" report -f report -o "$T/report" "$T/rec.raw" 2>"$T/err"
check_status "report" $? "$T/err"
"$HSSPY" report -f folded --threads --idle -o "$T/folded" "$T/rec.raw" 2>"$T/err"
check_status "folded" $? "$T/err"

ticks=$(sed -n 's/.* \([0-9][0-9]*\) ticks.*/\1/p' "$T/report" | head -n1)
check "ticks" "${ticks:-no} ticks in 4 s at 20 Hz" test "${ticks:-0}" -ge 60
check "per-cpu-records" "$(grep -m1 'switches:' "$T/report" || echo 'no switches: line')" \
    grep -q 'context-switch records of the per-CPU perf events' "$T/report"
check "none-lost" "$(grep -m1 'switches:' "$T/report")" \
    lacks_line "$T/report" 'records lost at'
in_nap "frames" "$T/folded"

# 2 Hz: ten times the switches between two ticks.
"$HSSPY" record -q -F 2 --idle -f report -o "$T/slow.report" -- "$W/switcher" 4 100 4 >"$T/out" 2>"$T/err"
check_status "slow-record" $? "$T/err"
read_early "slow" "$T/slow.report"

# --nonblocking at 2 Hz: the same, its rings holding samples with stacks,
# and a spinner on a CPU at nearly every sampling instant, whose sample is
# mostly read, its stack copied out, before its tick: its every sample
# must still be in switch_spin (a stack released with its ring, or not
# copied, gives other frames).
"$HSSPY" record -q -F 2 --idle --nonblocking -f raw -o "$T/nb.raw" -- "$W/switcher" 4 100 4 1 >"$T/out" 2>"$T/err"
check_status "nonblocking-record" $? "$T/err"
"$HSSPY" report -f report -o "$T/nb.report" "$T/nb.raw" 2>"$T/err"
check_status "nonblocking-report" $? "$T/err"
"$HSSPY" report -f folded --threads --idle -o "$T/nb.folded" "$T/nb.raw" 2>"$T/err"
check_status "nonblocking-folded" $? "$T/err"
read_early "nonblocking" "$T/nb.report"
check "nonblocking-none-dropped" "$(grep -m1 'nonblocking:' "$T/nb.report" || echo 'no nonblocking: line')" \
    lacks_line "$T/nb.report" 'dropped by the kernel'
in_nap "nonblocking-frames" "$T/nb.folded"
# (The spinner's first tick is a stop; the others come from perf samples.)
perf=$(sed -n 's/.*not stopped: \([0-9]*\) samples,.*/\1/p' "$T/nb.report")
# (Its samples, by its thread: whatever their frames.)
tid=$(grep -m1 -o '^tid [0-9]* ([^)]*);[^ ]*switch_spin' "$T/nb.folded" | cut -d' ' -f2)
grep "^tid ${tid:-none} " "$T/nb.folded" >"$T/nb.spinner"
all=$(total_count "$T/nb.spinner")
in_spin=$(count_matching "$T/nb.spinner" ';switch_spinner;switch_spin(;|$| )')
check "nonblocking-spinner" "$in_spin of $all spinner's samples in switch_spinner;switch_spin, ${perf:-no} from perf samples in ${ticks:-no} ticks: $(sort -t' ' -k2 -rn "$T/nb.spinner" | head -n 3 | cut -c1-200 | tr '\n' '|')" \
    test "${perf:-0}" -ge $((ticks / 2)) -a "$all" -ge $((ticks * 9 / 10)) -a "$in_spin" = "$all"
