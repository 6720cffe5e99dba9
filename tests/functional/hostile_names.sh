# hostile_names - a program whose symbols, thread name and arguments hold
# what no text should (tests/workloads/hostile.c: a terminal's escape
# sequence, bytes that are not UTF-8, a carriage return, ';', a stack of
# 70 KB of names) profiled into every format: each output is what its
# reader takes (UTF-8 without control characters; well-formed XML; strict
# JSON; pprof's string table UTF-8), each such byte a '?', text that is
# UTF-8 kept as it is, and the whole stack in the folded line. (Before:
# raw escapes in reports and dumps, bytes that are not UTF-8 and a
# carriage return in folded stacks, which flamegraph.pl refused; folded
# lines cut at 32 KB, their leaf lost; dump --json wrote each byte of
# UTF-8 text as a character of its own.)
. "$(dirname "$0")/../lib.sh"
require_ptrace

HOST=$W/hostile
UTF=$(printf 'cafe_\303\251\342\202\254')
ARG=$(printf 'arg\033]0;Y\007')

# text_ok NAME FILE: UTF-8 throughout, no control character but newline.
text_ok() {
    local bad
    if ! iconv -f UTF-8 -t UTF-8 "$2" >/dev/null 2>&1; then
        fail "$1" "not UTF-8: $(iconv -f UTF-8 -t UTF-8 "$2" 2>&1 >/dev/null | head -n1)"
        return
    fi
    bad=$(LC_ALL=C grep -c "$(printf '[\001-\011\013-\037\177]')" "$2")
    check "$1" "$bad lines with control characters: $(LC_ALL=C grep -m2 "$(printf '[\001-\011\013-\037\177]')" "$2" | cut -c1-200 | od -c | head -n3 | tr '\n' '|')" \
        test "$bad" -eq 0
}

# has NAME FILE STRING: FILE holds STRING as it is.
has() {
    check "$1" "no '$3' in $2: $(grep -a -o 'esc[^;"<]*\|bad[^;"<]*\|cafe[^;"<]*' "$2" | sort -u | head -n 4 | od -c | head -n 4 | tr '\n' '|')" \
        grep -a -q -F -- "$3" "$2"
}

"$HSSPY" record -q -F 199 -f raw -o "$T/h.raw" -- "$HOST" 2 "$ARG" >/dev/null 2>"$T/err"
check_status "record-raw" $? "$T/err"
"$HSSPY" record -q -F 199 --threads -o "$T/live.folded" -- "$HOST" 2 "$ARG" >/dev/null 2>"$T/err"
check_status "record-folded" $? "$T/err"
for f in folded svg speedscope trace report calls pprof; do
    args=()
    [ $f = folded ] && args=(--threads)
    "$HSSPY" report -q "${args[@]}" -f $f -o "$T/h.$f" "$T/h.raw" 2>"$T/err"
    check_status "report-$f" $? "$T/err"
done

# folded: each name whole, ';' made ':' (the separator), the escape and
# the bytes that are not text '?'; the 100 frames of 600 bytes and the
# leaf under them on one line.
for src in live h; do
    f=$T/$src.folded
    text_ok "$src-folded-text" "$f"
    check "$src-folded-escape" "no main;esc?]0:X?:title line: $(grep -a -o ';main;[^;]*' "$f" | sort -u | od -c | head -n 6 | tr '\n' '|')" \
        has_line "$f" ';main;esc\?\]0:X\?:title [0-9]+$'
    check "$src-folded-not-utf8" "no main;bad?utf?:x 12 line" has_line "$f" ';main;bad\?utf\?:x 12 [0-9]+$'
    check "$src-folded-utf8" "no main;$UTF line" has_line "$f" ";main;$UTF [0-9]+\$"
    long=$(count_matching "$f" '^tid [0-9]+ \(t\?\[31m\?\);.*;worker;(R{550}(€){16}\?;){100}hostile_leaf [0-9]+$')
    check "$src-folded-whole-stack" "$long samples under worker, 100 frames of 600 bytes, hostile_leaf; longest line $(awk '{ print length($0) }' "$f" | sort -n | tail -n1) bytes, its end: $(awk 'length($0) > 10000 { print substr($0, length($0) - 60) }' "$f" | head -n 2 | tr '\n' '|')" \
        test "$long" -ge 50
