# speedscope - `-f speedscope` of the bundled GHC demo, imported by
# speedscope's own importer (tests/speedscope_import.js runs the code of
# the npm package's page on the file): the file passes the package's schema
# and is read as speedscope's format; one profile per OS thread, named after
# it; every sample counted; the tag as each stack's outermost frame; the
# demo's functions, files and lines, and the unsafe call under its caller.
#
# The npm packages (speedscope, jsdom to run its page, ajv for its schema)
# are installed once into a cache outside the repository:
# $HSSPY_TEST_CACHE, else /var/cache/hsspy-tests, else ~/.cache/hsspy-tests.
. "$(dirname "$0")/../lib.sh"
require_ptrace

PKGS="speedscope@1.25.0 jsdom@26.1.0 ajv@8.17.1"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    skip "all" "node and npm are not installed (Debian packages nodejs and npm)"
    exit 0
fi

cache=""
for d in "${HSSPY_TEST_CACHE:-}" /var/cache/hsspy-tests "${XDG_CACHE_HOME:-$HOME/.cache}/hsspy-tests"; do
    if [ -n "$d" ] && mkdir -p "$d" 2>/dev/null && [ -w "$d" ]; then cache=$d; break; fi
done
if [ -z "$cache" ]; then
    skip "all" "no writable cache directory for the npm packages"
    exit 0
fi
# One directory per set of versions, made whole or not at all.
mods=$cache/npm-$(echo "$PKGS" | tr ' @' '_-')
if [ ! -f "$mods/.complete" ]; then
    tmp=$(mktemp -d "$cache/.install.XXXXXX")
    # shellcheck disable=SC2086
    if timeout 300 npm install --prefix "$tmp" --no-audit --no-fund --ignore-scripts \
        --fetch-retries=1 --fetch-retry-maxtimeout=10000 --fetch-timeout=60000 $PKGS >"$T/npm.log" 2>&1; then
        rm -rf "$mods"
        mv "$tmp" "$mods" && touch "$mods/.complete"
    else
        rm -rf "$tmp"
        skip "all" "npm could not install $PKGS: $(grep -m1 -i 'err' "$T/npm.log" || tail -n1 "$T/npm.log")"
        exit 0
    fi
fi

prog=$(build_hs demo demo.hs demo_c.c -- -O1 -g -threaded -rtsopts) ||
    { fail "build" "ghc could not build demo.hs"; exit 0; }
out=$T/demo.speedscope.json
"$HSSPY" record -q -F 199 -d 2 -f speedscope -o "$out" -- "$prog" 2.5 +RTS -N2 -RTS 2>"$T/err"
check_status "exit-status" $? "$T/err"

imp=$T/imported
if ! node "$ROOT/tests/speedscope_import.js" "$mods/node_modules" "$out" >"$imp" 2>"$T/node.err" ||
    ! grep -q '^group	' "$imp"; then
    fail "import" "the importer failed: $(head -n 5 "$T/node.err" "$imp" | tr '\n' '|')"
    exit 0
fi
pass "import"
check "schema" "not valid against speedscope's schema: $(grep '^schema' "$imp")" \
    grep -q -x 'schema	ok' "$imp"
check "read-as-speedscope" "speedscope did not take it for its own format: $(grep '^log' "$imp" | tr '\n' '|')" \
    grep -q -x 'log	Importing as speedscope json file' "$imp"

# The file's name carries the sampling health, and the target's pid.
group=$(sed -n 's/^group	//p' "$imp")
pid=$(echo "$group" | sed -n 's/^hsspy: pid \([0-9]*\): .*/\1/p')
check "name-health" "the name lacks pid, rate or ticks: $group" \
    grep -q -E '^hsspy: pid [0-9]+: .*; rate: 199 Hz asked, [0-9.]+ Hz achieved; ticks: [0-9]+, [0-9]+ missed;' <<<"$group"

