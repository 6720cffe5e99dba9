# ghc_switch - one OS thread running three Haskell threads in turn, a
# millisecond each: at nearly every sample it is on another Haskell
# thread's stack than at its last, which reading ahead what the last sample
# needed cannot foresee. Its registers can: SpLim (r15) says which stack
# chunk it is on and Sp (rbp) where in it, so the chunk comes with the C
# stack in the stop's first process_vm_readv, and the TSO (moved by every
# collection) is not needed. The samples show the Haskell function the
# threads run, and a stop takes well under two reads once its registers
# are known (about 3.3 when the chunk was found through the TSO). For
# every GHC version here.
. "$(dirname "$0")/../lib.sh"
require_ptrace

switching() { # SUITE CASE-PREFIX
    local suite=$1 c=$2 prog n all reads
    prog=$(hs_build "$suite" switch switch.hs -- -O1 -threaded -rtsopts) ||
        { fail "$c-build" "ghc could not build switch.hs"; return; }
    # (-A32m: a collection every 2 to 3 ms, as switch.hs says. With the
    # default 1 MB nursery it came every 80 us, each with a system call
    # (sched_getaffinity), and on a VM whose interrupts between CPUs take
    # 50 us or more most stops landed at one, as a thread stops at its next
    # entry to the kernel: 30% of the samples there, 1% by perf.)
    local rts=(+RTS -N1 -V0.001 -C0.001 -A32m -RTS)
    hs_record "$suite" /dev/null "$T/err" -q -F 499 -o "$T/switch.folded" -- "$prog" 2 3 "${rts[@]}"
    check_status "$c-record" $? "$T/err"
    n=$(count_matching "$T/switch.folded" '^\[haskell\];\[catch\];Main\.([$]w)?spin(;|$| )')
    all=$(total_count "$T/switch.folded")
    check "$c-frames" "$n of $all samples are [haskell];[catch];Main.spin: $(sort -t' ' -k2 -rn "$T/switch.folded" | head -n 3 | cut -c1-200 | tr '\n' '|')" \
        test "$all" -ge 200 -a "$n" -ge $((all * 3 / 4))
    # Reads per stop are those of the stops of the thread running Haskell
    # code. On a machine busy with other work that thread waits for a CPU
    # at most ticks, and is then sampled from the switch that preempted it,
    # not stopped: the few stops left (under 100 of some 950, seen once)
    # are mostly elsewhere (in the scheduler, between Haskell threads,
    # where the registers say nothing of a chunk). Such a recording does
    # not measure this: it is made again, up to three times in all.
    local try stops rc
    for try in 1 2 3; do
        hs_record "$suite" /dev/null "$T/err" -q -F 499 -f report -o "$T/switch.report" -- "$prog" 2 3 "${rts[@]}"
        rc=$?
        stops=$(sed -n 's/^ *pause:.* (\([0-9]*\) stops)$/\1/p' "$T/switch.report")
        [ "$rc" -ne 0 ] || [ "${stops:-0}" -ge 300 ] && break
    done
    check_status "$c-record-report" $rc "$T/err"
    # (Not counting a read made while the stop's registers were awaited:
    # its C stack where it was last time, and what its last capture
    # needed, which cannot know the chunk.)
    reads=$(sed -n 's/.*memory read in [0-9.]* process_vm_readv calls per stop (.*, \([0-9.]*\) after).*/\1/p' "$T/switch.report")
    [ -n "$reads" ] || reads=$(sed -n 's/.*memory read in \([0-9.]*\) process_vm_readv calls per stop.*/\1/p' "$T/switch.report")
    check "$c-reads-per-stop" "${reads:-no} reads per stop: $(grep -A1 '^ *pause:' "$T/switch.report" | tr '\n' ' ')" \
        test "$(echo "${reads:-9} < 1.5" | bc -l)" = 1
}

# crowd.hs: one capability, 20 Haskell threads yielding all the time, and
# an OS thread spinning in a safe call. hsspy stops one thread after another,
# each while the others run, and every thread's capture reads the one
# Capability: a capture reads it again at its own stop, and a walk sees the
# copy of its own stop. (A copy read at another thread's stop, a few
# microseconds earlier, named a TSO the capability ran then: the running
# thread's walk took that TSO's chunk, "no Haskell stack pointer", a few
# samples a second.)
crowded() { # SUITE CASE-PREFIX
    local suite=$1 c=$2-crowd prog n all
    prog=$(hs_build "$suite" crowd crowd.hs crowd_c.c -- -O1 -threaded -rtsopts) ||
        { fail "$c-build" "ghc could not build crowd.hs"; return; }
    hs_record "$suite" "$T/out" "$T/err" -q -F 999 -f report -o "$T/crowd.report" -- "$prog" 4 +RTS -N1 -RTS
    check_status "$c-record" $? "$T/err"
    check "$c-no-stale-state" "$(grep '^ *errors:' "$T/crowd.report")" \
        lacks_line "$T/crowd.report" '^ *errors:.*(no Haskell stack pointer|RTS state unreadable|C unwind failed)'
    hs_record "$suite" "$T/out" "$T/err" -q -F 499 -o "$T/crowd.folded" -- "$prog" 3 +RTS -N1 -RTS
    check_status "$c-record-folded" $? "$T/err"
    n=$(count_matching "$T/crowd.folded" '^\[haskell\];(\[catch\];)?Main\.([$]w)?yielder(;|$| )')
    all=$(count_matching "$T/crowd.folded" '^\[haskell\];')
    check "$c-yielders" "$n of $all [haskell] samples are in Main.yielder: $(sort -t' ' -k2 -rn "$T/crowd.folded" | head -n 3 | cut -c1-200 | tr '\n' '|')" \
        test "$all" -ge 100 -a "$n" -ge $((all * 9 / 10))
}

ghc_targets
for suite in $GHC_TARGETS; do
    switching "$suite" "ghc-$(ghc_version "$suite")"
    crowded "$suite" "ghc-$(ghc_version "$suite")"
done
