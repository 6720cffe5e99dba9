# valgrind - full recordings under valgrind's memcheck are clean: no invalid
# read or write, no use of uninitialised memory, no definite leak; for a C
# program (record; and linked statically, its .eh_frame indexed), a GHC
# program (record, every tag, DWARF names, report), and reading a raw file
# back (report).
. "$(dirname "$0")/../lib.sh"
require_ptrace
command -v valgrind >/dev/null || { skip "all" "valgrind is not installed"; exit 0; }

VG=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite)
demo=$(build_hs demo demo.hs demo_c.c -- -O1 -g -threaded -rtsopts) ||
    { fail "build" "ghc could not build demo.hs"; exit 0; }

run() { # NAME hsspy-args...
    local name=$1; shift
    "${VG[@]}" "$HSSPY" "$@" >/dev/null 2>"$T/$name.vg"
    local rc=$?
    check "$name" "status $rc: $(grep -v '^hsspy' "$T/$name.vg" | head -c 1500)" test $rc -eq 0
}
run "c-record" record -q -F 199 -d 1 -o /dev/null -- "$W/chains" 1.5
run "c-static-record" record -q -F 199 -d 1 -o /dev/null -- "$W/chains_static" 1.5
run "ghc-record" record -q -F 199 -d 1.5 -f report -o "$T/r" -- "$demo" 2 +RTS -N2 -RTS
"$HSSPY" record -q -F 199 -d 1 -f raw -o "$T/rec.raw" -- "$demo" 1.5 +RTS -N2 -RTS >/dev/null 2>&1
run "raw-report" report -q -f folded -o /dev/null "$T/rec.raw"
