# ghc_thunks - an update frame names the thunk it forces. A lazy left fold
# builds a chain of thunks and forces it, over and over: samples taken
# then hold long runs of update frames, and their thunks' headers, copied
# while the thread is stopped (the nearest Sp's, in one process_vm_readv;
# the program, let go, updates or blackholes them within microseconds),
# must name their code where it is still a thunk's (an application of (+)
# not evaluated yet), at least in a quarter of those samples (about half
# do; a sixth did when they were read once the thread ran on); a header
# read from the wrong place names nothing. The chain
# alternates an update frame and (+)'s return frame: that cycle is folded
# like any recursion, so that at most one sample in twenty of them shows
# two frames repeated right after themselves. The program
# is not threaded: its ticker thread (GHC 9.2 on; 9.0's non-threaded
# runtime ticks by a signal) runs no Haskell code and is idle, though the
# runtime's my_task, one global there, is found from its registers too.
# For every GHC version this machine has.
. "$(dirname "$0")/../lib.sh"
require_ptrace

thunks() { # SUITE CASE-PREFIX
    local suite=$1 c=$2 prog
    prog=$(hs_build "$suite" lazy lazy.hs -- -O0 -rtsopts) ||
        { fail "$c-build" "ghc could not build lazy.hs"; return; }
    hs_record "$suite" /dev/null "$T/err" -q -F 499 --threads -o "$T/lazy.folded" -- "$prog" 3
    check_status "$c-record" $? "$T/err"
    local frames named
    frames=$(count_matching "$T/lazy.folded" '(\(thunk\)|\[thunk\])(;| )')
    named=$(count_matching "$T/lazy.folded" ';[^;[]+ \(thunk\)(;| )')
    check "$c-named" "$named of $frames samples with update frames name a thunk: $(sort -t' ' -k2 -rn "$T/lazy.folded" | head -n 2 | cut -c1-300 | tr '\n' '|')" \
        test "$frames" -ge 50 -a $((named * 4)) -ge "$frames"
    local cycles
    cycles=$(count_matching "$T/lazy.folded" '(^|;)([^;]+;[^;]+);\2(;| [0-9]+$)')
    check "$c-cycles-folded" "$cycles of $frames samples with update frames repeat two frames: $(grep -E '(^|;)([^;]+;[^;]+);\2(;| [0-9]+$)' "$T/lazy.folded" | head -n 1 | cut -c1-300)" \
        test "$frames" -ge 50 -a $((cycles * 20)) -le "$frames"
    check "$c-ticker-idle" "the ticker has samples that are not idle: $(grep '(ghc_ticker);' "$T/lazy.folded" | head -n 3 | cut -c1-200 | tr '\n' '|')" \
        lacks_line "$T/lazy.folded" '\(ghc_ticker\);'
}

# A thread copying the frames of a suspended computation back onto its
# stack (resumed.hs), parked by gdb halfway through the copy of an AP_STACK
# (then of an AP_STACK_NOUPD): the words above those copied are what was
# on the stack before, but its samples are whole, from the code that
# demanded the thunk, through the thunk's update frame (for the NOUPD, and
# the frames the AP_STACK put back), to the copying code, with nothing of
# the half-copied frames between.
resumed() { # SUITE CASE-PREFIX RTS(threaded|single)
    local suite=$1 c=$2-$3 prog flags=(-O1 -fno-omit-yields -rtsopts) kind sym tail pid tid
    [ "$3" = threaded ] && flags+=(-threaded)
    command -v gdb >/dev/null || { skip "$c-resumed" "gdb is not installed"; return; }
    prog=$(hs_build "$suite" "resumed-$3" resumed.hs -- "${flags[@]}") ||
        { fail "$c-resumed-build" "ghc could not build resumed.hs"; return; }
    for kind in ap-stack noupd; do
        sym=stg_AP_STACK_info tail='\[thunk\];stg_AP_STACK_info'
        [ $kind = noupd ] && sym=stg_AP_STACK_NOUPD_info tail='\[thunk\];([^;[][^;]*;)+stg_AP_STACK_NOUPD_info'
        hs_start "$suite" "$T/resumed.out" "$T/resumed.err" "$prog" 20000 2000 60 &&
            wait_for_line "$T/resumed.out" '^ready$' ||
            { fail "$c-resumed-$kind" "resumed did not start"; return; }
        pid=$HS_PID
        # The copying loop's store, mov %REG,0x0(%rbp,%INDEX,8), and its
        # bound, cmp %BOUND,%INDEX: halfway through a copy of 1000 words
        # or more.
        gdb_park "$suite" "$pid" resumed "$T/resumed-gdb.out" "python
import re
start = int(gdb.parse_and_eval('(long)&$sym'))
insns = gdb.selected_frame().architecture().disassemble(start, count=80)
k = [n for n, i in enumerate(insns) if re.search(r'mov\s+%\w+,0x0\(%rbp,%\w+,8\)', i['asm'])][0]
index = re.search(r'0x0\(%rbp,%(\w+),8\)', insns[k]['asm']).group(1)
bound = [re.search(r'cmp\s+%(\w+),%' + index, i['asm']) for i in insns[k:k + 6]]
bound = [b.group(1) for b in bound if b][0]
gdb.execute('break *%d if \$%s >= 1000 && \$%s == \$%s / 2' % (insns[k]['addr'], bound, index, bound))
end
continue"
        tid=$PARKED_TID
        record_parked "$c-resumed-$kind" "a thread in $sym's copy" "$T/resumed-gdb.out" "$pid" "$tid" \
            '^parked' "$T/resumed.folded" || continue
        local all whole
        all=$(count_matching "$T/resumed.folded" "^tid $tid ")
        whole=$(count_matching "$T/resumed.folded" "^tid $tid \([^)]*\);\[haskell\];(\[catch\];|Main\.[^;]*;|[^;[]*;)*Main\.[^;]*;$tail [0-9]+\$")
        check "$c-resumed-$kind" "of $all samples of the parked thread, $whole whole from the code that demanded the thunk to $sym: $(grep "^tid $tid " "$T/resumed.folded" | head -n 2 | cut -c1-400 | tr '\n' '|')" \
            test "$all" -ge 50 -a "$whole" -eq "$all"
        check "$c-resumed-$kind-no-error" "the parked thread has [invalid] or [truncated] samples" \
            lacks_line "$T/resumed.folded" "^tid $tid .*\[(invalid|truncated)\]"
        kill -9 "$pid"; wait "$pid" 2>/dev/null || true
    done
}

ghc_targets
for suite in $GHC_TARGETS; do
    thunks "$suite" "ghc-$(ghc_version "$suite")"
    resumed "$suite" "ghc-$(ghc_version "$suite")" threaded
    resumed "$suite" "ghc-$(ghc_version "$suite")" single
done
