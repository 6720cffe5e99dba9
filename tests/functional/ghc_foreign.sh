# ghc_foreign - OS threads that a GHC program's C code starts (as a C
# library might), which never call Haskell, are foreign threads: in
# [safe-ffi] with their C stack while they compute, [idle] while they
# sleep, never [haskell] or [unsafe-ffi], and named "foreign thread" in the
# report; the main thread's Haskell samples are unaffected. Threaded and
# non-threaded (where every thread reads the same global my_task: the
# runtime's Task does not say which thread is its own), for every GHC
# version this machine has; and a C program running the runtime on a
# thread of its own (below).
. "$(dirname "$0")/../lib.sh"
require_ptrace

# spread FOLDED COMM: "TAG COUNT" per tag of thread COMM's samples
spread() {
    awk -v c="($2);" '{ split($0, p, ";"); if (index($0, c)) n[p[2]] += $NF }
        END { for (t in n) print t, n[t] }' "$1" | sort
}

# build_and_record SUITE CASE NAME SOURCES... -- GHC-FLAGS...: build NAME
# (its path, as its suite sees it, in BUILT), record it for 2 s (--threads
# --idle) into $T/NAME.folded; CASE-build and CASE-exit-status say how
# that went, and the status says whether to go on.
# (Frames are named as they are recorded: `hsspy report` of a raw file
# would not find a chroot's program.)
build_and_record() {
    local suite=$1 c=$2 name=$3 rc
    shift 3
    BUILT=$(hs_build "$suite" "$name" "$@") || { fail "$c-build" "ghc $* failed"; return 1; }
    hs_record "$suite" /dev/null "$T/err" -q -F 199 -d 2 --threads --idle -o "$T/$name.folded" \
        -- "$BUILT" 2.5
    rc=$?
    check_status "$c-exit-status" $rc "$T/err"
    return $rc
}

