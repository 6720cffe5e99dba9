#!/bin/sh
# deps.sh - install the Debian packages hsspy and its tests need, but only
# those missing (no apt-get at all when everything is there).
set -eu

# zlib1g-dev: gzip for -f pprof. golang-go: `go tool pprof`, the reader the
# pprof output is tested with.
PKGS="gcc make libc6-dev libunwind-dev libdw-dev libelf-dev zlib1g-dev ghc ghc-prof gdb procps bc
      util-linux golang-go"

# node and npm run speedscope's importer on -f speedscope output. Only when
# missing: a machine may have them from another source than Debian's
# packages (whose npm would clash with it).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    PKGS="$PKGS nodejs npm"
fi

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
