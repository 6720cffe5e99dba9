#!/bin/bash
# chroot.sh - the Debian chroots that give the tests other GHC versions:
# trixie (GHC 9.6.6) and sid (GHC 9.10.3), next to the host's bookworm
# (GHC 9.0.2).
#
#   tests/chroot.sh ensure SUITE    make the chroot unless it is complete;
#                                   print its directory (exit 0), or why it
#                                   cannot be made (stderr, exit 77)
#   tests/chroot.sh exec SUITE [-b HOSTDIR:DIR]... [-w DIR] -- CMD [ARGS...]
#                                   run CMD inside it, in DIR (default /),
#                                   with /proc and the bind mounts in place;
#                                   CMD keeps this process's PID
#   tests/chroot.sh source SUITE    unpack that suite's GHC sources
#                                   (apt-get source ghc) inside the chroot,
#                                   for gen-layout.sh; print their directory
#   tests/chroot.sh layout SUITE    run haskell-stack/gen-layout.sh inside
#                                   it on those sources and the installed
#                                   headers, with its own compiler; print
#                                   the table (> haskell-stack/layout_ghc_V.c)
#   tests/chroot.sh version SUITE   the GHC version of a complete chroot
#   tests/chroot.sh expected SUITE  the GHC version the suite should have
#   tests/chroot.sh clean SUITE     delete it
#
# A chroot is built once per machine and kept outside the repository, in
# $HSSPY_CHROOT_CACHE (default /var/cache/hsspy): debootstrap --variant=minbase,
# then apt-get install of the suite's ghc. The 9.6 and 9.10 binaries need
# their suite's glibc, so they are built and run inside the chroot; the
# host's hsspy profiles them by PID and reads their files through
# /proc/PID/root.
#
# Building is idempotent and safe to run concurrently (flock on a lock file
# next to the chroot); a stamp file written as the very last step says the
# chroot is complete, so one left half-built (interrupted, disk full) is
# deleted and built again. Mounts are made only inside a private mount
# namespace (unshare -m) that lives as long as the command run in it, so
# nothing stays mounted on the host, whatever happens to the command.
set -eu

CACHE=${HSSPY_CHROOT_CACHE:-/var/cache/hsspy}
MIRROR=${HSSPY_DEBIAN_MIRROR:-http://deb.debian.org/debian}
me=chroot.sh

# The packages each suite gets: the compiler (which pulls in gcc, libgmp-dev,
# libffi-dev), gdb to call the debug RTS's stack printer in the reference
# test, and libc6-dbg, the suite's libc's separate debug file, which hsspy
# must find under the target's root.
packages() {
    case $1 in
    trixie | sid) echo "ghc gdb libc6-dbg" ;;
    *) return 1 ;;
    esac
}

# The GHC each suite is expected to have: the version hsspy has a layout
# for and the tests are about. sid moves; when its GHC changes, the chroot
# says so instead of silently testing another version.
expected_ghc() {
    case $1 in
    trixie) echo 9.6.6 ;;
    sid) echo 9.10.3 ;;
    esac
}

die() { echo "$me: $*" >&2; exit 1; }
cannot() { echo "$me: cannot make the $suite chroot: $*" >&2; exit 77; }

# in_ns DIR CMD...: run CMD on the host side of DIR in a private mount
# namespace with DIR/proc mounted (ghc's post-install and ghc itself read
# /proc/self/...).
in_ns() {
    local dir=$1; shift
    unshare --mount --propagation private -- /bin/sh -c '
        dir=$1; shift
        mount -t proc proc "$dir/proc" || exit 1
        exec "$@"' sh "$dir" "$@"
}

# complete: the chroot is built (its stamp records its GHC version, then
# the packages it got) and has the GHC the tests expect. A chroot with
# another GHC (sid moved on) stays as it is, and is refused with the reason
# until it is cleaned and rebuilt.
complete() {
    local stamp=$CACHE/chroot-$suite.done ver want
    [ -s "$stamp" ] && [ -x "$CACHE/chroot-$suite/usr/bin/ghc" ] || return 1
    ver=$(head -n 1 "$stamp") want=$(expected_ghc "$suite")
    [ "$ver" = "$want" ] ||
        cannot "$suite has GHC $ver, not $want: add its layout (tests/chroot.sh layout $suite), update expected_ghc in tests/chroot.sh, or rebuild the chroot (tests/chroot.sh clean $suite)"
}

# add_packages DIR STAMP PKGS: a complete chroot made with an older package
# list gets the new one installed, instead of being built again.
add_packages() {
    local dir=$1 stamp=$2 pkgs=$3
    echo "$me: installing $pkgs in the $suite chroot" >&2
    # shellcheck disable=SC2086 # pkgs is a word list
    in_ns "$dir" chroot "$dir" /usr/bin/env DEBIAN_FRONTEND=noninteractive \
        /bin/sh -c "apt-get update -q && apt-get install -y -q --no-install-recommends $pkgs && apt-get clean" \
        >>"$CACHE/chroot-$suite.log" 2>&1 ||
        cannot "apt-get install $pkgs in the $suite chroot failed (see $CACHE/chroot-$suite.log)"
    printf '%s\n%s\n' "$(head -n 1 "$stamp")" "$pkgs" >"$stamp.new"
    mv "$stamp.new" "$stamp"
}

