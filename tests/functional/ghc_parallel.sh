# ghc_parallel - a -N4 program with parallel, allocation-heavy Haskell work
# on every capability: gc samples appear, and every capability shows up
# (held by some thread, in the report's capability section).
. "$(dirname "$0")/../lib.sh"
require_ptrace

prog=$(build_hs par par.hs -- -O1 -threaded -rtsopts) ||
    { fail "build" "ghc could not build par.hs"; exit 0; }

"$HSSPY" record -q -F 299 -o "$T/par.folded" -- "$prog" 3 +RTS -N4 -RTS 2>"$T/err"
check_status "record-ok" $? "$T/err"
gc=$(count_matching "$T/par.folded" '^\[gc\];')
check "gc-samples" "no [gc] samples (tags: $(cut -d';' -f1 "$T/par.folded" | sort | uniq -c | tr '\n' ' '))" \
    test "$gc" -ge 10
check "gc-in-collector" "[gc] samples do not show the collector (GarbageCollect / gcWorkerThread)" \
    has_line "$T/par.folded" '^\[gc\];.*(GarbageCollect|gcWorkerThread)'
check "haskell-samples" "no [haskell] samples in the Map-building code" \
    has_line "$T/par.folded" '^\[haskell\];.*(Main\.|Data\.Map\.)'

"$HSSPY" record -q -F 299 -f report -o "$T/par.report" -- "$prog" 3 +RTS -N4 -RTS 2>"$T/err"
for c in 0 1 2 3; do
    held=$(sed -n "s/^  capability $c: held \\([0-9.]*\\)%.*/\\1/p" "$T/par.report")
    if [ -n "$held" ] && [ "$(echo "$held > 0" | bc -l)" = 1 ]; then
        pass "capability-$c"
    else
        fail "capability-$c" "capability $c not held in any sample: $(sed -n '/^capabilities/,$p' "$T/par.report" | tr '\n' '|')"
    fi
done
check "no-capability-4" "a capability 4 in a -N4 program" \
    test "$(grep -c '^  capability 4:' "$T/par.report")" -eq 0
