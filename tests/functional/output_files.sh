# output_files - a profile written to a file replaces it only whole: a full
# disk, a second Ctrl-C or SIGTERM while it is written, or hsspy killed
# leave the file that was there (before: truncated in place, cut in two);
# a report does not write over the recording it reads; a launched
# command's own output is not mixed into a profile on standard output.
. "$(dirname "$0")/../lib.sh"
require_ptrace

# no_temporary NAME DIR: no temporary file of hsspy's left in DIR.
no_temporary() {
    local left
    left=$(find "$2" -maxdepth 1 -name '.*.hsspy-*' | head -n 3 | tr '\n' ' ')
    check "$1" "left behind: $left" test -z "$left"
}

"$HSSPY" record -q -F 199 -f raw -o "$T/rec.raw" -- "$W/chains" 0.5 >/dev/null 2>"$T/err"
check_status "recorded" $? "$T/err"
"$HSSPY" report -q -f folded -o "$T/rec.folded" "$T/rec.raw" 2>"$T/err"
check_status "reported" $? "$T/err"

# A full disk: the old file stays whole, a new one is not made, no
# temporary file is left (before: the old file held the first 20 KB of
# the new output; a new one was left empty).
mkdir -p "$T/small"
if mount -t tmpfs -o size=16k tmpfs "$T/small" 2>"$T/mount.err"; then
    echo "an earlier profile" >"$T/small/old.json"
    "$HSSPY" report -q -f json -o "$T/small/old.json" "$T/rec.raw" 2>"$T/err"
    rc=$?
    check "full-status" "exit status $rc: $(tr '\n' '|' <"$T/err")" \
        eval '[ $rc -eq 1 ] && grep -q "^hsspy: writing the json output failed: No space left on device$" "$T/err"'
    check "full-old-kept" "the file now holds: $(head -c 80 "$T/small/old.json")" \
        grep -qx "an earlier profile" "$T/small/old.json"
    "$HSSPY" report -q -f json -o "$T/small/new.json" "$T/rec.raw" 2>/dev/null
    check "full-new-not-made" "$(ls -l "$T/small/new.json" 2>&1)" test ! -e "$T/small/new.json"
    "$HSSPY" record -q -f raw -o "$T/small/new.raw" -- "$W/chains" 0.3 >/dev/null 2>/dev/null
    check "full-raw-not-made" "$(ls -l "$T/small/new.raw" 2>&1)" test ! -e "$T/small/new.raw"
    no_temporary "full-no-temporary" "$T/small"
    umount "$T/small"
else
    skip "full" "a small tmpfs cannot be mounted here: $(head -n 1 "$T/mount.err")"
fi

# Written whole: a symbolic link still names the file, which keeps its mode.
echo old >"$T/target.folded"
chmod 640 "$T/target.folded"
ln -s target.folded "$T/link.folded"
"$HSSPY" report -q -f folded -o "$T/link.folded" "$T/rec.raw" 2>"$T/err"
check_status "link-status" $? "$T/err"
check "link-kept" "$(ls -l "$T/link.folded")" test -L "$T/link.folded"
check "link-written" "target.folded differs from the report" cmp -s "$T/target.folded" "$T/rec.folded"
check "link-mode" "mode $(stat -c %a "$T/target.folded")" test "$(stat -c %a "$T/target.folded")" = 640
no_temporary "link-no-temporary" "$T"

# SIGTERM again and again once the recording stops, while it is named and
# written: each waits until the file is whole (before: the second one
# killed hsspy between the samples and the names, and the file, cut in
# two, could not be read).
cp "$T/rec.raw" "$T/again.raw"
"$HSSPY" record -q -F 199 -f raw -o "$T/again.raw" -- "$W/hs/demo" 3 +RTS -N2 >/dev/null 2>"$T/again.err" &
hp=$!
sleep 1
kill -TERM "$hp"
for _ in $(seq 200); do kill -TERM "$hp" 2>/dev/null || break; sleep 0.005; done
wait "$hp"
# (Its status: 0, or 143 where a SIGTERM came after the file was written.)
"$HSSPY" report -q -f report -o "$T/again.report" "$T/again.raw" 2>"$T/err"
check_status "again-readable" $? "$T/err"
check "again-new" "the file is not the new recording: $(grep target: "$T/again.report")" \
    grep -q "target: .*demo 3 +RTS -N2" "$T/again.report"
no_temporary "again-no-temporary" "$T"

