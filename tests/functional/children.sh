# children - hsspy samples one process, not its children: a launcher (a
# shell script, `cabal run`, make) that leaves the work to a child gets a
# recording of a process waiting. record then says how much CPU the
# children took against the target, and names the busiest (to attach to,
# or to run directly once it has exited), on standard error and in the
# report (of a raw file too; top's header line is tested in top.sh); it
# says nothing when the target did the work itself. A dump of a launcher lists its children,
# to dump one instead.
. "$(dirname "$0")/../lib.sh"
require_ptrace

CH=$W/chains
WORD='its child processes [0-9.]+ s, which hsspy does not sample'

# The child still running when the recording ends (-d): named by pid, to
# attach to. (`; true` keeps the shell from exec'ing its last command.)
"$HSSPY" record -F 99 -d 1.5 -o "$T/running.folded" -- sh -c "$CH 3 >/dev/null; true" \
    >/dev/null 2>"$T/running.err"
check_status "running-exit-status" $? "$T/running.err"
kid=$(sed -n 's/.*the busiest is pid \([0-9]*\) .*/\1/p' "$T/running.err")
kid_cmd=$(tr '\0' ' ' <"/proc/${kid:-0}/cmdline" 2>/dev/null)
check "running-said" "no word of the children: $(tr '\n' '|' <"$T/running.err")" \
    has_line "$T/running.err" "^hsspy: warning: pid [0-9]+ \\(sh\\) used 0\\.[0-9]+ s of CPU while recorded, $WORD: the busiest is pid [0-9]+ \\($CH 3\\); profile it with hsspy record -p [0-9]+$"
check "running-pid-is-child" "pid '$kid' runs '$kid_cmd', not $CH 3" \
    test "$kid_cmd" = "$CH 3 "
# Two threads spinning for the 1.5 s recorded (on two CPUs or one): at
# least the 1.5 s of one CPU.
check "running-child-time" "$(sed -n 's/.*child processes \([0-9.]*\) s.*/\1/p' "$T/running.err") s" \
    awk -v s="$(sed -n 's/.*child processes \([0-9.]*\) s.*/\1/p' "$T/running.err")" \
    'BEGIN { exit !(s >= 1.2 && s <= 3.2) }'
[ -n "$kid" ] && kill "$kid" 2>/dev/null

# A grandchild that has exited when the recording ends: named by its
# command, to run directly.
"$HSSPY" record -F 99 -o "$T/exited.folded" -- sh -c "sh -c '$CH 1 >/dev/null; true'; true" \
    >/dev/null 2>"$T/exited.err"
check_status "exited-exit-status" $? "$T/exited.err"
check "exited-said" "no word of the exited grandchild: $(tr '\n' '|' <"$T/exited.err")" \
    has_line "$T/exited.err" "^hsspy: warning: pid [0-9]+ \\(sh\\) used 0\\.[0-9]+ s of CPU while recorded, $WORD: the busiest, pid [0-9]+, has exited; profile it directly, hsspy record -- $CH 1$"
check "exited-last-line" "the last line is not record's: $(tail -n 1 "$T/exited.err")" \
    has_line <(tail -n 1 "$T/exited.err") '^hsspy: recorded '

# The same word in the report, also of a raw file read back later.
"$HSSPY" record -F 99 -f raw -o "$T/exited.raw" -- sh -c "sh -c '$CH 1 >/dev/null; true'; true" \
    >/dev/null 2>"$T/raw.err"
check_status "raw-exit-status" $? "$T/raw.err"
"$HSSPY" report -q "$T/exited.raw" >"$T/raw.report" 2>"$T/raw-report.err"
check_status "raw-report-status" $? "$T/raw-report.err"
said=$(sed -n 's/^hsspy: warning: \(pid [0-9]* (sh) used .*\)/\1/p' "$T/raw.err")
check "raw-report-children" "report's children line is not the warning '$said': $(grep -n 'children' "$T/raw.report" | head -n 2 | tr '\n' '|')" \
    test -n "$said" -a "$(sed -n 's/^  children:  //p' "$T/raw.report")" = "$said"
"$HSSPY" record -q -F 99 -f report -o "$T/self.report" -- "$CH" 0.5 >/dev/null 2>"$T/self-report.err"
check_status "self-report-status" $? "$T/self-report.err"
check "self-report-silent" "a children line for a program with none" \
    lacks_line "$T/self.report" '^  children:'

