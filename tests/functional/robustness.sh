# robustness - hsspy never hurts its target: a target that forks or execs
# while recorded, or exits as a sample is walked, or whose first thread
# has exited, threads born and dying hundreds of times a second (C threads
# and forkOS), blocking calls that must see no EINTR and no short sleep,
# capabilities added and removed while recording, a second hsspy on the
# same process, a raised priority (nice, or real-time) for hsspy and
# not for its target, and the launched command's credentials.
. "$(dirname "$0")/../lib.sh"
require_ptrace

# fork: the children are not traced and all exit normally; hsspy carries on.
"$HSSPY" record -q -F 999 -o "$T/fork.folded" -- "$W/lifecycle" fork 1.5 >"$T/fork.out" 2>"$T/err"
check_status "fork-record" $? "$T/err"
check "fork-children-ok" "the target says: $(cat "$T/fork.out")" grep -q ' bad 0$' "$T/fork.out"
check "fork-profile" "no samples of the parent after forking" has_line "$T/fork.folded" ';spin_until'

# exec: the launched command's exec is followed, the recording starting
# over with the new program (its frames are not the old one's: the samples
# before are dropped, and said so), which runs to its end, its exit status
# in the report. (Before, the recording ended at the exec.) The same when
# a second thread execs while the first spins on: the kernel ends the
# first, whose way out stops it (it is seen exiting), and the second takes
# its tid. (Before, that tid was left traced as exiting, and following the
# exec failed: "already traced by ... (hsspy)".)
# check_exec NAME MODE
check_exec() {
    local n=$1
    "$HSSPY" record -F 999 -f report -o "$T/$n.report" -- "$W/lifecycle" "$2" 1.5 >"$T/$n.out" 2>"$T/$n.err"
    check_status "$n-record" $? "$T/$n.err"
    check "$n-said" "no word of the exec: $(cat "$T/$n.err")" \
        grep -Eq 'called exec: following it, the [0-9]+ samples of the program before dropped' "$T/$n.err"
    check "$n-followed" "not the new program's samples: $(grep -A12 '^thread' "$T/$n.report" | tr '\n' '|')" \
        has_line "$T/$n.report" '^ +(100|9[0-9])\.[0-9]%  spin_after_exec$'
    check "$n-exit-status" "$(grep -E 'exit:|target:' "$T/$n.report" | tr '\n' '|')" \
        has_line "$T/$n.report" '^ *exit: *the command exited with status 0$'
    check "$n-target-finishes" "the exec'd program did not finish: $(cat "$T/$n.out")" \
        grep -q '^after exec$' "$T/$n.out"
}
check_exec exec exec
check_exec thread-exec thread-exec
# A program that execs itself 40 times over: followed through every exec,
# the last program recorded to its end, its exit status (5) passed on.
# (Before, hsspy followed 8, then stopped recording, said the command
# kept running and exited 0, its status lost.)
"$HSSPY" record -F 999 -f report -o "$T/reexec.report" -- "$W/lifecycle" reexec 1 40 \
    >"$T/reexec.out" 2>"$T/reexec.err"
rc=$?
check "reexec-status" "hsspy exited $rc, not the command's 5: $(tail -n 3 "$T/reexec.err" | tr '\n' '|')" test "$rc" = 5
check "reexec-followed" "not the last program's samples: $(grep -E -A6 '^thread' "$T/reexec.report" | tr '\n' '|')" \
    has_line "$T/reexec.report" '^ +(100|9[0-9])\.[0-9]%  spin_after_exec$'
check "reexec-finishes" "the last program did not finish: $(cat "$T/reexec.out")" \
    grep -q '^after N execs$' "$T/reexec.out"

# A launcher (env, then nice) becomes the program at once: the profile is
# the program's (before, it ended with no sample), named after it.
"$HSSPY" record -F 999 -o "$T/launcher.folded" -- env HSSPY_TEST=1 nice -n 1 "$W/lifecycle" spin 1 \
    >"$T/launcher.out" 2>"$T/launcher.err"
