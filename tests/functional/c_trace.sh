# c_trace - -f trace on a one-thread C program that spends 0.5 s in
# phase_a, then 0.5 s in phase_b: the file must be JSON a trace viewer
# loads (the object format, metadata naming the thread), and show the two
# phases one after the other, nested under main, each as long as it ran
# (within 20%). The lengths in the file come from the samples' timestamps;
# what they are compared with is how long each phase really ran while it
# was recorded, by the program's own clock: 0.5 s, less what ran before
# the recording started (hsspy reads the program's maps and symbols after
# starting it), more if the program was descheduled past its end on a busy
# machine. A sample stands until the next
# one, so each end of a phase is known to within the interval a sample
# stands for: the file's longest (otherData.longest_sample_us, one period
# of 5 ms on a quiet machine, more where hsspy missed ticks on a machine
# loaded far beyond its CPUs) is allowed on top, once per end.
# alone: compares the phases' lengths with how long they ran, which another test's load would stretch
. "$(dirname "$0")/../lib.sh"
require_ptrace

"$HSSPY" record -q -F 199 -f trace -o "$T/phases.json" -- "$W/phases" 0.5 0.5 \
    >"$T/phases.out" 2>"$T/phases.err"
check_status "exit-status" $? "$T/phases.err"

# The checks read the JSON with Python's own parser (tests/deps.sh installs
# python3), strictly: NaN and Infinity are not JSON.
python3 - "$T/phases.json" "$T/phases.out" >"$T/results" 2>&1 <<'EOF'
import json, re, sys

def result(name, ok, why=""):
    print(("ok " + name) if ok else ("fail %s %s" % (name, why)))

def no_constants(c):
    raise ValueError("not JSON: " + c)

try:
    with open(sys.argv[1], encoding="utf-8") as f:
        doc = json.load(f, parse_constant=no_constants)
    result("valid-json", True)
except Exception as e:
    result("valid-json", False, str(e)[:200])
    sys.exit(0)

evs = doc.get("traceEvents") if isinstance(doc, dict) else None
other = doc.get("otherData", {}) if isinstance(doc, dict) else {}
result("object-format", isinstance(evs, list) and doc.get("displayTimeUnit") == "ms"
       and other.get("rate_asked_hz") == 199 and other.get("ticks", 0) > 0,
       "traceEvents %s, otherData %s" % (type(evs).__name__, json.dumps(other)[:200]))
if not isinstance(evs, list):
    sys.exit(0)

names = [e for e in evs if e.get("ph") == "M" and e.get("name") == "thread_name"]
mine = [e for e in names if re.fullmatch(r"tid \d+ phases", e["args"]["name"])]
result("thread-name", len(mine) == 1 and mine[0]["tid"] == int(mine[0]["args"]["name"].split()[1]),
       "thread_name events: %s" % [e["args"] for e in names])
if len(mine) != 1:
    sys.exit(0)
tid = mine[0]["tid"]
xs = [e for e in evs if e.get("ph") == "X" and e.get("tid") == tid]

# Times in whole nanoseconds: the file's microseconds have three decimals,
# and float sums of them would differ in the last bit.
def start(e):
    return round(e["ts"] * 1000)
def end(e):
    return start(e) + round(e["dur"] * 1000)

def of(name):
    return [e for e in xs if e["name"] == name]

# The program's own account, "phase_a START END" in seconds of wall clock,
# from when the recording started (its start in the file, same clock).
t0 = other.get("start_unix_ns", 0) / 1e9
ran = {}
for line in open(sys.argv[2]):
    w = line.split()
    if len(w) == 3 and w[0] in ("phase_a", "phase_b"):
        ran[w[0]] = float(w[2]) - max(float(w[1]), t0)
a, b, mains = of("phase_a"), of("phase_b"), of("main")
step = other.get("longest_sample_us", 0) / 1e6
for name, evs_ in (("phase_a", a), ("phase_b", b)):
    got = sum(end(e) - start(e) for e in evs_) / 1e9
    want = ran.get(name, 0.0)
    result(name.replace("_", "-") + "-length", want > 0 and abs(got - want) <= 0.2 * want + 2 * step,
           "%s lasts %.3f s in %d events; it ran %.3f s (longest sample %.3f s)"
           % (name, got, len(evs_), want, step))
if a and b:
    end_a = max(end(e) for e in a)
    start_b = min(start(e) for e in b)
    result("phases-in-order", end_a <= start_b,
           "phase_a ends at %d ns, after phase_b starts at %d ns" % (end_a, start_b))
else:
    result("phases-in-order", False, "no phase_a or no phase_b events")

# Events on a track nest or are apart, never overlap in part: what a
# viewer needs to stack them.
stack, bad = [], []
for e in sorted(xs, key=lambda e: (start(e), -end(e))):
    while stack and end(stack[-1]) <= start(e):
        stack.pop()
    if stack and end(e) > end(stack[-1]):
        bad.append((stack[-1]["name"], e["name"], start(e)))
    stack.append(e)
result("well-nested", len(xs) > 0 and not bad, "%d events, partial overlaps: %s" % (len(xs), bad[:3]))

# One event per frame level: each phase inside a main, each spin inside a
# phase.
def inside(e, outers):
    return any(start(o) <= start(e) and end(e) <= end(o) for o in outers)
lost = [e["name"] for e in a + b if not inside(e, mains)]
lost += ["spin@%d" % start(e) for e in of("spin") if not inside(e, a + b)]
result("nested", a and b and of("spin") and not lost, "not inside their callers: %s" % lost[:5])

# Consecutive samples merge: ~100 samples of phase_a are a few events (a
# phase splits only where the unwind of one sample differs, or where a
# thread stop timed out).
shown = other.get("samples_shown", 0)
result("merged", shown >= 10 and len(a) <= 10 and len(b) <= 10,
       "%d samples, %d phase_a and %d phase_b events" % (shown, len(a), len(b)))
EOF
rc=$?
while read -r verdict name why; do
    case $verdict in
    ok) pass "$name" ;;
    fail) fail "$name" "$why" ;;
    *) fail "checker" "$verdict $name $why" ;;
    esac
done <"$T/results"
[ "$rc" -eq 0 ] || fail "checker" "python3 exited with status $rc"
