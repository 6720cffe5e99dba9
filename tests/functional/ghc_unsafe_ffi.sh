# ghc_unsafe_ffi - a -threaded GHC program's C function, called through an
# unsafe foreign import, shows up as the leaf of its samples, under the
# Haskell code that called it.
. "$(dirname "$0")/../lib.sh"
require_ptrace

prog=$(build_hs unsafe_leaf unsafe_leaf.hs unsafe_leaf_c.c -- -O1 -threaded -rtsopts) ||
    { fail "build" "ghc could not build unsafe_leaf.hs"; exit 0; }

"$HSSPY" record -q -F 199 -d 2 -o "$T/ffi.folded" -- "$prog" 2.5 2>"$T/err"
check_status "exit-status" $? "$T/err"
total=$(total_count "$T/ffi.folded")
leaf=$(count_matching "$T/ffi.folded" ';unsafe_leaf_spin [0-9]+$')
if [ "$total" -gt 100 ] && [ $((10 * leaf)) -ge $((8 * total)) ]; then
    pass "c-leaf"
else
    fail "c-leaf" "unsafe_leaf_spin is the leaf of $leaf of $total samples: $(sort -t' ' -k2 -rn "$T/ffi.folded" | head -n3 | tr '\n' '|')"
fi
# The frame below the C function is the Haskell code that made the call.
check "haskell-caller" "no Main.* frame right below unsafe_leaf_spin" \
    has_line "$T/ffi.folded" '(^|;)Main\.[^;]+;unsafe_leaf_spin [0-9]+$'
