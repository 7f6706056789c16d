# Drives CMake: make, make check, make demo, make install PREFIX=... DESTDIR=...
BUILD ?= build
SANBUILD ?= build-san
PREFIX ?= /usr/local
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE ?= cmake

.PHONY: all everything check check-plain check-fast check-san check-yama3 stress demo bench bench-lifetime bench-stopped bench-readers bench-peers bench-attach check-peers check-speed opts install clean events-md docs format

# ptt and libptt.so only: what a user needs, in well under a minute. The test programs, the
# benchmarks and the example are built by the targets that use them ('everything').
all: $(BUILD)/CMakeCache.txt
	$(CMAKE) --build $(BUILD) -j$(JOBS) --target ptt ptt_preload

everything: $(BUILD)/CMakeCache.txt
	$(CMAKE) --build $(BUILD) -j$(JOBS)

$(BUILD)/CMakeCache.txt:
	$(CMAKE) -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_FLAGS)

# Every test: the test tools (installed from Debian's packages when missing and root), a build
# with -Werror and the tests that need its own speed and memory (label plain: the unit tests,
# the golden outputs, the end-to-end files tests/e2e/CMakeLists.txt names), then every test under
# AddressSanitizer and UBSan but the checks of the sources and docs (label source), which the
# plain pass ran. check-fast runs every test on the plain build alone.
check: check-plain check-san

check-plain:
	scripts/test-deps $(BUILD)
	$(CMAKE) -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) -DPTT_WERROR=ON -DPTT_CHECK=ON $(CMAKE_FLAGS)
	$(CMAKE) --build $(BUILD) -j$(JOBS)
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) -L plain

check-fast:
	scripts/test-deps $(BUILD)
	$(CMAKE) -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) -DPTT_WERROR=ON -DPTT_CHECK=ON $(CMAKE_FLAGS)
	$(CMAKE) --build $(BUILD) -j$(JOBS)
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

check-san:
	scripts/test-deps $(SANBUILD)
	$(CMAKE) -S . -B $(SANBUILD) -DPTT_WERROR=ON -DPTT_SANITIZE=ON -DPTT_FUZZ=ON -DPTT_CHECK=ON $(CMAKE_FLAGS)
	$(CMAKE) --build $(SANBUILD) -j$(JOBS)
	cd $(SANBUILD) && ctest --output-on-failure -j$(JOBS) -LE source

# ptt trace -p refused at Yama's ptrace_scope 3, for real: as root where the kernel has Yama.
# It sets kernel.yama.ptrace_scope to 3, which nothing but a reboot undoes (no process can be
# traced any more): for throw-away machines only (.ci/run runs it last).
check-yama3: everything
	cd $(BUILD)/tests/e2e && PTT_TEST_YAMA3=1 PTT_BUILD=$(abspath $(BUILD)) PTT_SOURCE=$(CURDIR) \
	    /usr/bin/python3 -m pytest -q -p no:cacheprovider $(CURDIR)/tests/e2e/test_attach_more.py -k yama_scope_3

# The long stress tests, not part of 'make check': 250,000 processes started as fast as they
# can, every one's end recorded exactly once (about 3 minutes).
stress: everything
	cd $(BUILD) && PTT_STRESS_TESTS=1 ctest --output-on-failure -R e2e_churn

# The names need libdw: installed (as root) and the build configured again when it is missing.
demo: $(BUILD)/CMakeCache.txt
	scripts/demo-deps $(BUILD) $(CMAKE)
	$(CMAKE) --build $(BUILD) -j$(JOBS) --target ptt ptt_preload prodcons
	$(BUILD)/bin/ptt trace -o $(BUILD)/demo.ptt -- $(BUILD)/examples/prodcons 5
	$(BUILD)/bin/ptt view --event='!MODULE_LOAD' $(BUILD)/demo.ptt
	$(BUILD)/bin/ptt view --summary $(BUILD)/demo.ptt
	$(BUILD)/bin/ptt stat $(BUILD)/demo.ptt

# The recording cost against the floor, events/s with 1, 2, 4 threads (docs/performance.md).
bench: everything
	$(BUILD)/bench/ptt-bench

# The fixed costs of a session: start, pthread_create, the stopped path (docs/performance.md,
# "Session lifetime"). BEFORE=OTHER/bin/ptt measures another build in the same rounds.
bench-lifetime: everything
	$(BUILD)/bench/ptt-lifetime --rounds=3 $(BEFORE) $(BUILD)/bin/ptt

# Instructions per call of the common calls, libptt preloaded and in a stopped session (callgrind:
# bench/stopped.sh; needs valgrind; about a minute).
bench-stopped: everything
	bench/stopped.sh $(BUILD)

# What helgrind, DRD and ThreadSanitizer report on the corpus of ptt check, against the expected
# findings, with their run times (bench/check_peers.py; needs valgrind and gcc's libtsan; about
# 8 minutes: the hanging programs run to a 10 s timeout under every tool).
# ptt check on a 30-million-event trace: events per second and memory (docs/check.md).
check-speed: everything
	bench/check_speed.sh $(BUILD)

# Every reader (view, stat, check, report, paje, export) on a 30-million-event trace: events per
# second, memory, the size of each export (docs/performance.md, "Reading"; a few minutes).
bench-readers: everything
	bench/readers.sh $(BUILD)

# ptt against LTTng-UST, uftrace, EZTrace, strace and DRD on the same pthread workloads and pigz,
# in one run, tools in turn (bench/peers/run.py; scripts/bench-deps installs them; about 20
# minutes; writes bench/results/peers.md and .json). PEERS_FLAGS=--quick: 1 run, small sizes.
bench-peers: everything
	python3 bench/peers/run.py --build $(BUILD) $(PEERS_FLAGS)

# The cost per call of ptt trace -p on a running lock loop, beside the same loop natively, under
# ptt trace --, ltrace -p and two uprobes (perf), in one run (bench/attach/run.py; root for the
# uprobes; scripts/bench-deps installs ltrace and perf; about a minute; writes
# bench/results/attach.md; docs/performance.md, "Attached").
bench-attach: everything
	python3 bench/attach/run.py --build $(BUILD) --md bench/results/attach.md $(ATTACH_FLAGS)

check-peers: everything
	python3 bench/check_peers.py --build $(BUILD) --out $(BUILD)/check_peers.md

# The Open POSIX Test Suite's pthread and semaphore tests (456), natively and under ptt trace
# --check, both runs imported into $(BUILD)/opts/runs.db and compared (ptt runs, docs/runs.md;
# about 15 minutes). OPTS: the suite's source, by default shared/opts/open_posix_testsuite in
# the nearest directory above the repository that has it. Not part of 'make check'.
OPTS ?=
opts: everything
	scripts/opts.sh $(BUILD) $(OPTS)

events-md: all
	$(CMAKE) --build $(BUILD) --target events-md

# src/cmd/usage.c, man/*.1 and the options of docs/*.md, from docs/src/*.txt (needs python3)
docs: $(BUILD)/CMakeCache.txt
	$(CMAKE) --build $(BUILD) --target docs

install: all
	$(CMAKE) --install $(BUILD) --prefix $(PREFIX)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(SANBUILD)
