# zipc: the two commands a new user types are `make bench` and `make test`.
# Everything here is a thin front over CMake presets (CMakePresets.json).
SHELL := /bin/bash
JOBS ?= $(shell nproc)
CTEST_FLAGS ?= --output-on-failure -j$(JOBS)

.PHONY: all deps build test check-python-dist test-sanitize test-asan test-tsan test-clang test-debug lint bench bench-cite readme limits docs format format-check clean

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake --preset release >/dev/null
	@cmake --build build/release -j$(JOBS)

# deps + release build + the Python package (python/, its tests run under ctest) + every test, then proof that no test left a segment behind.
test: build
	@bash scripts/shm-snapshot.sh before
	PIP_ROOT_USER_ACTION=ignore python3 -m pip install --no-build-isolation -q ./python
	cd build/release && ctest $(CTEST_FLAGS)
	@bash scripts/format-check.sh
	@bash scripts/shm-snapshot.sh after

# The Python sdist and wheel, installed into a fresh venv away from the clone
# (a few minutes: the wheel compiles the library; not part of `make test`).
check-python-dist: deps
	@bash scripts/check-python-dist.sh

# ASan+UBSan+LeakSanitizer, -O1 with assertions on (the asan preset leaves
# NDEBUG undefined), every test, the bridge's too. The sanitizer presets
# compile with -g1: line tables and function names, what a sanitizer's stack
# trace prints, without the variables' debug information, which cost 38% of
# the compile time (a test file under ASan: 14.7 s of CPU with -g, 9.1 s with
# -g1). Debug with `make test-debug`, or reconfigure with -g. The tsan preset does not
# build the bridge: the NATS C client (libnats) is not built for TSan, which
# cannot see its synchronisation, so its tests were excluded and its build
# was CI time spent for nothing. Nor the bench harness's tests (forked
# transports; tests/bench/CMakeLists.txt), which the release and ASan legs run.

test-asan: deps
	@cmake --preset asan >/dev/null
	@cmake --build build/asan -j$(JOBS)
	cd build/asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest $(CTEST_FLAGS)

test-tsan: deps
	@cmake --preset tsan >/dev/null
	@cmake --build build/tsan -j$(JOBS)
	cd build/tsan && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 ctest $(CTEST_FLAGS)

# clang build (the second supported compiler) plus the libFuzzer targets, briefly.
test-clang: deps
	@cmake --preset clang >/dev/null
	@cmake --build build/clang -j$(JOBS)
	cd build/clang && ctest $(CTEST_FLAGS)

test-sanitize: test-asan test-tsan

# Debug build (-O0, assertions on). CI's ASan leg has the assertions on too,
# so CI does not run this one; it is here for stepping through in a debugger.
test-debug: deps
	@cmake --preset debug >/dev/null
	@cmake --build build/debug -j$(JOBS)
	cd build/debug && ctest $(CTEST_FLAGS)

# clang-tidy (.clang-tidy says which checks and why); must report nothing.
lint: deps
	@bash scripts/lint.sh

# Writes build/release/bench-results/<date>-<host>.{json,md,png} and appends the
# run's headline rows to history.jsonl there; never touches a tracked file.
bench: build
	@bash scripts/run-bench.sh

# Makes a run the README cites: copies it into bench/results/ (replacing the
# run cited before), appends it to bench/results/history.jsonl and regenerates
# the README's table: `make bench-cite RUN=build/release/bench-results/<file>.json`.
bench-cite:
	@bash scripts/bench-cite.sh $(RUN)

# The README's benchmark table, regenerated from the cited run in bench/results/
# (the file the README already names). A test checks the table matches it.
README_RESULTS ?= $(shell python3 scripts/bench-readme.py --source README.md)
readme:
	@python3 scripts/bench-readme.py $(README_RESULTS) README.md

limits: build
	@build/release/bench/zipc-limits

# The API reference (docs/api-reference.md): Doxygen (C++, C) into build/docs/cpp,
# pdoc (the installed Python package) into build/docs/python.
docs: deps
	@bash scripts/build-docs.sh

format:
	@clang-format-14 -i $$(git ls-files '*.cpp' '*.hpp' '*.h' '*.cc')

format-check:
	@bash scripts/format-check.sh

clean:
	rm -rf build