# Children too short-lived for any look (one a second): their time is
# their parent's once it has waited for them, and counted so.
"$HSSPY" record -F 99 -o "$T/short.folded" -- sh -c \
    "i=0; while [ \$i -lt 12 ]; do $CH 0.1 >/dev/null; i=\$((i+1)); done" >/dev/null 2>"$T/short.err"
check_status "short-exit-status" $? "$T/short.err"
check "short-said" "no word of the short-lived children: $(tr '\n' '|' <"$T/short.err")" \
    has_line "$T/short.err" "^hsspy: warning: pid [0-9]+ \\(sh\\) used [0-9.]+ s of CPU while recorded, $WORD"
check "short-child-time" "$(sed -n 's/.*child processes \([0-9.]*\) s.*/\1/p' "$T/short.err") s for 12 children of 0.1 s" \
    awk -v s="$(sed -n 's/.*child processes \([0-9.]*\) s.*/\1/p' "$T/short.err")" \
    'BEGIN { exit !(s >= 1.0) }'

# Attached to a launcher already running its child: the same.
bg sh -c "$CH 4 >/dev/null; true"
sh_pid=$!
sleep 0.3
"$HSSPY" record -F 99 -d 1 -o "$T/attach.folded" -p "$sh_pid" >/dev/null 2>"$T/attach.err"
check_status "attach-exit-status" $? "$T/attach.err"
check "attach-said" "no word of the children: $(tr '\n' '|' <"$T/attach.err")" \
    has_line "$T/attach.err" "^hsspy: warning: pid $sh_pid \\(sh\\) used 0\\.[0-9]+ s of CPU while recorded, $WORD: the busiest is pid [0-9]+ \\($CH 4\\)"
pkill -P "$sh_pid" 2>/dev/null

# The target doing the work itself: not a word.
"$HSSPY" record -F 99 -o "$T/self.folded" -- "$CH" 1 >/dev/null 2>"$T/self.err"
check_status "self-exit-status" $? "$T/self.err"
check "self-silent" "a word of children: $(tr '\n' '|' <"$T/self.err")" \
    lacks_line "$T/self.err" 'child processes'

# A dump of a launcher names its children (to dump one instead), as text
# and as JSON; a program without has no such section.
bg sh -c "\"$CH\" 4 >/dev/null; true"
sh_pid=$!
kid=""
for i in $(seq 1 50); do
    kid=$(cat "/proc/$sh_pid/task/$sh_pid/children" 2>/dev/null | tr -d ' ')
    [ -n "$kid" ] && [ "$(tr '\0' ' ' <"/proc/$kid/cmdline" 2>/dev/null)" = "$CH 4 " ] && break
    sleep 0.1
done
"$HSSPY" dump -q -p "$sh_pid" >"$T/dump.txt" 2>"$T/dump.err"
check_status "dump-exit-status" $? "$T/dump.err"
check "dump-children" "no child pid $kid in the dump: $(grep -A3 '^child processes' "$T/dump.txt" | tr '\n' '|')" \
    grep -q "^  pid $kid (child of $sh_pid): $CH 4\$" "$T/dump.txt"
"$HSSPY" dump -q --json -p "$sh_pid" >"$T/dump.json" 2>"$T/dump-json.err"
check_status "dump-json-exit-status" $? "$T/dump-json.err"
check "dump-json-children" "no child $kid in the JSON: $(head -c 300 "$T/dump.json")" \
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if {'pid': int(sys.argv[2]), 'parent': int(sys.argv[3]), 'command': sys.argv[4]} in d['children'] else 1)" \
    "$T/dump.json" "${kid:-0}" "$sh_pid" "$CH 4"
pkill -P "$sh_pid" 2>/dev/null
bg "$CH" 2 >/dev/null
"$HSSPY" dump -q --json -p $! >"$T/self.json" 2>"$T/self-json.err"
check_status "dump-self-exit-status" $? "$T/self-json.err"
check "dump-self-no-children" "children listed for a program without: $(head -c 300 "$T/self.json")" \
    python3 -c "import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))['children'] == [] else 1)" "$T/self.json"
