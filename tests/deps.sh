#!/bin/sh
# deps.sh - install the Debian packages hsspy and its tests need, but only
# those missing (no apt-get at all when everything is there).
# `deps.sh demo`: only what building hsspy and the demo needs.
#
# OPTIONAL packages are tried too, but a machine that cannot have them
# (chromium: big, and absent from some mirrors) still builds and tests:
# the tests that need them say SKIP with the reason.
set -eu

# python3: tests/functional/c_trace.sh reads -f trace's JSON with a real parser.
# zlib1g-dev: gzip for -f pprof. golang-go: `go tool pprof`, the reader the
# pprof output is tested with. debootstrap and curl: the Debian chroots with
# other GHC versions (tests/chroot.sh); libzstd-dev: compressed IPE data
# (GHC 9.10+). tmux: tests/functional/top.sh drives hsspy top through a real
# terminal. g++: tests/workloads/cxx.cpp, C++ whose names are demangled.
PKGS="gcc g++ make libc6-dev libunwind-dev libdw-dev libelf-dev zlib1g-dev libzstd-dev ghc ghc-prof gdb
procps bc util-linux valgrind libxml2-utils python3 golang-go debootstrap curl tmux"
OPTIONAL="chromium"

# node and npm run speedscope's importer on -f speedscope output. Only when
# missing: a machine may have them from another source than Debian's
# packages (whose npm would clash with it).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    PKGS="$PKGS nodejs npm"
fi

if [ "${1:-}" = demo ]; then
    PKGS="gcc make libc6-dev libunwind-dev libdw-dev libelf-dev zlib1g-dev libzstd-dev ghc"
    OPTIONAL=""
fi

missing_of() {
    for p in "$@"; do
        if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "install ok installed"; then
            printf ' %s' "$p"
        fi
    done
}
# shellcheck disable=SC2086
missing=$(missing_of $PKGS)
# shellcheck disable=SC2086
optional=$(missing_of $OPTIONAL)
[ -z "$missing$optional" ] && exit 0

echo "deps: installing$missing$optional"
if [ "$(id -u)" != 0 ]; then
    if [ -n "$missing" ]; then
        echo "deps: missing packages:$missing; run as root (or install them with apt-get)" >&2
        exit 1
    fi
    echo "deps: not root: optional$optional not installed; the tests that need it will skip" >&2
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
if [ -n "$missing" ]; then
    # shellcheck disable=SC2086
    apt-get install -y -q --no-install-recommends $missing >/dev/null
fi
if [ -n "$optional" ]; then
    # shellcheck disable=SC2086
    apt-get install -y -q --no-install-recommends $optional >/dev/null ||
        echo "deps: could not install$optional; the tests that need it will skip" >&2
fi
