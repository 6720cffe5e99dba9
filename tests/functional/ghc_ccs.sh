# ghc_ccs - record --stack ccs on a -prof program: each sample's Haskell
# part is the cost-centre stack GHC's own profiler charges time to. The
# workload (ccs.hs) spends known shares of its time in three cost centres,
# one of them under a fourth; it runs under hsspy with +RTS -p, and for
# every cost centre with at least 5% of the time in the program's own .prof
# (individual %time), hsspy's share of samples whose innermost cost centre
# it is must be within 5 points. Frames are the cost centres' names from
# the executable (Module.label), callers outside callees; a saved raw
# recording names them the same when reported; a program not built with
# -prof gets one line and a non-zero exit before it is touched. Threaded and
# non-threaded RTS. Host GHC only: the chroots' GHCs have no profiling
# libraries (ghc-prof).
# alone: compares shares with GHC's own profiler's within 5 points
. "$(dirname "$0")/../lib.sh"
require_ptrace

C=ghc-$(ghc --numeric-version)

# The .prof's first table: "MODULE.COST-CENTRE %time" per cost centre.
prof_table() {
    awk '/^COST CENTRE +MODULE/ { on = 1; next }
         on && NF == 0 { if (seen) exit; next }
         on { seen = 1; print $2 "." $1, $(NF - 1) }' "$1"
}

# Every cost centre of the .prof's tree ("MODULE.COST-CENTRE"), those with
# no time of their own included.
prof_names() {
    awk '/^COST CENTRE +MODULE +SRC +no\. +entries/ { on = 1; next }
         on && NF >= 5 { print $2 "." $1 }' "$1" | sort -u
}

# Samples per innermost cost centre (the last frame of a stack that is one
# of the .prof's cost centres), and the total: "NAME COUNT" lines.
innermost() { # FOLDED NAMES
    awk 'NR == FNR { cc[$1] = 1; next }
         { n = $NF; total += n; sub(/ [0-9]+$/, ""); k = split($0, f, ";")
           for (i = k; i > 1; i--) if (f[i] in cc) { by[f[i]] += n; break } }
         END { for (c in by) print c, by[c]; print "TOTAL", total + 0 }' "$2" "$1"
}

all_named() { # FOLDED NAME...: every Main.NAME is a frame somewhere
    local f=$1 n; shift
    for n in "$@"; do has_line "$f" "(^|;)Main\\.$n(;| )" || return 1; done
}
gamma_under_outer() {
    has_line "$1" ';Main\.outer;Main\.gamma( |;)' &&
        ! grep 'Main\.gamma' "$1" | grep -q -v 'Main\.outer;Main\.gamma'
}

