#!/bin/sh
# deps.sh - install the Debian packages hsspy and its tests need, but only
# those missing (no apt-get at all when everything is there).
#
# OPTIONAL packages are tried too, but a machine that cannot have them
# (chromium: big, and absent from some mirrors) still builds and tests:
# the tests that need them say SKIP with the reason.
set -eu

# python3: tests/functional/c_trace.sh reads -f trace's JSON with a real parser.
# tmux: tests/functional/top.sh drives hsspy top through a real terminal.
PKGS="gcc make libc6-dev libunwind-dev libdw-dev libelf-dev ghc ghc-prof gdb procps bc util-linux
valgrind libxml2-utils python3 tmux"
OPTIONAL="chromium"

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
