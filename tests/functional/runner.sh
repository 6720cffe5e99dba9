# runner - tests/run.sh fails a test that leaves processes running, kills
# them, and blames no other: run on a copy holding two made-up tests, one
# leaving two sleeps behind (one in a session of its own, one reparented
# as its shell ends), one cleaning up after itself, while a process the
# inner run did not start runs beside it. And on a second copy: a test
# still running when the others have ended is waited for, and one whose
# runner is killed before its tally counts as a failure (neither lost nor
# waited for forever).
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

mkdir -p "$T/tree2/tests/functional"
cp "$ROOT/tests/run.sh" "$T/tree2/tests/"
# (its parent is timeout; timeout's, the runner's subshell for it)
cat >"$T/tree2/tests/functional/dies.sh" <<'EOT'
read -r _ _ _ runner _ <"/proc/$PPID/stat"
[ "$(cat "/proc/$runner/comm")" = bash ] || { echo "FAIL: dies: not under run.sh's subshell"; exit 1; }
echo "PASS: dies: before its runner is killed"
kill -9 "$runner"
EOT
printf 'echo "PASS: quick: done"\n' >"$T/tree2/tests/functional/quick.sh"
printf 'sleep 3\necho "PASS: slow: waited for"\n' >"$T/tree2/tests/functional/slow.sh"
timeout 120 bash "$T/tree2/tests/run.sh" >"$T/out2" 2>"$T/err2"
rc=$?
check "slow-waited-for" "$(tr '\n' '|' <"$T/out2")" has_line "$T/out2" '^PASS: slow: waited for$'
check "killed-runner-failed" "$(tr '\n' '|' <"$T/out2")" \
    has_line "$T/out2" '^FAIL: dies: its runner ended without a tally$'
check "tally-2" "last line: $(tail -n 1 "$T/out2"), exit $rc" \
    test "$(tail -n 1 "$T/out2")" = "2 passed, 1 failed" -a "$rc" -eq 1
exit 0
