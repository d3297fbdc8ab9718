#!/usr/bin/env bash
# Builds the API reference (`make docs`): Doxygen over include/zipc (C++ and
# the C ABI) into build/docs/cpp, pdoc over the installed Python package into
# build/docs/python (scripts/python-reference.py). Both come from the
# sources' own comments and docstrings; an undocumented public symbol fails
# the build (docs/Doxyfile, scripts/check-pydoc.py), as it fails `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
out=build/docs

rm -rf "$out/cpp" "$out/python"
mkdir -p "$out/cpp"
ZIPC_DOCS_OUT="$out/cpp" doxygen docs/Doxyfile
echo "build-docs: C++ and C reference in $out/cpp/index.html"

if ! "$PY" -c "import zipc" >/dev/null 2>&1; then
  echo "build-docs: the zipc Python package is not installed: pip install ./python (make test does), then again" >&2
  exit 1
fi
"$PY" scripts/check-pydoc.py
"$PY" scripts/python-reference.py "$out/python"
echo "build-docs: Python reference in $out/python/index.html"