# A report cut short by SIGTERM: the old file, or the whole new one, and
# no temporary file. (Signalled once it runs hsspy, not before its exec: the
# shell's own copy would end this script.)
for i in 1 2 3; do
    echo "an earlier profile" >"$T/cut.svg"
    "$HSSPY" report -q -f svg -o "$T/cut.svg" "$T/rec.raw" 2>/dev/null &
    rp=$!
    for _ in $(seq 1000); do
        [ "$(readlink "/proc/$rp/exe" 2>/dev/null)" = "$HSSPY" ] && break
        [ -e "/proc/$rp" ] || break
    done
    sleep "0.00$i"
    kill -TERM "$rp" 2>/dev/null
    wait "$rp"
    if grep -qx "an earlier profile" "$T/cut.svg"; then
        pass "cut-$i-whole"
    else
        check "cut-$i-whole" "neither the old file nor a whole svg: $(tail -c 40 "$T/cut.svg")" \
            grep -q '</svg>' "$T/cut.svg"
    fi
    no_temporary "cut-$i-no-temporary" "$T"
done

# The recording a report reads is not its output (before: written over
# with the folded text, status 0); a raw copy of it onto itself is fine.
cp "$T/rec.raw" "$T/self.raw"
"$HSSPY" report -q -f folded -o "$T/self.raw" "$T/self.raw" 2>"$T/err"
rc=$?
check "self-refused" "exit status $rc: $(tr '\n' '|' <"$T/err")" \
    eval '[ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "is the recording being read" "$T/err"'
check "self-kept" "the recording changed" cmp -s "$T/self.raw" "$T/rec.raw"
"$HSSPY" report -q -f raw -o "$T/self.raw" "$T/self.raw" 2>"$T/err"
check_status "self-raw" $? "$T/err"
"$HSSPY" report -q -f folded "$T/self.raw" >"$T/self.folded" 2>"$T/err"
check "self-raw-readable" "$(head -n 1 "$T/err")" cmp -s "$T/self.folded" "$T/rec.folded"

# A launched command writes to standard output ("main PID", "worker PID");
# with the profile on standard output too, a file, its lines go to
# standard error (before: into the profile, which could not be read).
"$HSSPY" record -q -F 199 -f raw -- "$W/chains" 0.3 >"$T/stdout.raw" 2>"$T/stdout.err"
check_status "stdout-status" $? "$T/stdout.err"
"$HSSPY" report -q -f folded "$T/stdout.raw" >"$T/stdout.folded" 2>"$T/err"
check_status "stdout-readable" $? "$T/err"
check "stdout-to-stderr" "stderr: $(head -c 200 "$T/stdout.err" | tr '\n' '|')" \
    grep -qE '^main [0-9]+$' "$T/stdout.err"
"$HSSPY" record -q -F 199 -- "$W/chains" 0.3 2>/dev/null | grep -cE '^(main|worker) [0-9]+$' >"$T/mixed"
check "stdout-folded-clean" "$(cat "$T/mixed") of the command's lines among the folded stacks" \
    test "$(cat "$T/mixed")" -eq 0
# (Its output to a file of its own, with -o, stays on standard output.)
"$HSSPY" record -q -F 199 -o "$T/own.folded" -- "$W/chains" 0.3 >"$T/own.out" 2>/dev/null
check "stdout-own" "standard output: $(head -c 100 "$T/own.out" | tr '\n' '|')" \
    grep -qE '^main [0-9]+$' "$T/own.out"

# A file its user may write, in a directory they may not: no temporary
# file can be made beside it, so it is written in place, the old contents
# (longer than the new) cut away. (As nobody: root may write anywhere.)
mkdir "$T/ro"
head -c 300000 /dev/zero | tr '\0' x >"$T/ro/kept.folded"
chmod 666 "$T/ro/kept.folded"
chmod 755 "$T/ro"
chmod o+x "$T"
chmod o+r "$T/rec.raw"
if setpriv --reuid=65534 --regid=65534 --clear-groups true 2>"$T/setpriv.err"; then
    setpriv --reuid=65534 --regid=65534 --clear-groups \
        "$HSSPY" report -q -f folded -o "$T/ro/kept.folded" "$T/rec.raw" 2>"$T/err"
    check_status "in-place-status" $? "$T/err"
    check "in-place-written" "$(stat -c %s "$T/ro/kept.folded") bytes, not the report's $(stat -c %s "$T/rec.folded")" \
        cmp -s "$T/ro/kept.folded" "$T/rec.folded"
    no_temporary "in-place-no-temporary" "$T/ro"
    # A new file there cannot be made: said before anything is read.
    setpriv --reuid=65534 --regid=65534 --clear-groups \
        "$HSSPY" report -q -f folded -o "$T/ro/new.folded" "$T/rec.raw" 2>"$T/err"
    rc=$?
    check "in-place-new-refused" "exit status $rc: $(tr '\n' '|' <"$T/err")" \
        eval '[ $rc -ne 0 ] && grep -qx "hsspy: cannot write $T/ro/new.folded: Permission denied" "$T/err"'
