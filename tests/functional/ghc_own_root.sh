# ghc_own_root - a program in a chroot is read through its own root, as in
# a container: its /proc/PID/maps names /usr/lib/x86_64-linux-gnu/libc.so.6,
# which on the host is another libc. hsspy must use the chroot's libc, and
# find that libc's separate debug file (libc6-dbg) under the chroot too:
# then every libc frame of a dump is named, with source lines, where the
# host's libc, read by mistake, would give other names or none. A raw
# recording of it, reported on the host after it has exited (its files no
# longer reachable, its executable not on the host at all), keeps the names
# the recording gave: Haskell frames, and libc's with their source lines.
. "$(dirname "$0")/../lib.sh"
require_ptrace

own_root() { # SUITE CASE-PREFIX
    local suite=$1 c=$2 prog
    if [ "$suite" = host ]; then
        skip "$c-own-root" "runs on the host, not in a chroot"
        return
    fi
    prog=$(hs_build "$suite" fibffi-threaded-O2-nog fibffi.hs fibffi_c.c -- -O2 -rtsopts -threaded) ||
        { fail "$c-build" "ghc could not build fibffi.hs"; return; }
    hs_start "$suite" /dev/null /dev/null "$prog" 3 && sleep 0.5 ||
        { fail "$c-setup" "fibffi did not start"; return; }
    "$HSSPY" dump -q -p "$HS_PID" >"$T/dump" 2>"$T/dump.err"
    "$HSSPY" record -q -F 299 -d 1 -f raw -o "$T/rec.raw" -p "$HS_PID" 2>"$T/rec.err"
    local rc=$?
    kill "$HS_PID" 2>/dev/null
    wait "$HS_PID" 2>/dev/null
    grep -E ' \[libc\.so\.6\]' "$T/dump" >"$T/libc" || true
    local n unnamed lines
    n=$(wc -l <"$T/libc")
    unnamed=$(grep -c ' libc\.so\.6+0x' "$T/libc")
    lines=$(grep -Ec '\[libc\.so\.6\]  [^ ]+\.[cS]:[0-9]+$' "$T/libc")
    check "$c-libc-frames" "no libc frames in the dump: $(head -c 300 "$T/dump" | tr '\n' '|')" \
        test "$n" -ge 5
    check "$c-libc-named" "$unnamed of $n libc frames unnamed: $(grep ' libc\.so\.6+0x' "$T/libc" | head -n 2 | tr '\n' '|')" \
        test "$unnamed" -eq 0
    check "$c-libc-debug-lines" "only $lines of $n libc frames have source lines from the chroot's libc6-dbg" \
        test "$lines" -eq "$n"

    check_status "$c-raw-record" $rc "$T/rec.err"
    [ $rc -eq 0 ] || return
    "$HSSPY" report -f folded --idle -o "$T/raw.folded" "$T/rec.raw" 2>"$T/report.err"
    check_status "$c-raw-report" $? "$T/report.err"
    check "$c-raw-names-kept" "no word that the recording's names were kept: $(cat "$T/report.err")" \
        grep -Eq "files are not on this machine or changed since \(${prog##*/}, .*\): [0-9]+ frames keep the names the recording saved" "$T/report.err"
    check "$c-raw-haskell" "no [haskell] sample in Main.fib from the raw file: $(sort -t' ' -k2 -rn "$T/raw.folded" | head -n 2 | tr '\n' '|')" \
        has_line "$T/raw.folded" '^\[haskell\];.*Main\.(\$w)?fib'
    check "$c-raw-unsafe-ffi" "no fibffi_spin under Main.* from the raw file" \
        has_line "$T/raw.folded" '^\[unsafe-ffi\];.*;Main\.[^;]*;fibffi_spin [0-9]+$'
    "$HSSPY" report -q -f dump --idle -o "$T/raw.dump" "$T/rec.raw" 2>/dev/null
    grep -E ' \[libc\.so\.6\]' "$T/raw.dump" >"$T/raw.libc" || true
    n=$(wc -l <"$T/raw.libc")
    unnamed=$(grep -c ' libc\.so\.6+0x' "$T/raw.libc")
    lines=$(grep -Ec '\[libc\.so\.6\]  [^ ]+\.[cS]:[0-9]+$' "$T/raw.libc")
    check "$c-raw-libc-named" "$unnamed of $n libc frames of the raw file unnamed or none at all" \
        test "$n" -ge 5 -a "$unnamed" -eq 0
    check "$c-raw-libc-lines" "only $lines of $n libc frames of the raw file have source lines" \
        test "$n" -ge 5 -a "$lines" -eq "$n"
}

# The same program run by a plain chroot (no mount namespace of its own):
# its maps then name its files by their paths on the host, under the
# chroot's directory, which a report on the host opens, the same builds;
# but libc's debug file was found under the program's root, not from
# there. The report keeps the names the recording gave where the files
# found name less (before: libc's internal functions as addresses, no
# source lines).
plain_chroot() { # SUITE CASE-PREFIX
    local suite=$1 c=$2-plain-chroot prog root dir pid n unnamed
    [ "$suite" = host ] && return
    prog=$(hs_build "$suite" fibffi-threaded-O2-nog fibffi.hs fibffi_c.c -- -O2 -rtsopts -threaded) ||
        { fail "$c-build" "ghc could not build fibffi.hs"; return; }
    root=${HSSPY_CHROOT_CACHE:-/var/cache/hsspy}/chroot-$suite
    dir=$(mktemp -d "$root/tmp/hsspy-plain.XXXXXX") || { fail "$c-setup" "no room in $root/tmp"; return; }
    cp "$(chroot_build_dir "$suite")/hs/${prog##*/}" "$dir/prog"
    chroot "$root" "${dir#"$root"}/prog" 3 >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 100); do grep -q 'libc\.so' "/proc/$pid/maps" 2>/dev/null && break; sleep 0.02; done
    sleep 0.3
    "$HSSPY" record -q -F 299 -d 1 -f raw -o "$T/plain.raw" -p "$pid" 2>"$T/plain.err"
    check_status "$c-record" $? "$T/plain.err"
    kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
    rm -rf "$dir"
    "$HSSPY" report -q -f dump --idle -o "$T/plain.dump" "$T/plain.raw" 2>/dev/null
    grep -E ' \[libc\.so\.6\]' "$T/plain.dump" >"$T/plain.libc" || true
    n=$(wc -l <"$T/plain.libc")
    unnamed=$(grep -c ' libc\.so\.6+0x' "$T/plain.libc")
    check "$c-libc-named" "$unnamed of $n libc frames of the raw file unnamed: $(grep ' libc\.so\.6+0x' "$T/plain.libc" | head -n 2 | tr '\n' '|')" \
        test "$n" -ge 5 -a "$unnamed" -eq 0
}

ghc_targets
for suite in $GHC_TARGETS; do
    own_root "$suite" "ghc-$(ghc_version "$suite")"
    plain_chroot "$suite" "ghc-$(ghc_version "$suite")"
done
