# ghc_matrix - the same program built threaded and non-threaded, at -O0 and
# -O2, with and without -g: every build gets [haskell] samples in fib and
# [unsafe-ffi] samples whose leaf is the C function with Haskell above it;
# -g builds get source lines for their Haskell frames. For every GHC
# version this machine has.
. "$(dirname "$0")/../lib.sh"
require_ptrace

matrix() { # SUITE CASE-PREFIX
    local suite=$1 c=$2 rts opt dbg name prog rc f
    for rts in threaded single; do
        for opt in O0 O2; do
            for dbg in g nog; do
                name="$rts-$opt-$dbg"
                flags=(-"$opt" -rtsopts)
                [ "$rts" = threaded ] && flags+=(-threaded)
                [ "$dbg" = g ] && flags+=(-g)
                prog=$(hs_build "$suite" "fibffi-$name" fibffi.hs fibffi_c.c -- "${flags[@]}") ||
                    { fail "$c-$name-build" "ghc ${flags[*]} failed"; continue; }
                hs_record "$suite" /dev/null "$T/err" -q -F 299 -o "$T/$name.folded" -- "$prog" 1.5
                rc=$?
                if [ $rc -ne 0 ]; then
                    fail "$c-$name-record" "hsspy exited $rc: $(cat "$T/err")"
                    continue
                fi
                f="$T/$name.folded"
                check "$c-$name-haskell" "no [haskell] sample in fib: $(sort -t' ' -k2 -rn "$f" | head -n 3 | tr '\n' '|')" \
                    has_line "$f" '^\[haskell\];.*Main\.(\$w)?fib'
                check "$c-$name-unsafe-ffi" "no [unsafe-ffi] sample with fibffi_spin under Main.*" \
                    has_line "$f" '^\[unsafe-ffi\];.*;Main\.[^;]*;fibffi_spin [0-9]+$'
                if [ "$dbg" = g ]; then
                    # Source lines come with the dump's frames.
                    if hs_start "$suite" /dev/null /dev/null "$prog" 3 && sleep 0.5; then
                        "$HSSPY" dump -q -p "$HS_PID" >"$T/$name.dump" 2>/dev/null
                    fi
                    kill "$HS_PID" 2>/dev/null
                    check "$c-$name-source-lines" "no fibffi.hs:LINE on the Haskell frames of the dump" \
                        grep -Eq ' (stg|pc|ret) +Main\..*fibffi\.hs:[0-9]+' "$T/$name.dump"
                fi
            done
        done
    done
}

ghc_targets
for suite in $GHC_TARGETS; do
    matrix "$suite" "ghc-$(ghc_version "$suite")"
done
