#!/usr/bin/env bash
# clang-tidy over the library, the tool and the public headers (the checks and why some are
# off: .clang-tidy). Uses the debug build's compile_commands.json (configured if missing).
# Exits non-zero on any finding.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/debug
if [ ! -f "$build/compile_commands.json" ]; then
  cmake --preset debug >/dev/null
fi
files=$(git ls-files 'src/*.cpp' 'tools/*.cpp' 'bridge/*.cpp')
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# LTO flags mean nothing to clang; the debug build has none, but be safe.
if run-clang-tidy-14 -quiet -p "$build" -j "$(nproc)" $files >"$out" 2>&1; then
  echo "lint: clang-tidy clean ($(echo $files | wc -w) files)"
else
  grep -E '(warning|error):' "$out" | sort -u | head -100
  echo "lint: clang-tidy found $(grep -cE '(warning|error):' "$out") problem lines"
  exit 1
fi
