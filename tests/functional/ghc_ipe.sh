# ghc_ipe - a program built with -finfo-table-map (GHC 9.4+) has its STG
# frames named from the IPE data in its executable: the continuations of
# deep.hs's recursion, which have no symbol, are named Main.alpha,
# Main.beta, Main.gamma with a source span inside that binding, in the dump
# and in profiles. For every GHC version this machine has that makes IPE
# data (9.6 stores it one way, 9.10 another).
. "$(dirname "$0")/../lib.sh"
require_ptrace

# The lines of a binding in deep.hs: from its signature to its NOINLINE.
binding_lines() {
    local src=$ROOT/tests/workloads/hs/deep.hs
    echo "$(grep -n "^$1 ::" "$src" | cut -d: -f1) $(grep -n "NOINLINE $1 " "$src" | cut -d: -f1)"
}

ipe() { # SUITE CASE-PREFIX VERSION
    local suite=$1 c=$2 v=$3 prog bin
    case $v in
    9.[0-3].*) skip "$c-ipe" "GHC $v writes no IPE data (-finfo-table-map with source spans is 9.4+)"; return ;;
    esac
    prog=$(hs_build "$suite" deep_ipe deep.hs deep_c.c -- -O1 -finfo-table-map -threaded -rtsopts) ||
        { fail "$c-build" "ghc -finfo-table-map could not build deep.hs"; return; }
    bin=$(chroot_build_dir "$suite")${prog#/hsspy/build}
    [ "$suite" = host ] && bin=$prog

    hs_start "$suite" "$T/out" /dev/null "$prog" 23 60 && wait_for_line "$T/out" '^ready$' ||
        { fail "$c-setup" "deep did not reach its blocking call"; return; }
    "$HSSPY" dump -q -p "$HS_PID" >"$T/dump" 2>"$T/dump.err"
    "$HSSPY" record -q -F 199 -d 0.5 -o "$T/folded" -p "$HS_PID" 2>>"$T/dump.err"
    kill "$HS_PID" 2>/dev/null
    sed -n '/^thread '"$HS_PID"' /,/^$/p' "$T/dump" >"$T/main"

    # The STG frames: address, name, source ("deep.hs:23:13-16").
    awk '$3 == "stg" { print $2, $4, $NF }' "$T/main" >"$T/stg"
    nm "$bin" | awk '{ print $1 }' | sed 's/^0*//' | sort -u >"$T/symbols"
    local f lo hi named=0 bad=0 nosym=0 addr name src line
    while read -r addr name src; do
        case $name in Main.alpha | Main.beta | Main.gamma) ;; *) continue ;; esac
        f=${name#Main.}
        read -r lo hi < <(binding_lines "$f")
        line=$(echo "$src" | sed -n 's/^.*deep\.hs:(\{0,1\}\([0-9]*\)[:,].*/\1/p')
        if [ -z "$line" ] || [ "$line" -lt "$lo" ] || [ "$line" -gt "$hi" ]; then
            bad=$((bad + 1))
            echo "$addr $name $src: not within lines $lo-$hi" >>"$T/bad"
        fi
        named=$((named + 1))
        grep -qx "$(echo "${addr#0x}" | sed 's/^0*//')" "$T/symbols" || nosym=$((nosym + 1))
    done <"$T/stg"
    check "$c-recursion-named" "only $named of the recursion's frames are named Main.alpha/beta/gamma: $(head -c 800 "$T/main" | tr '\n' '|')" \
        test "$named" -ge 20
    check "$c-spans-in-binding" "$bad frames' spans lie outside their binding: $(head -n 3 "$T/bad" 2>/dev/null | tr '\n' '|')" \
        test "$bad" -eq 0
    # The recursion's return frames are continuations: no symbol of their own.
    check "$c-continuations" "only $nosym of the $named named frames are at addresses without a symbol" \
        test "$nosym" -ge 20
    check "$c-folded" "the profile does not show Main.alpha, beta and gamma above deep_block: $(head -n 2 "$T/folded" | tr '\n' '|')" \
        has_line "$T/folded" '^\[safe-ffi\];.*Main\.beta;Main\.gamma;Main\.alpha;.*;deep_block;'
}

ghc_targets
for suite in $GHC_TARGETS; do
    v=$(ghc_version "$suite")
    ipe "$suite" "ghc-$v" "$v"
done
