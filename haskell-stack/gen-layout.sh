#!/bin/sh
# gen-layout.sh - generate hsspy's table of GHC RTS structure layouts
# (haskell-stack/layout_ghc_<version>.c) for one GHC version.
#
#   haskell-stack/gen-layout.sh SRC_DIR INCLUDE_DIR VERSION \
#       > haskell-stack/layout_ghc_<VERSION with _ for .>.c
#
# SRC_DIR      that GHC's source tree (needs rts/*.h: Capability and Task are
#              private to the RTS and not installed)
# INCLUDE_DIR  that GHC's installed include dir (the generated ghcautoconf.h,
#              ghcplatform.h, DerivedConstants.h, ghcversion.h)
# VERSION      e.g. 9.0.2; checked against ghcversion.h and SRC_DIR/VERSION
#
# Environment: CC (default cc), GEN_LAYOUT_CFLAGS (extra flags for every
# probe, e.g. -DTABLES_NEXT_TO_CODE for a GHC whose installed headers do not
# define it but whose RTS is built with it), GEN_LAYOUT_VIA (the command
# that ran this script elsewhere, for the generated header: GHCs newer than
# the host's are measured inside a Debian chroot by
# `tests/chroot.sh layout SUITE`, with the chroot's own compiler and paths).
#
# How: what to measure is the data in rts_layout.h (its X-macro lists, read
# here with the C preprocessor).  For each RTS variant -- {threaded, not} x
# {profiled, not} x {debug, not}, the CPP flags GHC builds its RTS flavours
# with -- a probe program including the RTS's own headers is compiled and
# run, printing offsetof/sizeof/macro values.  A field whose probe line does
# not compile (no such member or type in this version/variant) is recorded
# as absent instead, so the same list works for every GHC version.  Debug
# tables are emitted only if -DDEBUG changes something.  The probe runs on
# this machine, so generate on the target architecture (x86_64 Linux).
#
# Needs only cc and POSIX sh/awk/sed/cksum.  Fails (non-zero, nothing on
# stdout) on any compile error it cannot attribute to one list entry.

set -eu

me=gen-layout.sh
die() { echo "$me: $*" >&2; exit 1; }
warn() { echo "$me: warning: $*" >&2; }

[ $# -eq 3 ] || die "usage: $0 SRC_DIR INCLUDE_DIR VERSION > haskell-stack/layout_ghc_<ver>.c"
src=$(cd "$1" && pwd) || die "no source dir $1"
inc=$(cd "$2" && pwd) || die "no include dir $2"
version=$3
here=$(cd "$(dirname "$0")" && pwd)
CC=${CC:-cc}
GEN_LAYOUT_CFLAGS=${GEN_LAYOUT_CFLAGS:-}
LC_ALL=C
export LC_ALL

case $version in
    *[!0-9.]* | "" | .* | *. | *..*) die "VERSION must look like 9.0.2, got '$version'" ;;
esac
ident=$(echo "$version" | tr . _)

[ -f "$here/rts_layout.h" ] || die "$here/rts_layout.h missing"
[ -f "$src/rts/Capability.h" ] || die "$src/rts/Capability.h missing: SRC_DIR must be a GHC source tree"
[ -f "$inc/ghcautoconf.h" ] || die "$inc/ghcautoconf.h missing: INCLUDE_DIR must be an installed GHC include dir"

# A mismatched VERSION would silently file one GHC's numbers under another.
if [ -f "$inc/ghcversion.h" ]; then
    hv=$(sed -n 's/^#define __GLASGOW_HASKELL_FULL_VERSION__ "\(.*\)"$/\1/p' "$inc/ghcversion.h")
    [ -z "$hv" ] || [ "$hv" = "$version" ] ||
        die "VERSION $version but $inc/ghcversion.h says $hv"
fi
if [ -f "$src/VERSION" ]; then
    sv=$(head -n 1 "$src/VERSION")
    [ "$sv" = "$version" ] || die "VERSION $version but $src/VERSION says $sv"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gen-layout.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP

