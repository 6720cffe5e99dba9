# raw - record once to a raw file, report it later in every format; a file
# that changed since the recording, or is gone, is not read for names (not
# misnamed): its frames keep the names the recording saved; a damaged raw
# file is one clear error; the live progress line shows on a terminal.
. "$(dirname "$0")/../lib.sh"
require_ptrace

cp "$W/chains" "$T/chains"
"$HSSPY" record -F 199 -f raw -o "$T/rec.raw" -- "$T/chains" 1 >/dev/null 2>"$T/err"
check_status "record-raw" $? "$T/err"
# Its last word says what it recorded and where it wrote it, as the report
# of the file counts them.
cp "$T/err" "$T/rec.err"

"$HSSPY" report -q -f folded -o "$T/from-raw.folded" "$T/rec.raw" 2>"$T/err"
check_status "report-folded" $? "$T/err"
check "named-from-raw" "no named chains in the report of the raw file: $(head -n 3 "$T/from-raw.folded" | tr '\n' '|')" \
    has_line "$T/from-raw.folded" '(^|;)main;outer;middle;leaf [0-9]+$'
check "every-frame-named" "unnamed frames: $(grep -o 'chains+0x[0-9a-f]*' "$T/from-raw.folded" | head -n 3 | tr '\n' ' ')" \
    test "$(grep -c 'chains+0x' "$T/from-raw.folded")" -eq 0
for f in report dump; do
    "$HSSPY" report -q -f "$f" -o "$T/from-raw.$f" "$T/rec.raw" 2>"$T/err"
    check_status "report-$f" $? "$T/err"
done
samples=$(sed -n 's/^ *samples: *\([0-9]*\) thread samples from \([0-9]*\) threads$/\1 samples of \2/p' "$T/from-raw.report")
check "record-last-word" "the report counts ${samples:-nothing}; the recording said: $(tr '\n' '|' <"$T/rec.err")" \
    eval '[ -n "$samples" ] && [ "$(tail -n 1 "$T/rec.err")" = "hsspy: recorded $samples threads (0 walk errors); wrote the raw output to $T/rec.raw" ]'
# A launched command that outlives -d is said to, before the last word.
"$HSSPY" record -F 99 -d 0.3 -o "$T/outlived.folded" -- "$W/chains" 1 >/dev/null 2>"$T/outlived.err"
check "outlived-then-last-word" "stderr: $(tr '\n' '|' <"$T/outlived.err")" \
    eval 'grep -q "^hsspy: .*chains. (pid [0-9]*) keeps running$" "$T/outlived.err" &&
          tail -n 1 "$T/outlived.err" | grep -q "^hsspy: recorded .* wrote the folded output to $T/outlived.folded$"'
check "report-header" "the report lost the recording's header" \
    grep -q "target:    pid [0-9]*: $T/chains 1" "$T/from-raw.report"
check "report-threads" "the report lost --threads" \
    sh -c "'$HSSPY' report -q -f folded --threads '$T/rec.raw' | grep -q '^tid [0-9]* (chains-worker);'"

# The binary is rebuilt (another build-id at the same path): it is not read
# for names, which would name its frames from the wrong file (symtest_pie's
# functions); they keep the names the recording saved, and the report says
# so. (A new file renamed over the old one: the recorded chains may still
# be running, launched for 1.5 s and recorded for 1, and a running
# executable cannot be written to.)
cp "$W/symtest_pie" "$T/chains.new" && mv -f "$T/chains.new" "$T/chains"
"$HSSPY" report -f folded -o "$T/changed.folded" "$T/rec.raw" 2>"$T/changed.err"
check_status "report-changed" $? "$T/changed.err"
check "changed-said" "no word about the changed file: $(cat "$T/changed.err")" \
    grep -Eq "1 of the recording's files is not on this machine or changed since \(chains\): [0-9]+ frames keep the names the recording saved" "$T/changed.err"
check "changed-names-kept" "the changed file's frames lost their recorded names: $(head -n 3 "$T/changed.folded" | tr '\n' '|')" \
    has_line "$T/changed.folded" '(^|;)main;outer;middle;leaf [0-9]+$'
