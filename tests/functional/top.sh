# top - `hsspy top` in a real terminal (a tmux pane of fixed size): the
# header, `leaf` leading the functions of a two-thread C program by own
# share, the per-thread view with each thread's own section, a screen that
# follows a resize and is not stopped by Ctrl-S, and a GHC program's tag
# mix; --nonblocking too; a launcher's child processes said in the header. q, Ctrl-C and SIGTERM each end it with status 0, the terminal's
# modes as they were, the alternate screen left (the shell shows again),
# and the target running, not traced, and exiting normally later. On a
# terminal that takes no output it does not block (SIGTERM still ends it
# at once). Without a terminal it refuses in one line and does not touch
# the target.
. "$(dirname "$0")/../lib.sh"
require_ptrace

if ! command -v tmux >/dev/null 2>&1; then
    skip "all" "tmux is not installed (tests/deps.sh installs it)"
    exit 0
fi

SOCK="hsspy-top-$$"
tm() { tmux -L "$SOCK" -f /dev/null "$@"; }
trap 'tm kill-server 2>/dev/null; cleanup' EXIT

# What the user types in the pane: note the terminal's modes, run hsspy top
# (its pid kept, to signal it), then say how it ended and whether the modes
# are as before.
cat >"$T/run.sh" <<EOF
name=\$1; shift
before=\$(stty -g)
sh -c 'echo \$\$ >"\$0"; exec "\$@"' "$T/\$name.pid" "$HSSPY" top "\$@"
rc=\$?
if [ "\$(stty -g)" = "\$before" ]; then tty=same; else tty=changed; fi
echo "rc=\$rc tty=\$tty" >"$T/\$name.result"
echo "back in the shell after \$name"
EOF

