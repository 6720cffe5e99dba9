#!/bin/bash
# ghc-targets.sh - which GHC versions the functional tests can use here,
# written to build/ghc-targets, one line per version:
#   SUITE VERSION ok          its programs can be built and run
#   SUITE VERSION - REASON    they cannot (the tests skip it, saying why)
# "host" is the host's own GHC (Debian 12: 9.0.2); trixie (9.6.6) and sid
# (9.10.3) are Debian chroots made by tests/chroot.sh, once per machine,
# which is the slow part the first time (about 40 and 50 s).
#
# `make check` runs this before the tests; a test finding no
# build/ghc-targets runs it itself.
set -u
cd "$(dirname "$0")/.." || exit 1
out=build/ghc-targets
mkdir -p build
{
    if v=$(ghc --numeric-version 2>/dev/null); then
        echo "host $v ok"
    else
        echo "host ? - ghc is not installed on the host"
    fi
    for s in ${HSSPY_GHC_SUITES:-trixie sid}; do
        want=$(tests/chroot.sh expected "$s")
        # (its progress shows on stderr: the first build takes a while)
        tests/chroot.sh ensure "$s" 2>&1 >/dev/null | tee "$out.err.$s" >&2
        if [ "${PIPESTATUS[0]}" = 0 ]; then
            echo "$s $(tests/chroot.sh version "$s") ok"
        else
            echo "$s $want - $(grep -v '^[EIW]:' "$out.err.$s" | tail -n 1)"
        fi
        rm -f "$out.err.$s"
    done
} >"$out.new"
mv "$out.new" "$out"
cat "$out"
