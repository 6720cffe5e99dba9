# c_calls - -f calls on the two-thread C chains (main|worker -> outer ->
# middle -> leaf): the figures and the callers and callees it gives must be
# the program's own call graph, read back through the one-row-per-line form
# the format documents.
. "$(dirname "$0")/../lib.sh"
require_ptrace

CH=$W/chains

# paragraph FILE NAME: the rows of NAME's paragraph, one per line, as
# "ROLE<TAB>NAME<TAB>CNT<TAB>ACC<TAB>OWN", ROLE caller, fn or callee.
paragraph() {
    awk -v want="$2" '
        /^\{\[/ { n = 0; hit = 0; role = "caller" }
        /^(\{\[\{|  \{| \{ | \[\{)"/ {
            open = substr($0, 1, 3)
            if (open == " { ") role = "fn"
            else if (open == " [{" || role == "fn") role = "callee"
            rest = substr($0, 5); i = index(rest, "\",")
            name = substr(rest, 1, i - 1)
            split(substr(rest, i + 2), f, ",")
            row[++n] = role "\t" name "\t" f[1] + 0 "\t" f[2] + 0 "\t" f[4] + 0
            if (role == "fn" && name == want) hit = 1
        }
        /\}\.$/ { if (hit) { for (k = 1; k <= n; k++) print row[k]; exit } n = 0 }
    ' "$1"
}
# field FILE NAME ROLE COLUMN: one figure (3 CNT, 4 ACC, 5 OWN) of a row
# of NAME's paragraph: ROLE "fn", or "caller:F" / "callee:F" for F's row.
field() {
    local role=${3%%:*} who=${3#*:}
    [ "$role" = fn ] && who=$2
    paragraph "$1" "$2" | awk -F'\t' -v r="$role" -v w="$who" -v c="$4" \
        '$1 == r && $2 == w { print $c; found = 1 } END { if (!found) print 0 }'
}
# names FILE NAME ROLE: the callers or callees of NAME, in order, comma-separated.
names() {
    paragraph "$1" "$2" | awk -F'\t' -v r="$3" '$1 == r { printf "%s%s", n++ ? "," : "", $2 }'
}
totals() { sed -n 's/^\[{ totals, *\([0-9]*\),.*/\1/p' "$1"; }
# at_least A PCT B: A >= PCT% of B.
at_least() { [ $((100 * $1)) -ge $(($2 * $3)) ]; }

"$HSSPY" record -q -F 199 -d 1.5 -f calls -o "$T/acc.calls" -- "$CH" 2 >/dev/null 2>"$T/acc.err"
check_status "exit-status" $? "$T/acc.err"
f=$T/acc.calls
total=$(totals "$f")
total=${total:-0}
check "enough-samples" "only $total samples in: $(head -c 300 "$f" | tr '\n' '|')" \
    test "$total" -ge 100

leaf_own=$(field "$f" leaf fn 5)
check "leaf-own-all" "leaf OWN $leaf_own of $total samples" at_least "$leaf_own" 90 "$total"
outer_acc=$(field "$f" outer fn 4)
check "outer-acc-all" "outer ACC $outer_acc of $total samples" at_least "$outer_acc" 90 "$total"
check "outer-callers" "outer's callers are '$(names "$f" outer caller)'" \
    test "$(names "$f" outer caller | tr ',' '\n' | sort | tr '\n' ' ')" = "main worker "

callers=$(names "$f" middle caller)
callees=$(names "$f" middle callee)
check "middle-callers" "middle's callers are '$callers', not outer" test "$callers" = outer
check "middle-callees" "middle's callees are '$callees', not leaf" test "$callees" = leaf
# Every sample of middle came from outer (the caller rows' ACC add up to
# the function's), and the call to leaf carries leaf's OWN.
middle_acc=$(field "$f" middle fn 4)
via_outer=$(field "$f" middle caller:outer 4)
check "middle-acc-from-outer" "outer -> middle ACC $via_outer of middle's $middle_acc" \
    at_least "$via_outer" 98 "$middle_acc"
to_leaf_own=$(field "$f" middle callee:leaf 5)
check "middle-to-leaf-own" "middle -> leaf OWN $to_leaf_own, leaf OWN $leaf_own" \
    at_least "$to_leaf_own" 98 "$leaf_own"

# Paragraphs are in decreasing order of ACC, or of OWN with --sort own
# (which puts the leaf first).
# column FILE N: field N (2 CNT, 3 ACC, 5 OWN) of the marked rows, in order.
column() { sed -n 's/^ { "[^"]*", *//p' "$1" | tr -d ' ' | cut -d, -f"$(($2 - 1))"; }
# decreasing LIST: non-increasing, and long enough to mean something (the
# chains have 10 functions or more).
decreasing() { [ "$(wc -l <<<"$1")" -ge 8 ] && sort -n -r -c <<<"$1" 2>/dev/null; }
acc_col=$(column "$f" 3)
check "sort-acc" "ACC of the paragraphs in order: $(echo $acc_col)" decreasing "$acc_col"
"$HSSPY" record -q -F 199 -d 1 -f calls --sort own -o "$T/own.calls" -- "$CH" 1.5 >/dev/null 2>&1
own_col=$(column "$T/own.calls" 5)
check "sort-own" "OWN of the paragraphs in order: $(echo $own_col)" decreasing "$own_col"
first_own=$(sed -n 's/^ { "\([^"]*\)",.*/\1/p' "$T/own.calls" | head -n 1)
check "sort-own-leaf-first" "first paragraph by OWN is '$first_own'" test "$first_own" = leaf

# --threads: each thread is a root function whose callees lead to its chain.
"$HSSPY" record -q -F 199 -d 1 -f calls --threads -o "$T/threads.calls" -- "$CH" 1.5 \
    >"$T/threads.out" 2>&1
main_tid=$(sed -n 's/^main //p' "$T/threads.out")
worker_tid=$(sed -n 's/^worker //p' "$T/threads.out")
mroot="tid $main_tid (chains)"
wroot="tid $worker_tid (chains-worker)"
check "threads-roots" "no '$mroot' and '$wroot' paragraphs without callers" \
    test -n "$(paragraph "$T/threads.calls" "$mroot")" -a \
    -z "$(names "$T/threads.calls" "$mroot" caller)" -a \
    -n "$(paragraph "$T/threads.calls" "$wroot")" -a \
    -z "$(names "$T/threads.calls" "$wroot" caller)"
# Every sample is under exactly one thread, and each spinning thread has
# a real share (not half each: on a busy machine one thread's stops time
# out more often than the other's).
tf=$T/threads.calls
tt=$(totals "$tf")
mc=$(field "$tf" "$mroot" fn 3)
wc=$(field "$tf" "$wroot" fn 3)
check "threads-roots-split" "roots $mc + $wc samples of ${tt:-0}" \
    test "${tt:-0}" -gt 0 -a $((mc + wc)) -eq "${tt:-0}" -a $((100 * mc)) -ge $((10 * ${tt:-0})) -a \
    $((100 * wc)) -ge $((10 * ${tt:-0}))
