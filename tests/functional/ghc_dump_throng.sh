# ghc_dump_throng - `hsspy dump` of a program with 15,000 Haskell threads
# and a collector that runs all the time, for each GHC version: every
# dump lists every thread, though the collector moves them from list to
# list (a dump caught in the middle of a collection looks again, and
# those in the lists a collection empties are read too), with the copying
# collector and with the nonmoving one (+RTS -xn, whose marking keeps the
# oldest threads on lists of its own while the program runs). A thread a
# capability is running is shown on its OS thread, not with the stale
# stack its TSO keeps. Every dump shows every thread's label.
. "$(dirname "$0")/../lib.sh"
require_ptrace

N=5000

throng() { # SUITE CASE-PREFIX [RTS FLAGS...]
    local suite=$1 c=$2 prog want i got short bad
    shift 2
    prog=$(hs_build "$suite" throng throng.hs -- -O1 -threaded -rtsopts) ||
        { fail "$c-build" "ghc could not build throng.hs"; return; }
    hs_start "$suite" "$T/$c.out" "$T/$c.err" "$prog" "$N" +RTS -N2 "$@" -RTS ||
        { fail "$c-setup" "throng did not start: $(head -c 300 "$T/$c.err")"; return; }
    wait_for_line "$T/$c.out" '^ready [0-9]+$' ||
        { fail "$c-setup" "throng did not get ready"; return; }
    want=$(sed -n 's/^ready //p' "$T/$c.out")
    short=""
    bad=""
    for i in 1 2 3 4 5 6; do
        "$HSSPY" dump -q -p "$HS_PID" -o "$T/$c.$i.dump" 2>"$T/$c.$i.err" ||
            { short="$short dump $i failed: $(head -c 200 "$T/$c.$i.err");"; continue; }
        got=$(sed -n 's/^haskell threads: \([0-9]*\).*/\1/p' "$T/$c.$i.dump")
        # (at least those it forked and main; a finished one may linger)
        if [ "${got:-0}" -lt "$want" ] || grep -q '^haskell threads:.*perhaps not all' "$T/$c.$i.dump"; then
            short="$short dump $i: $(grep '^haskell threads' "$T/$c.$i.dump" || echo 'no haskell threads line');"
        fi
        # No Haskell thread's stack is an error.
        if awk '/^haskell thread /{h=1} h && /\[invalid\]/{f=1} END{exit !f}' "$T/$c.$i.dump"; then
            bad="$bad dump $i: $(grep -B2 '\[invalid\]' "$T/$c.$i.dump" | tail -n 3 | tr '\n' '|');"
        fi
    done
    check "$c-every-thread" "of $want threads:$short" test -z "$short"
    check "$c-stacks" "an [invalid] Haskell thread:$bad" test -z "$bad"
    check "$c-still-runs" "throng is gone or still traced after the dumps" \
        sh -c "kill -0 $HS_PID && [ \"\$(sed -n 's/^TracerPid:[[:space:]]*//p' /proc/$HS_PID/status)\" = 0 ]"
    kill "$HS_PID" 2>/dev/null
    wait "$HS_PID" 2>/dev/null || true
}

# Thread labels (GHC 9.6 on keeps each in the TSO, a ByteArray# on the
# heap): every dump shows all eight, each in quotes after its thread's
# number. (Before, a label was read only where another copy held it: they
# came and went from one dump to the next.)
labels() { # SUITE CASE-PREFIX
    local suite=$1 c=$2-labels prog i got bad=""
    case "$(ghc_version "$suite")" in 9.0.*) return ;; esac # (no label in 9.0's TSO)
    prog=$(hs_build "$suite" labels labels.hs -- -O1 -threaded) ||
        { fail "$c-build" "ghc could not build labels.hs"; return; }
    hs_start "$suite" "$T/$c.out" "$T/$c.err" "$prog" 20 ||
        { fail "$c-setup" "labels did not start"; return; }
    wait_for_line "$T/$c.out" '^ready$' || { fail "$c-setup" "labels did not get ready"; return; }
    for i in 1 2 3 4; do
        "$HSSPY" dump -q -p "$HS_PID" -o "$T/$c.$i.dump" 2>/dev/null
        got=$(grep -Ec '^haskell thread [0-9]+ "waiter-[1-8]"' "$T/$c.$i.dump")
        [ "$got" -eq 8 ] || bad="$bad dump $i: $got of 8;"
        sleep 0.2
    done
    kill "$HS_PID" 2>/dev/null
    check "$c" "labels shown:$bad $(grep -Eo '^haskell thread [0-9]+( "[^"]*")?' "$T/$c.1.dump" | head -n 12 | tr '\n' '|')" \
        test -z "$bad"
}

ghc_targets
for suite in $GHC_TARGETS; do
    v=ghc-$(ghc_version "$suite")
    throng "$suite" "$v"
    throng "$suite" "$v-nonmoving" -xn
    labels "$suite" "$v"
done
