# ghc_rts_work - the runtime's C functions that compiled Haskell code calls
# itself, not through a foreign import, are the runtime's work: [rts],
# never [unsafe-ffi], under the Haskell code that called them. rtswork.hs
# makes sparks (`par`: newSpark) and writes IORefs in the old generation
# (the write barrier, dirty_MUT_VAR), for each GHC version; built with
# -prof -fprof-auto (the host's GHC, the one with profiling libraries), it
# calls small functions, each entry a call to pushCostCentre or
# enterFunCCS. (Before, all of those samples were [unsafe-ffi]: three
# fifths of the -prof program's, which makes no foreign call there.)
# alone: its -N2 sparks make few when it shares the CPUs (150 to 200 samples in newSpark in 2 s alone, 5 beside two busy loops)
. "$(dirname "$0")/../lib.sh"
require_ptrace

# rts_work CASE FOLDED FUNCTIONS MIN: at least MIN samples in one of the
# FUNCTIONS (a regex), every one of them [rts], under a Main frame.
rts_work() {
    local c=$1 f=$2 fn=$3 min=$4 all rts
    grep -E "(^|;)($fn)(;| )" "$f" >"$T/work" || true
    all=$(total_count "$T/work")
    rts=$(count_matching "$T/work" "^\\[rts\\];(.*;)?Main\\.[^;]*;($fn)(;| )")
    check "$c" "$rts of $all samples in $fn are [rts] under a Main frame: $(grep -Ev "^\\[rts\\];(.*;)?Main\\.[^;]*;($fn)(;| )" "$T/work" | sort -t' ' -k2 -rn | head -n 4 | cut -c1-250 | tr '\n' '|')" \
        test "$all" -ge "$min" -a "$rts" -eq "$all"
}

ghc_targets
for suite in $GHC_TARGETS; do
    c=ghc-$(ghc_version "$suite")
    prog=$(hs_build "$suite" rtswork rtswork.hs -- -O1 -threaded -rtsopts) ||
        { fail "$c-build" "ghc could not build rtswork.hs"; continue; }
    hs_record "$suite" /dev/null "$T/err" -q -F 499 -d 2 -o "$T/sparks.folded" -- "$prog" sparks 2.5 +RTS -N2 -RTS
    check_status "$c-sparks-record" $? "$T/err"
    rts_work "$c-sparks" "$T/sparks.folded" newSpark 50
    hs_record "$suite" /dev/null "$T/err" -q -F 499 -d 2 -o "$T/mutvar.folded" -- "$prog" mutvar 2.5 +RTS -N2 -RTS
    check_status "$c-mutvar-record" $? "$T/err"
    rts_work "$c-mutvar" "$T/mutvar.folded" dirty_MUT_VAR 10
done

c=ghc-$(ghc --numeric-version)
if prog=$(build_hs rtswork-prof rtswork.hs -- -O1 -prof -fprof-auto -rtsopts); then
    "$HSSPY" record -q -F 499 -d 2 -o "$T/calls.folded" -- "$prog" calls 2.5 >/dev/null 2>"$T/err"
    check_status "$c-prof-record" $? "$T/err"
    rts_work "$c-prof-cost-centres" "$T/calls.folded" 'pushCostCentre|enterFunCCS' 200
else
    fail "$c-prof-build" "ghc -prof could not build rtswork.hs (apt-get install ghc-prof)"
fi
