# pprof - `-f pprof` of the bundled GHC demo, read back by pprof itself
# (`go tool pprof`): the functions it ran, the tags, threads and roles as
# labels, the unsafe call under its Haskell caller, the sample count it
# reports in its comments, and the refusal to write binary to a terminal.
. "$(dirname "$0")/../lib.sh"
require_ptrace

prog=$(build_hs demo demo.hs demo_c.c -- -O1 -g -threaded -rtsopts) ||
    { fail "build" "ghc could not build demo.hs"; exit 0; }

# Binary output on a terminal: one error line, exit 2, target untouched.
# (`script` gives hsspy a terminal for standard output.)
script -qec "'$HSSPY' record -q -f pprof -d 0.2 -- sleep 0.3" /dev/null >"$T/tty.out" 2>&1
rc=$?
lines=$(tr -d '\r' <"$T/tty.out" | grep -c .)
if [ "$rc" -eq 2 ] && [ "$lines" -eq 1 ] && grep -q 'the pprof format is not for a terminal: write it to a file with -o FILE' "$T/tty.out"; then
    pass "refuses-terminal"
else
    fail "refuses-terminal" "exit status $rc, $lines lines: $(tr '\r\n' '  ' <"$T/tty.out")"
fi

"$HSSPY" record -q -F 199 -d 2 -f pprof -o "$T/demo.pb.gz" -- "$prog" 2.5 +RTS -N2 -RTS 2>"$T/err"
check_status "exit-status" $? "$T/err"
check "gzip" "the output is not gzip: $(head -c 64 "$T/demo.pb.gz" | od -An -c | head -n1)" \
    gzip -t "$T/demo.pb.gz"

if ! command -v go >/dev/null 2>&1 || ! go tool pprof -h >/dev/null 2>&1; then
    skip "go-tool-pprof" "go tool pprof is not available (Debian package golang-go)"
    exit 0
fi
pprof() { go tool pprof "$@" "$T/demo.pb.gz" 2>"$T/pprof.err"; }

if ! pprof -top >"$T/top"; then
    fail "pprof-reads-it" "go tool pprof -top: $(head -n3 "$T/pprof.err" | tr '\n' '|')"
    exit 0
fi
pass "pprof-reads-it"
# Functions with time of their own ("flat"), as the demo runs them.
for fn in demo_checksum Main.nfib; do
    check "top-$fn" "no flat time for $fn in: $(sed -n '/flat%/,$p' "$T/top" | head -n 8 | tr '\n' '|')" \
        has_line "$T/top" "^ *[0-9.]+(ns|us|ms|s) .* $fn\$"
done

# Labels: every tag the demo is busy in; the main thread's tid is the pid.
pprof -tags >"$T/tags"
pprof -comments >"$T/comments"
for tag in haskell unsafe-ffi safe-ffi; do
    check "tag-$tag" "no '$tag' under the tag label: $(sed -n '/^ *tag:/,/^$/p' "$T/tags" | tr '\n' '|')" \
        has_line "$T/tags" "^ *[0-9.]+m?s \\( *[0-9.]+%\\): $tag\$"
done
pid=$(sed -n 's/^target: pid \([0-9]*\):.*/\1/p' "$T/comments")
check "tid-label" "no tid label $pid (the target's pid, from its comments) in: $(sed -n '/^ *tid:/,/^$/p' "$T/tags" | tr '\n' '|')" \
    has_line "$T/tags" "^ *[0-9.]+m?s \\( *[0-9.]+%\\): ${pid:-none}\$"
check "role-label" "no role 'bound main thread' in: $(sed -n '/^ *role:/,/^$/p' "$T/tags" | tr '\n' '|')" \
    has_line "$T/tags" ": bound main thread"

# The stack is code frames only (no [unsafe-ffi] frame): demo_checksum is
# the leaf, its Haskell caller right above it, in samples labelled so.
pprof -traces -tagfocus=tag=unsafe-ffi >"$T/traces"
if awk '/^-+\+-+$/ { block = 1; n = 0; tag = ""; next }
        block && /^ +tag: +/ { tag = $2; next }
        block && /^ +[0-9.]+(ns|us|ms|s) +/ { n = 1; leaf = $2; next }
        block && n == 1 && NF == 1 { if (tag == "unsafe-ffi" && leaf == "demo_checksum" && $1 ~ /^Main\./) ok = 1; n = 2 }
        END { exit !ok }' "$T/traces"; then
    pass "unsafe-ffi-trace"
else
    fail "unsafe-ffi-trace" "no unsafe-ffi trace demo_checksum <- Main.*: $(sed -n '4,20p' "$T/traces" | tr '\n' '|')"
fi
pprof -traces >"$T/all-traces"
tagframe='^ +([0-9.]+(ns|us|ms|s) +)?\[(haskell|unsafe-ffi|safe-ffi|gc|rts|idle)\]$'
check "no-tag-frames" "a tag shows as a frame: $(grep -E "$tagframe" "$T/all-traces" | head -n 2 | tr '\n' '|')" \
    test "$(grep -c -E "$tagframe" "$T/all-traces")" -eq 0

# Sampling health in the comments, and pprof's sample total matches it.
check "comments" "comments lack the rate and ticks: $(tr '\n' '|' <"$T/comments")" \
    grep -q -E '^rate: 199 Hz asked, [0-9.]+ Hz achieved$' "$T/comments"
want=$(sed -n 's/^samples: \([0-9]*\) thread samples.*/\1/p' "$T/comments")
got=$(pprof -sample_index=samples -top | sed -n 's/.*Total samples = \([0-9]*\) *$/\1/p')
if [ -n "$want" ] && [ "${want:-0}" -gt 100 ] && [ "$got" = "$want" ]; then
    pass "sample-total"
else
    fail "sample-total" "pprof counts '$got' samples, the comment says '$want' (want > 100)"
fi

# From a recording whose program is gone since: its mapping is still there,
# from what the recording saved (path, span, build-id), and its locations
# point at it (before: the mapping was left out, its locations had none).
mkdir -p "$T/gone"
cp "$W/chains" "$T/gone/chains"
"$HSSPY" record -q -F 199 -f raw -o "$T/gone.raw" -- "$T/gone/chains" 0.5 >/dev/null 2>"$T/err"
check_status "gone-record" $? "$T/err"
rm "$T/gone/chains"
"$HSSPY" report -q -f pprof -o "$T/gone.pb.gz" "$T/gone.raw" 2>"$T/err"
check_status "gone-report" $? "$T/err"
go tool pprof -raw "$T/gone.pb.gz" >"$T/gone.txt" 2>"$T/pprof.err"
id=$(readelf -n "$W/chains" | sed -n 's/.*Build ID: *//p')
m=$(sed -n "s|^ *\([0-9]*\): 0x[0-9a-f]*/0x[0-9a-f]*/0x[0-9a-f]* $T/gone/chains $id .*|\1|p" "$T/gone.txt")
check "gone-mapping" "mappings: $(sed -n '/^Mappings/,$p' "$T/gone.txt" | tr '\n' '|')" test -n "$m"
check "gone-locations" "no location of leaf in mapping ${m:-?}: $(grep -m 2 ' leaf ' "$T/gone.txt" | tr '\n' '|')" \
    grep -Eq "^ +[0-9]+: 0x[0-9a-f]+ M=${m:-x} leaf " "$T/gone.txt"
