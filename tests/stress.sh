#!/bin/bash
# stress.sh - `make stress`: the long runs make check cannot afford, with
# their figures (for the README's Reliability section).
#   - a million damaged memory images through the stack walkers, and a
#     million damaged raw files through their reader, under ASan and UBSan;
#   - 300 SIGKILLs of hsspy at random moments of a 1 kHz recording.
set -u
cd "$(dirname "$0")/.."
echo "stress: fuzzing (1,000,000 iterations each)"
FUZZ_ITERATIONS=1000000 bash tests/functional/fuzz.sh
echo "stress: 300 SIGKILLs"
SIGKILL_ROUNDS=300 bash tests/functional/sigkill.sh
