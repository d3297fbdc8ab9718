#!/usr/bin/env bash
# Builds the Aeron IPC benchmark peer (bench/peers/aeron) on first use and
# writes the launcher BIN/zipc-bench-aeron, which zipc-bench runs like every
# zipc-bench-<name> program. Maven fetches io.aeron:aeron-all (pom.xml) into
# BUILD/aeron-peer/lib, javac compiles the one source file; both are cached and
# redone only when pom.xml or the source is newer.
#   bash scripts/build-aeron-peer.sh BUILD_DIR BIN_DIR
# Prints "skipped: aeron (<why>)" and exits 77 when Java, javac or Maven is
# missing or Maven cannot resolve the artifact; exits 0 when the peer is ready.
set -uo pipefail
cd "$(dirname "$0")/.."

BUILD=${1:?usage: build-aeron-peer.sh BUILD_DIR BIN_DIR}
BIN=${2:?usage: build-aeron-peer.sh BUILD_DIR BIN_DIR}
SRC=bench/peers/aeron
OUT=$BUILD/aeron-peer
skip() {
  echo "skipped: aeron ($1)"
  rm -f "$BIN/zipc-bench-aeron"
  exit 77
}

# Aeron 1.51 needs Java 17 or newer (class files of version 61).
JAVA_HOME=${ZIPC_BENCH_JAVA_HOME:-${JAVA_HOME:-}}
if [ -z "$JAVA_HOME" ] && command -v javac >/dev/null 2>&1; then
  JAVA_HOME=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
fi
[ -n "$JAVA_HOME" ] && [ -x "$JAVA_HOME/bin/java" ] && [ -x "$JAVA_HOME/bin/javac" ] ||
  skip "no JDK: install openjdk-17-jdk-headless, or set JAVA_HOME"
major=$("$JAVA_HOME/bin/java" -XshowSettings:properties -version 2>&1 |
  sed -n 's/^ *java.specification.version = //p')
[ "${major:-0}" -ge 17 ] 2>/dev/null || skip "Java $major at $JAVA_HOME is older than 17"
command -v mvn >/dev/null 2>&1 || skip "Maven not installed: apt-get install maven"

mkdir -p "$OUT" "$BIN"
OUT=$(cd "$OUT" && pwd)
t0=$(date +%s.%N)
built=0
if [ ! -f "$OUT/lib.stamp" ] || [ "$SRC/pom.xml" -nt "$OUT/lib.stamp" ]; then
  rm -rf "$OUT/lib"
  if ! JAVA_HOME=$JAVA_HOME mvn -q -B -f "$SRC/pom.xml" dependency:copy-dependencies \
         -DoutputDirectory="$OUT/lib" >"$OUT/mvn.log" 2>&1; then
    tail -5 "$OUT/mvn.log"
    skip "Maven could not fetch io.aeron:aeron-all (see $OUT/mvn.log)"
  fi
  touch "$OUT/lib.stamp"
  built=1
fi
java_src=$SRC/src/main/java/ZipcBenchAeron.java
if [ ! -f "$OUT/classes/ZipcBenchAeron.class" ] || [ "$java_src" -nt "$OUT/classes/ZipcBenchAeron.class" ] ||
   [ "$OUT/lib.stamp" -nt "$OUT/classes/ZipcBenchAeron.class" ]; then
  rm -rf "$OUT/classes"
  if ! "$JAVA_HOME/bin/javac" -nowarn --release 17 -cp "$OUT/lib/*" -d "$OUT/classes" "$java_src" 2>&1 | head -30; then
    skip "javac failed (see above)"
  fi
  built=1
fi

# The launcher: the JVM options of aeron-samples/scripts/java-common, plus
# agrona.disable.bounds.checks from aeron-driver's low-latency.properties.
# Child JVMs (ping, pong, publisher, subscribers) inherit the same options.
cat >"$BIN/zipc-bench-aeron" <<LAUNCHER
#!/bin/sh
# Written by scripts/build-aeron-peer.sh: Aeron IPC benchmark peer (docs/peers.md).
exec "$JAVA_HOME/bin/java" \\
  -XX:+UnlockExperimentalVMOptions -XX:+TrustFinalNonStaticFields \\
  -XX:+UnlockDiagnosticVMOptions -XX:GuaranteedSafepointInterval=300000 -XX:+UseParallelGC \\
  --add-opens java.base/jdk.internal.misc=ALL-UNNAMED --add-opens java.base/java.util.zip=ALL-UNNAMED \\
  -Dagrona.disable.bounds.checks=true -Daeron.print.configuration=false \\
  -cp "$OUT/classes:$OUT/lib/*" ZipcBenchAeron "\$@"
LAUNCHER
chmod +x "$BIN/zipc-bench-aeron"
if [ "$built" = 1 ]; then
  printf 'run-bench: aeron peer built in %.1f s (Maven + javac, cached in %s)\n' \
    "$(echo "$(date +%s.%N) - $t0" | bc)" "$OUT"
fi
exit 0
