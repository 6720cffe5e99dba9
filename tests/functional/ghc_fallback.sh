# ghc_fallback - a GHC program whose Haskell side hsspy cannot read (an
# unsupported GHC version, a stripped executable, a -dynamic build) gets one
# clear line saying so and what to do, a C-only profile (still showing the C
# function an unsafe call is in), and exit status 3. A plain C program is no
# error at all. A program attached as it exits says so.
. "$(dirname "$0")/../lib.sh"
require_ptrace

prog=$(build_hs fibffi-threaded-O2-nog fibffi.hs fibffi_c.c -- -O2 -rtsopts -threaded) ||
    { fail "build" "ghc could not build fibffi.hs"; exit 0; }

TAG_ROOT='^\[(haskell|unsafe-ffi|safe-ffi|gc|rts|idle)\][; ]'

# fallback NAME REGEX BINARY LEAF: one stderr line matching REGEX, exit 3,
# no tags, and LEAF (a regex) as a leaf of the C-only profile.
fallback() {
    local name=$1 re=$2 bin=$3 leaf=$4
    "$HSSPY" record -q -F 199 -o "$T/$name.folded" -- "$bin" 1 2>"$T/$name.err"
    local rc=$?
    check "$name-exit-3" "exit status $rc (expected 3)" test $rc -eq 3
    check "$name-one-line" "$(wc -l <"$T/$name.err") lines: $(tr '\n' '|' <"$T/$name.err")" \
        test "$(wc -l <"$T/$name.err")" -eq 1
    check "$name-message" "message '$(cat "$T/$name.err")' does not match /$re/" \
        grep -Eq -- "$re" "$T/$name.err"
    # (A tag, not any bracketed name: a C stack can start with [unknown].)
    check "$name-c-only" "tag frames in a C-only profile: $(grep -E "$TAG_ROOT" "$T/$name.folded" | head -n 2 | tr '\n' '|')" \
        test "$(grep -c -E "$TAG_ROOT" "$T/$name.folded")" -eq 0
    check "$name-c-leaf" "no $leaf leaf in the C-only profile" \
        has_line "$T/$name.folded" ";$leaf [0-9]+\$"
}

# An unsupported version: the same binary, claiming GHC 9.0.7 in .comment.
perl -pe 's/GHC 9\.0\.2/GHC 9.0.7/g' "$prog" >"$T/fake" && chmod +x "$T/fake"
fallback "unsupported-version" \
    "is a GHC 9.0.7 program, but hsspy has no RTS layout for this GHC version; supported versions: 9\\.0\\.2, 9\\.6\\.6, 9\\.10\\.3\\. Profiling C stacks only" \
    "$T/fake" fibffi_spin

# A stripped executable.
strip -o "$T/stripped" "$prog"
# (its own functions have no names left: they show as stripped+0x...)
fallback "stripped" "has no symbol table \\(stripped\\); profile an unstripped build" "$T/stripped" \
    'stripped\+0x[0-9a-f]+'

# A distribution's build: linked with -rdynamic (the runtime's exported
# symbols kept in .dynsym), then stripped of .symtab and .comment, as
# Debian's dh_strip does (Debian's pandoc is such a program). Before, it
# was not known for a GHC program at all: a stripped C program's warning
# and exit status 0.
if dist=$(build_hs fibffi-rdynamic fibffi.hs fibffi_c.c -- -O2 -rtsopts -threaded -optl-rdynamic); then
    strip -R .comment -o "$T/dist" "$dist"
    fallback "distribution-stripped" \
        "is a GHC \\(unknown version\\) program, but its executable is stripped: only the symbols its dynamic symbol table exports are left, not the runtime's own that hsspy needs \\(capabilities, my_task\\); profile an unstripped build to see Haskell stacks\\. Profiling C stacks only\\.$" \
        "$T/dist" fibffi_spin
else
    fail "distribution-stripped-build" "ghc could not build fibffi.hs with -optl-rdynamic"
fi

# Stripped of .comment too, without -rdynamic (Debian's shellcheck): no
# symbol of the runtime left, but the head of its +RTS --info table is in
# .rodata. Before, taken for a stripped C program, exit status 0.
strip -R .comment -o "$T/bare" "$prog"
fallback "stripped-no-comment" \
    "is a GHC \\(unknown version\\) program, but its executable has no symbol table \\(stripped\\); profile an unstripped build" \
    "$T/bare" 'bare\+0x[0-9a-f]+'

# Its .comment alone removed: every symbol is there, but not which GHC.
objcopy -R .comment "$prog" "$T/nocomment"
fallback "no-comment" \
    "is a GHC \\(unknown version\\) program, but its executable does not say which GHC built it \\(its \\.comment section was removed\\)" \
    "$T/nocomment" fibffi_spin

# Built with -dynamic (when this GHC has the shared libraries).
if dyn=$(build_hs fibffi-dyn fibffi.hs fibffi_c.c -- -O2 -rtsopts -threaded -dynamic 2>/dev/null); then
    fallback "dynamic" "linked with -dynamic.*link it statically" "$dyn" fibffi_spin
    # Without .comment (a distribution's -dynamic build, such as Debian's
    # ghc): known by the runtime it loads, libHSrts*-ghcVERSION.so, which
    # also gives the version. (Before, taken for a C program: no word, exit
    # status 0, its Haskell code unwound as C.)
    objcopy -R .comment "$dyn" "$T/dyn-nocomment"
    fallback "dynamic-no-comment" "is a GHC 9\.[0-9.]+ program, but it was linked with -dynamic.*link it statically" \
        "$T/dyn-nocomment" fibffi_spin
