# ghc_workers - the runtime's own OS threads as they start and end. A
# program making 16 safe calls at once, over and over (spares.hs, -N2),
# makes the runtime start workers and let them go: a worker back from its
# call beyond the few spare ones a capability keeps frees its Task and
# ends (workerTaskStop, shutdownThread, then glibc's end of the thread),
# its thread pointer still leading to the freed Task, which may hold
# anything: such samples were [safe-ffi] (an InCall's stale TSO, its walk
# an "[invalid] no Haskell stack pointer"). A new worker runs workerStart
# for a while before it takes the Task its creator made: it was a foreign
# thread, [safe-ffi]. Neither is the program's foreign call: both are the
# runtime's, [rts] (or [idle] asleep). (A thread in clone3, not yet in
# its start routine, has no Task whoever started it: a foreign thread.)
# For every GHC version here.
. "$(dirname "$0")/../lib.sh"
require_ptrace

workers() { # SUITE CASE-PREFIX
    local suite=$1 c=$2 prog
    prog=$(hs_build "$suite" spares spares.hs -- -O1 -threaded -rtsopts) ||
        { fail "$c-build" "ghc could not build spares.hs"; return; }
    hs_record "$suite" "$T/out" "$T/err" -q -F 1000 --idle -f folded -o "$T/folded" \
        -- "$prog" 3 +RTS -N2 -RTS
    check_status "$c-record" $? "$T/err"
    check "$c-target-ok" "the target says: $(cat "$T/out")" grep -q '^bursts [0-9]*$' "$T/out"
    # A worker starting: in workerStart (or, from 9.6, the runtime's own
    # start_thread, which names it) before it runs the scheduler.
    grep -E ';(workerStart|start_thread;start_thread)[; ]' "$T/folded" |
        grep -v ';workerStart;scheduleWorker' >"$T/starting" || true
    # A worker ending: let go of (workerTaskStop, shutdownThread), then
    # glibc's end of the thread past its start routine, the C library alone
    # (what glibc calls there; its start_thread calls others before the
    # start routine, in a thread being born).
    grep -E ';(workerTaskStop|shutdownThread)[; ]' "$T/folded" >"$T/ending" || true
    grep -E '^\[[a-z-]+\];__GI___clone3;start_thread;(__GI___nptl_deallocate_stack|__nptl_deallocate_stack|__madvise|__libc_thread_freeres|__call_tls_dtors|__nptl_deallocate_tsd|__malloc_arena_thread_freeres)[; ]' \
        "$T/folded" >>"$T/ending" || true
    local ending starting
    ending=$(total_count "$T/ending")
    starting=$(total_count "$T/starting")
    check "$c-seen" "$ending samples of workers ending, $starting of workers starting: $(head -c 300 "$T/ending" | tr '\n' '|') $(head -c 300 "$T/starting" | tr '\n' '|')" \
        test "$ending" -ge 5 -a "$starting" -ge 1
    check "$c-starting" "workers starting tagged as the program's: $(grep -Ev '^\[(rts|idle)\];' "$T/starting" | cut -c1-240 | head -n 4 | tr '\n' '|')" \
        lacks_line "$T/starting" '^\[(haskell|unsafe-ffi|safe-ffi|gc)\];'
    check "$c-ending" "workers ending tagged as the program's: $(grep -Ev '^\[(rts|idle)\];' "$T/ending" | cut -c1-240 | head -n 4 | tr '\n' '|')" \
        lacks_line "$T/ending" '^\[(haskell|unsafe-ffi|safe-ffi|gc)\];'
}

# A Haskell thread's last code, stg_stop_thread_info, run when it returns
# to its stop frame: it moves Sp a word below that frame and writes over
# it (stg_enter_info, then R1), so that nothing there is a frame any more.
# gdb parks a thread of spares.hs there (each burst's threads end), past
# both writes (+16, in each GHC version here). Its samples must be that
# code alone, no error (before, "not an info pointer" from a walk of
# those words, at every sample).
finishing() { # SUITE CASE-PREFIX PROG
    local suite=$1 c=$2-finishing prog=$3 pid
    command -v gdb >/dev/null || { skip "$c" "gdb is not installed"; return; }
    hs_start "$suite" "$T/fin.out" "$T/fin.err" "$prog" 60 +RTS -N2 -RTS ||
        { fail "$c" "${prog##*/} did not start"; return; }
    pid=$HS_PID
    sleep 0.3
    gdb_park "$suite" "$pid" fin "$T/fin-gdb.out" 'break *((char *)&stg_stop_thread_info + 16)
continue'
    if [ -z "$PARKED_TID" ]; then
        fail "$c" "gdb did not park a thread in stg_stop_thread_info: $(grep -E '^(parked|\*)|rror' "$T/fin-gdb.out" | head -n 4 | tr '\n' '|')"
        kill -9 "$pid"; wait "$pid" 2>/dev/null; return
    fi
    sleep 0.2
    "$HSSPY" record -q -F 499 -d 0.5 -f raw -o "$T/fin.raw" -p "$pid" 2>"$T/fin-rec.err"
    check_status "$c-record" $? "$T/fin-rec.err"
    kill -9 "$pid"; wait "$pid" 2>/dev/null || true
    # (naming from the recording: a chroot's files are not at their paths)
    "$HSSPY" report -f folded --threads "$T/fin.raw" 2>"$T/fin-rep.err" |
        grep "^tid $PARKED_TID " >"$T/fin.folded" || true
    local all last
    all=$(total_count "$T/fin.folded")
    last=$(count_matching "$T/fin.folded" "^tid $PARKED_TID \([^)]*\);\[haskell\];stg_stop_thread_info [0-9]+$")
    check "$c" "of $all samples of the thread parked in stg_stop_thread_info, $last that code alone: $(head -n 3 "$T/fin.folded" | cut -c1-300 | tr '\n' '|')" \
        test "$all" -ge 100 -a "$last" -eq "$all"
    "$HSSPY" report -f report -o "$T/fin.report" "$T/fin.raw" 2>"$T/fin-rep.err"
    check "$c-no-errors" "$(grep '^ *errors:' "$T/fin.report")" \
        grep -Eq '^ *errors: *0(;|$)' "$T/fin.report"
}

ghc_targets
for suite in $GHC_TARGETS; do
    workers "$suite" "ghc-$(ghc_version "$suite")"
    finishing "$suite" "ghc-$(ghc_version "$suite")" "$(hs_build "$suite" spares spares.hs -- -O1 -threaded -rtsopts)"
done