check_status "launcher-record" $? "$T/launcher.err"
n=$(total_count "$T/launcher.folded")
in=$(count_matching "$T/launcher.folded" '(^|;)main;spin_after_exec;spin_until( |;)')
check "launcher-followed" "$in of $n samples in main;spin_after_exec;spin_until: $(sort -t' ' -k2 -rn "$T/launcher.folded" | head -n 3 | tr '\n' '|')" \
    test "$n" -ge 500 -a "$((in * 10))" -ge "$((n * 9))"

# A launcher whose program exits at once: its status passed on, and a
# profile (of no sample) written. The program is followed from its exec
# without being let go (before: let go and attached to again, by when it
# had exited: "pid N is a zombie", or, caught on its way out, "already
# traced by pid N (hsspy)", exit 1, every time).
for how in env sh nice; do
    case $how in
    env) cmd=(env sh -c 'exit 7') ;;
    sh) cmd=(sh -c 'exec sh -c "exit 7"') ;;
    nice) cmd=(nice true) ;;
    esac
    want=7
    [ "$how" = nice ] && want=0
    rm -f "$T/short.folded"
    "$HSSPY" record -F 199 -o "$T/short.folded" -- "${cmd[@]}" >/dev/null 2>"$T/short.err"
    rc=$?
    check "short-exec-$how" "exit $rc, not $want: $(tr '\n' '|' <"$T/short.err")" \
        eval '[ $rc -eq $want ] && [ -e "$T/short.folded" ] && grep -q "called exec: following it" "$T/short.err" && ! grep -Eq "zombie|already traced|no process" "$T/short.err"'
done

# A program that exits just after a sample of a deep C stack (exiter.c: 100
# frames of 256 bytes under main, of which the copy, shrunk over the
# shallow samples before, holds a few KB): the walk reads the rest from the
# program, which stays whole, stopped on its way out, until the walk is
# done. (Before, it was gone by then: "[invalid];dive;...", every run.)
"$HSSPY" record -q -F 999 -f raw -o "$T/exiter.raw" -- "$W/exiter" 0.4 100 >/dev/null 2>"$T/exiter.err"
check_status "exit-record" $? "$T/exiter.err"
"$HSSPY" report -f folded -o "$T/exiter.folded" "$T/exiter.raw" 2>>"$T/exiter.err"
"$HSSPY" report -f report -o "$T/exiter.report" "$T/exiter.raw" 2>>"$T/exiter.err"
deep=$(count_matching "$T/exiter.folded" '^_start;__libc_start_main;__libc_start_call_main;main;(dive;){100}exit_after_stop;')
check "exit-deep-stack-whole" "$deep samples under main;dive*100;exit_after_stop: $(grep -E 'dive|invalid' "$T/exiter.folded" | sed -E 's/(dive;)+/dive;...;/' | head -n 3 | tr '\n' '|')" \
    test "$deep" -ge 1
check "exit-no-errors" "$(grep -E '^ *(errors|beyond):' "$T/exiter.report" | tr '\n' '|')" \
    eval 'grep -Eq "^ *errors: *0(;|$)" "$T/exiter.report" && lacks_line "$T/exiter.folded" "invalid"'