else
    skip "dynamic" "this GHC cannot link -dynamic (no shared Haskell libraries installed)"
fi

# A launched program over before its first sample: one line saying so,
# before the last one (what was written where), exit status 3. (Before:
# after the last line, "could not be validated before the recording ended
# (it had not started)", though it had run and ended.)
if quick=$(build_hs quick quick.hs -- -O0); then
    # (at 20 Hz, the first tick 45 ms or more after its start)
    "$HSSPY" record -F 20 -o "$T/quick.folded" -- "$quick" >/dev/null 2>"$T/quick.err"
    rc=$?
    check "quick-exit-3" "exit status $rc (expected 3)" test $rc -eq 3
    check "quick-message" "said: $(tr '\n' '|' <"$T/quick.err")" \
        grep -Eq "^hsspy: pid [0-9]+ exited before its GHC runtime could be read \([0-9.]+ ms after the recording began: too short for samples at 20 Hz\); the profile has C stacks only$" "$T/quick.err"
    check "quick-last-word-last" "said: $(tr '\n' '|' <"$T/quick.err")" \
        sh -c "tail -n 1 '$T/quick.err' | grep -q '^hsspy: recorded '"
else
    fail "quick-build" "ghc could not build quick.hs"
fi

# Attached as it exits: hs_exit has freed what the layout is checked on
# (GHC 9.0's array of capabilities; a threaded program's Tasks). One line
# saying the runtime has shut down, not a request to report a wrong
# layout; C stacks only, exit status 3. (Before: "capability 0 says it is
# number 0" or "the Task its my_task slot points at does not belong to the
# thread; please report this".) What free() left can still pass the
# check (the non-threaded RTS's data in 3 runs of 10 of one series, 3 in 4
# of another; a threaded program's once in a clean-clone CI run): then it
# was profiled, quietly, its samples [rts], exit status 0. Now hs_exit
# having begun (rts_shutdown) is looked at before the check: the same
# line, in every run, threaded or not.
exiting() { # NAME PROG
    local name=$1 prog=$2 pid rc
    "$prog" 1.5 >/dev/null 2>&1 &
    pid=$!
    sleep 0.3
    gdb_park host "$pid" "park-$name" "$T/$name.gdb.out" 'break exitGlobalStore
continue'
    if [ -z "$PARKED_TID" ]; then
        fail "$name-parked" "gdb did not park the program in exitGlobalStore: $(tail -n 4 "$T/$name.gdb.out" | tr '\n' '|')"
        kill -9 "$pid"; wait "$pid" 2>/dev/null; return
    fi
    "$HSSPY" record -q -F 199 -d 0.3 -o "$T/$name.folded" -p "$pid" 2>"$T/$name.err"
    rc=$?
    check "$name-exit-3" "exit status $rc (expected 3)" test $rc -eq 3
    check "$name-one-line" "$(wc -l <"$T/$name.err") lines: $(tr '\n' '|' <"$T/$name.err")" \
        test "$(wc -l <"$T/$name.err")" -eq 1
    check "$name-message" "message: $(cat "$T/$name.err")" \
        grep -Eq "is a GHC [0-9.]+ program, but its runtime has shut down \(the program is exiting\); attach to it while it runs Haskell code\. Profiling C stacks only\.$" "$T/$name.err"
    check "$name-c-leaf" "no hs_exit_;...;exitGlobalStore leaf: $(sort -t' ' -k2 -rn "$T/$name.folded" | head -n 2 | tr '\n' '|')" \
        has_line "$T/$name.folded" ';hs_exit_[^;]*;exitGlobalStore [0-9]+$'
    kill -9 "$pid"; wait "$pid" 2>/dev/null
}
exiting "exiting-threaded" "$prog"
if single=$(build_hs fibffi-single-O2-nog fibffi.hs fibffi_c.c -- -O2 -rtsopts); then
    exiting "exiting-single" "$single"
else
    fail "exiting-single-build" "ghc could not build fibffi.hs"
fi

# Not a GHC program: no complaint, status 0.
"$HSSPY" record -q -d 0.5 -o "$T/c.folded" -- "$W/chains" 1 >/dev/null 2>"$T/c.err"
rc=$?
check "c-program-status" "exit status $rc for a C program" test $rc -eq 0
check "c-program-quiet" "stderr: $(cat "$T/c.err")" test ! -s "$T/c.err"

# Nor a C program whose read-only data holds the runtime's info line, with
# a symbol table and no runtime symbol in it (before: taken for a stripped
# GHC program, exit 3; hsspy profiling hsspy so too).
"$HSSPY" record -q -d 0.5 -o "$T/rtsline.folded" -- "$W/rtsline" 1 >/dev/null 2>"$T/rtsline.err"
rc=$?
check "rts-line-c-status" "exit status $rc for a C program holding the RTS info line: $(cat "$T/rtsline.err")" test $rc -eq 0
check "rts-line-c-quiet" "stderr: $(cat "$T/rtsline.err")" test ! -s "$T/rtsline.err"
check "rts-line-c-profile" "no samples in rtsline_spin: $(head -n 2 "$T/rtsline.folded" | tr '\n' '|')" \
    has_line "$T/rtsline.folded" ';main;rtsline_spin [0-9]+$'
