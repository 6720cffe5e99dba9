# ghc_unsafe_ffi - a -threaded GHC program's C function, called through an
# unsafe foreign import, shows up as the leaf of its samples, under the
# Haskell code that called it. So does GMP's hand-written assembly under
# Integer arithmetic (integers.hs), which has no unwind information and
# uses rbp as it pleases: its frame is read from its prologue, and every
# sample in it reaches the Haskell code doing the arithmetic and the bottom
# of the main thread's stack, tagged [unsafe-ffi] (before, a third of them
# stopped at the routine: [rts], or [safe-ffi] in the non-threaded runtime,
# with no Haskell frame), with the threaded runtime and without. A C call
# much deeper than the samples before it is copied whole (deepffi.hs). A
# statically linked build's C function is [unsafe-ffi] too. For
# every GHC version this machine has.
. "$(dirname "$0")/../lib.sh"
require_ptrace

unsafe_ffi() { # SUITE CASE-PREFIX
    local suite=$1 c=$2 prog total leaf
    prog=$(hs_build "$suite" unsafe_leaf unsafe_leaf.hs unsafe_leaf_c.c -- -O1 -threaded -rtsopts) ||
        { fail "$c-build" "ghc could not build unsafe_leaf.hs"; return; }
    hs_record "$suite" /dev/null "$T/err" -q -F 199 -d 2 -o "$T/ffi.folded" -- "$prog" 2.5
    check_status "$c-exit-status" $? "$T/err"
    total=$(total_count "$T/ffi.folded")
    leaf=$(count_matching "$T/ffi.folded" ';unsafe_leaf_spin [0-9]+$')
    if [ "$total" -gt 100 ] && [ $((10 * leaf)) -ge $((8 * total)) ]; then
        pass "$c-c-leaf"
    else
        fail "$c-c-leaf" "unsafe_leaf_spin is the leaf of $leaf of $total samples: $(sort -t' ' -k2 -rn "$T/ffi.folded" | head -n3 | tr '\n' '|')"
    fi
    # The frame below the C function is the Haskell code that made the call.
    check "$c-haskell-caller" "no Main.* frame right below unsafe_leaf_spin" \
        has_line "$T/ffi.folded" '(^|;)Main\.[^;]+;unsafe_leaf_spin [0-9]+$'
}

# The same program linked statically (-optl-static), as Haskell programs
# are for shipping: without a .eh_frame_hdr, its C code's CFI is found by
# hsspy's index of .eh_frame; without it every address in the file passed
# for Haskell code, and a sample in the C function was [haskell].
static_ffi() { # SUITE CASE-PREFIX
    local suite=$1 c=$2-static prog leaf unsafe
    prog=$(hs_build "$suite" unsafe_leaf_static unsafe_leaf.hs unsafe_leaf_c.c -- -O1 -threaded \
        -rtsopts -static -optl-static -optl-pthread) ||
        { fail "$c-build" "ghc could not link unsafe_leaf.hs statically"; return; }
    rm -f "$T/static.folded"
    hs_record "$suite" /dev/null "$T/err" -q -F 199 -d 2 -o "$T/static.folded" -- "$prog" 2.5
    check_status "$c-exit-status" $? "$T/err"
    grep -E ';unsafe_leaf_spin [0-9]+$' "$T/static.folded" >"$T/static.leaf" || true
    leaf=$(total_count "$T/static.leaf")
    unsafe=$(count_matching "$T/static.leaf" '^\[unsafe-ffi\];\[catch\];Main\.[^;]+;(Main\.[^;]+;)*unsafe_leaf_spin [0-9]+$')
    check "$c-c-leaf" "unsafe_leaf_spin is the leaf of $leaf of $(total_count "$T/static.folded") samples: $(sort -t' ' -k2 -rn "$T/static.folded" | head -n3 | tr '\n' '|')" \
        test $((10 * leaf)) -ge $((8 * $(total_count "$T/static.folded"))) -a "$leaf" -gt 100
    check "$c-unsafe-ffi" "$unsafe of $leaf samples in unsafe_leaf_spin are [unsafe-ffi] under Main's code: $(sort -t' ' -k2 -rn "$T/static.leaf" | head -n3 | tr '\n' '|')" \
        test $((100 * unsafe)) -ge $((95 * leaf)) -a "$leaf" -gt 0
}