# One profile per OS thread, "tid N comm (role)", the main thread's among them.
awk -F'\t' '$1 == "profile"' "$imp" >"$T/profiles"
nprof=$(grep -c . "$T/profiles")
ntids=$(cut -f3 "$T/profiles" | awk '{ print $2 }' | sort -u | grep -c .)
badname=$(cut -f3 "$T/profiles" | grep -v -E '^tid [0-9]+ [^ ]+( \(.+\))?$' | head -n1)
if [ "$nprof" -ge 3 ] && [ "$ntids" -eq "$nprof" ] && [ -z "$badname" ]; then
    pass "profile-per-thread"
else
    fail "profile-per-thread" "$nprof profiles for $ntids tids (want >= 3, one each); names: $(cut -f3 "$T/profiles" | tr '\n' '|')"
fi
check "main-thread-profile" "no profile 'tid $pid demo (bound main thread ...)': $(cut -f3 "$T/profiles" | tr '\n' '|')" \
    grep -q -E "	tid ${pid:-none} demo \\(bound main thread" "$T/profiles"
check "unit" "a profile's unit is not none: $(cut -f4 "$T/profiles" | sort -u | tr '\n' ' ')" \
    test "$(cut -f4 "$T/profiles" | sort -u)" = "none"

# Counts: each profile weighs what the file says, and all of them together
# are the samples the name says were kept.
want=$(echo "$group" | sed -n 's/.*; samples: \([0-9]*\) thread samples.*/\1/p')
got=$(awk -F'\t' '{ n += $5 } END { print n + 0 }' "$T/profiles")
if [ -n "$want" ] && [ "$want" -gt 100 ] && [ "$got" -eq "$want" ] &&
    awk -F'\t' '$5 != $6 { exit 1 }' "$T/profiles"; then
    pass "sample-counts"
else
    fail "sample-counts" "speedscope counts $got samples, the name says '$want' (want > 100); per profile (imported, in file): $(cut -f5,6 "$T/profiles" | tr '\t\n' '/ ')"
fi

# The tag is every stack's outermost frame; the demo is busy in these.
roots=$(awk -F'\t' '$1 == "root" { print $3 }' "$imp" | sort -u)
check "tag-roots" "an outermost frame that is not a tag: $(echo "$roots" | tr '\n' ' ')" \
    test -z "$(echo "$roots" | grep -v -x -E '\[(haskell|unsafe-ffi|safe-ffi|gc|rts|idle)\]')"
for tag in '[haskell]' '[unsafe-ffi]' '[safe-ffi]'; do
    check "root-$tag" "no stack starts with $tag: $(echo "$roots" | tr '\n' ' ')" \
        grep -q -x -F "$tag" <<<"$roots"
done

# Functions: time of their own, and Main.nfib's source file and line (-g).
# Fields: frame, profile, name, file, line, self, total; edge, profile,
# outermost frame, caller, callee, weight.
frames() { awk -F'\t' -v n="$1" '$1 == "frame" && $3 == n' "$imp"; }
has_self() { frames "$1" | awk -F'\t' '$6 > 0 { ok = 1 } END { exit !ok }'; }
nfib_at_its_line() {
    frames Main.nfib | awk -F'\t' '$6 > 0 && $4 ~ /tests\/workloads\/hs\/demo\.hs$/ && $5 == 22 { ok = 1 } END { exit !ok }'
}
checksum_under_caller() {
    awk -F'\t' '$1 == "edge" && $3 == "[unsafe-ffi]" && $4 ~ /^Main\./ && $5 == "demo_checksum" && $6 > 0 { ok = 1 } END { exit !ok }' "$imp"
}
check "frame-demo_checksum" "demo_checksum has no self weight: $(frames demo_checksum | head -n 2 | tr '\n' '|')" \
    has_self demo_checksum
check "frame-Main.nfib" "Main.nfib has no self weight at demo.hs:22: $(frames Main.nfib | head -n 2 | tr '\n' '|')" \
    nfib_at_its_line
check "unsafe-ffi-caller" "no [unsafe-ffi] stack with demo_checksum called by Main.*: $(grep '^edge.*demo_checksum' "$imp" | head -n 3 | tr '\n' '|')" \
    checksum_under_caller
