# ghc_napping - 200 bound threads (forkOS) napping in safe foreign calls,
# 5 ms at a time, while a Haskell thread computes: some 40,000 switches a
# second, whose records fill the per-CPU events' rings while a tick reads
# the napping threads without stopping them. A ring full drops records,
# and the kernel tells of it only once it has room again: until then, a
# thread given a CPU while its records were dropped seemed not to have run,
# and was read while it ran, its stack from one instant and its registers
# (those it left its CPU with last) from another: samples of the nap with
# the nap's frame alone, [idle] or [rts], 2 to 220 of some 17,000 in each
# of four recordings at 199 Hz (elsewhere, one repeated, as the idle place
# it seemed, for 110 samples of a thread). A full ring is a loss now: every
# sample of a nap is the whole call, [safe-ffi], down to the C function
# Haskell called. Attached, as a user would to a running server.
# alone: fills the per-CPU rings with 40,000 switches a second, on CPUs it needs to itself
. "$(dirname "$0")/../lib.sh"
require_ptrace

prog=$(build_hs napping napping.hs napping_c.c -- -O -threaded -rtsopts) ||
    { fail "build" "ghc could not build napping.hs"; exit 0; }
bg "$prog" 200 8 +RTS -N2 -RTS >"$T/out"
pid=$!
wait_for_line "$T/out" '^ready$' || { fail "setup" "napping did not start"; exit 0; }
sleep 0.5
"$HSSPY" record -q -F 199 -d 3 --threads --idle -o "$T/nap.folded" -p "$pid" 2>"$T/err"
check_status "record" $? "$T/err"
naps=$(count_matching "$T/nap.folded" ';clock_nanosleep [0-9]+$')
whole=$(count_matching "$T/nap.folded" '^tid [0-9]+ \([^)]*\);\[safe-ffi\];.*;napping_nap;usleep;(__nanosleep;)?clock_nanosleep [0-9]+$')
check "naps-whole" "$whole of $naps samples of the naps are the whole call, [safe-ffi]: $(grep -E ';clock_nanosleep [0-9]+$' "$T/nap.folded" | grep -Ev ';napping_nap;usleep;' | sort -t' ' -k3 -rn | head -n 3 | cut -c1-200 | tr '\n' '|')" \
    test "$naps" -ge 5000 -a "$whole" -eq "$naps"
# The nappers are bound threads, each its own Haskell thread's, not the
# runtime's workers (before: "safe-FFI worker", as a worker in a call).
"$HSSPY" dump -p "$pid" >"$T/dump" 2>"$T/err"
check_status "dump" $? "$T/err"
bound=$(grep -c '^thread [0-9]* (napping): bound thread (in safe calls), ' "$T/dump")
check "nappers-bound" "$bound of 200 nappers are bound threads in safe calls: $(grep -m 3 '^thread' "$T/dump" | tr '\n' '|')" \
    test "$bound" -ge 190
