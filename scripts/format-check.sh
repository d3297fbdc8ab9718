#!/usr/bin/env bash
# Fails when a tracked C/C++ file is not formatted per .clang-format.
set -euo pipefail
cd "$(dirname "$0")/.."
cf=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$cf" ]; then echo "format-check: clang-format not installed (make deps)"; exit 1; fi
files=$(git ls-files '*.cpp' '*.hpp' '*.h' '*.cc' 2>/dev/null || true)
[ -z "$files" ] && exit 0
bad=()
for f in $files; do
  [ -f "$f" ] || continue
  if ! "$cf" --dry-run -Werror "$f" >/dev/null 2>&1; then bad+=("$f"); fi
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "format-check: not clang-formatted (run 'make format'): ${bad[*]}"
  exit 1
fi
echo "format-check: ok"
