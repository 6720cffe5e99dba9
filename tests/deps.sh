#!/bin/sh
# deps.sh - install the Debian packages hsspy and its tests need, but only
# those missing (no apt-get at all when everything is there).
set -eu

# debootstrap and curl: the Debian chroots with other GHC versions
# (tests/chroot.sh); libzstd-dev: compressed IPE data (GHC 9.10+).
PKGS="gcc make libc6-dev libunwind-dev libdw-dev libelf-dev libzstd-dev ghc ghc-prof gdb procps bc
util-linux debootstrap curl"

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

echo "deps: installing$missing"
if [ "$(id -u)" != 0 ]; then
    echo "deps: missing packages:$missing; run as root (or install them with apt-get)" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing >/dev/null