# ---------------------------------------------------------------------------
# 1. The list of things to measure, from rts_layout.h's X-macros.  Output,
#    one per line:  G group ctype base | F group name member kind |
#                   K group kind       | C group name
# ---------------------------------------------------------------------------
cat > "$tmp/list.c" <<'EOF'
#include "rts_layout.h"
#define X_F(name, member, kind) RTSLAYOUT_NL RTSLAYOUT_F name member kind
#define X_G(group, ctype, base, fields) \
    RTSLAYOUT_NL RTSLAYOUT_G group ctype base fields(X_F)
#define X_C(name) RTSLAYOUT_NL RTSLAYOUT_C name
#define X_K(group, kind, list) RTSLAYOUT_NL RTSLAYOUT_K group kind list(X_C)
RTSLAYOUT_BEGIN
RTS_LAYOUT__GROUPS(X_G)
RTS_LAYOUT__CONST_GROUPS(X_K)
EOF
$CC -E -P -I"$here" "$tmp/list.c" > "$tmp/list.i" 2> "$tmp/list.err" || {
    cat "$tmp/list.err" >&2; die "cannot preprocess rts_layout.h"; }
awk '
    /RTSLAYOUT_BEGIN/ { on = 1 }
    on { buf = buf " " $0 }
    END {
        n = split(buf, rec, /RTSLAYOUT_NL/)
        for (i = 2; i <= n; i++) {
            m = split(rec[i], w, /[ \t]+/)
            # drop empty leading/trailing words
            k = 0
            for (j = 1; j <= m; j++) if (w[j] != "") v[++k] = w[j]
            if (v[1] == "RTSLAYOUT_G") { grp = v[2]; print "G", v[2], v[3], v[4] }
            else if (v[1] == "RTSLAYOUT_F") {
                # the member expression may come out as "prof . ccs"
                mem = ""; for (j = 3; j < k; j++) mem = mem v[j]
                print "F", grp, v[2], mem, v[k]
            }
            else if (v[1] == "RTSLAYOUT_K") { grp = v[2]; print "K", v[2], v[3] }
            else if (v[1] == "RTSLAYOUT_C") print "C", grp, v[2]
            else { print "bad list record: " rec[i] > "/dev/stderr"; exit 1 }
        }
    }' "$tmp/list.i" > "$tmp/items"
nitems=$(grep -c '^[GFC] ' "$tmp/items") || true
[ "$nitems" -gt 0 ] || die "no items extracted from rts_layout.h"

# ---------------------------------------------------------------------------
# 2. The probe.  Prologue fixed; one line per item so that a compile error
#    on line N identifies the item (recorded in $tmp/linemap.*).
# ---------------------------------------------------------------------------
cat > "$tmp/prologue.c" <<'EOF'
/* gen-layout probe: prints "key off size" / "key value" / "key absent". */
#if __has_include("PosixSource.h")
#include "PosixSource.h"
#endif
#include "Rts.h"
#include "Capability.h"
#include "Task.h"
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

/* Info-table offsets are relative to the info pointer: the end of the
 * table with tables-next-to-code, its start otherwise. */
#if defined(TABLES_NEXT_TO_CODE)
#define BASE_INFO(T) ((long long)sizeof(T))
#else
#define BASE_INFO(T) 0LL
#endif
#define BASE_START(T) 0LL

