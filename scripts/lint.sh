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
# The tool is built in unity batches (tools/CMakeLists.txt): the database has the batches,
# not its .cpp files, and each batch is linted whole (what is compiled is what is checked;
# CLI11 and nlohmann-json are parsed once a batch, not once a file: 74 s instead of ~550 s).
unity=$(python3 -c 'import json, sys; print(" ".join(e["file"] for e in json.load(open(sys.argv[1])) if "/zipc_tool.dir/Unity/" in e["file"]))' "$build/db/compile_commands.json")
if [ -n "${LINT_FILES:-}" ]; then
  files=$LINT_FILES
else
  files=$(git ls-files 'src/*.cpp' 'tools/*.cpp' 'bridge/*.cpp' 'tests/*.cpp' 'examples/*.cpp' 'python/src/*.cpp' |
    grep -vE '^tests/(typed/compile_fail|install/consumer)/')
fi
if [ -n "$unity" ]; then
  # A file of the tool in a batch stands for its batches; without one, no batch
  # is linted. A file kept out of the batches (cmd_exporter.cpp) has its own
  # entry in the database and is linted itself.
  alone=$(python3 -c 'import json, sys; print("\n".join(e["file"].removeprefix(sys.argv[2] + "/") for e in json.load(open(sys.argv[1])) if "/tools/zipc/" in e["file"] and e["file"].endswith(".cpp")))' "$build/db/compile_commands.json" "$root")
  tool=$(echo "$files" | tr ' ' '\n' | grep '^tools/zipc/.*\.cpp$' || true)
  { [ -n "$tool" ] && echo "$tool" | grep -qvxF "${alone:-/}"; } || unity=""
  files="$(echo "$files" | tr ' ' '\n' | grep -v '^tools/zipc/.*\.cpp$' || true) $(echo "$tool" | grep -xF "${alone:-/}" || true)"
fi
# Headers are checked through the files that include them; generated ones (under build/) are not ours.
filter="^$root/(include|src|tools|bridge|tests|examples|python/src)/"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
start=$SECONDS
# A batch lives under build/, so the tool's own .clang-tidy (tools/: no concurrency-mt-unsafe)
# is said here, and a batch's includes of .cpp files are its nature, not a finding.
# (run-clang-tidy given no file lints the whole database: each pass runs only with files.)
lint_files() {
  [ -z "$files" ] || run-clang-tidy-14 -quiet -p "$build/db" -j "$jobs" -header-filter "$filter" $files
}
lint_unity() {
  [ -z "$unity" ] || run-clang-tidy-14 -quiet -p "$build/db" -j "$jobs" -header-filter "$filter" \
    -checks=-concurrency-mt-unsafe,-bugprone-suspicious-include $unity
}
if lint_files >"$out" 2>&1 && lint_unity >>"$out" 2>&1; then
  echo "lint: clang-tidy clean ($(echo $files $unity | wc -w) files, $((SECONDS - start)) s on $jobs jobs)"
else
  sed -i 's/\x1b\[[0-9;]*m//g' "$out"
  grep -E '(warning|error):' "$out" | sort -u | head -100
  echo "lint: clang-tidy found $(grep -E '(warning|error):' "$out" | sort -u | wc -l) problems ($((SECONDS - start)) s)"
  exit 1
fi
