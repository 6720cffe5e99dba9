# bad_input - every error a user can cause gets one clear line on stderr, a
# non-zero exit, and leaves the target untouched (running, not traced).
. "$(dirname "$0")/../lib.sh"
require_ptrace

# expect_error NAME REGEX COMMAND...: fails with exactly one stderr line
# matching REGEX.
expect_error() {
    local name=$1 re=$2; shift 2
    "$@" >"$T/out" 2>"$T/err"
    local rc=$?
    local lines
    lines=$(wc -l <"$T/err")
    if [ $rc -eq 0 ]; then
        fail "$name" "exit status 0"
    elif [ "$lines" -ne 1 ]; then
        fail "$name" "$lines lines on stderr: $(tr '\n' '|' <"$T/err")"
    elif ! grep -E -q -- "$re" "$T/err"; then
        fail "$name" "message '$(cat "$T/err")' does not match /$re/"
    else
        pass "$name"
    fi
}

# untouched NAME PID: still running (not stopped) and not traced by anyone.
untouched() {
    local st tr
    st=$(proc_state "$2"); tr=$(tracer_of "$2")
    if [ -n "$st" ] && [ "$st" != T ] && [ "$st" != t ] && [ "$tr" = 0 ]; then
        pass "$1"
    else
        fail "$1" "target state '$st', tracer '$tr'"
    fi
}

# No such process: a pid above pid_max cannot exist.
max=$(cat /proc/sys/kernel/pid_max)
expect_error "no-such-pid" "no process with pid $((max + 1))" "$HSSPY" record -p $((max + 1)) -d 1
expect_error "pid-not-a-number" "needs a process id" "$HSSPY" record -p abc -d 1

# A recording that fails costs no file: one named by -o is left as it was
# (before, it was emptied: a profile the command was to replace lost), and
# none is made where there was none (before, an empty one).
echo "an earlier profile" >"$T/kept.folded"
for cmd in "record -p $((max + 1))" "dump -p $((max + 1))" \
    "record -- $T/no-such-command"; do
    name=$(echo "$cmd" | tr -c 'a-z0-9\n' '-' | cut -c1-20)
    expect_error "output-kept-$name" "." "$HSSPY" $cmd -o "$T/kept.folded"
    check "output-kept-$name-file" "the file now holds: $(head -c 80 "$T/kept.folded")" \
        grep -qx "an earlier profile" "$T/kept.folded"
done
expect_error "output-not-made" "no process" "$HSSPY" record -f svg -o "$T/new.svg" -p $((max + 1))
check "output-not-made-file" "$T/new.svg was made" test ! -e "$T/new.svg"

# Output cut short by its reader (a pipe into head) is no error to tell:
# hsspy ends as a command SIGPIPE ended would, 128 + 13, without a word
# (before: "writing the dump output failed: Broken pipe", status 1).
"$HSSPY" record -q -F 999 -d 0.5 -f dump -- "$W/chains" 1 2>"$T/pipe.err" | head -n 1 >/dev/null
rc=${PIPESTATUS[0]}
check "cut-short-status" "exit status $rc (expected 141)" test "$rc" -eq 141
# (The command's own output, "main PID", is on standard error.)
check "cut-short-quiet" "said: $(tr '\n' '|' <"$T/pipe.err")" \
    test "$(grep -cEv '^(main|worker) [0-9]+$' "$T/pipe.err")" -eq 0

# A zombie.
bg "$W/zombie" 20 >"$T/zombie.out"
wait_for_line "$T/zombie.out" '^[0-9]+$'
zpid=$(head -n1 "$T/zombie.out")
for i in $(seq 50); do [ "$(proc_state "$zpid")" = Z ] && break; sleep 0.02; done
expect_error "zombie" "pid $zpid is a zombie" "$HSSPY" record -p "$zpid" -d 1

# Already traced by another debugger.
bg "$W/sleeper" 20
target=$!
bg "$W/holder" "$target" >"$T/holder.out"
holder=$!
wait_for_line "$T/holder.out" '^held$'
expect_error "already-traced" "pid $target is already traced by pid $holder \\(holder\\)" \
    "$HSSPY" record -p "$target" -d 1
kill "$holder"; wait "$holder" 2>/dev/null
sleep 0.1
untouched "already-traced-untouched" "$target"