else
    skip "in-place" "cannot run as nobody: $(head -n 1 "$T/setpriv.err")"
fi

# Standard error closed (2>&-): hsspy's messages go nowhere, not into the
# output file, which took its number (before: "hsspy: sampling pid ..." and
# the last line in the profile; a raw recording that could not be read).
"$HSSPY" record -F 199 -f raw -o "$T/closed.raw" -- "$W/chains" 0.3 >/dev/null 2>&-
rc=$?
"$HSSPY" report -q -f folded -o "$T/closed.folded" "$T/closed.raw" 2>"$T/err"
check "stderr-closed-record" "exit status $rc; report: $(head -n 1 "$T/err")" \
    eval '[ $rc -eq 0 ] && has_line "$T/closed.folded" ";main;outer;middle;leaf [0-9]+$"'
"$HSSPY" report -f folded -o "$T/closed2.folded" "$T/rec.raw" 2>&-
check "stderr-closed-report" "the report differs: $(grep -m 2 hsspy "$T/closed2.folded" | tr '\n' '|')" \
    cmp -s "$T/closed2.folded" "$T/rec.folded"
# (Standard output closed is still no output.)
"$HSSPY" report -f folded "$T/rec.raw" >&- 2>"$T/err"
rc=$?
check "stdout-closed" "exit status $rc: $(cat "$T/err")" \
    eval '[ $rc -eq 1 ] && grep -qx "hsspy: standard output is closed: give -o FILE, or a writable standard output" "$T/err"'

# A program asleep all along (sleep), without --idle: the profile is empty,
# and the last lines say why and what keeps its stacks (before: "recorded
# 1 samples ... wrote the folded output", an empty file, no word why).
"$HSSPY" record -d 0.5 -o "$T/asleep.folded" -- sleep 2 2>"$T/asleep.err"
check_status "asleep-status" $? "$T/asleep.err"
check "asleep-said" "$(tr '\n' '|' <"$T/asleep.err")" \
    eval '[ ! -s "$T/asleep.folded" ] && grep -Eq "^hsspy: warning: no thread of pid [0-9]+ ran at any sample \(every one was asleep, idle\): the profile is empty; --idle keeps the stacks they sleep in$" "$T/asleep.err"'
"$HSSPY" record -d 0.5 --idle -o "$T/asleep.folded" -- sleep 2 2>"$T/asleep.err"
check "asleep-idle-kept" "$(tr '\n' '|' <"$T/asleep.err"); $(head -c 200 "$T/asleep.folded")" \
    eval '[ -s "$T/asleep.folded" ] && ! grep -q "no thread of pid" "$T/asleep.err"'
# The dump and json formats too leave idle samples out without --idle, as
# --idle says (before: they kept every sample, each "(no stack)").
"$HSSPY" record -q -d 0.5 -f json -o "$T/asleep.json" -- sleep 2 2>"$T/asleep.err"
"$HSSPY" record -q -d 0.5 -f dump -o "$T/asleep.dump" -- sleep 2 2>>"$T/asleep.err"
check "asleep-json-dump-idle-out" "json threads $(grep -c '"tid"' "$T/asleep.json"), dump blocks $(grep -c '^thread ' "$T/asleep.dump")" \
    eval '[ "$(grep -c "\"tid\"" "$T/asleep.json")" = 0 ] && [ "$(grep -c "^thread " "$T/asleep.dump")" = 0 ]'
"$HSSPY" record -q -d 0.5 --idle -f json -o "$T/asleep.json" -- sleep 2 2>"$T/asleep.err"
check "asleep-json-idle-kept" "json threads $(grep -c '"tid"' "$T/asleep.json")" \
    test "$(grep -c '"tid"' "$T/asleep.json")" -ge 10