static int bad;
static void check32(const char *key, long long v)
{
    if (v < -2147483647LL || v > 2147483647LL) {
        fprintf(stderr, "probe: %s = %lld does not fit int32\n", key, v);
        bad = 1;
    }
}
/* size 0 = aggregate too wide for the uint8_t size field */
static void fld(const char *key, long long off, unsigned long long size)
{
    check32(key, off);
    if (off == -1) {  /* -1 means "absent" in rts_layout.h */
        fprintf(stderr, "probe: %s is really at offset -1\n", key);
        bad = 1;
    }
    printf("%s %lld %llu\n", key, off, size > 255 ? 0ULL : size);
}
static void val(const char *key, long long v)
{
    check32(key, v);
    if (v == -1) {  /* -1 means "absent" in rts_layout.h */
        fprintf(stderr, "probe: %s is really -1\n", key);
        bad = 1;
    }
    printf("%s %lld\n", key, v);
}
static void absent(const char *key) { printf("%s absent\n", key); }

int main(void)
{
EOF

# gen_probe VARIANT: writes $tmp/probe.VARIANT.c and $tmp/linemap.VARIANT
# from the items, making the keys in $tmp/absent.VARIANT absent.
gen_probe() {
    plines=$(wc -l < "$tmp/prologue.c")
    touch "$tmp/absent.$1"
    awk -v first="$plines" -v mapf="$tmp/linemap.$1" -v absf="$tmp/absent.$1" '
        BEGIN { while ((getline k < absf) > 0) gone[k] = 1; line = first }
        function emit(key, code) {
            if (key in gone) code = "absent(\"" key "\");"
            print "    " code; line++
            print line, key > mapf
        }
        $1 == "G" { grp = $2; ctype[grp] = $3; base[grp] = $4
                    emit(grp ".struct_size", "val(\"" grp ".struct_size\", (long long)sizeof(" $3 "));") }
        $1 == "F" { g = $2; T = ctype[g]; key = g "." $3; m = $4
                    sz = ($5 == "elem") ? "((" T " *)0)->" m "[0]" : "((" T " *)0)->" m
                    emit(key, "fld(\"" key "\", (long long)offsetof(" T ", " m ") - BASE_" base[g] "(" T "), sizeof(" sz "));") }
        $1 == "K" { grp = $2; kind[grp] = $3 }
        $1 == "C" { g = $2; key = g "." $3
                    if (kind[g] == "SIZEOF")
                        emit(key, "val(\"" key "\", (long long)sizeof(" $3 "));")
                    else if (kind[g] == "ARRAY")
                        # an array and a pointer to its first element have
                        # different types; a pointer and &p[0] the same
                        emit(key, "val(\"" key "\", (long long)!__builtin_types_compatible_p(__typeof__(" $3 "), __typeof__(&(" $3 ")[0])));")
                    else {
                        # preprocessor lines take no map entry: only the
                        # middle line can fail to compile
                        print "#if defined(" $3 ")"; line++
                        emit(key, "val(\"" key "\", (long long)(" $3 "));")
                        print "#else"; line++
                        print "    absent(\"" key "\");"; line++
                        print "#endif"; line++
                    }
                  }
        END { print "    return bad ? 2 : 0;"; print "}" }
    ' "$tmp/items" > "$tmp/body.$1.c"
    cat "$tmp/prologue.c" "$tmp/body.$1.c" > "$tmp/probe.$1.c"
}

incflags="-I$src/rts"
[ -d "$src/includes" ] && incflags="$incflags -I$src/includes"
[ -d "$src/rts/include" ] && incflags="$incflags -I$src/rts/include"
incflags="$incflags -I$inc"

# compile VARIANT FLAGS...: 0 = ok, 1 = failed (errors in $tmp/err.VARIANT)
compile() {
    v=$1; shift
    # shellcheck disable=SC2086 # word splitting of flag lists is intended
    $CC -std=gnu11 -w $GEN_LAYOUT_CFLAGS "$@" $incflags \
        -MD -MF "$tmp/deps.$v" \
        -o "$tmp/probe.$v" "$tmp/probe.$v.c" 2> "$tmp/err.$v"
}

# measure VARIANT FLAGS...: $tmp/out.VARIANT
measure() {
    v=$1; shift
    : > "$tmp/absent.$v"
    pass=0
    while gen_probe "$v" && ! compile "$v" "$@"; do
        # Every error must sit on an item line; those items are absent in
        # this variant.  Anything else is a real failure.  Compilers with an
        # error limit (clang stops at 20) may need several passes.
        pass=$((pass + 1))
        awk -v f="$tmp/probe.$v.c" -v mapf="$tmp/linemap.$v" '
            BEGIN { while ((getline l < mapf) > 0) { split(l, a, " "); key[a[1]] = a[2] } }
            /too many errors emitted/ { next }
            index($0, f ":") == 1 && / error: / {
                rest = substr($0, length(f) + 2); split(rest, p, ":")
                if (p[1] in key) print key[p[1]]
                else { print "unattributed: " $0 > "/dev/stderr"; bad = 1 }
                next
            }
            / error: / { print "unattributed: " $0 > "/dev/stderr"; bad = 1 }
            END { exit bad }
        ' "$tmp/err.$v" > "$tmp/absent.$v.new" || {
            cat "$tmp/err.$v" >&2
            die "probe for variant $v ($*) failed to compile"
        }
        cat "$tmp/absent.$v" "$tmp/absent.$v.new" | sort -u > "$tmp/absent.$v.all"
        if cmp -s "$tmp/absent.$v" "$tmp/absent.$v.all" || [ "$pass" -gt 100 ]; then
            cat "$tmp/err.$v" >&2
            die "probe for variant $v ($*) still fails with the absent fields removed"
        fi
        mv "$tmp/absent.$v.all" "$tmp/absent.$v"
    done
    "$tmp/probe.$v" > "$tmp/out.$v" || die "probe for variant $v ($*) failed to run"
    [ "$(wc -l < "$tmp/out.$v")" -eq "$nitems" ] ||
        die "probe for variant $v printed $(wc -l < "$tmp/out.$v") values, expected $nitems"
}