check "changed-not-misnamed" "frames named from the new file: $(grep -o 'sym_[a-z_]*' "$T/changed.folded" | sort -u | head -n 3 | tr '\n' ' ')" \
    lacks_line "$T/changed.folded" 'symtest|sym_'
check "libc-still-named" "unchanged libraries lost their names too" \
    has_line "$T/changed.folded" '(__libc_start_main|start_thread)'
# The binary is gone (a recording reported on another machine): the same.
rm -f "$T/chains"
"$HSSPY" report -f folded -o "$T/gone.folded" "$T/rec.raw" 2>"$T/gone.err"
check_status "report-gone" $? "$T/gone.err"
check "gone-names-kept" "the missing file's frames lost their recorded names: $(cat "$T/gone.err")" \
    has_line "$T/gone.folded" '(^|;)main;outer;middle;leaf [0-9]+$'
"$HSSPY" report -q -f folded -o /dev/null "$T/rec.raw" 2>"$T/gone-q.err"
check "gone-quiet" "-q still says it: $(cat "$T/gone-q.err")" test ! -s "$T/gone-q.err"

# A binary without a build-id (-Wl,--build-id=none; here the note taken
# out) cannot be told the same as the one recorded: another program put at
# its path, here one whose functions have other names at the same places,
# is not read (before: it named the frames, silently: renamed_leaf); the
# recording's names are kept, and the report says why.
objcopy --remove-section=.note.gnu.build-id "$W/chains" "$T/nobid"
"$HSSPY" record -q -F 199 -f raw -o "$T/nobid.raw" -- "$T/nobid" 1 >/dev/null 2>"$T/err"
check_status "no-build-id-record" $? "$T/err"
objcopy --remove-section=.note.gnu.build-id --redefine-sym leaf=renamed_leaf \
    --redefine-sym middle=renamed_middle --redefine-sym outer=renamed_outer \
    "$W/chains" "$T/nobid.new" && mv -f "$T/nobid.new" "$T/nobid"
"$HSSPY" report -f folded -o "$T/nobid.folded" "$T/nobid.raw" 2>"$T/nobid.err"
check_status "no-build-id-report" $? "$T/nobid.err"
check "no-build-id-names-kept" "$(head -n 3 "$T/nobid.folded" | cut -c1-200 | tr '\n' '|')" \
    has_line "$T/nobid.folded" '(^|;)main;outer;middle;leaf [0-9]+$'
check "no-build-id-not-misnamed" "frames named from the new file: $(grep -o 'renamed_[a-z]*' "$T/nobid.folded" | sort -u | head -n 3 | tr '\n' ' ')" \
    lacks_line "$T/nobid.folded" 'renamed_'
check "no-build-id-said" "stderr: $(tr '\n' '|' <"$T/nobid.err")" \
    grep -Eq "^hsspy: 1 of the recording's files has no build-id to tell it the same as the recorded one \(nobid\): [0-9]+ frames keep the names the recording saved$" "$T/nobid.err"

# Stripped since (strip keeps the build-id): the file names less than the
# recording did. Its debug information alone (strip -g): the names stay,
# and the source lines the recording saved are kept (before: dropped);
# its symbols too: the recording's names (before, a Haskell binding's
# code without a symbol of its own, Module.<local>, became prog+0x...).
# The report reads as it did before the strip, frame for frame.
cp "$W/chains" "$T/stripped"
"$HSSPY" record -q -F 199 -f raw -o "$T/stripped.raw" -- "$T/stripped" 1 >/dev/null 2>"$T/err"
check_status "stripped-record" $? "$T/err"
"$HSSPY" report -q -f dump -o "$T/stripped.before" "$T/stripped.raw" 2>"$T/err"
check "stripped-lines-recorded" "no source line of chains.c in the dump: $(grep -m 2 ' leaf ' "$T/stripped.before" | tr '\n' '|')" \
    grep -q ' leaf .*chains\.c:[0-9]' "$T/stripped.before"
strip -g "$T/stripped"
"$HSSPY" report -q -f dump -o "$T/stripped.g" "$T/stripped.raw" 2>"$T/err"
check "strip-g-lines-kept" "$(diff "$T/stripped.before" "$T/stripped.g" | head -n 4 | cut -c1-160 | tr '\n' '|')" \
    cmp -s "$T/stripped.before" "$T/stripped.g"
