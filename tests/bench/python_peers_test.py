#!/usr/bin/env python3
"""Smoke test of a Python benchmark peer: `bench.py --quick --reps 1 --only NAME`
writes every row for it and no error, and leaves none of the peer's
shared-memory files behind. Exits 77 (skipped) when the peer's package is not
importable.

    python_peers_test.py SOURCE_DIR BUILD_DIR NAME MODULE [ROW,...]
"""

import importlib.util
import json
import os
import subprocess
import sys

ROWS = ("pingpong_64B", "stream_100B", "array_1MiB")
# What a peer's shared-memory files in /dev/shm end with.
SHM_SUFFIX = {"zenoh": ".zenoh"}


def peer_files(name: str) -> set:
    suffix = SHM_SUFFIX.get(name)
    return {f for f in os.listdir("/dev/shm") if f.endswith(suffix)} if suffix else set()


def main() -> int:
    src, build, name, module = sys.argv[1:5]
    rows = sys.argv[5].split(",") if len(sys.argv) > 5 else ROWS
    if importlib.util.find_spec(module) is None:
        print(f"skipped: Python package {module} is not importable (scripts/install-deps.sh installs it)")
        return 77
    out = os.path.join(build, f"python-peer-{name}-{os.getpid()}.json")
    before = peer_files(name)
    try:
        r = subprocess.run([sys.executable, os.path.join(src, "bench", "python", "bench.py"), "--quick", "--reps", "1",
                            "--only", name, "--out", out], capture_output=True, text=True, timeout=150)
        if r.returncode != 0:
            print(r.stderr)
            print(f"FAIL: bench.py exited {r.returncode}")
            return 1
        with open(out) as f:
            result = json.load(f)
    finally:
        if os.path.exists(out):
            os.unlink(out)
    failures = [f"{k}: {v}" for k, v in result["errors"].items()]
    left = sorted(peer_files(name) - before)
    if left:
        failures.append(f"left in /dev/shm: {', '.join(left)}")
    for row in rows:
        value = result["rows"].get(row, {}).get(name)
        if not value or not all(v > 0 for v in value.values()):
            failures.append(f"row {row} has no positive figure for {name}: {value}")
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print(f"{name}: rows {', '.join(rows)} written")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