# The pane's screen into $T/screen. The pane's shell exits if the terminal
# is left unusable (a read returning nothing is its end of input), and the
# session with it: that is said once, and nothing waits for it any more.
screen() {
    if ! tm capture-pane -p -t top >"$T/screen" 2>/dev/null; then
        echo "(the shell in the pane has exited: its terminal was left unusable?)" >"$T/screen"
        return 1
    fi
}
# wait_screen REGEX [SECONDS]: until the pane shows a line matching REGEX.
wait_screen() {
    local i
    for i in $(seq 1 $((${2:-10} * 10))); do
        screen || return 1
        grep -E -q -- "$1" "$T/screen" && return 0
        sleep 0.1
    done
    return 1
}
alt_screen() { tm display-message -p -t top '#{alternate_on}' 2>/dev/null; }
# The own and total shares on the first row of function NAME in FILE.
shares_of() { awk -v n="$1" 'NF == 3 && $3 == n && $1 ~ /^[0-9.]+$/ { print $1, $2; exit }' "$2"; }
# The time since the start, as the header on the screen says it.
elapsed() { sed -n '2s/.* | \([0-9.]*\) s | .*/\1/p' "$T/screen"; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'; }
shown() { tr '\n' '|' <"$T/screen" | sed 's/||*/|/g' | cut -c1-1500; }

# run_top NAME ARGS...: start hsspy top in the pane; wait until it draws.
run_top() {
    local name=$1; shift
    rm -f "$T/$name.result" "$T/$name.pid"
    tm send-keys -t top "bash $T/run.sh $name $*" Enter 2>/dev/null
    wait_screen '^hsspy top - pid ' 10
}

# ended NAME TARGET: hsspy top exited 0 and gave the terminal back; the
# target runs on untraced.
ended() {
    local name=$1 target=$2 i
    for i in $(seq 1 100); do [ -s "$T/$name.result" ] && break; sleep 0.1; done
    check "$name-exit-status" "$(cat "$T/$name.result" 2>/dev/null || echo 'no exit within 10 s')" \
        grep -q '^rc=0 ' "$T/$name.result"
    check "$name-tty-modes" "the terminal's modes changed: $(cat "$T/$name.result" 2>/dev/null)" \
        grep -q ' tty=same$' "$T/$name.result"
    wait_screen "^back in the shell after $name\$" 5
    local alt
    alt=$(alt_screen)
    if [ "$alt" = 0 ] && ! grep -q '^hsspy top - pid' "$T/screen"; then
        pass "$name-screen-restored"
    else
        fail "$name-screen-restored" "alternate screen $alt; the pane shows: $(shown)"
    fi
    local st tr
    st=$(proc_state "$target")
    tr=$(tracer_of "$target")
    if [ "$tr" = 0 ] && [ -n "$st" ] && [ "$st" != T ] && [ "$st" != t ]; then
        pass "$name-target-running"
    else
        fail "$name-target-running" "target state '$st', TracerPid '$tr'"
    fi
}

# Each session's target runs long enough for it on a loaded machine, and
# is waited for at the end. (The GHC one is built first: ghc may be slow.)
prog=$(build_hs unsafe_leaf unsafe_leaf.hs unsafe_leaf_c.c -- -O1 -threaded -rtsopts) || prog=
bg "$W/chains" 14 >"$T/a.out"
a=$!
wait_for_line "$T/a.out" '^worker [0-9]+' || fail "setup" "the chains workload did not start"
a_main=$(sed -n 's/^main //p' "$T/a.out")
a_worker=$(sed -n 's/^worker //p' "$T/a.out")

# No terminal: one line, exit status 2, the target untouched.
"$HSSPY" top -p "$a" </dev/null >"$T/noterm.out" 2>"$T/noterm.err"
rc=$?
if [ "$rc" = 2 ] && [ "$(wc -l <"$T/noterm.err")" = 1 ] && grep -q terminal "$T/noterm.err" &&
    [ ! -s "$T/noterm.out" ] && [ "$(tracer_of "$a")" = 0 ]; then
    pass "no-terminal-refused"
else
    fail "no-terminal-refused" "exit status $rc, stderr: $(tr '\n' '|' <"$T/noterm.err")"
fi

# A terminal that takes nothing (its output suspended, as a stuck link
# would be): hsspy must not block writing to it, or the target's new
# threads and signals would wait for it, and SIGTERM would not end it. Its
# own pty and target, so it runs alongside the tmux sessions.
cat >"$T/stuck.py" <<'EOF'
import fcntl, os, pty, signal, struct, subprocess, sys, termios, time
hsspy, pid = sys.argv[1], sys.argv[2]
master, slave = pty.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
def controlling():
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
p = subprocess.Popen([hsspy, "top", "-p", pid], stdin=slave, stdout=slave,
                     stderr=subprocess.DEVNULL, start_new_session=True,
                     preexec_fn=controlling, env=dict(os.environ, TERM="xterm"))
time.sleep(1.5)
termios.tcflow(slave, termios.TCOOFF)
time.sleep(2)
t0 = time.monotonic()
p.send_signal(signal.SIGTERM)
try:
    rc = p.wait(timeout=10)
except subprocess.TimeoutExpired:
    p.kill()
    p.wait()
    rc = "none: killed after 10 s"
took = time.monotonic() - t0
tracer = [l.split()[1] for l in open("/proc/%s/status" % pid) if l.startswith("TracerPid:")]
print("rc=%s took=%.1f tracer=%s" % (rc, took, tracer[0]))
EOF
bg "$W/chains" 10 >"$T/c.out"
c=$!
wait_for_line "$T/c.out" '^worker [0-9]+' || fail "setup-c" "the chains workload did not start"
bg python3 "$T/stuck.py" "$HSSPY" "$c" >"$T/stuck.out" 2>&1
stuck=$!

tm new-session -d -s top -x 120 -y 40 "env PS1='$ ' bash --norc --noprofile --noediting" ||
    { fail "tmux" "cannot start a tmux session"; exit 0; }

# 1. The merged view of the C program, then per thread, a resize, then q.
if ! run_top q -p "$a"; then
    fail "q-started" "no hsspy top screen within 10 s: $(shown)"
else
    check "q-alternate-screen" "not on the alternate screen while running" test "$(alt_screen)" = 1
    # Two seconds of samples in the window.
    wait_screen '\| ([2-9]|[1-9][0-9]+)\.[0-9] s \|' 10
    check "header-target" "first line: $(head -n1 "$T/screen")" \
        grep -E -q "^hsspy top - pid $a: .*chains 14\$" "$T/screen"
    check "header-rate" "second line: $(sed -n 2p "$T/screen")" \
        grep -E -q '^rate 99 Hz asked, [0-9.]+ Hz achieved \| [0-9]+ samples \| [0-9.]+ s \|' "$T/screen"
    check "function-list" "no column header: $(shown)" grep -q '^  OWN%  TOTAL%  FUNCTION$' "$T/screen"
    check "no-children-line" "a line of children for a program without: $(shown)" \
        lacks_line "$T/screen" '^child processes '
    read -r own total <<<"$(shares_of leaf "$T/screen")"
    if [ -n "${own:-}" ] && ge "$own" 80 && ge "$total" 80 &&
        [ "$(awk '$1 ~ /^[0-9.]+$/ && NF == 3 { print $3; exit }' "$T/screen")" = leaf ]; then
        pass "leaf-own-share"
    else
        fail "leaf-own-share" "leaf own ${own:-none} total ${total:-none}, not first over 80%: $(shown)"
    fi
    read -r own total <<<"$(shares_of outer "$T/screen")"
    check "outer-total-share" "outer own ${own:-none} total ${total:-none}: $(shown)" \
        ge "${total:-0}" 90

    # Ctrl-S (XOFF) does not stop the view: hsspy would be stuck with it.
    t0=$(elapsed)
    tm send-keys -t top C-s 2>/dev/null
    sleep 2.2
    screen
    t1=$(elapsed)
    check "ctrl-s-no-freeze" "elapsed time '$t0' then '$t1' 2.2 s after Ctrl-S" \
        ge "${t1:-0}" "$(awk -v t="${t0:-99999}" 'BEGIN { print t + 1 }')"

    # t: one section per thread, each with leaf as its leading function.
    # (Typed after F1, in one write, as a terminal sends keys typed fast:
    # the escape sequence is skipped, the key after it taken; before, the
    # whole read was dropped.)
    tm send-keys -t top -l $'\x1bOPt' 2>/dev/null
    wait_screen "^tid $a_main \\(chains\\).*% of the samples shown" 5 &&
        wait_screen "^tid $a_worker \\(chains-worker\\).*% of the samples shown" 5
    check "per-thread-header" "no 'per thread' mode in the header: $(sed -n 3p "$T/screen")" \
        grep -q '| per thread |' "$T/screen"
    sections=$(awk '/^tid [0-9]+ / { tid = $2 } NF == 3 && $3 == "leaf" && $1 >= 80 { print tid }' \
        "$T/screen" | sort -n | tr '\n' ' ')
    want=$(printf '%s\n' "$a_main" "$a_worker" | sort -n | tr '\n' ' ')
    check "per-thread-sections" "threads with leaf over 80% own: '$sections', expected '$want': $(shown)" \
        test "$sections" = "$want"

    # A smaller terminal: the screen is redrawn to fit, both threads still in it.
    tm resize-window -t top -x 72 -y 16 2>/dev/null
    sleep 1.5
    wait_screen "^tid $a_worker " 5
    long=$(awk 'length($0) > 72' "$T/screen" | wc -l)
    if head -n1 "$T/screen" | grep -q '^hsspy top - pid' && [ "$long" = 0 ] &&
        grep -q "^tid $a_main " "$T/screen" && grep -q "^tid $a_worker " "$T/screen" &&
        [ "$(grep -c ' leaf$' "$T/screen")" -ge 2 ]; then
        pass "resized"
    else
        fail "resized" "after a resize to 72x16 the pane shows: $(shown)"
    fi
    tm resize-window -t top -x 120 -y 40 2>/dev/null
    # (q after Up, in one write: see t.)
    tm send-keys -t top -l $'\x1b[Aq' 2>/dev/null
    ended q "$a"
fi

# 2. Ctrl-C ends it the same way; with --nonblocking (threads sampled by
# perf events, not stopped), leaf leads all the same.
bg "$W/chains" 8 >"$T/b.out"
b=$!
wait_for_line "$T/b.out" '^worker [0-9]+' || fail "setup-b" "the chains workload did not start"
if ! run_top ctrl-c --nonblocking -p "$b"; then
    fail "ctrl-c-started" "no hsspy top screen within 10 s: $(shown)"
else
    wait_screen '\| ([2-9]|[1-9][0-9]+)\.[0-9] s \|' 10
    read -r own total <<<"$(shares_of leaf "$T/screen")"
    check "nonblocking-leaf-own-share" "leaf own ${own:-none} total ${total:-none}: $(shown)" \
        ge "${own:-0}" 80
    tm send-keys -t top C-c 2>/dev/null
    ended ctrl-c "$b"
fi

# 3. A GHC program: the tag mix, its C function leading by own share; then
# SIGTERM.
if [ -n "$prog" ]; then
    bg "$prog" 8
    g=$!
fi
if [ -z "$prog" ]; then
    fail "ghc-build" "ghc could not build unsafe_leaf.hs"
elif ! run_top sigterm -p "$g"; then
    fail "ghc-started" "no hsspy top screen within 10 s: $(shown)"
else
    wait_screen '\| ([2-9]|[1-9][0-9]+)\.[0-9] s \|' 10
    check "ghc-header" "first line: $(head -n1 "$T/screen")" \
        grep -E -q "^hsspy top - pid $g: .*unsafe_leaf 8  GHC 9\\.0\\.2\$" "$T/screen"
    tags=$(grep -E '^tags: haskell [0-9.]+% unsafe-ffi [0-9.]+% safe-ffi [0-9.]+% gc [0-9.]+% rts [0-9.]+% idle [0-9.]+%$' "$T/screen")
    # One thread spins in the unsafe call; the runtime's other threads idle.
    ffi=$(sed -n 's/.* unsafe-ffi \([0-9.]*\)%.*/\1/p' <<<"$tags")
    busiest=$(awk '{ for (i = 2; i < NF; i += 2) if ($i != "idle" && $(i + 1) + 0 > m) { m = $(i + 1) + 0; t = $i } } END { print t }' <<<"$tags")
    if [ -n "$tags" ] && ge "${ffi:-0}" 10 && [ "$busiest" = unsafe-ffi ]; then
        pass "ghc-tag-mix"
    else
        fail "ghc-tag-mix" "tag line '${tags:-none}' (unsafe-ffi should lead the busy tags): $(shown)"
    fi
    read -r own total <<<"$(shares_of unsafe_leaf_spin "$T/screen")"
    check "ghc-ffi-leaf" "unsafe_leaf_spin own ${own:-none}: $(shown)" ge "${own:-0}" 80
    kill -TERM "$(cat "$T/sigterm.pid")"
    ended sigterm "$g"
fi

# 4. A launcher whose child does the work: a header line says so and
# names the child.
bg sh -c "\"$W/chains\" 8 >/dev/null; true"
l=$!
if ! run_top launcher -p "$l"; then
    fail "launcher-started" "no hsspy top screen within 10 s: $(shown)"
else
    # (The line is cut at the pane's width: the busiest by its pid.)
    wait_screen "^child processes [0-9.]+ s of CPU, pid $l itself [0-9.]+ s: not sampled; the busiest, pid [0-9]+: " 6
    kid=$(sed -n "s/^child processes .*, pid $l itself .* the busiest, pid \([0-9]*\): .*/\1/p" "$T/screen")
    check "launcher-children-line" "no line of the children: $(shown)" test -n "$kid"
    check "launcher-busiest" "the busiest, pid '$kid', runs '$(tr '\0' ' ' <"/proc/${kid:-0}/cmdline" 2>/dev/null)'" \
        test "$(tr '\0' ' ' <"/proc/${kid:-0}/cmdline" 2>/dev/null)" = "$W/chains 8 "
    tm send-keys -t top q 2>/dev/null
    ended launcher "$l"
fi

# 5. SIGTSTP from outside (Ctrl-Z itself is disabled): hsspy stops with
# the terminal given back (the main screen, the shell's modes), and takes
# it again once continued (before: it stopped on the alternate screen in
# its own modes, and, continued after the shell had taken the terminal,
# drew over the shell while keys went to it, the terminal left cooked).
# The target runs on while hsspy is stopped: no thread of it is held.
bg "$W/chains" 10 >"$T/j.out"
j=$!
wait_for_line "$T/j.out" '^worker [0-9]+' || fail "setup-j" "the chains workload did not start"
if ! run_top job -p "$j"; then
    fail "job-started" "no hsspy top screen within 10 s: $(shown)"
else
    # The target stopped (SIGSTOP): the header says so, and how to go on
    # (before: nothing, the shares frozen as if current).
    kill -STOP "$j"
    wait_screen "^pid $j is stopped \\(SIGSTOP, or Ctrl-Z in its shell\\): nothing runs to sample; kill -CONT $j continues it" 5
    check "target-stopped-said" "no line saying pid $j is stopped: $(shown)" \
        grep -q "^pid $j is stopped" "$T/screen"
    kill -CONT "$j"
    for _ in $(seq 50); do
        screen
        lacks_line "$T/screen" "^pid $j is stopped" && break
        sleep 0.1
    done
    check "target-continued-said" "still said stopped: $(shown)" lacks_line "$T/screen" "^pid $j is stopped"
    hp=$(cat "$T/job.pid")
    kill -TSTP "$hp"
    for _ in $(seq 50); do [ "$(proc_state "$hp")" = T ] && break; sleep 0.1; done
    sleep 0.3
    check "job-stopped" "hsspy state $(proc_state "$hp")" test "$(proc_state "$hp")" = T
    check "job-screen-given-back" "alternate screen $(alt_screen) while hsspy is stopped" \
        test "$(alt_screen)" = 0
    check "job-target-runs" "target state $(proc_state "$j")" \
        eval '[ "$(proc_state "$j")" != T ] && [ "$(proc_state "$j")" != t ]'
    kill -CONT "$hp"
    wait_screen '^hsspy top - pid ' 5
    check "job-view-again" "alternate screen $(alt_screen) after SIGCONT: $(shown)" \
        test "$(alt_screen)" = 1
    tm send-keys -t top t 2>/dev/null
    wait_screen '\| per thread \|' 5
    check "job-keys-again" "t after SIGCONT did not switch to per thread: $(shown)" \
        grep -q '| per thread |' "$T/screen"
    tm send-keys -t top q 2>/dev/null
    ended job "$j"
fi

# The stuck terminal's verdict.
wait "$stuck"
out=$(cat "$T/stuck.out")
took=$(sed -n 's/.* took=\([0-9.]*\) .*/\1/p' <<<"$out")
if grep -q '^rc=0 ' <<<"$out" && ge 2 "${took:-99}"; then
    pass "stuck-terminal"
else
    fail "stuck-terminal" "SIGTERM to hsspy top on a suspended terminal: $out"
fi
check "stuck-terminal-target" "the target after hsspy ended: $out" grep -q ' tracer=0$' <<<"$out"

# Every target ends on its own, normally.
wait "$a"
check_status "target-a-exits-normally" $?
wait "$b"
check_status "target-b-exits-normally" $?
if [ -n "$prog" ]; then
    wait "$g"
    check_status "ghc-target-exits-normally" $?
fi
wait "$j"
check_status "target-j-exits-normally" $?
wait "$c"
check_status "target-c-exits-normally" $?
wait "$l"
check_status "launcher-exits-normally" $?