# The same done by a second thread after the first, the process's leader,
# ended in pthread_exit: a zombie whose pid has no memory (its reads fail,
# its /proc maps are empty), while the process runs on. Its memory is read
# through a thread that has it, to the last (held on its way out).
# Launched: before, every sample was "[invalid]". Attached once the leader
# is a zombie: before, hsspy refused it as "a zombie".
"$HSSPY" record -q -F 999 -f raw -o "$T/leaderless.raw" -- "$W/exiter" 0.4 100 thread >/dev/null 2>"$T/leaderless.err"
check_status "leaderless-record" $? "$T/leaderless.err"
"$HSSPY" report -f folded -o "$T/leaderless.folded" "$T/leaderless.raw" 2>>"$T/leaderless.err"
"$HSSPY" report -f report -o "$T/leaderless.report" "$T/leaderless.raw" 2>>"$T/leaderless.err"
# check_leaderless NAME FOLDED REPORT: the thread's samples named under
# start_thread;alone (in spin_for, or in its dive: how long the dive lasts
# depends on when a stop comes, and a thread preempted at a tick is not
# stopped, so on a busy machine it may be a sixth of the samples), its
# last one 100 frames deep, no error.
check_leaderless() {
    local all named deep
    all=$(total_count "$2")
    named=$(count_matching "$2" ';start_thread;alone;(spin_for|dive)( |;)')
    deep=$(count_matching "$2" ';start_thread;alone;(dive;){100}exit_after_stop;')
    check "$1-named" "$named of $all samples under start_thread;alone;spin_for or its dive, $deep 100 calls deep: $(sed -E 's/(dive;)+/dive;...;/' "$2" | sort -t' ' -k2 -rn | head -n 3 | cut -c1-160 | tr '\n' '|')" \
        test "$all" -ge 100 -a "$((named * 100))" -ge "$((all * 95))" -a "$deep" -ge 1
    check "$1-no-errors" "$(grep -E '^ *errors:' "$3")" grep -Eq '^ *errors: *0(;|$)' "$3"
}
check_leaderless leaderless "$T/leaderless.folded" "$T/leaderless.report"
"$W/exiter" 2 100 thread &
target=$!
for _ in $(seq 50); do
    st=$(awk '{print $3}' "/proc/$target/stat" 2>/dev/null)
    [ "$st" = Z ] && break
    sleep 0.05
done
check "leaderless-attach-zombie" "the first thread is not a zombie (state ${st:-gone})" test "$st" = Z
"$HSSPY" record -q -F 499 -f raw -o "$T/leaderless-attach.raw" -p "$target" 2>"$T/leaderless-attach.err"
check_status "leaderless-attach-record" $? "$T/leaderless-attach.err"
wait "$target" 2>/dev/null
"$HSSPY" report -f folded -o "$T/leaderless-attach.folded" "$T/leaderless-attach.raw" 2>>"$T/leaderless-attach.err"
"$HSSPY" report -f report -o "$T/leaderless-attach.report" "$T/leaderless-attach.raw" 2>>"$T/leaderless-attach.err"
check_leaderless leaderless-attach "$T/leaderless-attach.folded" "$T/leaderless-attach.report"
# (and its command line, which /proc/PID/cmdline of a zombie leader does
# not give, from a thread's: before, "target: pid N: ", blank)
check "leaderless-attach-command" "$(grep -m1 'target:' "$T/leaderless-attach.report")" \
    grep -Eq "^ *target: *pid $target: .*exiter 2 100 thread$" "$T/leaderless-attach.report"

# Thread churn at 1 kHz for 10 s: C threads, hundreds born per second.
"$HSSPY" record -q -F 1000 -f report -o "$T/churn.report" -- "$W/churn" 10 >"$T/churn.out" 2>"$T/err"
check_status "churn-record" $? "$T/err"
check "churn-target-ok" "the target says: $(cat "$T/churn.out")" grep -q '^threads [0-9]*$' "$T/churn.out"
born=$(sed -n 's/^threads //p' "$T/churn.out")
seen=$(sed -n 's/.* thread samples from \([0-9]*\) threads/\1/p' "$T/churn.report")
check "churn-threads-followed" "$seen threads sampled of $born born" test "${seen:-0}" -ge $((born / 4))
lost=$(sed -n 's/.*; \([0-9]*\) threads exited before they could be stopped/\1/p' "$T/churn.report")
check "churn-few-lost" "${lost:-0} threads lost of $born" test "${lost:-0}" -le $((born / 10))
# A sample of a thread creating one, in clone3 (code without unwind
# information there), is walked from the copy alone: libunwind's guess
# through rbp, the new thread's descriptor, reads no frame, so it is not
# counted as the stack going deeper than the copy (before, 1000 samples
# in 10 s were, and copied twice as much next time).
check_copied "churn-copy-enough" "$T/churn.report" any