ensure() {
    local dir=$CACHE/chroot-$suite stamp=$CACHE/chroot-$suite.done
    local pkgs
    pkgs=$(packages "$suite") || die "unknown suite '$suite' (trixie, sid)"
    if complete && [ "$(sed -n 2p "$stamp")" = "$pkgs" ]; then
        echo "$dir"
        return 0
    fi
    [ "$(id -u)" = 0 ] || cannot "not root (debootstrap and chroot need it)"
    command -v debootstrap >/dev/null || cannot "debootstrap is not installed (apt-get install debootstrap)"
    command -v unshare >/dev/null || cannot "unshare (util-linux) is not installed"
    unshare --mount true 2>/dev/null || cannot "no mount namespaces here (unshare --mount failed)"
    mkdir -p "$CACHE" || cannot "cannot create $CACHE"
    exec 9>"$CACHE/chroot-$suite.lock"
    flock 9
    # Someone else may have finished it while we waited for the lock.
    if complete; then
        [ "$(sed -n 2p "$stamp")" = "$pkgs" ] || add_packages "$dir" "$stamp" "$pkgs"
        echo "$dir"
        return 0
    fi
    local log=$CACHE/chroot-$suite.log t0=$SECONDS
    rm -f "$stamp"
    if [ -e "$dir" ]; then
        echo "$me: $dir is incomplete (no $stamp): rebuilding it" >&2
        rm -rf --one-file-system "$dir"
    fi
    echo "$me: building the $suite chroot in $dir (once per machine; log in $log)" >&2
    : >"$log"
    if ! debootstrap --variant=minbase "$suite" "$dir" "$MIRROR" >>"$log" 2>&1; then
        tail -n 5 "$log" >&2
        cannot "debootstrap $suite failed (see $log)"
    fi
    echo "$me: debootstrap done after $((SECONDS - t0)) s" >&2
    # deb-src too, for gen-layout.sh's `apt-get source ghc`.
    printf 'deb %s %s main\ndeb-src %s %s main\n' "$MIRROR" "$suite" "$MIRROR" "$suite" \
        >"$dir/etc/apt/sources.list"
    # sid's Release file is valid for a week only: a mirror that lags (or a
    # machine whose clock runs ahead) would refuse it. Signatures are still
    # checked.
    echo 'Acquire::Check-Valid-Until "false";' >"$dir/etc/apt/apt.conf.d/99hsspy"
    # shellcheck disable=SC2086 # pkgs is a word list
    if ! in_ns "$dir" chroot "$dir" /usr/bin/env DEBIAN_FRONTEND=noninteractive \
        /bin/sh -c "apt-get update -q && apt-get install -y -q --no-install-recommends $pkgs && apt-get clean" \
        >>"$log" 2>&1; then
        tail -n 5 "$log" >&2
        cannot "apt-get install $pkgs in the $suite chroot failed (see $log)"
    fi
    local ver
    ver=$(in_ns "$dir" chroot "$dir" ghc --numeric-version 2>>"$log") ||
        cannot "ghc does not run in the $suite chroot (see $log)"
    echo "$me: $suite chroot complete after $((SECONDS - t0)) s, $(du -sh --one-file-system "$dir" | cut -f1)" >&2
    printf '%s\n%s\n' "$ver" "$pkgs" >"$stamp"
    complete || exit 77
    echo "$dir"
}