foreign_threads() { # SUITE CASE-PREFIX
    local suite=$1 c=$2 rts name prog f all spin crunch nap nap_idle other
    for rts in threaded single; do
        name="foreign_${rts:0:6}" # (a thread's name holds 15 characters)
        local flags=(-O1 -rtsopts)
        [ "$rts" = threaded ] && flags+=(-threaded)
        build_and_record "$suite" "$c-$rts" "$name" foreign.hs foreign_c.c -- "${flags[@]}" ||
            continue
        prog=$BUILT
        f="$T/$name.folded"

        # The spinner: every sample foreign, most in foreign_crunch under
        # spinner; but where the non-threaded runtime's tick signal lands
        # on it, [rts] in its handler, handle_tick (in_signal_handler
        # checks that with another of the runtime's handlers).
        all=$(count_matching "$f" '^tid [0-9]+ \(c_spinner\);')
        spin=$(count_matching "$f" '^tid [0-9]+ \(c_spinner\);(\[safe-ffi\];|\[rts\];.*;handle_tick [0-9]+$)')
        crunch=$(count_matching "$f" '^tid [0-9]+ \(c_spinner\);\[safe-ffi\];.*;spinner;foreign_crunch [0-9]+$')
        if [ "$all" -ge 150 ] && [ "$spin" -eq "$all" ] && [ $((10 * crunch)) -ge $((8 * all)) ]; then
            pass "$c-$rts-spinner-foreign"
        else
            fail "$c-$rts-spinner-foreign" "of $all samples of c_spinner, $spin in [safe-ffi] (or [rts] in handle_tick), $crunch in spinner;foreign_crunch: $(spread "$f" c_spinner | tr '\n' ' ')"
        fi
        # The napper sleeps: idle, and never taken for the runtime's thread.
        nap=$(count_matching "$f" '^tid [0-9]+ \(c_napper\);')
        nap_idle=$(count_matching "$f" '^tid [0-9]+ \(c_napper\);\[idle\];.*;napper;[^;]*nanosleep')
        other=$(grep -E '^tid [0-9]+ \(c_napper\);\[(haskell|unsafe-ffi|gc|rts)\];' "$f" |
            grep -Evc ';\[rts\];.*;handle_tick [0-9]+$')
        if [ "$nap" -ge 150 ] && [ "$other" -eq 0 ] && [ $((10 * nap_idle)) -ge $((9 * nap)) ]; then
            pass "$c-$rts-napper-idle"
        else
            fail "$c-$rts-napper-idle" "of $nap samples of c_napper, $nap_idle [idle] in nanosleep, $other [haskell], [unsafe-ffi], [gc] or [rts]: $(spread "$f" c_napper | tr '\n' ' ')"
        fi
        hs_record "$suite" /dev/null "$T/err" -q -F 99 -d 1 -f report -o "$T/$name.rep" -- "$prog" 1.5
        check "$c-$rts-report-role" "the report does not call c_spinner a foreign thread: $(grep '(c_spinner)' "$T/$name.rep")" \
            has_line "$T/$name.rep" '^thread [0-9]+ \(c_spinner\), foreign thread:'
        check "$c-$rts-main-haskell" "no [haskell] sample of the main thread in Main.fib: $(spread "$f" "${prog##*/}" | tr '\n' ' ')" \
            has_line "$f" "^tid [0-9]+ \(${prog##*/}\);\[haskell\];.*Main\.(\\\$w)?fib"
        in_signal_handler "$suite" "$c-$rts" "$prog"
        handler_over_stg_return "$suite" "$c-$rts" "$prog"
    done
}

# A C main program that starts the (non-threaded) runtime on an OS thread
# of its own and runs Haskell code there through a foreign export, while
# its main thread waits for it: that thread is the runtime's (Haskell and
# collector samples), the main thread, which reads the same Task, is idle
# in its wait (before, [unsafe-ffi] and [rts] on the runtime's capability).
embedded() { # SUITE CASE-PREFIX
    local suite=$1 c=$2 f all hs gc other
    build_and_record "$suite" "$c-embed" embed embed.hs embed_c.c -- -O1 -no-hs-main || return
    f="$T/embed.folded"
    # (Its first and last samples may fall in hs_init or hs_exit, before
    # and after the runtime runs anything: those are the thread's own.)
    all=$(count_matching "$f" '^tid [0-9]+ \(hs_worker\);')
    hs=$(count_matching "$f" '^tid [0-9]+ \(hs_worker\);\[haskell\];.*Embed\.')
    gc=$(count_matching "$f" '^tid [0-9]+ \(hs_worker\);\[gc\];.*GarbageCollect')
    other=$(count_matching "$f" '^tid [0-9]+ \(hs_worker\);\[(safe-ffi|idle)\];')
    if [ "$all" -ge 150 ] && [ $((4 * hs)) -ge "$all" ] && [ $((10 * gc)) -ge "$all" ] &&
        [ $((50 * other)) -le "$all" ]; then
        pass "$c-embed-runtime-thread"
    else
        fail "$c-embed-runtime-thread" "of $all samples of hs_worker, $hs [haskell] in Embed, $gc [gc], $other [safe-ffi] or [idle]: $(spread "$f" hs_worker | tr '\n' ' ')"
    fi
    # Its Haskell code under the C code that started the runtime and
    # called it (but for a walk cut short, [truncated]).
    local whole joined
    whole=$(count_matching "$f" '^tid [0-9]+ \(hs_worker\);\[haskell\];[^[;][^;]*;.*;Embed\.')
    joined=$(count_matching "$f" '^tid [0-9]+ \(hs_worker\);\[haskell\];([^[;][^;]*;)*start_thread;worker;embed_work;scheduleWaitThread;([^;]*;)*Embed\.')
    check "$c-embed-c-callers" "$joined of $whole whole [haskell] samples of hs_worker under worker: $(grep -E '^tid [0-9]+ \(hs_worker\);\[haskell\];' "$f" | sort -t' ' -k4 -nr | head -n 2 | tr '\n' '|')" \
        test "$whole" -ge 20 -a "$((100 * joined))" -ge "$((95 * whole))"
    main_idle "$c-embed-main-idle" "$f"
    # The runtime started 400 ms late: the main thread asleep in its join
    # since before it, sampled before it could be read, is idle all the
    # same, once it can be and before (it was [rts], the runtime starting
    # up, for the whole run: that first sample was kept for it while it
    # did not run; 1 run in 6 of the one above, whose runtime starts at
    # once, when its first tick came first).
    hs_record "$suite" /dev/null "$T/err" -q -F 199 -d 2 --threads --idle -o "$T/late.folded" \
        -- "$BUILT" 1.5 400
    check_status "$c-embed-late-exit-status" $? "$T/err"
    main_idle "$c-embed-late-main-idle" "$T/late.folded"
}

# main_idle CASE FOLDED: every sample of embed's main thread is [idle] in
# its join. (Its other samples are its own C code, starting the thread; or
# the handler of the non-threaded runtime's tick, a signal the kernel may
# deliver to it, running on top of the join: [rts] there.)
main_idle() {
    local c=$1 f=$2 main idle rt
    main=$(count_matching "$f" '^tid [0-9]+ \(embed\);')
    idle=$(count_matching "$f" '^tid [0-9]+ \(embed\);\[idle\];.*;main;[^;]*join')
    rt=$(grep -E '^tid [0-9]+ \(embed\);\[(haskell|unsafe-ffi|gc|rts)\];' "$f" |
        grep -Evc ';\[rts\];.*;handle_tick [0-9]+$')
    check "$c" "of $main samples of the main thread, $idle [idle] in its join, $rt [haskell], [unsafe-ffi], [gc] or [rts]: $(spread "$f" embed | tr '\n' ' ')" \
        test "$main" -ge 150 -a "$rt" -eq 0 -a $((10 * idle)) -ge $((9 * main))
}

# The runtime's signal handlers run on whichever thread a signal is sent
# to, a thread C code started included, on top of what it was doing:
# runtime work for that while. foreign.hs handles SIGUSR1; gdb sends one
# to c_spinner, stops it in the runtime's handler (generic_handler) and
# parks it there in a two-byte loop. Its samples must be [rts] with the
# handler above foreign_crunch (before, [safe-ffi] like its own work), and
# between them the handler's way back, named __restore_rt (before, an
# address: it was looked up as a return address, a byte before it).
in_signal_handler() { # SUITE CASE-PREFIX PROG
    local suite=$1 c=$2-signal-handler prog=$3 pid tid
    command -v gdb >/dev/null || { skip "$c" "gdb is not installed"; return; }
    hs_start "$suite" "$T/usr1.out" "$T/usr1.err" "$prog" 60 ||
        { fail "$c" "${prog##*/} did not start"; return; }
    pid=$HS_PID
    sleep 0.3
    gdb_park "$suite" "$pid" usr1 "$T/usr1-gdb.out" 'break generic_handler
python
for t in gdb.selected_inferior().threads():
    if t.name == "c_spinner":
        t.switch()
end
signal SIGUSR1'
    tid=$(sed -n -E 's/^\* *[0-9]+ +(Thread 0x[0-9a-f]+ \(LWP ([0-9]+)\)|LWP ([0-9]+)) "c_spinner" .* in generic_handler .*/\2\3/p' "$T/usr1-gdb.out" | head -n1)
    record_parked "$c" "c_spinner in generic_handler" "$T/usr1-gdb.out" "$pid" "$tid" '^parked' \
        "$T/usr1.folded" --idle || return
    local all rts
    all=$(count_matching "$T/usr1.folded" "^tid $tid \(c_spinner\);")
    # (The non-threaded runtime's tick may land on it there too: its
    # handler on top, over the way back to generic_handler.)
    rts=$(count_matching "$T/usr1.folded" "^tid $tid \(c_spinner\);\[rts\];.*;spinner;foreign_crunch;__restore_rt;generic_handler(;__restore_rt;handle_tick)? [0-9]+$")
    check "$c" "of $all samples of the parked c_spinner, $rts [rts] in generic_handler above __restore_rt and foreign_crunch: $(grep "^tid $tid " "$T/usr1.folded" | head -n 3 | tr '\n' '|')" \
        test "$all" -ge 100 -a "$rts" -eq "$all"
    kill -9 "$pid"; wait "$pid" 2>/dev/null || true
}

# A signal can land in StgReturn's epilogue (the runtime's tick, every
# few milliseconds, in the non-threaded runtime), where its CFI, which
# describes the frame while Haskell code runs, is wrong: the registers have
# been moved down the stack (add $0x4000,%rsp) and are being restored. The
# frame under the handler's way back is read from StgReturn's code, as it
# is when a thread is stopped there itself. gdb stops the thread running
# Haskell two instructions after that add (rbx restored, rbp not yet),
# sends it SIGUSR1 and parks it in the runtime's handler: every sample is
# [rts] in generic_handler over __restore_rt, StgReturn and schedule (in
# the non-threaded runtime inlined in scheduleWaitThread), down to the
# thread's start. (Before: "[invalid];StgReturn;__restore_rt;...",
# seen once at the tick in ghc_ccs.)
handler_over_stg_return() { # SUITE CASE-PREFIX PROG
    local suite=$1 c=$2-handler-over-stg-return prog=$3 pid tid
    command -v gdb >/dev/null || { skip "$c" "gdb is not installed"; return; }
    hs_start "$suite" "$T/stgret.out" "$T/stgret.err" "$prog" 60 ||
        { fail "$c" "${prog##*/} did not start"; return; }
    pid=$HS_PID
    sleep 0.3
    gdb_park "$suite" "$pid" stgret "$T/stgret-gdb.out" 'python
start = int(gdb.parse_and_eval("(long)&StgReturn"))
insns = gdb.selected_frame().architecture().disassemble(start, count=12)
at = [insns[i + 2]["addr"] for i in range(len(insns) - 2)
      if insns[i]["asm"].startswith("add") and "%rsp" in insns[i]["asm"]][0]
gdb.execute("break *%d" % at)
end
continue
delete
break generic_handler
signal SIGUSR1'
    tid=$PARKED_TID
    record_parked "$c" "a thread in generic_handler over StgReturn" "$T/stgret-gdb.out" "$pid" "$tid" \
        'in generic_handler' "$T/stgret.folded" --idle || return
    local all whole
    all=$(count_matching "$T/stgret.folded" "^tid $tid ")
    whole=$(count_matching "$T/stgret.folded" "^tid $tid \([^)]*\);\[rts\];(_start|__GI___clone3);.*;(schedule|scheduleWaitThread);StgReturn;__restore_rt;generic_handler(;__restore_rt;handle_tick)? [0-9]+$")
    check "$c" "of $all samples of the parked thread, $whole [rts] in generic_handler over __restore_rt, StgReturn and schedule (scheduleWaitThread, where it is inlined), from its start: $(grep "^tid $tid " "$T/stgret.folded" | head -n 3 | tr '\n' '|')" \
        test "$all" -ge 100 -a "$whole" -eq "$all"
    kill -9 "$pid"; wait "$pid" 2>/dev/null || true
}

# A thread C code started, calling Haskell (a foreign export) between
# spells of its own busy C code: between its calls it keeps the Task the
# runtime made for it, with no call in it, and runs C outside the runtime
# as before its first: [safe-ffi] in incall_busy, [haskell] in its calls.
# (Before: [idle] while it ran its C, half its CPU dropped from a profile.)
in_calls() { # SUITE CASE-PREFIX
    local suite=$1 c=$2-incall f all hs safe busy
    build_and_record "$suite" "$c" incall incall.hs incall_c.c -- -O1 -threaded || return
    f="$T/incall.folded"
    all=$(count_matching "$f" '^tid [0-9]+ \(c_incaller\);')
    hs=$(count_matching "$f" '^tid [0-9]+ \(c_incaller\);\[haskell\];')
    safe=$(count_matching "$f" '^tid [0-9]+ \(c_incaller\);\[safe-ffi\];')
    busy=$(count_matching "$f" '^tid [0-9]+ \(c_incaller\);\[safe-ffi\];.*;incaller;incall_busy( |;)')
    check "$c-c-between-calls" "of $all samples of c_incaller, $hs [haskell], $safe [safe-ffi] ($busy in incall_busy): $(spread "$f" c_incaller | tr '\n' ' ')" \
        test "$all" -ge 150 -a "$((4 * hs))" -ge "$all" -a "$((4 * busy))" -ge "$all" -a \
        "$((10 * busy))" -ge "$((8 * safe))"
    # Its Haskell code under the C code that called it, as its C code and
    # its collections are: the thread's start, incaller, the C function
    # GHC wrote for the export, the runtime's way in (before: the Haskell
    # frames alone). Not so the main thread's, under hs_main: the runtime's
    # own call of main, the same frames under every sample.
    local joined own
    joined=$(count_matching "$f" '^tid [0-9]+ \(c_incaller\);\[haskell\];([^[;][^;]*;)*start_thread;incaller;incallWork;scheduleWaitThread;([^;]*;)*Main\.')
    check "$c-c-callers" "$joined of $hs [haskell] samples of c_incaller under incaller: $(grep -E '^tid [0-9]+ \(c_incaller\);\[haskell\];' "$f" | sort -t' ' -k4 -nr | head -n 2 | tr '\n' '|')" \
        test "$hs" -ge 1 -a "$((100 * joined))" -ge "$((95 * hs))"
    # The binding GHC makes for the export, named after it (before:
    # Main.$fstableZC0ZCmainZCMainZCincallWork1).
    check "$c-export-named" "no frame named Main.incallWork1 (foreign export): $(grep -o ';Main\.[^;]*incallWork[^;]*' "$f" | sort -u | head -n 3 | tr '\n' '|')" \
        has_line "$f" '^tid [0-9]+ \(c_incaller\);\[haskell\];.*;Main\.incallWork1 \(foreign export\);'
    own=$(count_matching "$f" '^tid [0-9]+ \(incall\);.*;hs_main;.*;Main\.')
    check "$c-main-no-callers" "$own samples of the main thread with Haskell frames under hs_main: $(grep -E '^tid [0-9]+ \(incall\);.*;hs_main;.*;Main\.' "$f" | head -n 2 | tr '\n' '|')" \
        test "$own" -eq 0
}

# Back from a safe call, a thread waits in resumeThread for its
# capability, which another thread holds (capwait.hs, -N1: a loop of unsafe
# calls that lets go of it every 20 ms): the runtime's scheduling, [rts],
# not the foreign call, [safe-ffi] (before: all [safe-ffi], ninety per cent
# of the calling thread's samples, while its call took a tenth).
cap_wait() { # SUITE CASE-PREFIX
    local suite=$1 c=$2-capwait f waiting ffi
    build_and_record "$suite" "$c" capwait capwait.hs capwait_c.c -- -O1 -threaded -rtsopts || return
    f="$T/capwait.folded"
    waiting=$(count_matching "$f" '^tid [0-9]+ \([^)]*\);\[rts\];.*;resumeThread;waitForCapability;')
    ffi=$(count_matching "$f" '^tid [0-9]+ \([^)]*\);\[safe-ffi\];.*;resumeThread;')
    check "$c-rts" "$waiting samples waiting in resumeThread are [rts], $ffi [safe-ffi]: $(grep -E ';resumeThread;' "$f" | sort -t' ' -k4 -nr | head -n 2 | tr '\n' '|')" \
        test "$waiting" -ge 100 -a "$ffi" -eq 0
    # A collection it asks for (performMajorGC, a safe call) waits for a
    # capability first: [gc], as the collection itself (before: [safe-ffi]
    # while it waited).
    local gcwait
    BUILT=$(hs_build "$suite" capwait capwait.hs capwait_c.c -- -O1 -threaded -rtsopts) || return
    hs_record "$suite" /dev/null "$T/err" -q -F 199 -d 2 --threads --idle -o "$f" -- "$BUILT" 2.5 gc
    check_status "$c-gc-exit-status" $? "$T/err"
    gcwait=$(count_matching "$f" '^tid [0-9]+ \([^)]*\);\[gc\];.*;perform(Blocking)?MajorGC;waitForCapability;')
    ffi=$(count_matching "$f" '^tid [0-9]+ \([^)]*\);\[safe-ffi\];.*;perform(Blocking)?MajorGC;')
    check "$c-gc-wait" "$gcwait samples waiting in performMajorGC for a capability are [gc], $ffi under it [safe-ffi]: $(grep -E ';perform(Blocking)?MajorGC;' "$f" | sort -t' ' -k4 -nr | head -n 3 | tr '\n' '|')" \
        test "$gcwait" -ge 5 -a "$ffi" -eq 0
    # The timer manager back from its poll (timers every millisecond)
    # waits in resumeThread for the capability too: [rts], as any thread
    # (before: [idle], as if still in its poll).
    local tmwait tmidle
    hs_record "$suite" /dev/null "$T/err" -q -F 199 -d 2 --threads --idle -o "$f" -- "$BUILT" 2.5 timer
    check_status "$c-timer-exit-status" $? "$T/err"
    tmwait=$(count_matching "$f" '^tid [0-9]+ \([^)]*\);\[rts\];.*GHC\.(Internal\.)?Event\..*;resumeThread;waitForCapability;')
    tmidle=$(count_matching "$f" '^tid [0-9]+ \([^)]*\);\[idle\];.*GHC\.(Internal\.)?Event\..*;resumeThread;')
    check "$c-timer-manager-rts" "$tmwait samples of the timer manager waiting in resumeThread are [rts], $tmidle [idle]: $(grep -E 'GHC\.(Internal\.)?Event\..*;resumeThread;' "$f" | sort -t' ' -k4 -nr | head -n 2 | cut -c1-300 | tr '\n' '|')" \
        test "$tmwait" -ge 20 -a "$tmidle" -eq 0
}

ghc_targets
for suite in $GHC_TARGETS; do
    cap_wait "$suite" "ghc-$(ghc_version "$suite")"
    foreign_threads "$suite" "ghc-$(ghc_version "$suite")"
    embedded "$suite" "ghc-$(ghc_version "$suite")"
    in_calls "$suite" "ghc-$(ghc_version "$suite")"
done
