#!/usr/bin/env python3
"""The Aeron IPC peer (bench/peers/aeron) builds and writes valid zipc-bench rows.

    python3 tests/bench/aeron_peer_test.py REPO_ROOT BUILD_DIR

Builds the peer as scripts/run-bench.sh does (scripts/build-java-peer.sh aeron: Maven
fetches io.aeron:aeron-all into BUILD_DIR/aeron-peer, javac compiles; both cached),
with its launcher in a directory of its own so zipc-bench does not pick it up,
then runs `zipc-bench-aeron --smoke`: four rows with a few hundred messages,
sender and receivers in separate JVMs, every payload byte written and checked.
Exit 77 (skipped) when Java 17+, javac, Maven or the Maven repository is missing.
"""
import sys

from java_peer import fail, smoke_rows
# --smoke runs one row of each workload and each of the peer's idle strategies
# (busy spin, busy yield, backoff, sleep); the full run has all nine.
EXPECTED = {("pingpong", 64, "busy"), ("pingpong", 64, "block"), ("stream", 100, "adaptive"), ("fanout-4", 100, "busy")}


def main():
    rows = smoke_rows(sys.argv[1], sys.argv[2], "aeron")
    if isinstance(rows, int):
        return rows
    seen = set()
    for row in rows:
        key = (row.get("workload"), row.get("size"), row.get("wait"))
        seen.add(key)
        if row.get("transport") != "aeron-ipc" or row.get("family") != "peer":
            return fail(f"{key}: transport {row.get('transport')!r}, family {row.get('family')!r}")
        if row.get("lost") != 0:
            return fail(f"{key}: lost {row.get('lost')} messages")
        for field in ("iterations", "msgs_per_s", "gbytes_per_s", "rt_p50_ns", "rt_p99_ns", "rt_max_ns",
                      "processes", "cpus"):
            value = row.get(field)
            if not isinstance(value, (int, float)) or value <= 0:
                return fail(f"{key}: {field} is {value!r}, expected a positive number")
        if not row["rt_p50_ns"] <= row["rt_p99_ns"] <= row["rt_max_ns"]:
            return fail(f"{key}: percentiles out of order: {row['rt_p50_ns']}, {row['rt_p99_ns']}, {row['rt_max_ns']}")
        if row.get("latency") not in ("round trip", "one way"):
            return fail(f"{key}: latency {row.get('latency')!r}")
    if seen != EXPECTED:
        return fail(f"rows {sorted(seen)}, expected {sorted(EXPECTED)}")
    print(f"ok: {len(rows)} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
