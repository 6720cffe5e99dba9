# dump - `hsspy dump` of a hung program shows every Haskell thread with
# what it is blocked on and the functions involved: two threads deadlocked
# on each other's MVars, one waiting in STM, one blocked on a black hole
# (with the thread evaluating it); as text and as JSON; and the program runs
# on, untraced, afterwards.
. "$(dirname "$0")/../lib.sh"
require_ptrace

prog=$(build_hs deadlock deadlock.hs -- -O1 -g -fno-omit-yields -threaded -rtsopts) ||
    { fail "build" "ghc could not build deadlock.hs"; exit 0; }
bg "$prog" +RTS -N2 -RTS >"$T/out"
pid=$!
wait_for_line "$T/out" '^ready$' || { fail "setup" "deadlock.hs did not get stuck"; exit 0; }

"$HSSPY" dump -q -p "$pid" >"$T/dump" 2>"$T/err"
check_status "dump" $? "$T/err"

# section NAME-REGEX: the lines of the Haskell thread whose stack has it.
section() {
    awk -v re="$1" '/^haskell thread /{ if (found) exit; buf = $0 "\n"; next }
                    buf != "" { buf = buf $0 "\n"; if ($0 ~ re) found = 1 }
                    END { if (found) printf "%s", buf }' "$T/dump"
}
a=$(section ' Main\.lockA ')
b=$(section ' Main\.lockB ')
check "mvar-lockA" "no Haskell thread blocked on an MVar in lockA: $(head -c 300 <<<"$a")" \
    grep -q 'blocked on an MVar' <<<"$a"
check "mvar-lockB" "no Haskell thread blocked on an MVar in lockB: $(head -c 300 <<<"$b")" \
    grep -q 'blocked on an MVar' <<<"$b"
mva=$(sed -n 's/.*MVar \(0x[0-9a-f]*\).*/\1/p' <<<"$a" | head -n1)
mvb=$(sed -n 's/.*MVar \(0x[0-9a-f]*\).*/\1/p' <<<"$b" | head -n1)
check "deadlock-two-mvars" "lockA waits on '$mva', lockB on '$mvb'" \
    test -n "$mva" -a -n "$mvb" -a "$mva" != "$mvb"
s=$(section ' Main\.waitForFlag ')
check "stm" "no Haskell thread blocked in STM in waitForFlag: $(head -c 300 <<<"$s")" \
    sh -c "grep -q 'blocked in STM' <<'EOS'
$s
EOS
grep -q ' atomically ' <<'EOS'
$s
EOS"
bh=$(section ' Main\.forceShared ')
owner=$(sed -n 's/.*evaluated by haskell thread \([0-9]*\).*/\1/p' <<<"$bh" | head -n1)
check "black-hole" "no thread in forceShared blocked on a black hole with its owner: $(head -c 300 <<<"$bh")" \
    test -n "$owner"
check "black-hole-owner-runs" "haskell thread $owner (the owner) is not there and running" \
    grep -q "^haskell thread ${owner:-none}: running or runnable" "$T/dump"
check "os-threads" "no bound main thread among the OS threads" \
    grep -q "^thread $pid (deadlock): bound main thread" "$T/dump"

# JSON: the same facts, through a real parser.
"$HSSPY" dump -q --json -p "$pid" >"$T/dump.json" 2>"$T/err"
check_status "dump-json" $? "$T/err"
if command -v python3 >/dev/null; then
    python3 - "$T/dump.json" >"$T/json.check" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
hs = d["haskell_threads"]
def by(fn):
    return [t for t in hs if any(f["name"] == fn for f in t["frames"])]
assert all(t["status"].startswith("blocked on an MVar") and "mvar" in t for t in by("Main.lockA") + by("Main.lockB")), "MVar"
assert len(by("Main.lockA")) == 1 and len(by("Main.lockB")) == 1, "lock threads"
assert by("Main.lockA")[0]["mvar"] != by("Main.lockB")[0]["mvar"], "same MVar"
assert by("Main.waitForFlag")[0]["status"] == "blocked in STM (retry)", "STM"
owner = by("Main.forceShared")[0]["black_hole_owner"]
assert [t for t in hs if t["id"] == owner and t["status"] == "running or runnable"], "owner"
assert any(t["tid"] == d["pid"] for t in d["threads"]), "main OS thread"
print("ok")
PY
    check "json-facts" "$(cat "$T/json.check")" grep -q '^ok$' "$T/json.check"
else
    skip "json-facts" "python3 is not installed"
fi

st=$(proc_state "$pid"); tr=$(tracer_of "$pid")
check "target-untouched" "state '$st', tracer '$tr' after the dumps" \
    test -n "$st" -a "$st" != T -a "$st" != t -a "$tr" = 0
kill "$pid"

# A thread that does not stop (a vfork's parent waits for its child in the
# kernel, where a stop cannot reach it): in the dump all the same, with
# why it has no stack. (Before, left out: a one-thread program's dump had
# no thread at all, and exit status 0.)
bg "$W/lifecycle" vfork 3 >"$T/vfork.out"
vpid=$!
wait_for_line "$T/vfork.out" '^vforked$' || fail "vfork-setup" "lifecycle vfork did not start"
sleep 0.2
"$HSSPY" dump -p "$vpid" >"$T/vfork.dump" 2>"$T/vfork.err"
check "vfork-parent-listed" "no section for the vfork parent: $(tr '\n' '|' <"$T/vfork.dump")" \
    has_line "$T/vfork.dump" "^thread $vpid \\(lifecycle\\)"
check "vfork-parent-why" "no word of why it has no stack: $(tr '\n' '|' <"$T/vfork.dump")" \
    has_line "$T/vfork.dump" "\\[invalid\\] \\(did not stop \\(a vfork's parent"
wait "$vpid"
check_status "vfork-target-ok" $?