# Not allowed: an unprivileged user tracing root's process.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    mkdir -p "$T/bin" && chmod 755 "$T" "$T/bin" && cp "$HSSPY" "$T/bin/hsspy"
    expect_error "permission-denied" "not allowed to trace pid $target: .*(root|CAP_SYS_PTRACE)" \
        setpriv --reuid=65534 --regid=65534 --clear-groups "$T/bin/hsspy" record -p "$target" -d 1
    untouched "permission-denied-untouched" "$target"
    # A program that made itself not dumpable, run by the same user as
    # hsspy: attached, one line naming that (before: "run hsspy as the
    # same user as the target", which it was); launched, its memory closes
    # after hsspy attached: one error line, exit 1 (before: every sample
    # [invalid], nothing said, exit 0).
    setpriv --reuid=65534 --regid=65534 --clear-groups "$W/lifecycle" nodump 3 >/dev/null &
    nd=$!
    sleep 0.3
    expect_error "not-dumpable-attach" "not allowed to trace pid $nd: it is not dumpable .*prctl" \
        setpriv --reuid=65534 --regid=65534 --clear-groups "$T/bin/hsspy" record -p "$nd" -d 1
    kill "$nd" 2>/dev/null; wait "$nd" 2>/dev/null
    setpriv --reuid=65534 --regid=65534 --clear-groups "$T/bin/hsspy" record -q -d 0.5 -o /dev/null \
        -- "$W/lifecycle" nodump 1 >/dev/null 2>"$T/nodump.err"
    rc=$?
    check "not-dumpable-launch" "exit status $rc, stderr: $(tr '\n' '|' <"$T/nodump.err")" \
        eval 'test $rc -ne 0 && grep -Eq "(memory could not be read|cannot read the memory map of pid [0-9]+): it is not dumpable \(.*prctl PR_SET_DUMPABLE 0\)" "$T/nodump.err"'
    # An executable this user may run but not read (mode 711): not
    # dumpable from its exec on, so its memory map cannot be read. One
    # line, exit 1, and the command, launched for this, not left running
    # on its own (before: orphaned, and the line blamed prctl).
    cp "$W/chains" "$T/bin/xonly" && chmod 711 "$T/bin/xonly"
    setpriv --reuid=65534 --regid=65534 --clear-groups "$T/bin/hsspy" record -q -d 1 -o /dev/null \
        -- "$T/bin/xonly" 30 >/dev/null 2>"$T/xonly.err"
    rc=$?
    check "execute-only-launch" "exit status $rc, stderr: $(tr '\n' '|' <"$T/xonly.err")" \
        eval 'test $rc -eq 1 && test "$(wc -l <"$T/xonly.err")" -eq 1 && grep -Eq "cannot read the memory map of pid [0-9]+: it is not dumpable \(.*this user may not read.*\); run hsspy as root .*; the command was stopped$" "$T/xonly.err"'
    check "execute-only-not-left" "left running: $(pgrep -af "$T/bin/xonly")" \
        eval '! pgrep -f "$T/bin/xonly 30" >/dev/null'
    # An executable removed since it started (an upgrade, a rebuild), as
    # its own user: read through /proc/PID/exe, where /proc/PID/map_files
    # needs CAP_SYS_ADMIN (before: no symbols nor CFI, "[unknown]").
    mkdir "$T/gone" && chmod 777 "$T/gone" && cp "$W/chains" "$T/gone/chains" &&
        chown 65534 "$T/gone/chains"
    setpriv --reuid=65534 --regid=65534 --clear-groups "$T/gone/chains" 8 >"$T/gone.out" &
    gp=$!
    wait_for_line "$T/gone.out" '^worker [0-9]+' || fail "deleted-setup" "the workload did not start"
    rm -f "$T/gone/chains"
    setpriv --reuid=65534 --regid=65534 --clear-groups "$T/bin/hsspy" record -q -d 1 -p "$gp" \
        -o "$T/gone/p.folded" 2>"$T/gone.err"
    check_status "deleted-exe-record" $? "$T/gone.err"
    n=$(count_matching "$T/gone/p.folded" ';main;outer;middle;leaf [0-9]+$')
    check "deleted-exe-named" "$n samples under main;outer;middle;leaf: $(head -n 3 "$T/gone/p.folded" | tr '\n' '|')" \
        test "$n" -ge 30
    kill "$gp" 2>/dev/null; wait "$gp" 2>/dev/null
    # A set-user-ID program traced by a user without CAP_SYS_PTRACE runs
    # without its privileges (the kernel's rule): said, launched or exec'd
    # (before: nothing, and the program behaved otherwise under hsspy).
    cp "$(command -v id)" "$T/bin/suid_id" && chmod 4755 "$T/bin/suid_id"
    if [ "$(setpriv --reuid=65534 --regid=65534 --clear-groups "$T/bin/suid_id" -u)" = 0 ]; then
        setpriv --reuid=65534 --regid=65534 --clear-groups "$T/bin/hsspy" record -o /dev/null \
            -- "$T/bin/suid_id" -u >"$T/suid.out" 2>"$T/suid.err"
        check "setuid-launch-said" "$(tr '\n' '|' <"$T/suid.err")" \
            grep -q "^hsspy: warning: $T/bin/suid_id is set-user-ID: traced by hsspy, which lacks CAP_SYS_PTRACE, it runs without those privileges" "$T/suid.err"
        setpriv --reuid=65534 --regid=65534 --clear-groups "$T/bin/hsspy" record -o /dev/null \
            -- sh -c "exec $T/bin/suid_id -u" >"$T/suid.out" 2>"$T/suid.err"
        check "setuid-exec-said" "$(tr '\n' '|' <"$T/suid.err")" \
            grep -Eq "^hsspy: warning: pid [0-9]+ exec'd $T/bin/suid_id, which is set-user-ID: traced by hsspy, which lacks CAP_SYS_PTRACE, it runs without those privileges" "$T/suid.err"
        "$HSSPY" record -o /dev/null -- "$T/bin/suid_id" -u >"$T/suid.out" 2>"$T/suid.err"
        check "setuid-root-quiet" "$(tr '\n' '|' <"$T/suid.err")" lacks_line "$T/suid.err" 'set-user-ID'
    else
        skip "setuid" "a set-user-ID copy of id does not run as root here (nosuid?)"
    fi
    # A shared library removed since it was loaded has no such way in: its
    # frames are unnamed, and the last lines say which file and why
    # (before: nothing said).
    printf 'void gone_spin(void) { for (;;) __asm__ volatile(""); }\n' >"$T/gone/lib.c"
    printf 'void gone_spin(void);\nint main(void) { gone_spin(); }\n' >"$T/gone/main.c"
    if gcc -shared -fPIC -o "$T/gone/libgone.so" "$T/gone/lib.c" 2>"$T/gone.err" &&
        gcc -o "$T/gone/usegone" "$T/gone/main.c" -L"$T/gone" -lgone -Wl,-rpath,"$T/gone" 2>>"$T/gone.err"; then
        chmod 755 "$T/gone/libgone.so" "$T/gone/usegone"
        setpriv --reuid=65534 --regid=65534 --clear-groups "$T/gone/usegone" &
        gp=$!
        sleep 0.3
        rm -f "$T/gone/libgone.so"
        setpriv --reuid=65534 --regid=65534 --clear-groups "$T/bin/hsspy" record -d 0.5 -p "$gp" \
            -o "$T/gone/lib.folded" 2>"$T/gone.err"
        check "deleted-library-said" "$(tr '\n' '|' <"$T/gone.err")" \
            grep -q "^hsspy: warning: could not read $T/gone/libgone.so (deleted) (.*): its frames are unnamed; it was deleted or replaced since it was loaded, and only root can read it then" "$T/gone.err"
        kill "$gp" 2>/dev/null; wait "$gp" 2>/dev/null
    else
        skip "deleted-library-said" "cannot build a shared library: $(head -n 1 "$T/gone.err")"
    fi