# exec: the command runs as in a minimal container: a private mount
# namespace whose root is the chroot (pivot_root, not chroot), so that, as
# for a container, the paths in its /proc/PID/maps are its own
# ("/usr/lib/x86_64-linux-gnu/libc.so.6", which on the host is bookworm's
# libc, not trixie's) and only /proc/PID/root leads to its files. Everything
# but the final exec happens in this shell, so the command keeps its PID
# (unshare without --fork, and sh, exec).
run() {
    local dir=$CACHE/chroot-$suite binds=() wd=/
    [ -f "$CACHE/chroot-$suite.done" ] || die "the $suite chroot is not built (tests/chroot.sh ensure $suite)"
    while [ $# -gt 0 ]; do
        case $1 in
        -b) binds+=("$2"); shift 2 ;;
        -w) wd=$2; shift 2 ;;
        --) shift; break ;;
        *) die "exec: unknown option $1" ;;
        esac
    done
    [ $# -gt 0 ] || die "exec: no command"
    exec unshare --mount --propagation private -- /bin/sh -c '
        dir=$1 wd=$2 nb=$3; shift 3
        mount --bind "$dir" "$dir" && mount -t proc proc "$dir/proc" || exit 126
        while [ "$nb" -gt 0 ]; do
            src=${1%%:*} dst=$dir${1#*:}
            mkdir -p "$dst" && mount --bind "$src" "$dst" || exit 126
            nb=$((nb - 1)); shift
        done
        cd "$dir" && mkdir -p .oldroot && pivot_root . .oldroot || exit 126
        exec /bin/sh -c "umount -l /.oldroot && cd \"\$0\" && exec \"\$@\"" "$wd" "$@"' \
        sh "$dir" "$wd" "${#binds[@]}" "${binds[@]}" "$@"
}

source_dir() {
    local dir
    dir=$(ensure)
    exec 9>"$CACHE/chroot-$suite.lock"
    flock 9
    local top=$dir/usr/src/hsspy-ghc-src have
    have=$(ls -d "$top"/ghc-*/ 2>/dev/null | head -n 1 || true)
    if [ -z "$have" ]; then
        in_ns "$dir" chroot "$dir" /bin/sh -c '
            apt-get install -y -q --no-install-recommends dpkg-dev xz-utils patch >/dev/null' >&2 ||
            die "cannot install dpkg-dev in $suite"
        mkdir -p "$top"
        if ! in_ns "$dir" chroot "$dir" /bin/sh -c 'cd /usr/src/hsspy-ghc-src && apt-get source -q ghc' \
            >"$top/apt-get-source.log" 2>&1; then
            # Seen on a mirror: the .dsc (and the upstream .asc) missing
            # while the tarballs are there. Fetch the tarballs the signed
            # Sources index lists, check their sha256 against it, and unpack
            # them as dpkg-source would (upstream, then debian/patches).
            echo "$me: apt-get source ghc failed in $suite ($(grep '^E:' "$top/apt-get-source.log" | head -n 1)); unpacking the tarballs by hand" >&2
            fetch_source "$dir" "$top" || die "cannot get the ghc sources of $suite"
        fi
        have=$(ls -d "$top"/ghc-*/ | head -n 1)
    fi
    echo "${have%/}"
}

# fetch_source CHROOT TOP: the upstream and debian tarballs of the suite's
# ghc, verified against the Sources index, unpacked and patched under TOP.
fetch_source() {
    local dir=$1 top=$2 ver dirpart f sum size orig="" deb=""
    in_ns "$dir" chroot "$dir" apt-cache showsrc ghc >"$top/showsrc" || return 1
    ver=$(sed -n 's/^Version: //p' "$top/showsrc" | head -n 1)
    dirpart=$(sed -n 's/^Directory: //p' "$top/showsrc" | head -n 1)
    while read -r sum size f; do
        case $f in
        *.orig.tar.*[!c]) orig=$f ;;
        *.debian.tar.*) deb=$f ;;
        *) continue ;;
        esac
        curl -fsS -o "$top/$f" "$MIRROR/$dirpart/$f" || return 1
        echo "$sum  $top/$f" | sha256sum -c --quiet - || return 1
    done < <(awk '/^Checksums-Sha256:/ { on = 1; next } /^[^ ]/ { on = 0 } on { print $1, $2, $3 }' \
                 "$top/showsrc" | awk '!seen[$3]++')
    [ -n "$orig" ] && [ -n "$deb" ] || return 1
    local up=${ver%-*} src
    src=$top/ghc-${up#*:}
    mkdir -p "$src"
    tar -xf "$top/$orig" -C "$src" --strip-components=1 || return 1
    tar -xf "$top/$deb" -C "$src" || return 1
    if [ -f "$src/debian/patches/series" ]; then
        local p
        grep -v '^#' "$src/debian/patches/series" | awk 'NF { print $1 }' | while read -r p; do
            patch -s -d "$src" -p1 <"$src/debian/patches/$p" || exit 1
        done || return 1
    fi
}

# layout: the generated table on stdout. The probe is compiled by the
# chroot's cc against the chroot's glibc: the RTS structures embed pthread
# types, and the GHC's own toolchain is the one that built its RTS.
layout() {
    local dir src ver inc here
    here=$(cd "$(dirname "$0")/.." && pwd)
    src=$(source_dir)
    dir=$CACHE/chroot-$suite
    ver=$(in_ns "$dir" chroot "$dir" ghc --numeric-version)
    inc=$(cd "$dir" && ls -d usr/lib/ghc*/lib/*/rts-*/include 2>/dev/null | head -n 1)
    [ -n "$inc" ] || die "no installed rts include dir in the $suite chroot"
    run -b "$here/haskell-stack:/hsspy/haskell-stack" -- /usr/bin/env \
        GEN_LAYOUT_VIA="tests/chroot.sh layout $suite" \
        sh /hsspy/haskell-stack/gen-layout.sh "${src#"$dir"}" "/$inc" "$ver"
}

[ $# -ge 2 ] || die "usage: $0 ensure|exec|source|clean SUITE ..."
cmd=$1 suite=$2
shift 2
case $cmd in
ensure) ensure ;;
exec) run "$@" ;;
source) source_dir ;;
layout) layout ;;
expected) expected_ghc "$suite" ;;
version)
    [ -s "$CACHE/chroot-$suite.done" ] || die "the $suite chroot is not built"
    head -n 1 "$CACHE/chroot-$suite.done"
    ;;
clean)
    exec 9>"$CACHE/chroot-$suite.lock"
    flock 9
    rm -f "$CACHE/chroot-$suite.done"
    rm -rf --one-file-system "$CACHE/chroot-$suite"
    ;;
*) die "unknown command '$cmd'" ;;
esac
