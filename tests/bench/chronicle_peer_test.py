#!/usr/bin/env python3
"""The Chronicle Queue peer (bench/peers/chronicle) builds and writes valid zipc-bench rows.

    python3 tests/bench/chronicle_peer_test.py REPO_ROOT BUILD_DIR

Builds the peer as scripts/run-bench.sh does (scripts/build-java-peer.sh chronicle:
Maven fetches net.openhft:chronicle-queue into BUILD_DIR/chronicle-peer, javac
compiles; both cached), with its launcher in a directory of its own so
zipc-bench does not pick it up, then runs `zipc-bench-chronicle --smoke`: the
three topic log rows with 2,000 records each, appender and tailers in separate
JVMs, every record byte written and checked. Also checks that no queue is left
in /dev/shm. Exit 77 (skipped) when Java 17+, javac, Maven or the Maven
repository is missing.
"""
import os
import sys

from java_peer import fail, smoke_rows

EXPECTED = {("topic-log-publish", 1), ("topic-log-read", 1), ("topic-log-live", 2)}


def main():
    pid_dirs = []

    def queues_left():
        if os.path.isdir("/dev/shm"):
            pid_dirs.extend(n for n in os.listdir("/dev/shm") if n.startswith("zipcb-chronicle-"))

    rows = smoke_rows(sys.argv[1], sys.argv[2], "chronicle", queues_left)
    if isinstance(rows, int):
        return rows
    seen = set()
    for row in rows:
        key = (row.get("workload"), row.get("processes"))
        seen.add(key)
        if row.get("transport") != "chronicle-queue" or row.get("family") != "peer":
            return fail(f"{key}: transport {row.get('transport')!r}, family {row.get('family')!r}")
        if row.get("size") != 1024 or row.get("records") != 2000 or row.get("lost") != 0:
            return fail(f"{key}: size {row.get('size')}, records {row.get('records')}, lost {row.get('lost')}")
        for field in ("ms", "cpu_ms", "msgs_per_s", "gbytes_per_s"):
            value = row.get(field)
            if not isinstance(value, (int, float)) or value < 0 or (field != "cpu_ms" and value == 0):
                return fail(f"{key}: {field} is {value!r}, expected a positive number")
    if seen != EXPECTED:
        return fail(f"rows {sorted(seen)}, expected {sorted(EXPECTED)}")
    if pid_dirs:
        return fail(f"queues left in /dev/shm: {pid_dirs}")
    print(f"ok: {len(rows)} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