if prog=$(build_hs fibffi-threaded-O2-nog fibffi.hs fibffi_c.c -- -O2 -rtsopts -threaded); then
    cp "$prog" "$T/hstrip"
    "$HSSPY" record -q -F 199 -f raw -o "$T/hstrip.raw" -- "$T/hstrip" 1 >/dev/null 2>"$T/err"
    check_status "hs-stripped-record" $? "$T/err"
    "$HSSPY" report -q -f folded -o "$T/hstrip.before" "$T/hstrip.raw" 2>"$T/err"
    check "hs-local-recorded" "no Module.<local> frame to keep: $(head -n 2 "$T/hstrip.before" | cut -c1-200 | tr '\n' '|')" \
        grep -q '[A-Z][A-Za-z.]*\.<local>' "$T/hstrip.before"
    strip "$T/hstrip"
    "$HSSPY" report -q -f folded -o "$T/hstrip.after" "$T/hstrip.raw" 2>"$T/err"
    check "hs-strip-names-kept" "$(diff "$T/hstrip.before" "$T/hstrip.after" | grep '^>' | head -n 2 | cut -c1-200 | tr '\n' '|')" \
        cmp -s "$T/hstrip.before" "$T/hstrip.after"
else
    fail "hs-build" "ghc could not build fibffi.hs"
fi

# Damaged files: one line, status 1.
head -c 100 "$T/rec.raw" >"$T/short.raw"
"$HSSPY" report "$T/short.raw" >/dev/null 2>"$T/err"
rc=$?
check "truncated-refused" "status $rc, stderr: $(cat "$T/err")" \
    sh -c "[ $rc -eq 1 ] && [ \$(wc -l <'$T/err') -eq 1 ] && grep -q 'cannot read $T/short.raw: truncated' '$T/err'"
echo "not a recording" >"$T/text.raw"
"$HSSPY" report "$T/text.raw" >/dev/null 2>"$T/err"
check "not-raw-refused" "stderr: $(cat "$T/err")" grep -q "not an hsspy raw file" "$T/err"
# An empty file, a recording cut in its header, one compressed: each said
# as such (before: all three "not an hsspy raw file").
: >"$T/empty.raw"
"$HSSPY" report "$T/empty.raw" >/dev/null 2>"$T/err"
check "empty-refused" "stderr: $(cat "$T/err")" grep -q "^hsspy: cannot read $T/empty.raw: empty: there is no recording in it$" "$T/err"
head -c 12 "$T/rec.raw" >"$T/header.raw"
"$HSSPY" report "$T/header.raw" >/dev/null 2>"$T/err"
check "header-cut-refused" "stderr: $(cat "$T/err")" grep -q "truncated: the file ends in its header (12 bytes)$" "$T/err"
gzip -c "$T/rec.raw" >"$T/rec.raw.gz"
"$HSSPY" report "$T/rec.raw.gz" >/dev/null 2>"$T/err"
rc=$?
check "gzip-said" "status $rc, stderr: $(cat "$T/err")" \
    sh -c "[ $rc -eq 1 ] && grep -q 'compressed with gzip: pipe it through zcat into hsspy report -$' '$T/err'"

