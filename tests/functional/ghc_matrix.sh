# ghc_matrix - the same program built threaded and non-threaded, at -O0 and
# -O2, with and without -g: every build gets [haskell] samples in fib and
# [unsafe-ffi] samples whose leaf is the C function with Haskell above it;
# -g builds get source lines for their Haskell frames, and names from
# DWARF that are names. For every GHC version this machine has.
. "$(dirname "$0")/../lib.sh"
require_ptrace

matrix() { # SUITE CASE-PREFIX
    local suite=$1 c=$2 rts opt dbg name prog rc f i
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
                    # Source lines come with the dump's frames. (A dump is
                    # one instant: one that finds the main thread collecting
                    # garbage, 0.4% of its samples, shows no Haskell frame
                    # of it; then another is taken.)
                    : >"$T/$name.dump"
                    if hs_start "$suite" /dev/null /dev/null "$prog" 4; then
                        for i in 1 2 3; do
                            sleep 0.5
                            "$HSSPY" dump -q -p "$HS_PID" >"$T/$name.dump" 2>"$T/$name.dump-err"
                            grep -Eq ' (stg|pc|ret) +Main\.' "$T/$name.dump" && break
                        done
                    fi
                    kill "$HS_PID" 2>/dev/null
                    check "$c-$name-source-lines" "no fibffi.hs:LINE on the Haskell frames of the dump: $(grep -A 4 'main thread' "$T/$name.dump" | cut -c 1-110 | tr '\n' '|') $(head -c 200 "$T/$name.dump-err" 2>/dev/null)" \
                        grep -Eq ' (stg|pc|ret) +Main\..*fibffi\.hs:[0-9]+' "$T/$name.dump"
                fi
            done
        done
    done
}

# Names from DWARF (-O2 -g, dwarfnames.hs): the two instances' methods of
# one class by their own names, not both "Main.area"; GHC 9.6 on names the
# procedures of workers after labels ("L7133701809754876057"), which are no
# names: the linkage name's worker, $wspin; code GHC 9.0 lays out after the
# program's entry, ZCMain_main_info, is Main's, not ":Main"'s. (Before:
# Main.area; Main.L7133...; :Main.burn.)
dwarf_names() { # SUITE CASE-PREFIX
    local suite=$1 c=$2-dwarf-names prog f circle rect
    prog=$(hs_build "$suite" dwarfnames dwarfnames.hs -- -O2 -g -threaded) ||
        { fail "$c-build" "ghc -O2 -g -threaded failed"; return; }
    hs_record "$suite" /dev/null "$T/err" -q -F 299 -o "$T/dn.folded" -- "$prog" 1.5 ||
        { fail "$c-record" "hsspy failed: $(cat "$T/err")"; return; }
    f="$T/dn.folded"
    circle=$(count_matching "$f" ';Main\.\$fShapeCircle_\$carea;')
    rect=$(count_matching "$f" ';Main\.\$fShapeRect_\$carea;')
    check "$c-instances" "$circle samples in Circle's area, $rect in Rect's: $(grep -o 'Main\.[^; ]*area[^; ]*' "$f" | sort | uniq -c | tr '\n' ' ')" \
        test "$circle" -ge 10 -a "$rect" -ge 10
    check "$c-no-labels" "frames named after labels or :Main: $(grep -Eo '(^|;)(:Main\.[^; ]*|[A-Z][A-Za-z.]*\.L[0-9]{6,})' "$f" | sort -u | tr '\n' ' ')" \
        lacks_line "$f" '(^|;)(:Main\.|[A-Z][A-Za-z.]*\.L[0-9]{6,}( |;))'
    # (the layout that puts burn's loop after the entry: GHC 9.0's)
    prog=$(hs_build "$suite" entrylayout entrylayout.hs entrylayout_c.c -- -O2 -g -threaded) ||
        { fail "$c-entry-build" "ghc -O2 -g -threaded failed"; return; }
    hs_record "$suite" /dev/null "$T/err" -q -F 299 -o "$T/el.folded" -- "$prog" ||
        { fail "$c-entry-record" "hsspy failed: $(cat "$T/err")"; return; }
    check "$c-entry-module" "burn's samples: $(grep -Eo '[^; ]*\.burn' "$T/el.folded" | sort | uniq -c | tr '\n' ' ')" \
        sh -c "grep -Eq ';Main\.hsWork;Main\.burn [0-9]+\$' '$T/el.folded' && ! grep -q ':Main\.' '$T/el.folded'"
}

ghc_targets
for suite in $GHC_TARGETS; do
    matrix "$suite" "ghc-$(ghc_version "$suite")"
    dwarf_names "$suite" "ghc-$(ghc_version "$suite")"
done