integers() { # SUITE CASE-PREFIX RTS
    local suite=$1 c=$2-$3 prog flags=()
    [ "$3" = threaded ] && flags=(-threaded)
    prog=$(hs_build "$suite" "integers-$3" integers.hs -- -O1 -rtsopts "${flags[@]}") ||
        { fail "$c-build" "ghc could not build integers.hs"; return; }
    hs_record "$suite" /dev/null "$T/err" -q -F 499 -o "$T/int.folded" -- "$prog" 2
    check_status "$c-record" $? "$T/err"
    grep -F ';__gmpn_' "$T/int.folded" >"$T/gmp" || true
    local all walked caller unsafe
    all=$(total_count "$T/gmp")
    # Each reaches Haskell code (GHC.Num's) and the bottom of the main
    # thread's stack, most through Main.mulLoop or Main.remLoop (not all:
    # a remainder that ends a fold's step is a tail call, its caller's frame
    # gone). (A tick of the non-threaded runtime's timer lands in its
    # signal handler, [rts], whatever the thread was doing.)
    walked=$(count_matching "$T/gmp" '^\[(unsafe-ffi|rts)\];\[catch\];Main\.main[0-9]*;(.*;)?GHC\.Num\.[^;]*;(integer_gmp|__gmpn)')
    caller=$(count_matching "$T/gmp" ';Main\.([$]w)?(mulLoop|remLoop);GHC\.Num\.')
    check "$c-gmp-walked" "$walked of $all samples in GMP's routines reach GHC.Num and main: $(grep -Ev '^\[(unsafe-ffi|rts)\];\[catch\];Main\.main[0-9]*;(.*;)?GHC\.Num\.[^;]*;(integer_gmp|__gmpn)' "$T/gmp" | sort -t' ' -k2 -rn | head -n 4 | cut -c1-300 | tr '\n' '|')" \
        test "$all" -ge 50 -a "$walked" -eq "$all"
    check "$c-gmp-caller" "$caller of $all samples in GMP's routines are under Main.mulLoop or Main.remLoop: $(grep -Ev ';Main\.([$]w)?(mulLoop|remLoop);GHC\.Num\.' "$T/gmp" | sort -t' ' -k2 -rn | head -n 4 | cut -c1-300 | tr '\n' '|')" \
        test "$((caller * 100))" -ge "$((all * 90))"
    unsafe=$(count_matching "$T/gmp" '^\[unsafe-ffi\];')
    check "$c-gmp-tag" "$unsafe of $all samples in GMP's routines are [unsafe-ffi]: $(grep -v '^\[unsafe-ffi\];' "$T/gmp" | sort -t' ' -k2 -rn | head -n 4 | cut -c1-300 | tr '\n' '|')" \
        test "$((unsafe * 100))" -ge "$((all * 95))"
}

# An unsafe call whose C takes 12 KB of stack now and then, briefly, from
# Haskell code that takes none (deepffi.hs): the C stack is copied down to
# where unwinds reached Haskell code before, however deep the call, so no
# sample's outer frames are read from the program after it ran on, and
# each sample of the call is under the Haskell code that made it and the
# main thread's root (its leaf deep_frame or what it calls:
# DEEP_FRAME_LEAF in tests/lib.sh). (Before,
# the copy grew from what the last samples had
# needed: some 25 samples in 2 s went deeper than the copy, and some were
# under a Haskell frame of another moment, GHC.Num's or the clock's; a
# printf from an unsafe call, the runtime's errorBelch, was [invalid].)
# Recorded 5 s: in 2 s, a busy machine left 13 or 14 samples of the call,
# under the 15 the check needs to mean something, and so did 3 s beside
# another test.
deep_call() { # SUITE CASE-PREFIX
    local suite=$1 c=$2 prog
    prog=$(hs_build "$suite" deepffi deepffi.hs deepffi_c.c -- -O1 -threaded -rtsopts) ||
        { fail "$c-build" "ghc could not build deepffi.hs"; return; }
    hs_record "$suite" /dev/null "$T/err" -q -F 999 -d 5 -f raw -o "$T/deep.raw" -- "$prog" 5.5
    check_status "$c-deep-call-record" $? "$T/err"
    : >"$T/err"
    raw_reports "$T/deep.raw" "$T/deep" "$T/err"
    check_rooted "$c-deep-call-callers" "$T/deep.folded" ';deep_frame(;|$| )' \
        '^\[unsafe-ffi\];\[catch\];Main\.main[0-9]*;(Main\.[^;]+;)+'"$DEEP_FRAME_LEAF" \
        15 "deep_frame under main and Main's code alone"
    check_copied "$c-deep-call-copy-enough" "$T/deep.report"
}

ghc_targets
for suite in $GHC_TARGETS; do
    deep_call "$suite" "ghc-$(ghc_version "$suite")"
    unsafe_ffi "$suite" "ghc-$(ghc_version "$suite")"
    static_ffi "$suite" "ghc-$(ghc_version "$suite")"
    integers "$suite" "ghc-$(ghc_version "$suite")" threaded
    integers "$suite" "ghc-$(ghc_version "$suite")" single
done
