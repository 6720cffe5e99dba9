# c_trace - -f trace on a one-thread C program that spends 0.5 s in
# phase_a, then 0.5 s in phase_b: the file must be JSON a trace viewer
# loads (the object format, metadata naming the thread), and show the two
# phases one after the other, nested under main, each about as long as it
# ran. The lengths come from the samples' timestamps in the file, so they
# hold however loaded the machine is (ticks hsspy misses leave no hole).
. "$(dirname "$0")/../lib.sh"
require_ptrace

"$HSSPY" record -q -F 199 -f trace -o "$T/phases.json" -- "$W/phases" 0.5 0.5 \
    >"$T/phases.out" 2>"$T/phases.err"
check_status "exit-status" $? "$T/phases.err"

# The checks read the JSON with Python's own parser (tests/deps.sh installs
# python3), strictly: NaN and Infinity are not JSON.
python3 - "$T/phases.json" >"$T/results" 2>&1 <<'EOF'
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

def of(name):
    return [e for e in xs if e["name"] == name]

a, b, mains = of("phase_a"), of("phase_b"), of("main")
dur_a = sum(e["dur"] for e in a) / 1e6
dur_b = sum(e["dur"] for e in b) / 1e6
result("phase-a-length", 0.4 <= dur_a <= 0.6, "phase_a lasts %.3f s in %d events" % (dur_a, len(a)))
result("phase-b-length", 0.4 <= dur_b <= 0.6, "phase_b lasts %.3f s in %d events" % (dur_b, len(b)))
if a and b:
    end_a = max(e["ts"] + e["dur"] for e in a)
    start_b = min(e["ts"] for e in b)
    result("phases-in-order", end_a <= start_b,
           "phase_a ends at %.0f us, after phase_b starts at %.0f us" % (end_a, start_b))
else:
    result("phases-in-order", False, "no phase_a or no phase_b events")

# Nesting, one event per frame level: each phase inside a main, each spin
# inside a phase.
def inside(e, outers):
    return any(o["ts"] <= e["ts"] and e["ts"] + e["dur"] <= o["ts"] + o["dur"] for o in outers)
lost = [e["name"] for e in a + b if not inside(e, mains)]
lost += ["spin@%.0f" % e["ts"] for e in of("spin") if not inside(e, a + b)]
result("nested", a and b and of("spin") and not lost, "not inside their callers: %s" % lost[:5])

# Consecutive samples merge: ~100 samples of phase_a are a few events (a
# phase splits only where the unwind of one sample differs, or where a
# thread stop timed out).
shown = other.get("samples_shown", 0)
result("merged", shown >= 30 and len(a) <= 10 and len(b) <= 10,
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
