# fuzz - the C unwinder, the RTS reader and the STG walker over damaged
# copies of memory captured from real targets (a GHC program with every tag,
# a deep Haskell recursion, a C program), the raw-file reader over
# damaged recordings, and the index of a static executable's .eh_frame
# over damaged copies of a GHC program's (its C runtime's FDEs): under AddressSanitizer and UndefinedBehaviorSanitizer
# (any finding aborts), no crash, and every walk ends. make check runs
# 100000 of each; `make stress` runs a million.
. "$(dirname "$0")/../lib.sh"
require_ptrace

FUZZ=$ROOT/build/fuzz/fuzz
N=${FUZZ_ITERATIONS:-100000}
[ -x "$FUZZ" ] || { fail "fuzzer" "build/fuzz/fuzz is missing (make fuzzer)"; exit 0; }

demo=$(build_hs demo demo.hs demo_c.c -- -O1 -g -threaded -rtsopts) ||
    { fail "build" "ghc could not build demo.hs"; exit 0; }
deep=$(build_hs deep deep.hs deep_c.c -- -O1 -threaded -rtsopts) ||
    { fail "build" "ghc could not build deep.hs"; exit 0; }

capture() { # NAME COMMAND...
    local name=$1; shift
    mkdir -p "$T/$name"
    "$HSSPY" record -q -F 199 -d 1.5 --save-captures "$T/$name" -o /dev/null -- "$@" >/dev/null 2>"$T/err"
    local n
    n=$(ls "$T/$name" | wc -l)
    check "$name-captured" "only $n captures saved: $(cat "$T/err")" test "$n" -ge 20
}
capture demo "$demo" 3 +RTS -N2 -RTS
capture deep "$deep" 40 3
capture chains "$W/chains" 2

"$HSSPY" record -q -F 199 -d 1 -f raw -o "$T/rec.raw" -- "$demo" 2 +RTS -N2 -RTS >/dev/null 2>&1

# The fuzzer's N iterations of each MODE on its INPUT, one after another
# (tests/run.sh runs another test beside this one: two at a time here made
# three busy processes on two CPUs), each of which must end with no
# sanitizer finding and no failed check, and say so.
cases=("walk-demo walk $T/demo" "walk-deep walk $T/deep" "walk-chains walk $T/chains"
    "raw-reader raw $T/rec.raw" "eh-frame-index eh_frame $demo")
for c in "${cases[@]}"; do
    read -r name mode input <<<"$c"
    "$FUZZ" "$mode" "$input" "$N" >"$T/$name.out" 2>"$T/$name.err"
    echo $? >"$T/$name.rc"
done
for c in "${cases[@]}"; do
    read -r name _ <<<"$c"
    out=$(cat "$T/$name.out") rc=$(cat "$T/$name.rc")
    if [ "$rc" -eq 0 ] && echo "$out" | grep -q "iterations $N,"; then
        pass "$name"
        echo "    $out" >&2
    else
        fail "$name" "status $rc: $out $(head -c 2000 "$T/$name.err")"
    fi
done
