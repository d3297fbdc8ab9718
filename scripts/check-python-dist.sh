#!/usr/bin/env bash
# The Python package as a user gets it from an index: builds the sdist, copies
# it out of the clone, builds the wheel from the sdist alone, installs the
# wheel into a fresh venv and, from outside the clone, imports zipc and sends
# a message through a queue. Slow (the wheel compiles the whole library), so
# not part of `make test`: run it with `make check-python-dist`.
# Builds with the current interpreter's scikit-build-core and nanobind
# (--no-isolation: no index needed); the venv gets the wheel and nothing else.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$SECONDS

"$PY" -m build --sdist --no-isolation --outdir "$work/sdist" "$repo/python" >"$work/sdist.log" 2>&1 || {
  cat "$work/sdist.log"
  exit 1
}
sdists=("$work"/sdist/zipc-*.tar.gz)
echo "sdist: $(basename "${sdists[0]}"), $(tar tzf "${sdists[0]}" | wc -l) files"

mkdir "$work/elsewhere"
tar xzf "${sdists[0]}" -C "$work/elsewhere"
src=$(ls -d "$work"/elsewhere/zipc-*)
"$PY" -m build --wheel --no-isolation --outdir "$work/wheel" "$src" >"$work/wheel.log" 2>&1 || {
  cat "$work/wheel.log"
  exit 1
}
wheels=("$work"/wheel/zipc-*.whl)
echo "wheel: $(basename "${wheels[0]}") (from the sdist alone)"
# The library came from the sdist's zipc-lib/, not from a directory above it.
lib_src=$(grep -h '^zipc_SOURCE_DIR:STATIC=' "$src"/build/*/CMakeCache.txt | cut -d= -f2)
if [ "$lib_src" != "$src/zipc-lib" ]; then echo "the wheel built the library from '$lib_src', not $src/zipc-lib"; exit 1; fi

"$PY" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q --no-index "${wheels[0]}"
cd "$work"
"$work/venv/bin/python" - "$repo" <<'PY'
import os, sys
import zipc
where = os.path.dirname(zipc.__file__)
assert not where.startswith(sys.argv[1]), f"zipc imported from the clone: {where}"
name = f"t.pydist.{os.getpid()}"
try:
    q = zipc.Queue.create(name, block_size=64, block_count=4)
    q.send(b"hello")
    got = bytes(q.recv())
    assert got == b"hello", got
    print(f"venv: zipc {zipc.__version__} from {where}: queue round trip ok")
finally:
    zipc.Queue.remove(name)
PY
echo "python dist check: ok ($((SECONDS - start)) s)"