# The same where the new thread's stack is one glibc keeps for reuse above
# the creating thread's (spawner.c): the descriptor rbp points at is then
# above the stack pointer, megabytes from the stack (before, some 200
# samples in 2 s). The creator's samples in clone3 are under its loop.
"$HSSPY" record -q -F 1000 -d 2 -f raw -o "$T/spawner.raw" -- "$W/spawner" 2.5 >"$T/spawner.out" 2>"$T/err"
check_status "spawner-record" $? "$T/err"
"$HSSPY" report -f report -o "$T/spawner.report" "$T/spawner.raw" 2>"$T/err"
"$HSSPY" report -f folded -o "$T/spawner.folded" "$T/spawner.raw" 2>>"$T/err"
check_copied "spawner-copy-enough" "$T/spawner.report"
creating=$(count_matching "$T/spawner.folded" '^__GI___clone3;start_thread;spawn_loop;pthread_create;create_thread;__GI___clone_internal;__GI___clone3 [0-9]+$')
check "spawner-in-clone3" "$creating samples of the spawner in clone3 under spawn_loop: $(sort -t' ' -k2 -rn "$T/spawner.folded" | head -n 4 | tr '\n' '|')" \
    test "$creating" -ge 20

# The same among 300 sleeping threads (5 s): with that many threads and few
# running, hsspy waits for each stop by asking the stopped thread alone;
# births and exits must still all be seen.
"$HSSPY" record -q -F 1000 -f report -o "$T/churn300.report" -- "$W/churn" 5 300 >"$T/churn300.out" 2>"$T/err"
check_status "churn-many-record" $? "$T/err"
check "churn-many-target-ok" "the target says: $(cat "$T/churn300.out")" grep -q '^threads [0-9]*$' "$T/churn300.out"
born=$(sed -n 's/^threads //p' "$T/churn300.out")
seen=$(sed -n 's/.* thread samples from \([0-9]*\) threads/\1/p' "$T/churn300.report")
check "churn-many-threads-followed" "$seen threads sampled of $born born and 300 asleep" \
    test "${seen:-0}" -ge $((300 + born / 4))
lost=$(sed -n 's/.*; \([0-9]*\) threads exited before they could be stopped/\1/p' "$T/churn300.report")
check "churn-many-few-lost" "${lost:-0} threads lost of $born" test "${lost:-0}" -le $((born / 10))

# Attached to it: the first tick stops every thread, 300 asleep, but
# awaits at most 16 stops at once, the others interrupted as those stop
# (before: all at once, then each waited stopped for the captures of
# those before it, 3 to 45 ms with a thousand); every one is still
# sampled.
"$W/churn" 3 300 >"$T/churn-first.out" &
churner=$!
sleep 0.5
"$HSSPY" record -q -d 1 -f report -o "$T/churn-first.report" -p "$churner" 2>"$T/err"
check_status "first-tick-record" $? "$T/err"
wait "$churner"
deferred=$(sed -n 's/.*; \([0-9]*\) interrupted only once fewer than 16 threads were awaited.*/\1/p' "$T/churn-first.report")
seen=$(sed -n 's/.* thread samples from \([0-9]*\) threads/\1/p' "$T/churn-first.report")
check "first-tick-deferred" "${deferred:-no} interrupts deferred, ${seen:-no} threads sampled: $(grep -A1 '^ *pause:' "$T/churn-first.report" | cut -c1-300 | tr '\n' '|')" \
    test "${deferred:-0}" -ge 250 -a "${seen:-0}" -ge 301

# Attached and let go again, six times, while threads are born by the
# hundred a second (300 more asleep, so that a detach takes a while): a
# thread born during the detach whose first stop came before its parent's
# clone event was let go at once, then waited for when the event named it
# (before: "1 thread(s) did not stop to be detached" in one or two of six).
"$W/churn" 4 300 >"$T/churn-detach.out" &
churner=$!
sleep 0.3
warned=0
for i in 1 2 3 4 5 6; do
    "$HSSPY" record -d 0.3 -o /dev/null -p "$churner" 2>"$T/detach.$i.err"
    grep -q "did not stop to be detached" "$T/detach.$i.err" && warned=$((warned + 1))
done
wait "$churner"
check "churn-detached" "$warned of 6 detaches said a thread did not stop: $(cat "$T"/detach.*.err | grep 'did not stop' | head -n 1)" \
    test "$warned" -eq 0
check "churn-detached-target-ok" "the target says: $(cat "$T/churn-detach.out")" \
    grep -q '^threads [0-9]*$' "$T/churn-detach.out"