# The RTS flavours (GHC way names) and the CPP flags they are built with.
# TRACING (eventlog) is implied by DEBUG and PROFILING; the plain ones are
# checked against their eventlog (_l) flavours below.
variants="v thr p thr_p debug thr_debug debug_p thr_debug_p"
vflags() {
    case $1 in
        v) ;;
        thr) echo "-DTHREADED_RTS" ;;
        p) echo "-DPROFILING" ;;
        thr_p) echo "-DTHREADED_RTS -DPROFILING" ;;
        debug) echo "-DDEBUG" ;;
        thr_debug) echo "-DTHREADED_RTS -DDEBUG" ;;
        debug_p) echo "-DDEBUG -DPROFILING" ;;
        thr_debug_p) echo "-DTHREADED_RTS -DDEBUG -DPROFILING" ;;
        l) echo "-DTRACING" ;;
        thr_l) echo "-DTHREADED_RTS -DTRACING" ;;
    esac
}
for v in $variants l thr_l; do
    # shellcheck disable=SC2046
    measure "$v" $(vflags "$v")
done

# The lookup has no eventlog dimension: refuse to generate if -DTRACING
# matters for this version.
if ! cmp -s "$tmp/out.v" "$tmp/out.l" || ! cmp -s "$tmp/out.thr" "$tmp/out.thr_l"; then
    diff "$tmp/out.v" "$tmp/out.l" >&2 || true
    diff "$tmp/out.thr" "$tmp/out.thr_l" >&2 || true
    die "-DTRACING (the -eventlog RTS) changes the layout: rts_layout needs an eventlog variant"
fi

grep -q '^misc.TABLES_NEXT_TO_CODE 1$' "$tmp/out.v" ||
    warn "TABLES_NEXT_TO_CODE is not defined by these headers: info-table offsets are from the table start. If this GHC uses tables-next-to-code (ghc --info), set GEN_LAYOUT_CFLAGS=-DTABLES_NEXT_TO_CODE"

# Entries absent from every variant: expected for fields of other GHC
# versions, but also what a misspelt list entry looks like.
for v in $variants; do
    grep ' absent$' "$tmp/out.$v" | awk '{print $1}'
