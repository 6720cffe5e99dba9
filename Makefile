# hsspy - a sampling profiler for running GHC Haskell programs.
#
#   make            build ./hsspy
#   make check      install missing Debian packages, build, make the GHC
#                   chroots if missing, run every test
#   make demo       profile the bundled demo program (flame graph + report)
#   make bench      overhead, pause, rate, report-time and memory figures
#                   against the goals (QUICK=1 for a short look; see
#                   tests/bench/bench.sh for ROUNDS, SCALE, RSS_MINUTES)
#   make install    PREFIX=/usr/local DESTDIR=

CC      ?= cc
CFLAGS  ?= -O2 -g
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man

VERSION := 0.1.0
HS_CFLAGS := -std=gnu11 -Wall -Wextra -Wshadow -Werror -I. -MMD -MP -DHSSPY_VERSION='"$(VERSION)"'
LDLIBS  := -lunwind-generic -lunwind -ldw -lelf -lz -lzstd -lm

B := build
DIRS := sampler symbolizer haskell-stack out
SRC := $(foreach d,$(DIRS),$(wildcard $(d)/*.c))
OBJ := $(SRC:%.c=$(B)/%.o)
LIBOBJ := $(filter-out $(B)/sampler/hsspy.o,$(OBJ))

UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)

WORKLOADS_C := $(wildcard tests/workloads/*.c)
WORKLOAD_BIN := $(WORKLOADS_C:tests/workloads/%.c=$(B)/workloads/%) \
                $(B)/workloads/symtest_pie $(B)/workloads/symtest_nopie $(B)/workloads/chains_static \
                $(B)/workloads/cxx $(B)/workloads/hs/calib

all: hsspy

hsspy: $(OBJ)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(HS_CFLAGS) $(CFLAGS) -c -o $@ $<

$(B)/tests/%: tests/unit/%.c $(LIBOBJ)
	@mkdir -p $(dir $@)
	$(CC) $(HS_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBOBJ) $(LDLIBS)

# Test workloads: plain C programs with known call chains. Built without
# frame pointers on purpose: the unwinder must use CFI, as on real systems.
$(B)/workloads/%: tests/workloads/%.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -fomit-frame-pointer -fno-inline -fno-optimize-sibling-calls -pthread -o $@ $<

# C++, whose names are demangled.
$(B)/workloads/cxx: tests/workloads/cxx.cpp
	@mkdir -p $(dir $@)
	$(CXX) -O1 -g -fomit-frame-pointer -fno-inline -fno-optimize-sibling-calls -o $@ $<

# The symbol lookup test needs one executable of each kind.
$(B)/workloads/symtest_pie: tests/workloads/symtest.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -fPIE -pie -o $@ $<

$(B)/workloads/symtest_nopie: tests/workloads/symtest.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -fno-pie -no-pie -o $@ $<

# A GHC program whose runtime symbols a unit test reads (test_rts_ranges),
# built as ghc_calibrated builds it (tests/lib.sh, build_hs: the same
# output, flags and sources), which then finds it current.
$(B)/workloads/hs/calib: tests/workloads/hs/calib.hs tests/workloads/hs/calib_c.c
	@mkdir -p $(B)/workloads/hs/obj-calib
	cd tests/workloads/hs && ghc -v0 -outputdir $(abspath $(B)/workloads/hs/obj-calib) \
	    -o $(abspath $@) -O2 -threaded -rtsopts $(notdir $^)

# chains linked statically: its CFI in .eh_frame, with no .eh_frame_hdr.
$(B)/workloads/chains_static: tests/workloads/chains.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -fomit-frame-pointer -fno-inline -fno-optimize-sibling-calls -pthread -static \
	    -o $@ $<

# GMP's assembly routines, without unwind information, under C callers.
$(B)/workloads/bignum: tests/workloads/bignum.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -fomit-frame-pointer -fno-inline -fno-optimize-sibling-calls -o $@ $< -lgmp

# Cost centres read from a file: a PIE, so its pointers are relocated.
$(B)/workloads/ccfile: tests/workloads/ccfile.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -fPIE -pie -o $@ $<

# The fuzzer: every library object again, with AddressSanitizer and
# UndefinedBehaviorSanitizer, any finding fatal.
SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
ASANOBJ := $(LIBOBJ:$(B)/%.o=$(B)/asan/%.o)

$(B)/asan/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(HS_CFLAGS) -O1 -g $(SAN) -c -o $@ $<

$(B)/fuzz/fuzz: tests/fuzz/fuzz.c $(ASANOBJ)
	@mkdir -p $(dir $@)
	$(CC) $(HS_CFLAGS) -O1 -g $(SAN) -o $@ $< $(ASANOBJ) $(LDLIBS)

fuzzer: $(B)/fuzz/fuzz

# make bench's tool that makes a raw file of a given number of samples.
$(B)/bench/raw_resize: tests/bench/raw_resize.c $(LIBOBJ)
	@mkdir -p $(dir $@)
	$(CC) $(HS_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBOBJ) $(LDLIBS)

# make bench's control: a loop that takes hsspy's CPU and does nothing else.
$(B)/bench/burn: tests/bench/burn.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $<

# make bench's floor: what the machine charges for a stop, without hsspy.
$(B)/bench/stopcost: tests/bench/stopcost.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -Wall -Wextra -Werror $(CFLAGS) $(LDFLAGS) -o $@ $<

deps:
	@tests/deps.sh

unit: $(UNIT_BIN)

workloads: $(WORKLOAD_BIN)

# The GHC versions the tests cover: the host's, and those of Debian chroots
# (tests/chroot.sh: trixie's 9.6.6, sid's 9.10.3) built once per machine
# outside the repository; where they cannot be built, their tests SKIP and
# say why (HSSPY_REQUIRE_GHC_VERSIONS=1, as in CI, makes that a failure).
ghc-targets:
	@tests/ghc-targets.sh >/dev/null

check: deps
	@$(MAKE) --no-print-directory -j$$(nproc) hsspy unit workloads fuzzer ghc-targets
	@tests/run.sh

# Longer runs than make check affords: a million fuzzed memory images and
# raw files, hundreds of SIGKILLs. Prints figures for the README.
stress: deps
	@$(MAKE) --no-print-directory hsspy workloads fuzzer
	@tests/stress.sh

demo:
	@tests/deps.sh demo
	@$(MAKE) --no-print-directory hsspy
	@tests/demo.sh

bench: deps
	@$(MAKE) --no-print-directory hsspy $(B)/bench/raw_resize $(B)/bench/burn $(B)/bench/stopcost $(B)/workloads/waiters $(B)/workloads/nappers
	@tests/bench/bench.sh

install: hsspy
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 755 hsspy $(DESTDIR)$(BINDIR)/hsspy
	install -m 644 hsspy.1 $(DESTDIR)$(MANDIR)/man1/hsspy.1

clean:
	rm -rf $(B) hsspy

.PHONY: all deps unit workloads fuzzer ghc-targets check stress demo bench install clean

-include $(OBJ:.o=.d) $(UNIT_BIN:=.d) $(ASANOBJ:.o=.d) $(B)/bench/raw_resize.d
