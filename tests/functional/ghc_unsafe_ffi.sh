# ghc_unsafe_ffi - a -threaded GHC program's C function, called through an
# unsafe foreign import, shows up as the leaf of its samples, under the
# Haskell code that called it. For every GHC version this machine has.
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

ghc_targets
for suite in $GHC_TARGETS; do
    unsafe_ffi "$suite" "ghc-$(ghc_version "$suite")"
done