else
    skip "permission-denied" "needs root (to run hsspy as another user) and setpriv"
fi

# A kernel thread (PF_KTHREAD, 0x00200000, in the flags of its stat, the
# ninth field), which nothing may trace, even as root: said so, not "run
# as root" to a user who is root. (The first one: usually pid 2,
# kthreadd; none is visible inside a pid namespace.)
kthread=$(for f in /proc/[0-9]*/stat; do
    sed -E 's/^[0-9]+ \(.*\) //' "$f" 2>/dev/null |
        awk -v f="$f" '{ if (int($7 / 2097152) % 2) { split(f, p, "/"); print p[3]; exit } }'
done | sort -n | head -n 1)
if [ -n "$kthread" ]; then
    expect_error "kernel-thread" "pid $kthread \(.*\) is a kernel thread: it runs no program for hsspy to profile" \
        "$HSSPY" record -p "$kthread" -d 1
else
    skip "kernel-thread" "no kernel thread is visible in this pid namespace"
fi

# A command that cannot be started.
expect_error "no-such-command" "cannot run '/nonexistent/cmd': No such file or directory" \
    "$HSSPY" record -d 1 -- /nonexistent/cmd
touch "$T/notexec"
expect_error "not-executable" "cannot run '$T/notexec': Permission denied" \
    "$HSSPY" record -d 1 -- "$T/notexec"
