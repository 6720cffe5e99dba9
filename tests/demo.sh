#!/bin/bash
# demo.sh - `make demo`: build the bundled Haskell demo, profile it with
# hsspy, and write the results to demo-out/.
set -eu
cd "$(dirname "$0")/.."
out=demo-out
mkdir -p "$out/build"
echo "demo: building tests/workloads/hs/demo.hs (with -g: exact names and source lines)"
ghc -v0 -O1 -g -threaded -rtsopts -outputdir "$out/build" -o "$out/demo" \
    tests/workloads/hs/demo.hs tests/workloads/hs/demo_c.c
echo "demo: profiling it: 5 s to folded stacks, 5 s to a flame graph, 3 s to a report (hsspy record -F 199 -- $out/demo N +RTS -N2)"
./hsspy record -q -F 199 -o "$out/profile.folded" -- "$out/demo" 5 +RTS -N2 -RTS
./hsspy record -q -F 199 -f svg -o "$out/flamegraph.svg" -- "$out/demo" 5 +RTS -N2 -RTS
./hsspy record -q -F 199 -f report -o "$out/report.txt" -- "$out/demo" 3 +RTS -N2 -RTS
echo "demo: wrote"
echo "  $out/profile.folded   folded stacks (flamegraph.pl / speedscope input)"
echo "  $out/flamegraph.svg   interactive flame graph: open it in a web browser"
echo "  $out/report.txt       per-thread report"
echo
head -n 40 "$out/report.txt"