done | sort | uniq -c | awk '$1 == 8 { print $2 }' > "$tmp/absent_everywhere"
[ ! -s "$tmp/absent_everywhere" ] ||
    warn "absent in every variant of $version (fine if they belong to other versions): $(tr '\n' ' ' < "$tmp/absent_everywhere")"

# Which debug variants need their own table.
debug_own=""
for v in debug thr_debug debug_p thr_debug_p; do
    case $v in
        debug) nd=v ;; thr_debug) nd=thr ;; debug_p) nd=p ;; thr_debug_p) nd=thr_p ;;
    esac
    cmp -s "$tmp/out.$v" "$tmp/out.$nd" || debug_own="$debug_own $v"
done

# Fingerprint of the RTS headers the probes actually read.
for v in $variants; do
    # make syntax: one word per line, dropping the "\" continuations
    # shellcheck disable=SC1003,SC2020
    tr ' \\' '\n\n' < "$tmp/deps.$v"
done | grep -v ':$' | grep -v '^$' | sort -u | while read -r f; do
    case $f in "$src"/* | "$inc"/*) echo "$f" ;; esac
done > "$tmp/headers"
nheaders=$(wc -l < "$tmp/headers")
digest=$(while IFS= read -r f; do cat "$f"; done < "$tmp/headers" |
    cksum | awk '{print $1 "-" $2}')
commit=""
[ -f "$src/GIT_COMMIT_ID" ] && commit=" (GIT_COMMIT_ID $(head -n 1 "$src/GIT_COMMIT_ID"))"
ccver=$($CC --version 2>/dev/null | head -n 1)

# diffs A B: the keys whose values differ between variants A and B
diffs() {
    awk 'NR == FNR { a[$1] = $0; next } a[$1] != $0 { print $1 }' \
        "$tmp/out.$1" "$tmp/out.$2"
}
# summarize KEYS-FILE: "group(field, field), group(...)"
summarize() {
    awk -F. '{ if ($1 != g) { if (g != "") printf "), "; printf "%s(", $1; g = $1; sep = "" }
               printf "%s%s", sep, $2; sep = " " }
             END { if (g != "") printf ")"; else printf "nothing"; print "" }' "$1" |
        fold -s -w 72 | sed 's/^/ *       /; s/ *$//'
}

# ---------------------------------------------------------------------------
# 3. The output, assembled in a file and printed only when complete.
# ---------------------------------------------------------------------------
out=$tmp/layout.c
{
    echo "/* layout_ghc_$ident.c - GENERATED, do not edit: GHC $version RTS structure"
    echo " * layouts for hsspy (see rts_layout.h), one table per RTS variant."
    echo " *"
    if [ -n "${GEN_LAYOUT_VIA:-}" ]; then
        echo " * Generated by \`$GEN_LAYOUT_VIA\`, which ran, with paths inside it:"
    else
        echo " * Generated by:"
    fi
    echo " *   haskell-stack/gen-layout.sh $src $inc $version \\"
    echo " *       > haskell-stack/layout_ghc_$ident.c"
    [ -z "$GEN_LAYOUT_CFLAGS" ] || echo " *   with GEN_LAYOUT_CFLAGS=$GEN_LAYOUT_CFLAGS"
    echo " * from the sources $src$commit"
    echo " * and the installed headers $inc,"
    echo " * compiled with $ccver."
    echo " * RTS headers read: $nheaders, cksum of their contents $digest."
    echo " *"
    echo " * Variants (GHC way, CPP flags):"
    for v in $variants; do
        f=$(vflags "$v"); printf ' *   %-12s %s\n' "$v" "${f:-(none)}"
    done
    echo " * -DTRACING (eventlog RTS) changes nothing."
    if [ -z "$debug_own" ]; then
        echo " * -DDEBUG changes nothing: the debug slots share the non-debug tables."
    else
        echo " * -DDEBUG changes the layout; own tables for:$debug_own."
    fi
    echo " *"
    echo " * threaded vs non-threaded differ in:"
    diffs v thr > "$tmp/d"; summarize "$tmp/d"
    echo " * profiled vs non-profiled differ in:"
    diffs v p > "$tmp/d"; summarize "$tmp/d"
    if [ -n "$debug_own" ]; then
        echo " * debug vs non-debug (threaded) differ in:"
        diffs thr thr_debug > "$tmp/d"; summarize "$tmp/d"
    fi
    echo " * Absent in every variant of this version:"
    summarize "$tmp/absent_everywhere"
    echo " */"
    echo
    echo '#include "rts_layout.h"'
    echo
    echo "_Static_assert(RTS_LAYOUT__N_VALUES == $nitems,"
    echo "               \"layout_ghc_$ident.c is stale: rts_layout.h's lists changed; re-run gen-layout.sh\");"
} > "$out"

