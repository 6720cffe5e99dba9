# ghc_scheduler - a thread in the scheduler, between two runs of Haskell
# code, is tagged rts, never unsafe-ffi. schedule() sets cap->in_haskell
# before it calls dirty_TSO and dirty_STACK, well ahead of StgRun, so the
# flag alone would call that C code a foreign call (seen once in CI as
# "[unsafe-ffi];[invalid];schedule;dirty_STACK"). gdb stops the demo's
# scheduler in dirty_STACK called from schedule, parks the thread there in a
# two-byte loop and lets the process go; hsspy dump and record must show it
# as rts with schedule under dirty_STACK. Then the same on the way back
# from Haskell code to the scheduler, in StgReturn's epilogue past its
# first instructions, where its CFI no longer holds (seen in CI as
# "[unsafe-ffi];[invalid];StgReturn"): rts, with schedule under StgReturn
# and no [invalid]. Then on the way from the scheduler to Haskell code, in
# StgRun's prologue (in StgRunIsImplementedInAssembler, without CFI; seen
# in the bench as "[unsafe-ffi];StgRunIsImplementedInAssembler"): rts,
# with schedule under it. And C code of the runtime that Haskell code
# calls while it holds its capability: threadPaused, called from the
# runtime's Cmm on its way back to the scheduler (stg_returnToSched), and
# suspendThread, a safe foreign call's way out, called from the program's
# code: rts under their callers, not unsafe-ffi (seen in the bench as
# "[unsafe-ffi];...;stg_returnToSched;threadPaused"); and dirty_STACK
# called from threadStackUnderflow, as a thread returns to an older stack
# chunk (its rbp in the chunk it leaves), and from resumeThread, back from
# a safe call during which a collection may have moved its chunk: both
# "[invalid]" until their Haskell stacks were walked from the saved sp.
# And resumeThread back from waitForCapability, its capability held but
# not yet in_haskell: rts with the Haskell function that made the call
# under it (it had no Haskell frames at all). And the way from the
# scheduler into Haskell code, stg_returnToStackTop, before it loads Sp
# into rbp: haskell, its stack walked from the saved sp (it was
# "[invalid]").
# For every GHC version this machine has (a chroot's program gets the
# chroot's gdb).
. "$(dirname "$0")/../lib.sh"
require_ptrace
command -v gdb >/dev/null || { skip "all" "gdb is not installed"; exit 0; }

parked() { # SUITE CASE-PREFIX FUNCTION [CALLER-REGEX [CALLED-FROM [TAG]]]
    local suite=$1 c=$2-$3${5:+-in-$5} at=$3 caller=${4:-schedule} from=${5:-} tag=${6:-rts}
    local prog stop
    [ "$from" = back ] && c=$2-$3-back
    prog=$(hs_build "$suite" demo_thr demo.hs demo_c.c -- -O1 -threaded -rtsopts) ||
        { fail "$c-build" "ghc could not build demo.hs"; return; }
    if [ "$at" = StgReturn ]; then
        # (mov %rbx,%rax; add $0x4000,%rsp; mov (%rsp),%rbx; then here)
        stop='break *((char *)StgReturn + 14)
continue'
    elif [ "$at" = StgRun ]; then
        # (sub $0x30,%rsp; then here: the return address is not at rsp)
        stop='break *((char *)StgRun + 4)
continue'
        at=StgRunIsImplementedInAssembler # (its symbol, of StgRun's label)
    elif [ "$from" = back ]; then
        # (back from waitForCapability with its capability, not yet
        # in_haskell: its TSO still the suspended one)
        stop='break waitForCapability
continue
while !$_caller_is("'$at'")
  continue
end
delete
finish'
    elif [ -z "$from" ]; then
        stop="break $at
continue"
    else
        stop="break $at
continue
while !\$_caller_is(\"$from\")
  continue
end"
    fi
    hs_start "$suite" "$T/out" "$T/prog.err" "$prog" 60 +RTS -N2 -RTS ||
        { fail "$c-setup" "demo did not start"; return; }
    local pid=$HS_PID
    sleep 0.3
    gdb_park "$suite" "$pid" park "$T/gdb.out" "$stop"
    local tid=$PARKED_TID
    if [ -z "$tid" ]; then
        fail "$c-parked" "gdb did not park a thread in $at: $(tail -n 4 "$T/gdb.out" | tr '\n' '|')"
        kill -9 "$pid"; return
    fi
    pass "$c-parked"
    sleep 0.2

    "$HSSPY" dump -q -p "$pid" >"$T/dump" 2>"$T/dump.err"
    check_status "$c-dump" $? "$T/dump.err"
    sed -n '/^thread '"$tid"' /,/^$/p' "$T/dump" >"$T/thread"
    check "$c-dump-$tag" "the parked thread is not tagged $tag: $(head -n 1 "$T/thread")" \
        grep -q "^thread $tid .*, $tag, state" "$T/thread"
    check "$c-dump-stack" "the parked thread's stack has no $caller under $at: $(head -c 400 "$T/thread" | tr '\n' '|')" \
        awk -v at=" $at" -v re=" $caller " 'index($0, at) { getline; ok = $0 ~ re } END { exit !ok }' "$T/thread"

    "$HSSPY" record -q -F 499 -d 0.5 --threads --idle -p "$pid" >"$T/folded" 2>"$T/rec.err"
    check_status "$c-record" $? "$T/rec.err"
    check "$c-record-$tag" "the parked thread's samples are not [$tag];$caller;$at: $(grep "^tid $tid " "$T/folded" | head -n 3 | tr '\n' '|')" \
        grep -Eq "^tid $tid \([^)]*\);\[$tag\];(.*;)?$caller;$at [0-9]*$" "$T/folded"
    check "$c-record-whole" "the parked thread's samples have an [invalid] frame: $(grep "^tid $tid " "$T/folded" | head -n 3 | tr '\n' '|')" \
        sh -c "! grep '^tid $tid ' '$T/folded' | grep -q '\[invalid\]'"
    check "$c-record-not-ffi" "the runtime shows up as a foreign call: $(grep -E "schedule|;$at " "$T/folded" | grep '\[unsafe-ffi\]' | head -n 2 | tr '\n' '|')" \
        sh -c "! grep -E 'schedule|;$at ' '$T/folded' | grep -q '\[unsafe-ffi\]'"
    kill -9 "$pid"; wait "$pid" 2>/dev/null || true
}

ghc_targets
for suite in $GHC_TARGETS; do
    parked "$suite" "ghc-$(ghc_version "$suite")" dirty_STACK schedule schedule
    parked "$suite" "ghc-$(ghc_version "$suite")" dirty_STACK threadStackUnderflow threadStackUnderflow
    parked "$suite" "ghc-$(ghc_version "$suite")" dirty_STACK resumeThread resumeThread
    parked "$suite" "ghc-$(ghc_version "$suite")" StgReturn
    parked "$suite" "ghc-$(ghc_version "$suite")" StgRun
    parked "$suite" "ghc-$(ghc_version "$suite")" threadPaused stg_returnToSched stg_returnToSched
    parked "$suite" "ghc-$(ghc_version "$suite")" suspendThread 'Main\.[^;]+'
    # (an IO manager's epoll or the program's own calls, whichever first)
    parked "$suite" "ghc-$(ghc_version "$suite")" resumeThread '[A-Z][A-Za-z0-9.]*\.[^; ]+' back
    # (Haskell code: the frame it returns to, whatever it is)
    parked "$suite" "ghc-$(ghc_version "$suite")" stg_returnToStackTop '[^; ]+' "" haskell
done