# A binary format is not written to a terminal; the progress line is.
if command -v script >/dev/null; then
    script -qec "'$HSSPY' record -F 99 -d 0.3 -f raw -- '$W/chains' 0.5" /dev/null >"$T/tty.out" 2>&1
    check "binary-not-to-terminal" "$(tr -d '\r' <"$T/tty.out" | head -c 300)" \
        grep -q "the raw format is not for a terminal: write it to a file with -o FILE" "$T/tty.out"
    script -qec "'$HSSPY' record -F 99 -d 0.8 -o '$T/p.folded' -- '$W/chains' 1" /dev/null >"$T/tty.out" 2>&1
    check "progress-line" "no progress line on the terminal: $(tr -d '\r' <"$T/tty.out" | head -c 300)" \
        grep -Eq 'hsspy: [0-9]+ samples, [0-9.]+ s, [0-9.]+ Hz' "$T/tty.out"
    # Output redirected to a file (hsspy record ... > out.folded): the
    # line too; output on the terminal itself: not (the line would sit
    # among it).
    script -qec "'$HSSPY' record -F 99 -d 0.8 -- '$W/chains' 1 >'$T/r.folded'" /dev/null >"$T/tty.out" 2>&1
    check "progress-line-redirected" "no progress line on the terminal: $(tr -d '\r' <"$T/tty.out" | head -c 300)" \
        grep -Eq 'hsspy: [0-9]+ samples, [0-9.]+ s, [0-9.]+ Hz' "$T/tty.out"
    script -qec "'$HSSPY' record -F 99 -d 0.5 -- '$W/chains' 1" /dev/null >"$T/tty.out" 2>&1
    check "progress-not-among-output" "a progress line with the output on the terminal" \
        test "$(grep -c 'samples, [0-9.]* s, ' "$T/tty.out")" -eq 0
    script -qec "'$HSSPY' record -q -F 99 -d 0.5 -o '$T/p.folded' -- '$W/chains' 1" /dev/null >"$T/tty.out" 2>&1
    check "progress-quiet" "-q still shows progress" \
        test "$(grep -c 'samples, ' "$T/tty.out")" -eq 0
else
    skip "terminal" "script(1) is not installed"
fi

# The options a recording was made with that shape its samples, --idle and
# --threads, are its report's too (before: --threads was ignored, and the
# idle stacks --idle read were dropped unless report was given it again);
# report --idle of a recording whose idle stacks were not read says so
# (before: nothing, and no stack to show).
"$HSSPY" record -q -F 99 -f raw --idle --threads -o "$T/idle.raw" -- "$W/sleeper" 0.5 2>"$T/err"
check_status "made-with-record" $? "$T/err"
"$HSSPY" report -q -f folded "$T/idle.raw" >"$T/idle.folded" 2>"$T/err"
check "made-with-kept" "the report: $(head -n 2 "$T/idle.folded" | tr '\n' '|')" \
    has_line "$T/idle.folded" '^tid [0-9]+ \(sleeper\);.*main;.*nanosleep [0-9]+$'
"$HSSPY" record -q -F 99 -f raw -o "$T/busy.raw" -- "$W/sleeper" 0.5 2>"$T/err"
"$HSSPY" report -f folded --idle "$T/busy.raw" >"$T/busy.folded" 2>"$T/err"
check "idle-not-read-said" "stderr: $(tr '\n' '|' <"$T/err")" \
    grep -q "^hsspy: warning: $T/busy.raw was recorded without --idle: the stacks of its threads asleep in the kernel were not read (record with --idle to see them)$" "$T/err"

# From standard input or a pipe (zcat run.hsspy.gz | hsspy report -): the
# same report (before: "cannot read -: No such file or directory", and "not
# a regular file" for /dev/stdin).
"$HSSPY" report -q -f folded - <"$T/rec.raw" >"$T/stdin.folded" 2>"$T/err"
check_status "stdin-status" $? "$T/err"
check "stdin-same" "differs from the file's report" cmp -s "$T/stdin.folded" "$T/from-raw.folded"
cat "$T/rec.raw" | "$HSSPY" report -q -f folded /dev/stdin >"$T/pipe.folded" 2>"$T/err"
check "pipe-same" "$(head -n 1 "$T/err")" cmp -s "$T/pipe.folded" "$T/from-raw.folded"
head -c 2000 "$T/rec.raw" | "$HSSPY" report -q - >/dev/null 2>"$T/err"
check "stdin-truncated" "stderr: $(tr '\n' '|' <"$T/err")" \
    grep -q "^hsspy: cannot read standard input: truncated" "$T/err"
# Two recordings in one file: refused, not the first read alone.
cat "$T/rec.raw" "$T/rec.raw" >"$T/twice.raw"
"$HSSPY" report -q "$T/twice.raw" >/dev/null 2>"$T/err"
check "twice-refused" "stderr: $(tr '\n' '|' <"$T/err")" \
    grep -q "^hsspy: cannot read $T/twice.raw: corrupt: [0-9]* bytes after its last section" "$T/err"