variant() { # NAME SECONDS TICK GHC-FLAGS...
    local v=$1 secs=$2 tick=$3; shift 3
    local c="$C-$v" prog dir rc
    prog=$(build_hs "ccs-$v" ccs.hs -- -O2 -prof -rtsopts "$@") ||
        { fail "$c-build" "ghc -prof $* could not build ccs.hs"; return; }
    dir=$T/$v
    mkdir -p "$dir"
    # The RTS writes PROG.prof in its working directory.
    (cd "$dir" && "$HSSPY" record -q --stack ccs -F 499 -f folded -o "$dir/ccs.folded" \
        -- "$prog" "$secs" +RTS -p "-V$tick" -RTS >"$dir/out" 2>"$dir/err")
    rc=$?
    check_status "$c-record" $rc "$dir/err"
    [ $rc -eq 0 ] || return
    local prof=$dir/ccs-$v.prof f=$dir/ccs.folded
    if [ ! -s "$prof" ]; then
        fail "$c-prof" "the program wrote no $prof"
        return
    fi
    prof_table "$prof" >"$dir/table"
    prof_names "$prof" >"$dir/names"
    innermost "$f" "$dir/names" >"$dir/hsspy"
    local total
    total=$(awk '$1 == "TOTAL" { print $2 }' "$dir/hsspy")
    if [ "${total:-0}" -lt 1000 ]; then
        fail "$c-enough-samples" "only $total samples"
        return
    fi
    pass "$c-enough-samples"

    # Names: the cost centres, from the file; no address left unnamed, no
    # walk gone wrong, and no STG frame (spin, which has no cost centre of
    # its own, is what the STG stack would show).
    check "$c-names" "not every cost centre named Main.*: $(sort -t' ' -k2 -rn "$f" | head -n 4 | tr '\n' '|')" \
        all_named "$f" alpha beta gamma outer
    check "$c-no-unnamed" "unnamed or invalid frames: $(grep -E '\[cost centre|\[invalid\]|\[truncated\]' "$f" | head -n 3 | tr '\n' '|')" \
        lacks_line "$f" '\[cost centre 0x|\[invalid\]|\[truncated\]'
    check "$c-no-stg-frames" "Haskell frames that are not cost centres: $(grep -E 'spin' "$f" | head -n 3 | tr '\n' '|')" \
        lacks_line "$f" 'Main\.[^;]*spin'
    # [haskell] samples: every frame after the tag is one of the program's
    # cost centres: those the .prof lists, and GHC's own SYSTEM, which the
    # .prof lists only when its own ticks landed there. The scheduler sets
    # it (Schedule.c: its costs go to CCS_SYSTEM) until the thread it runs
    # has its own loaded, and one [haskell] sample in some twenty runs
    # found it.
    awk 'NR == FNR { cc[$1] = 1; next } FNR == 1 { cc["SYSTEM.SYSTEM"] = 1 }
         /^\[haskell\]/ { s = $0; sub(/ [0-9]+$/, "", s); k = split(s, f, ";")
                          for (i = 2; i <= k; i++) if (!(f[i] in cc)) { print; next } }' \
        "$dir/names" "$f" >"$dir/unknown"
    check "$c-only-cost-centres" "[haskell] stacks with frames that are not the .prof's cost centres: $(head -n 3 "$dir/unknown" | tr '\n' '|')" \
        [ ! -s "$dir/unknown" ]
    # Callers outside callees: gamma only ever right under outer.
    check "$c-chain-order" "gamma not right under outer: $(grep 'Main\.gamma' "$f" | head -n 3 | tr '\n' '|')" \
        gamma_under_outer "$f"

    # The shares, for every cost centre with 5% or more in the .prof.
    local name pct got share d n=0
    while read -r name pct; do
        [ "$(echo "$pct >= 5" | bc -l)" = 1 ] || continue
        n=$((n + 1))
        got=$(awk -v c="$name" '$1 == c { print $2 }' "$dir/hsspy")
        share=$(echo "scale=2; 100 * ${got:-0} / $total" | bc -l)
        d=$(echo "$share - $pct" | bc -l | tr -d -)
        if [ "$(echo "$d <= 5" | bc -l)" = 1 ]; then
            pass "$c-share-$name"
        else
            fail "$c-share-$name" "hsspy ${share}% of $total samples, the .prof ${pct}% (off by $d points)"
        fi
    done <"$dir/table"
    check "$c-prof-cost-centres" "the .prof has $n cost centres of 5% or more, not alpha, beta and gamma: $(tr '\n' '|' <"$dir/table")" \
        [ "$n" -eq 3 ]
}

# The RTS's profiling tick (-V) is its timer's, the finer the better for
# the .prof's own precision. The threaded RTS's timer is a thread of its
# own: every millisecond. The non-threaded RTS's is a signal to the Haskell
# thread, which under ptrace stops it until hsspy passes the signal on: on
# a loaded machine, where hsspy waits for a CPU, the program then stands
# still in one cost centre for long spells, hsspy's samples (of wall time)
# count them and the RTS's coalesced ticks do not; every 2 ms halves those
# spells, and a longer run evens them out.
variant single 6 0.002
variant threaded 5 0.001 -threaded

# A saved recording names its cost centres from the executable when
# reported: kind, name, object and source span.
prog=$W/hs/ccs-single
if [ -x "$prog" ]; then
    (cd "$T" && "$HSSPY" record -q --stack ccs -F 499 -f raw -o "$T/ccs.raw" -- "$prog" 1.5 \
        >/dev/null 2>"$T/raw.err")
    check_status "$C-raw-record" $? "$T/raw.err"
    "$HSSPY" report -f folded -o "$T/raw.folded" "$T/ccs.raw" 2>"$T/report.err"
    check "$C-raw-folded" "the report of the raw recording lacks outer;gamma: $(head -n 3 "$T/raw.folded" | tr '\n' '|')" \
        has_line "$T/raw.folded" '^\[haskell\];Main\.outer;Main\.gamma [0-9]+$'
    "$HSSPY" report -f dump -o "$T/raw.dump" "$T/ccs.raw" 2>>"$T/report.err"
    check "$C-raw-dump" "no 'ccs Main.alpha [ccs-single] ccs.hs:LINE:COLS' frame in the dump: $(grep -m 3 ' ccs ' "$T/raw.dump" | tr '\n' '|')" \
        has_line "$T/raw.dump" ' ccs +Main\.alpha +\[ccs-single\] +ccs\.hs:[0-9]+:[0-9]+-[0-9]+$'
fi

