# ghc_bound - a bound thread (forkOS) running Haskell code. Its outermost
# call into Haskell is the runtime's own (forkOS_createThreadWrapper, its
# start routine, made it), so its samples leave out the C frames below that
# call, as a worker's do; but that is known only from those frames, which
# its first walk unwinds. From then on its captures must not copy them
# again (16 KB of C stack under StgRun's frame, and the C stack up to it:
# 39 KB a sample against 12), nor its walks unwind them. For every GHC
# version here.
. "$(dirname "$0")/../lib.sh"
require_ptrace

bound() { # SUITE CASE-PREFIX
    local suite=$1 c=$2 prog n hs all kb
    prog=$(hs_build "$suite" boundspin boundspin.hs -- -O1 -threaded -rtsopts) ||
        { fail "$c-build" "ghc could not build boundspin.hs"; return; }
    hs_record "$suite" /dev/null "$T/err" -q -F 499 -o "$T/bound.folded" -- "$prog" 2
    check_status "$c-record" $? "$T/err"
    all=$(count_matching "$T/bound.folded" '^\[haskell\];')
    n=$(count_matching "$T/bound.folded" '^\[haskell\];stg_forceIO_info;.*Main\.([$]w)?spin(;|$| )')
    check "$c-frames" "$n of $all [haskell] samples are Main.spin under stg_forceIO_info: $(sort -t' ' -k2 -rn "$T/bound.folded" | head -n 3 | cut -c1-200 | tr '\n' '|')" \
        test "$all" -ge 300 -a "$n" -ge $((all * 9 / 10))
    local below='^\[haskell\];.*(forkOS_createThreadWrapper|start_thread)'
    hs=$(count_matching "$T/bound.folded" "$below")
    check "$c-no-c-callers" "$hs [haskell] samples with the runtime's C frames below them: $(grep -E "$below" "$T/bound.folded" | head -n 2 | cut -c1-200 | tr '\n' '|')" \
        test "$hs" -eq 0
    hs_record "$suite" /dev/null "$T/err" -q -F 499 -f report -o "$T/bound.report" -- "$prog" 2
    check_status "$c-record-report" $? "$T/err"
    kb=$(sed -n 's/^ *copied: *\([0-9.]*\) KB of the program.s memory per thread sampled.*/\1/p' "$T/bound.report")
    check "$c-copied" "${kb:-no} KB copied per thread sampled: $(grep -E '^ *(copied|samples):' "$T/bound.report" | tr '\n' ' ')" \
        test "$(echo "${kb:-99} < 24" | bc -l)" = 1
}

ghc_targets
for suite in $GHC_TARGETS; do
    bound "$suite" "ghc-$(ghc_version "$suite")"
done
