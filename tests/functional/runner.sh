# runner - tests/run.sh fails a test that leaves processes running, kills
# them, and blames no other: run on a copy holding two made-up tests, one
# leaving two sleeps behind (one in a session of its own, one reparented
# as its shell ends), one cleaning up after itself, while a process the
# inner run did not start runs beside it.
. "$(dirname "$0")/../lib.sh"

mkdir -p "$T/tree/tests/functional"
cp "$ROOT/tests/run.sh" "$T/tree/tests/"
cat >"$T/tree/tests/functional/leaves.sh" <<EOT
setsid sleep 600 </dev/null >/dev/null 2>&1 &
echo \$! >"$T/own-session"
sleep 600 </dev/null >/dev/null 2>&1 &
echo \$! >"$T/reparented"
echo "PASS: leaves: started"
EOT
cat >"$T/tree/tests/functional/tidy.sh" <<'EOT'
sleep 600 &
kill $!
wait
echo "PASS: tidy: stopped its own"
EOT

# Alive: in /proc and not a zombie.
alive() { [ -n "$1" ] && [ -e "/proc/$1" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }

sleep 600 </dev/null >/dev/null 2>&1 &
beside=$!
BG_PIDS="$BG_PIDS $beside"
bash "$T/tree/tests/run.sh" >"$T/out" 2>"$T/err"
rc=$?
own=$(cat "$T/own-session" 2>/dev/null) rep=$(cat "$T/reparented" 2>/dev/null)

check "ran-both" "$(tr '\n' '|' <"$T/out")" \
    has_line "$T/out" '^PASS: tidy: stopped its own$'
check "leftovers-failed" "no FAIL line naming both sleeps: $(tr '\n' '|' <"$T/out")" \
    has_line "$T/out" "^FAIL: leaves: left processes running: ($own sleep $rep sleep|$rep sleep $own sleep) *\$"
check "only-the-leaver-blamed" "$(grep '^FAIL' "$T/out" | tr '\n' '|')" \
    test "$(grep -c '^FAIL' "$T/out")" -eq 1
check "tally" "last line: $(tail -n 1 "$T/out")" \
    test "$(tail -n 1 "$T/out")" = "2 passed, 1 failed"
check "exit-status" "run.sh exited $rc after a failure" test "$rc" -ne 0
check "leftovers-killed" "still running: $own $rep" \
    eval '! alive "$own" && ! alive "$rep"'
check "others-left-alone" "the sleep the inner run did not start was killed" alive "$beside"
for p in $own $rep; do alive "$p" && kill -9 "$p" 2>/dev/null; done
exit 0
