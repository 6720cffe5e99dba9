# ghc_matrix - the same program built threaded and non-threaded, at -O0 and
# -O2, with and without -g: every build gets [haskell] samples in fib and
# [unsafe-ffi] samples whose leaf is the C function with Haskell above it;
# -g builds get source lines for their Haskell frames.
. "$(dirname "$0")/../lib.sh"
require_ptrace

for rts in threaded single; do
    for opt in O0 O2; do
        for dbg in g nog; do
            name="$rts-$opt-$dbg"
            flags=(-"$opt" -rtsopts)
            [ "$rts" = threaded ] && flags+=(-threaded)
            [ "$dbg" = g ] && flags+=(-g)
            prog=$(build_hs "fibffi-$name" fibffi.hs fibffi_c.c -- "${flags[@]}") ||
                { fail "$name-build" "ghc ${flags[*]} failed"; continue; }
            "$HSSPY" record -q -F 299 -o "$T/$name.folded" -- "$prog" 1.5 2>"$T/err"
            rc=$?
            if [ $rc -ne 0 ]; then
                fail "$name-record" "hsspy exited $rc: $(cat "$T/err")"
                continue
            fi
            f="$T/$name.folded"
            check "$name-haskell" "no [haskell] sample in fib: $(sort -t' ' -k2 -rn "$f" | head -n 3 | tr '\n' '|')" \
                has_line "$f" '^\[haskell\];.*Main\.(\$w)?fib'
            check "$name-unsafe-ffi" "no [unsafe-ffi] sample with fibffi_spin under Main.*" \
                has_line "$f" '^\[unsafe-ffi\];.*;Main\.[^;]*;fibffi_spin [0-9]+$'
            if [ "$dbg" = g ]; then
                # Source lines come with the dump's frames.
                bg "$prog" 3
                pid=$!
                sleep 0.5
                "$HSSPY" dump -q -p "$pid" >"$T/$name.dump" 2>/dev/null
                kill "$pid"
                check "$name-source-lines" "no fibffi.hs:LINE on the Haskell frames of the dump" \
                    grep -Eq ' (stg|pc|ret) +Main\..*fibffi\.hs:[0-9]+' "$T/$name.dump"
            fi
        done
    done
done
