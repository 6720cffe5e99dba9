# ghc_thunks - an update frame names the thunk it forces. A lazy left fold
# builds a chain of thunks and forces it, over and over: samples taken
# then hold long runs of update frames, and their thunks' headers, read
# from the running program after the capture (many frames' in one
# process_vm_readv), must name their code where it is still a thunk's (an
# application of (+) not evaluated yet), at least in an eighth of those
# samples; a header read from the wrong place names nothing. The chain
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
        test "$frames" -ge 50 -a $((named * 8)) -ge "$frames"
    local cycles
    cycles=$(count_matching "$T/lazy.folded" '(^|;)([^;]+;[^;]+);\2(;| [0-9]+$)')
    check "$c-cycles-folded" "$cycles of $frames samples with update frames repeat two frames: $(grep -E '(^|;)([^;]+;[^;]+);\2(;| [0-9]+$)' "$T/lazy.folded" | head -n 1 | cut -c1-300)" \
        test "$frames" -ge 50 -a $((cycles * 20)) -le "$frames"
    check "$c-ticker-idle" "the ticker has samples that are not idle: $(grep '(ghc_ticker);' "$T/lazy.folded" | head -n 3 | cut -c1-200 | tr '\n' '|')" \
        lacks_line "$T/lazy.folded" '\(ghc_ticker\);'
}

ghc_targets
for suite in $GHC_TARGETS; do
    thunks "$suite" "ghc-$(ghc_version "$suite")"
done