done

text_ok "report-text" "$T/h.report"
has "report-escape" "$T/h.report" 'esc?]0;X?;title'
has "report-thread" "$T/h.report" '(t?[31m?)'
has "report-command" "$T/h.report" 'arg?]0;Y?'
has "report-utf8" "$T/h.report" "$UTF"
text_ok "calls-text" "$T/h.calls"

text_ok "svg-text" "$T/h.svg"
check "svg-well-formed" "$(xmllint --noout "$T/h.svg" 2>&1 | head -n 3 | tr '\n' '|')" xmllint --noout "$T/h.svg"
has "svg-utf8" "$T/h.svg" "$UTF"

# Strict JSON (python3 decodes UTF-8 strictly) with the names as text.
for f in speedscope trace; do
    python3 - "$T/h.$f" "$UTF" >"$T/json.out" 2>&1 <<'EOF'
import json, sys
doc = json.loads(open(sys.argv[1], 'rb').read().decode('utf-8'))
text = json.dumps(doc, ensure_ascii=False)
for want in ('esc?]0;X?;title', 'bad?utf?;x 12', sys.argv[2], 't?[31m?'):
    if want not in text:
        print('missing', repr(want))
        sys.exit(1)
print('ok')
EOF
    check "$f-json" "$(tail -n 3 "$T/json.out" | tr '\n' '|')" grep -q '^ok$' "$T/json.out"
done

# pprof: its string table (field 6 of Profile) UTF-8, the names in it.
python3 - "$T/h.pprof" "$UTF" >"$T/pb.out" 2>&1 <<'EOF'
import gzip, sys
b = gzip.open(sys.argv[1]).read()
i, strings = 0, []
def varint():
    global i
    v = s = 0
    while True:
        c = b[i]; i += 1
        v |= (c & 0x7f) << s; s += 7
        if c < 0x80:
            return v
while i < len(b):
    key = varint()
    wt = key & 7
    if wt == 0:
        varint()
    elif wt == 1:
        i += 8
    elif wt == 5:
        i += 4
    elif wt == 2:
        n = varint()
        if key >> 3 == 6:
            strings.append(b[i:i + n].decode('utf-8'))
        i += n
    else:
        sys.exit('wire type %d' % wt)
for want in ('esc?]0;X?;title', sys.argv[2], 't?[31m?'):
    if want not in strings:
        sys.exit('missing %r among %d strings' % (want, len(strings)))
# (A symbol longer than 599 bytes is cut there, as its name: before, the
# function's system_name kept all of it.)
longest = max(len(x.encode()) for x in strings)
if longest > 599:
    sys.exit('a string of %d bytes' % longest)
print('ok')
EOF
check "pprof-strings" "$(tail -n 3 "$T/pb.out" | tr '\n' '|')" grep -q '^ok$' "$T/pb.out"

# A dump, text and JSON, of the program running.
bg "$HOST" 3 "$ARG"
pid=$!
sleep 0.5
"$HSSPY" dump -p "$pid" >"$T/dump.txt" 2>"$T/err"
check_status "dump" $? "$T/err"
"$HSSPY" dump --json -p "$pid" >"$T/dump.json" 2>"$T/err"
check_status "dump-json" $? "$T/err"
wait "$pid"
text_ok "dump-text" "$T/dump.txt"
has "dump-thread" "$T/dump.txt" '(t?[31m?)'
python3 - "$T/dump.json" >"$T/json.out" 2>&1 <<'EOF'
import json, sys
doc = json.loads(open(sys.argv[1], 'rb').read().decode('utf-8'))
names = [t.get('name') for t in doc['threads']]
frames = [f.get('name') for t in doc['threads'] for f in t.get('frames', [])]
if 't?[31m?' not in names:
    sys.exit('thread names %r' % names)
if not any(n and n.startswith('R' * 550 + '€' * 16) for n in frames):
    sys.exit('no frame R...€ among %r' % [n[:40] for n in frames if n])
print('ok')
EOF
check "dump-json-text" "$(tail -n 3 "$T/json.out" | tr '\n' '|')" grep -q '^ok$' "$T/json.out"