# forkOS churn on the Haskell side.
prog=$(build_hs forkos forkos.hs -- -O1 -threaded -rtsopts) ||
    { fail "forkos-build" "ghc could not build forkos.hs"; }
if [ -n "${prog:-}" ]; then
    "$HSSPY" record -q -F 1000 -f report -o "$T/forkos.report" -- "$prog" 5 >"$T/forkos.out" 2>"$T/err"
    check_status "forkos-record" $? "$T/err"
    check "forkos-target-ok" "the target says: $(cat "$T/forkos.out")" grep -q '^forked [0-9]*$' "$T/forkos.out"
    forked=$(sed -n 's/^forked //p' "$T/forkos.out")
    check "forkos-hundreds-per-second" "only ${forked:-0} forkOS threads in 5 s" test "${forked:-0}" -ge 500
fi

# Blocking calls: read on a pipe, nanosleep, epoll_wait, accept, at 1 kHz.
"$HSSPY" record -q -F 1000 -o /dev/null -- "$W/blocking" 3 >"$T/blocking.out" 2>"$T/err"
check_status "blocking-record" $? "$T/err"
check "blocking-no-eintr" "the target says: $(tail -n1 "$T/blocking.out")" \
    grep -q '^eintr 0 short 0 calls [0-9]*$' "$T/blocking.out"

# setNumCapabilities 1 -> 4 -> 2 while recording.
# (-fno-omit-yields: spinWork never allocates, and a loop that never
# allocates would never let the RTS stop it to change the capabilities)
prog=$(build_hs setcaps setcaps.hs -- -O1 -fno-omit-yields -threaded -rtsopts) ||
    { fail "setcaps-build" "ghc could not build setcaps.hs"; }
if [ -n "${prog:-}" ]; then
    "$HSSPY" record -q -F 299 -f report -o "$T/caps.report" -- "$prog" 3 +RTS -N1 -RTS >"$T/caps.out" 2>"$T/err"
    check_status "setcaps-record" $? "$T/err"
    check "setcaps-target-ok" "the target says: $(cat "$T/caps.out")" grep -q '^capabilities 2$' "$T/caps.out"
    for c in 0 1 2 3; do
        check "setcaps-capability-$c" "capability $c never held: $(sed -n '/^capabilities/,$p' "$T/caps.report" | tr '\n' '|')" \
            grep -Eq "^  capability $c: held [1-9]" "$T/caps.report"
    done
    check "setcaps-haskell" "no haskell samples" grep -Eq 'tags: haskell [1-9]' "$T/caps.report"
fi

# A second hsspy on a process being recorded: one clear line, status 1, and
# the first recording is not disturbed.
bg "$W/chains" 3 >"$T/chains.out"
target=$!
wait_for_line "$T/chains.out" '^worker '
"$HSSPY" record -q -F 199 -d 1.5 -p "$target" -o "$T/first.folded" 2>"$T/first.err" &
first=$!
sleep 0.5
"$HSSPY" record -q -d 1 -p "$target" -o /dev/null 2>"$T/second.err"
rc=$?
check "second-refused" "status $rc, stderr: $(cat "$T/second.err")" \
    sh -c "[ $rc -eq 1 ] && [ \$(wc -l <'$T/second.err') -eq 1 ] && grep -q 'is already traced by pid $first (hsspy)' '$T/second.err'"
wait "$first"
check_status "first-unharmed" $? "$T/first.err"
check "first-profile" "the first recording lost its samples" has_line "$T/first.folded" ';outer;middle;leaf '
wait "$target"
check_status "target-unharmed" $?