# A script whose #! names no interpreter there (before: "No such file or
# directory", of a file that is there).
printf '#!/nonexistent/sh\necho hi\n' >"$T/badbang.sh"
chmod +x "$T/badbang.sh"
expect_error "missing-interpreter" "cannot run '$T/badbang.sh': its interpreter /nonexistent/sh \(its #! line\) was not found" \
    "$HSSPY" record -d 1 -- "$T/badbang.sh"

# Usage errors.
expect_error "no-target" "nothing to profile" "$HSSPY" record -d 1
expect_error "bad-rate" "-F needs a rate" "$HSSPY" record -F 0 -p 1
# An unknown command: one line naming the commands (before: the line,
# then the 17 lines of the usage).
expect_error "unknown-command" "unknown command 'bogus': the commands are record, top, dump and report" "$HSSPY" bogus
# A closed standard output, said before the target is touched (before:
# after the whole recording, "writing the folded output failed").
expect_error "stdout-closed" "standard output is closed: give -o FILE" \
    sh -c '"$0" record -p 1 -d 1 >&-' "$HSSPY"
# A duration past what a deadline in nanoseconds holds: before, accepted,
# and the recording ended at once, empty, exit 0.
expect_error "huge-duration" "-d 1e11 is more than 1000000000 seconds" "$HSSPY" record -d 1e11 -p 1
expect_error "bad-format" "unknown format 'nope'" "$HSSPY" record -f nope -p 1
expect_error "bad-sort" "--sort needs acc or own, not 'cnt'" "$HSSPY" record -f calls --sort cnt -p 1
expect_error "sort-no-value" "option --sort needs a value" "$HSSPY" record -f calls --sort
expect_error "sort-not-calls" "--sort applies to -f calls only, not to -f folded" \
    "$HSSPY" record --sort own -p 1
expect_error "bad-stack" "--stack needs stg or ccs, not 'prof'" "$HSSPY" record --stack prof -p 1
expect_error "stack-no-value" "option --stack needs a value" "$HSSPY" record --stack
# Each subcommand's own options: one record takes is unknown to top, not
# missing its value; a short option's value missing, a flag given one.
expect_error "p-no-value" "option -p needs a value" "$HSSPY" record -p
expect_error "top-unknown-d" "unknown option '-d' \(see hsspy top --help\)" "$HSSPY" top -d 1 -p 1
expect_error "dump-unknown-f" "unknown option '-f' \(see hsspy dump --help\)" "$HSSPY" dump -f json -p 1
expect_error "report-unknown-p" "unknown option '-p' \(see hsspy report --help\)" "$HSSPY" report -p 5 x
expect_error "flag-with-value" "option --threads takes no value" "$HSSPY" record --threads=1 -p 1
expect_error "unknown-long" "unknown option '--bogus'" "$HSSPY" record --bogus -p 1
expect_error "empty-output" "-o needs a file name \(or - for standard output\)" "$HSSPY" record -o '' -p 1
expect_error "unknown-in-cluster" "unknown option '-z'" "$HSSPY" record -qz -p 1
expect_error "unknown-in-cluster-after-long" "unknown option '-x'" "$HSSPY" record --idle -xq -p 1
expect_error "abbreviated-flag-with-value" "option --idle takes no value" "$HSSPY" record --idl=1 -p 1
# A second PID (before: "give either -p PID or -- CMD, not both", with
# no command given); -p with -- CMD is still both.
expect_error "second-pid" "unexpected argument '456': -p takes one PID \(a command to run goes after --, without -p\)" \
    "$HSSPY" record -p 1 456
expect_error "pid-and-command" "give either -p PID or -- CMD, not both" "$HSSPY" record -p 1 -- ls
# A directory for captures that cannot take them: said before any sampling
# (before, nothing was saved and nothing said).
expect_error "save-captures-missing" "--save-captures needs a directory to write in: '$T/none': No such file" \
    "$HSSPY" record --save-captures "$T/none" -d 1 -p "$target"
untouched "save-captures-untouched" "$target"
expect_error "stack-ccs-not-ghc" "--stack ccs needs a GHC program built with -prof, and .* is not a GHC program" \
    "$HSSPY" record --stack ccs -d 1 -p "$target"
untouched "stack-ccs-untouched" "$target"
expect_error "unwritable-output" "cannot write /nonexistent/dir/out" \
    "$HSSPY" record -d 1 -o /nonexistent/dir/out -p "$target"
untouched "final-untouched" "$target"
