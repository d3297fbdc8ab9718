#!/usr/bin/env bash
# clang-tidy-14 over the whole tree: the library (src/), the public headers (include/zipc/),
# the tool (tools/), the NATS bridge (bridge/), the tests, the examples and the Python
# module's sources (python/src/). The checks and why some are off: .clang-tidy.
# Exits non-zero on any finding.
#
# It needs a compilation database made by clang-14 (the flags clang-tidy parses): build/lint
# is configured (no compiling, bar the typed example's generated headers), and python/ is
# configured into build/lint/python; the two databases are merged into build/lint/db. The files run in parallel on every core
# (LINT_JOBS to change). LINT_FILES="a.cpp b.cpp" lints only those files (for editing).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=build/lint
jobs=${LINT_JOBS:-$(nproc)}
# Configured again only when the set of files or a CMake file changed (a new file needs its
# compile command).
stamp=$( (git ls-files; git ls-files -s -- '*CMakeLists.txt' '*.cmake' CMakePresets.json scripts/lint.sh) | sha1sum | cut -d' ' -f1)
if [ "$(cat "$build/db/stamp" 2>/dev/null)" != "$stamp" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++-14 \
    -DCMAKE_C_COMPILER=clang-14 -DZIPC_BUILD_BENCH=OFF -DZIPC_BUILD_FUZZ=ON >/dev/null
  cmake -S python -B "$build/python" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DCMAKE_CXX_COMPILER=clang++-14 \
    -DCMAKE_C_COMPILER=clang-14 >/dev/null
  mkdir -p "$build/db"
  python3 - "$build" <<'PY'
import json, sys
b = sys.argv[1]
db = json.load(open(f"{b}/compile_commands.json")) + json.load(open(f"{b}/python/compile_commands.json"))
seen, out = set(), []
for e in db:
    if e["file"] not in seen:
        seen.add(e["file"])
        out.append(e)
json.dump(out, open(f"{b}/db/compile_commands.json", "w"), indent=1)
PY
  echo "$stamp" >"$build/db/stamp"
fi
# The typed examples include the headers flatc and protoc generate.
# (grep without -q: an early exit would SIGPIPE cmake and fail the pipeline.)
if cmake --build "$build" --target help 2>/dev/null | grep '^zipc_example_snapshot' >/dev/null; then
  cmake --build "$build" --target zipc_example_snapshot >/dev/null
fi
# Not linted: tests/typed/compile_fail (each must fail to compile) and the install test's
# consumer (an outside project, built against the installed package).
if [ -n "${LINT_FILES:-}" ]; then
  files=$LINT_FILES
else
  files=$(git ls-files 'src/*.cpp' 'tools/*.cpp' 'bridge/*.cpp' 'tests/*.cpp' 'examples/*.cpp' 'python/src/*.cpp' |
    grep -vE '^tests/(typed/compile_fail|install/consumer)/')
fi
# The tool and each test program are built in unity batches (tools/CMakeLists.txt,
# tests/CMakeLists.txt): the database has the batches, not their .cpp files, and each batch
# is linted whole (what is compiled is what is checked; GoogleTest, CLI11 and nlohmann-json
# are parsed once a batch, not once a file). A file in a batch stands for its batch; a file
# kept out of the batches (cmd_exporter.cpp) has its own entry and is linted itself. The
# batch files live under build/, so the checks their directory's .clang-tidy turns off are
# said here, and a batch's includes of .cpp files are its nature, not a finding.
eval "$(python3 - "$build/db/compile_commands.json" "$root" $files <<'PY'
import json, re, shlex, sys
db, root, wanted = sys.argv[1], sys.argv[2], set(sys.argv[3:])
entries = {e["file"] for e in json.load(open(db))}
batch_of = {}
for f in entries:
    if "/Unity/unity_" in f:
        for inc in re.findall(r'#include "([^"]+)"', open(f).read()):
            batch_of.setdefault(inc.removeprefix(root + "/"), []).append(f)
plain, tool, tests = [], set(), set()
for f in sorted(wanted):
    if f not in batch_of:
        plain.append(f)
    else:
        (tool if f.startswith("tools/") else tests).update(batch_of[f])
print("files=" + shlex.quote(" ".join(plain)))
print("tool_batches=" + shlex.quote(" ".join(sorted(tool))))
print("test_batches=" + shlex.quote(" ".join(sorted(tests))))
PY
)"
# Headers are checked through the files that include them; generated ones (under build/) are not ours.
filter="^$root/(include|src|tools|bridge|tests|examples|python/src)/"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
start=$SECONDS
# (run-clang-tidy given no file lints the whole database: each pass runs only with files.)
lint_files() {
  [ -z "$files" ] || run-clang-tidy-14 -quiet -p "$build/db" -j "$jobs" -header-filter "$filter" $files
}
lint_batches() {  # checks to turn off, then the batches
  local off=$1
  shift
  [ $# -eq 0 ] || run-clang-tidy-14 -quiet -p "$build/db" -j "$jobs" -header-filter "$filter" \
    -checks=-bugprone-suspicious-include,$off "$@"
}
# (tools/.clang-tidy and tests/.clang-tidy: the checks below, off)
if lint_files >"$out" 2>&1 && lint_batches -concurrency-mt-unsafe $tool_batches >>"$out" 2>&1 &&
  lint_batches -concurrency-mt-unsafe,-performance-inefficient-vector-operation $test_batches >>"$out" 2>&1; then
  echo "lint: clang-tidy clean ($(echo $files $tool_batches $test_batches | wc -w) files, $((SECONDS - start)) s on $jobs jobs)"
else
  sed -i 's/\x1b\[[0-9;]*m//g' "$out"
  grep -E '(warning|error):' "$out" | sort -u | head -100
  echo "lint: clang-tidy found $(grep -E '(warning|error):' "$out" | sort -u | wc -l) problems ($((SECONDS - start)) s)"
  exit 1
fi