tables=""
for v in $variants; do
    case " $debug_own " in
        *" $v "*) ;;
        *) case $v in *debug*) continue ;; esac ;;
    esac
    tables="$tables $v"
done

for v in $tables; do
    case $v in thr*) thr=true ;; *) thr=false ;; esac
    case $v in *p) prof=true ;; *) prof=false ;; esac
    case $v in *debug*) dbg=true ;; *) dbg=false ;; esac
    f=$(vflags "$v")
    {
        echo
        echo "/* $v: ${f:-no flags} */"
        echo "static const struct rts_layout ghc_${ident}_$v = {"
        echo "    .ghc_version = \"$version\","
        echo "    .threaded = $thr, .profiled = $prof, .debug = $dbg,"
    } >> "$out"
    awk -v outf="$tmp/out.$v" '
        BEGIN { while ((getline l < outf) > 0) { n = split(l, a, " ")
                    val[a[1]] = a[2]; sz[a[1]] = (n > 2) ? a[3] : "" } }
        function close_grp() { if (grp != "") print "    }," }
        $1 == "G" || $1 == "K" {
            close_grp(); grp = $2; print "    ." grp " = {"
            if ($1 == "G") {
                k = grp ".struct_size"
                printf "        %-28s = %s,\n", ".struct_size", (val[k] == "absent") ? "-1" : val[k]
            }
        }
        $1 == "F" { k = grp "." $3
                    if (val[k] == "absent")
                        printf "        %-28s = { %5s, %3s },  /* absent */\n", "." $3, "-1", "0"
                    else
                        printf "        %-28s = { %5s, %3s },\n", "." $3, val[k], sz[k] }
        $1 == "C" { k = grp "." $3
                    if (val[k] == "absent")
                        printf "        %-32s = -1,  /* absent */\n", "." $3
                    else
                        printf "        %-32s = %s,\n", "." $3, val[k] }
        END { close_grp(); print "};" }
    ' "$tmp/items" >> "$out"
done

{
    echo
    echo "const struct rts_layout__version rts_layout__ghc_$ident = {"
    echo "    .ghc_version = \"$version\","
    echo "    .variant = {"
    for v in $variants; do
        case $v in thr*) thr=true ;; *) thr=false ;; esac
        case $v in *p) prof=true ;; *) prof=false ;; esac
        case $v in *debug*) dbg=true ;; *) dbg=false ;; esac
        t=$v note=""
        case " $tables " in
            *" $v "*) ;;
            *) t=$(echo "$v" | sed 's/_debug//; s/^debug_//; s/^debug$/v/')
               note="  /* -DDEBUG changes nothing */" ;;
        esac
        printf '        [RTS_LAYOUT__VARIANT(%-6s %-6s %s)] = &ghc_%s_%s,%s\n' \
            "$thr," "$prof," "$dbg" "$ident" "$t" "$note"
    done
    echo "    },"
    echo "};"
} >> "$out"

cat "$out"
