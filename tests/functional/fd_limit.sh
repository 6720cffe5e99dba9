# fd_limit - a program with more threads than hsspy may keep files open
# for. hsspy keeps up to four files open per thread (three in /proc and a
# perf event); under the usual soft limit of 1024 open files that is 256
# threads, and past the limit it could not open the program's objects to
# unwind and name its stacks, nor read thread names. So it raises its soft
# limit to the hard one at start (a launched command keeps the limit it
# was given), and where the hard limit is too low it keeps 128 files free
# for its own use and lets threads go without theirs (stopped at every
# tick), which the report says. Both with 300 waiting threads:
#  1. soft limit 256, hard higher: a launched program runs with 256, hsspy
#     with the hard limit, and no "files:" line; attached to, every
#     waiter's stack is whole;
#  2. soft and hard 200: every waiter is still sampled at every tick, named,
#     with its stack in wait_forever; the report names the limit.
# Every tick is checked on a program attached to once its waiters wait: a
# launched one makes its threads while the ticks go on, 0.2 s under ptrace
# on a slow VM, and a thread cannot be sampled before it exists.
. "$(dirname "$0")/../lib.sh"
require_ptrace

NW=300

# waiters_ok NAME FOLDED TICKS: every waiter sampled at (nearly) every
# tick, named, its stack in wait_forever.
waiters_ok() {
    local n whole named
    n=$(grep -c '^tid [0-9]* (waiter);.*;wait_forever;' "$2")
    check "$1-stacks" "$n of $NW waiters have stacks through wait_forever: $(grep -v wait_forever "$2" | head -n3 | tr '\n' '|')" \
        test "$n" = $NW
    # Each waiter's samples: all in wait_forever, at least 90% of ticks.
    whole=$(awk -v min=$(($3 * 9 / 10)) '/^tid [0-9]* \(waiter\);.*;wait_forever;/ && $NF >= min { n++ } END { print n + 0 }' "$2")
    check "$1-every-tick" "$whole of $NW waiters have samples at 90% of $3 ticks" test "$whole" = $NW
    named=$(grep -c '^tid [0-9]* (?)' "$2")
    check "$1-named" "$named threads have no name" test "$named" = 0
}

ticks_of() { sed -n 's/.* \([0-9][0-9]*\) ticks.*/\1/p' "$1" | head -n1; }

# attached NAME SECONDS: record the waiters, ready, for SECONDS at 50 Hz
# under the current limits, into $T/NAME.raw, .folded and .rep.
attached() {
    local pid
    bg "$W/waiters" $(($2 + 2)) $NW >"$T/$1.out"
    pid=$!
    wait_for_line "$T/$1.out" '^ready$' || { kill "$pid"; return 1; }
    "$HSSPY" record -q -F 50 -d "$2" --idle --threads -f raw -o "$T/$1.raw" -p "$pid" \
        2>"$T/$1.err" || { kill "$pid"; return 1; }
    kill "$pid"
    wait "$pid" 2>/dev/null
    "$HSSPY" report -f folded --threads --idle -o "$T/$1.folded" "$T/$1.raw" &&
        "$HSSPY" report -f report -o "$T/$1.rep" "$T/$1.raw"
}

# 1. Soft limit low, hard limit high: raised for hsspy alone.
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && [ "$hard" -lt $((256 + 4 * (NW + 1) + 128)) ]; then
    skip "raised" "the hard limit of open files here ($hard) is too low to raise to for $NW threads"
else
    (
        ulimit -Sn 256
        "$HSSPY" record -q -F 50 -d 2 --idle --threads -f raw -o "$T/raised.raw" -- "$W/waiters" 3 $NW \
            >"$T/raised.out" 2>"$T/raised.err" &
        hs=$!
        wait_for_line "$T/raised.out" '^ready$' || exit 1
        prog=$(pgrep -P "$hs" -x waiters)
        awk '/^Max open files/ { print $4 }' "/proc/$prog/limits" >"$T/prog-limit"
        awk '/^Max open files/ { print $4, $5 }' "/proc/$hs/limits" >"$T/hsspy-limit"
        wait "$hs"
    )
    check_status "raised-record" $? "$T/raised.err"
    check "raised-program-keeps-its-limit" "the program's soft limit was $(cat "$T/prog-limit"), not 256" \
        test "$(cat "$T/prog-limit")" = 256
    check "raised-hsspy" "hsspy's soft and hard limits: $(cat "$T/hsspy-limit"), hard $hard" \
        test "$(cat "$T/hsspy-limit")" = "$hard $hard"
    "$HSSPY" report -f report -o "$T/raised.rep" "$T/raised.raw"
    check_status "raised-report" $? /dev/null
    files=$(grep '^ *files:' "$T/raised.rep")
    check "raised-no-files-line" "the report says: $files" test -z "$files"
    (ulimit -Sn 256 && attached raised-attached 1)
    check_status "raised-attached-record" $? "$T/raised-attached.err"
    waiters_ok raised "$T/raised-attached.folded" "$(ticks_of "$T/raised-attached.rep")"
fi

# 2. Soft and hard limits low: threads go without their files.
(ulimit -n 200 && attached low 1)
check_status "low-record" $? "$T/low.err"
waiters_ok low "$T/low.folded" "$(ticks_of "$T/low.rep")"
check "low-files-line" "the report does not name the limit: $(grep -E 'files:|switches:' "$T/low.rep")" \
    has_line "$T/low.rep" '^ *files: *[0-9]+ threads went without .* only 200 files \(ulimit -n\)'