# Not built with -prof: one line, a non-zero exit, and the program neither
# run (launch) nor touched (attach).
one_error() { # RC ERRFILE REGEX
    [ "$1" -ne 0 ] && [ "$(wc -l <"$2")" -eq 1 ] && grep -E -q -- "$3" "$2"
}
plain=$(build_hs ccs-plain ccs.hs -- -O2 -rtsopts) || fail "$C-plain-build" "ghc could not build ccs.hs"
if [ -n "${plain:-}" ]; then
    "$HSSPY" record --stack ccs -o "$T/plain.folded" -- "$plain" 1 >"$T/plain.out" 2>"$T/plain.err"
    rc=$?
    check "$C-not-profiled-launch" "exit $rc, stderr: $(tr '\n' '|' <"$T/plain.err")" \
        one_error $rc "$T/plain.err" '--stack ccs needs a program built with -prof, and .*ccs-plain was not: rebuild it with ghc -prof'
    check "$C-not-profiled-not-run" "the program ran, or an output was written" \
        eval '[ ! -s "$T/plain.out" ] && [ ! -e "$T/plain.folded" ]'
    bg "$plain" 30
    pid=$!
    sleep 0.3
    "$HSSPY" record --stack ccs -d 1 -p "$pid" >"$T/attach.out" 2>"$T/attach.err"
    rc=$?
    check "$C-not-profiled-attach" "exit $rc, stderr: $(tr '\n' '|' <"$T/attach.err")" \
        one_error $rc "$T/attach.err" "needs a program built with -prof, and .*ccs-plain was not"
    check "$C-not-profiled-untouched" "pid $pid: state $(proc_state "$pid"), tracer $(tracer_of "$pid")" \
        eval '[ "$(tracer_of "$pid")" = 0 ] && [ "$(proc_state "$pid")" != T ] && [ "$(proc_state "$pid")" != t ]'
    # Through a launcher that takes a moment (a script): refused once
    # exec'd, and not left to run on its own (held at its exec until then).
    printf '#!/bin/sh\nsleep 0.2\nexec "$@"\n' >"$T/slow.sh"
    chmod +x "$T/slow.sh"
    "$HSSPY" record --stack ccs -o "$T/plain.folded" -- "$T/slow.sh" "$plain" 29 >"$T/plain.out" 2>"$T/plain.err"
    rc=$?
    check "$C-not-profiled-via-script" "exit $rc, stderr: $(tr '\n' '|' <"$T/plain.err")" \
        eval '[ $rc -eq 1 ] && grep -q "needs a program built with -prof, and .*ccs-plain was not" "$T/plain.err"'
    check "$C-not-profiled-via-script-gone" "left running: $(pgrep -af "$plain 29")" \
        eval '! pgrep -f "$plain 29" >/dev/null && [ ! -s "$T/plain.out" ] && [ ! -e "$T/plain.folded" ]'
fi
# Not a GHC program at all (found through PATH), and not a launcher of
# one: it may exec one for a second (see below), then it is refused, and
# killed (it was launched for this).
"$HSSPY" record --stack ccs -- sleep 1 >/dev/null 2>"$T/c.err"
rc=$?
check "$C-not-ghc" "exit $rc, stderr: $(tr '\n' '|' <"$T/c.err")" \
    one_error $rc "$T/c.err" "needs a GHC program built with -prof, and sleep is not a GHC program \\((it exited without exec'ing one|nor did it exec one within a second: it was killed)\\)$"
"$HSSPY" record --stack ccs -o "$T/c.folded" -- "$W/chains" 30 >/dev/null 2>"$T/c.err"
rc=$?
check "$C-not-ghc-killed" "exit $rc, stderr: $(tr '\n' '|' <"$T/c.err")" \
    one_error $rc "$T/c.err" "needs a GHC program built with -prof, and .*/chains is not a GHC program \\(nor did it exec one within a second: it was killed\\)$"
check "$C-not-ghc-gone" "still running: $(pgrep -af "$W/chains 30")" \
    eval '! pgrep -f "$W/chains 30" >/dev/null && [ ! -e "$T/c.folded" ]'
# A launcher of the profiled program (env, nice, a script that execs it):
# followed to it, as without --stack ccs (before: env and nice were
# refused, not being GHC programs; a script was, unless it had exec'd
# the program by the time hsspy looked).
prog=$W/hs/ccs-single
if [ -x "$prog" ]; then
    printf '#!/bin/sh\nsleep 0.2\nexec "$@"\n' >"$T/later.sh"
    chmod +x "$T/later.sh"
    for how in env nice later.sh; do
        case $how in
        later.sh) launcher=$T/later.sh ;;
        *) launcher=$how ;;
        esac
        (cd "$T" && "$HSSPY" record -q --stack ccs -F 199 -o "$T/via.folded" -- "$launcher" "$prog" 1 \
            >/dev/null 2>"$T/via.err")
        check_status "$C-via-$how" $? "$T/via.err"
        check "$C-via-$how-stacks" "no [haskell];Main.outer;Main.gamma stack: $(head -n 3 "$T/via.folded" 2>/dev/null | tr '\n' '|')" \
            has_line "$T/via.folded" '^\[haskell\];Main\.outer;Main\.gamma [0-9]+$'
    done
fi