# Scheduling: hsspy samples in 0.1 ms scheduler slices where the kernel has
# them (EEVDF, Linux 6.12 on; no privilege needed) so that it wakes on time
# on a busy machine, at nice -10 where allowed (--nice N to choose); with
# --realtime, at real-time priority where allowed. Each is hsspy's own: the
# program it launches keeps the default, and the report says which was used.
# sched PID: "POLICY SLICE_NS" (no slice where /proc does not show one)
sched() {
    echo "$(chrt -p "$1" 2>/dev/null | sed -n '1s/.*policy: //p')" \
        "$(sed -n 's/^se\.slice *: *\([0-9]*\).*/\1/p' "/proc/$1/sched" 2>/dev/null)"
}
# nice_of TID: its nice value (field 19 of stat; the name may hold spaces)
nice_of() { sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f17; }
kernel_at_least() { # MAJOR MINOR
    local v maj rest min
    v=$(uname -r); maj=${v%%.*}; rest=${v#*.}; min=${rest%%[!0-9]*}
    [ "$maj" -gt "$1" ] || { [ "$maj" -eq "$1" ] && [ "$min" -ge "$2" ]; }
}
# watch_recording NAME [OPTION...]: record the work program at 1 kHz for
# 1.5 s; halfway, $during is how hsspy is scheduled and $kids how each of
# the program's threads is (one line per distinct answer); $during_nice and
# $kids_nice are their nice values.
watch_recording() {
    local name=$1 rec kid="" i
    shift
    "$HSSPY" record -q "$@" -F 1000 -d 1.5 -f report -o "$T/$name.report" -- "$W/work" 2 3000 \
        >/dev/null 2>"$T/$name.err" &
    rec=$!
    BG_PIDS="$BG_PIDS $rec"
    for i in $(seq 100); do kid=$(pgrep -P "$rec" | head -n1); [ -n "$kid" ] && break; sleep 0.02; done
    sleep 0.5
    during=$(sched "$rec")
    during_nice=$(nice_of "$rec")
    kids=$(for t in /proc/"$kid"/task/*; do sched "${t##*/}"; done | sort -u)
    kids_nice=$(for t in /proc/"$kid"/task/*; do nice_of "${t##*/}"; done | sort -u | tr '\n' ' ')
    wait "$rec"
    check_status "$name-record" $? "$T/$name.err"
    [ -n "$kid" ] && kill "$kid" 2>/dev/null
}
watch_recording default
policy=${during%% *}
check "default-normal-policy" "hsspy sampled at: $during" test "$policy" = SCHED_OTHER
check "target-nice-unchanged" "the program's threads ran at nice $kids_nice" test "$kids_nice" = "0 "
# A nice value below 0 needs root or CAP_SYS_NICE: does this shell have it?
if nice -n -1 true 2>/dev/null; then
    default_nice=-10 default_prio='at nice -10'
else
    default_nice=0 default_prio='at normal priority'
fi
check "default-nice" "hsspy sampled at nice $during_nice" test "$during_nice" = $default_nice
check "default-reported" "$(grep hsspy: "$T/default.report")" \
    has_line "$T/default.report" "$default_prio"
# hsspy's CPU: the steady cost per tick, the first tick apart; the two
# add up to the share of one CPU over the recording (to the rounding).
cpu_adds_up() {
    awk '/^  duration:/ { d = $2 }
         /^  rate:/ { sub(/.*achieved, /, ""); t = $1 }
         /^  hsspy: / { line = $0; sub(/.*hsspy: */, ""); pct = $1 + 0
                        sub(/.*recording \(/, ""); per = $1 + 0
                        sub(/.*which took /, ""); first = $1 + 0 }
         END { if (!d || !t || !per || !first || line !~ /us per tick after the first, which took [0-9.]+ ms/) exit 1
               whole = pct / 100 * d; parts = per * (t - 1) / 1e6 + first / 1e3
               exit !(parts > whole * 0.9 - 0.002 && parts < whole * 1.1 + 0.002) }' "$1"
}
check "cpu-per-tick-reported" "$(grep -E 'duration:|rate:|hsspy:' "$T/default.report")" \
    cpu_adds_up "$T/default.report"
default_slice=$(sched $$)
default_slice=${default_slice#* }
if [ -n "$default_slice" ] && kernel_at_least 6 12; then
    check "slice-sampler" "hsspy sampled in slices of ${during#* } ns" test "${during#* }" = 100000
    check "slice-target-default" "the program's threads ran so: $kids" \
        test "$kids" = "SCHED_OTHER $default_slice"
    check "slice-reported" "$(grep hsspy: "$T/default.report")" \
        has_line "$T/default.report" "$default_prio in 0.1 ms slices"
else
    skip "slices" "this kernel ($(uname -r)) has no custom scheduler slices (Linux 6.12 on) or shows none in /proc/PID/sched"
fi
if chrt -f 1 true 2>/dev/null; then
    watch_recording realtime --realtime
    policy=${during%% *}
    check "realtime-sampler" "hsspy sampled at: $during" test "${policy%%|*}" = SCHED_FIFO
    check "realtime-target-normal" "the program's threads ran so: $kids" \
        test "$(echo "$kids" | cut -d' ' -f1 | sort -u)" = SCHED_OTHER
    check "realtime-reported" "$(grep hsspy: "$T/realtime.report")" \
        has_line "$T/realtime.report" 'at real-time priority'
else
    skip "realtime" "real-time priority is not allowed here"
fi
# --nice N: any user may ask for a higher value; 0 keeps the normal one.
watch_recording nice5 --nice 5
check "nice-5-sampler" "hsspy sampled at nice $during_nice" test "$during_nice" = 5
check "nice-5-target" "the program's threads ran at nice $kids_nice" test "$kids_nice" = "0 "
check "nice-5-reported" "$(grep hsspy: "$T/nice5.report")" has_line "$T/nice5.report" 'at nice 5'
watch_recording nice0 --nice 0
check "nice-0-sampler" "hsspy sampled at nice $during_nice" test "$during_nice" = 0
check "nice-0-reported" "$(grep hsspy: "$T/nice0.report")" \
    has_line "$T/nice0.report" 'at normal priority'
"$HSSPY" record --nice -5 --realtime -- "$W/work" 1 1 >"$T/both.out" 2>"$T/both.err"
rc=$?
check "nice-realtime-refused" "exit $rc, said: $(cat "$T/both.err")" \
    test $rc = 2 -a "$(grep -c . "$T/both.err")" = 1 -a ! -s "$T/both.out"
check "nice-realtime-said" "said: $(cat "$T/both.err")" grep -q -- '--realtime and --nice' "$T/both.err"
"$HSSPY" record --nice -21 -- "$W/work" 1 1 >/dev/null 2>"$T/range.err"
rc=$?
check "nice-range" "exit $rc, said: $(cat "$T/range.err")" \
    test $rc = 2 -a "$(grep -c -- 'from -20 to 19' "$T/range.err")" = 1

# Credentials: the launched command runs as the user hsspy runs as.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    mkdir -p "$T/bin" && chmod 755 "$T" "$T/bin" && cp "$HSSPY" "$T/bin/hsspy"
    setpriv --reuid=65534 --regid=65534 --clear-groups \
        "$T/bin/hsspy" record -q -d 1 -o /dev/null -- sh -c 'id -u; id -g; id -G' >"$T/id.out" 2>"$T/err"
    check "same-credentials" "the command ran as: $(tr '\n' ' ' <"$T/id.out") $(cat "$T/err")" \
        test "$(tr '\n' ' ' <"$T/id.out")" = "65534 65534 65534 "
    # A user who may not lower the nice value is told so, and sampled at
    # the one hsspy was started at.
    setpriv --reuid=65534 --regid=65534 --clear-groups \
        "$T/bin/hsspy" record --nice -5 -d 0.5 -f report -o - -- "$W/work" 1 3000 >"$T/nobody.report" 2>"$T/err"
    check_status "nice-refused-record" $? "$T/err"
    # (work spins on once -d ends: the report names it)
    kill $(sed -n 's/^ *target: *pid \([0-9]*\):.*/\1/p' "$T/nobody.report") 2>/dev/null
    check "nice-refused-warned" "said: $(cat "$T/err")" \
        grep -q 'warning: --nice -5 is not allowed here .*: sampling at nice 0$' "$T/err"
    check "nice-refused-reported" "$(grep hsspy: "$T/nobody.report")" \
        has_line "$T/nobody.report" 'at normal priority'
else
    skip "same-credentials" "needs root (to run hsspy as another user) and setpriv"
fi
check "not-setuid" "hsspy is installed setuid or setgid" test ! -u "$HSSPY" -a ! -g "$HSSPY"
