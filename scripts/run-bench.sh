#!/usr/bin/env bash
# `make bench` (after the release build): builds the iceoryx2 and Zenoh peers
# with cargo and the Aeron peer with Maven and javac when it can, runs zipc-bench (limits
# probe first, then every workload over every transport, then the extra
# programs) and draws the charts. Everything
# it writes goes to $BUILD/bench-results/ (build/release/bench-results/ by
# default, ignored by git): it never touches a tracked file. To show a run in
# the README: make bench-cite RUN=<the new json> (docs/design/bench.md).
#   bash scripts/run-bench.sh [zipc-bench options, e.g. --full or --filter pingpong]
# Environment: ZIPC_BENCH_NO_ICEORYX2=1 and ZIPC_BENCH_NO_ZENOH=1 skip the cargo builds, ZIPC_BENCH_NO_AERON=1
# and ZIPC_BENCH_NO_CHRONICLE=1 the Maven/javac ones; ZIPC_BUILD_DIR picks the build directory (default build/release).
set -uo pipefail
cd "$(dirname "$0")/.."

BUILD=${ZIPC_BUILD_DIR:-build/release}
BIN=$BUILD/bench
if [ ! -x "$BIN/zipc-bench" ]; then
  echo "run-bench: $BIN/zipc-bench not built (run: make build)" >&2
  exit 1
fi

# Peer from crates.io: iceoryx2, a small Rust program (bench/peers/iceoryx2).
if [ "${ZIPC_BENCH_NO_ICEORYX2:-0}" = "1" ]; then
  echo "skipped: iceoryx2 (ZIPC_BENCH_NO_ICEORYX2=1)"
  rm -f "$BIN/zipc-bench-iceoryx2"
elif command -v cargo >/dev/null 2>&1; then
  echo "run-bench: building the iceoryx2 peer with cargo (first time: about a minute)"
  if cargo build --release --locked --quiet --manifest-path bench/peers/iceoryx2/Cargo.toml \
       --target-dir "$BUILD/iceoryx2-target"; then
    cp "$BUILD/iceoryx2-target/release/zipc-bench-iceoryx2" "$BIN/zipc-bench-iceoryx2"
  else
    echo "skipped: iceoryx2 (cargo build failed; see above)"
    rm -f "$BIN/zipc-bench-iceoryx2"
  fi
else
  echo "skipped: iceoryx2 (cargo not installed: https://rustup.rs, then make bench again)"
  rm -f "$BIN/zipc-bench-iceoryx2"
fi

# Peer from crates.io: Zenoh with shared memory, a small Rust program
# (bench/peers/zenoh). A big crate: the first build takes 10-30 minutes on two
# cores; cargo keeps it in $BUILD/zenoh-target, so later runs only check it.
if [ "${ZIPC_BENCH_NO_ZENOH:-0}" = "1" ]; then
  echo "skipped: zenoh (ZIPC_BENCH_NO_ZENOH=1)"
  rm -f "$BIN/zipc-bench-zenoh"
elif command -v cargo >/dev/null 2>&1; then
  echo "run-bench: building the zenoh peer with cargo (first time: 10-30 minutes)"
  t0=$(date +%s)
  if cargo build --release --locked --quiet --manifest-path bench/peers/zenoh/Cargo.toml \
       --target-dir "$BUILD/zenoh-target"; then
    cp "$BUILD/zenoh-target/release/zipc-bench-zenoh" "$BIN/zipc-bench-zenoh"
    echo "run-bench: built the zenoh peer in $(($(date +%s) - t0)) s"
  else
    echo "skipped: zenoh (cargo build failed; see above)"
    rm -f "$BIN/zipc-bench-zenoh"
  fi
else
  echo "skipped: zenoh (cargo not installed: https://rustup.rs, then make bench again)"
  rm -f "$BIN/zipc-bench-zenoh"
fi

# Peer from Maven Central: Aeron IPC, a small Java program (bench/peers/aeron),
# built on first use and cached in $BUILD/aeron-peer; it prints its build time.
if [ "${ZIPC_BENCH_NO_AERON:-0}" = "1" ]; then
  echo "skipped: aeron (ZIPC_BENCH_NO_AERON=1)"
  rm -f "$BIN/zipc-bench-aeron"
else
  bash scripts/build-java-peer.sh aeron "$BUILD" "$BIN"  # says "skipped: aeron (why)" on failure
fi

# Peer from Maven Central: Chronicle Queue, a small Java program (bench/peers/chronicle)
# for the topic log rows, built and cached the same way in $BUILD/chronicle-peer.
if [ "${ZIPC_BENCH_NO_CHRONICLE:-0}" = "1" ]; then
  echo "skipped: chronicle (ZIPC_BENCH_NO_CHRONICLE=1)"
  rm -f "$BIN/zipc-bench-chronicle"
else
  bash scripts/build-java-peer.sh chronicle "$BUILD" "$BIN"  # says "skipped: chronicle (why)" on failure
fi

host=$(hostname -s 2>/dev/null || hostname)
results=$BUILD/bench-results
base=$results/$(date -u +%F)-${host}
out=$base.json
n=1
while [ -e "$out" ]; do  # a second run the same day: -run2, -run3, ...
  n=$((n + 1))
  out=$base-run$n.json
done
md=${out%.json}.md
"$BIN/zipc-bench" --json "$out" --markdown "$md" "$@"
rc=$?
if [ ! -f "$out" ]; then
  echo "run-bench: no result file written" >&2
  exit "${rc:-1}"
fi

PY=${PYTHON:-python3}
"$PY" scripts/plot.py "$out" || echo "run-bench: charts skipped (matplotlib missing? make deps)"
"$PY" scripts/plot-probes.py "$out" || echo "run-bench: probe chart skipped"
"$PY" scripts/bench-history.py "$out" --to "$results/history.jsonl" --commit auto ||
  echo "run-bench: not added to $results/history.jsonl (see above)"
echo "run-bench: results in $out (table: $md)"
echo "run-bench: README.md unchanged; to show this run there: make bench-cite RUN=$out"
exit $rc
