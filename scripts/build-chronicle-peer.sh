#!/usr/bin/env bash
# Builds the Chronicle Queue benchmark peer (bench/peers/chronicle) on first use and
# writes the launcher BIN/zipc-bench-chronicle, which zipc-bench runs like every
# zipc-bench-<name> program. Maven fetches net.openhft:chronicle-queue (pom.xml) into
# BUILD/chronicle-peer/lib, javac compiles the one source file; both are cached and
# redone only when pom.xml or the source is newer.
#   bash scripts/build-chronicle-peer.sh BUILD_DIR BIN_DIR
# Prints "skipped: chronicle (<why>)" and exits 77 when Java, javac or Maven is
# missing or Maven cannot resolve the artifact; exits 0 when the peer is ready.
set -uo pipefail
cd "$(dirname "$0")/.."

BUILD=${1:?usage: build-chronicle-peer.sh BUILD_DIR BIN_DIR}
BIN=${2:?usage: build-chronicle-peer.sh BUILD_DIR BIN_DIR}
SRC=bench/peers/chronicle
OUT=$BUILD/chronicle-peer
skip() {
  echo "skipped: chronicle ($1)"
  rm -f "$BIN/zipc-bench-chronicle"
  exit 77
}

# The peer's source uses Java 17 (records, switch arrows); Chronicle 2026.4 runs on it.
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
    skip "Maven could not fetch net.openhft:chronicle-queue (see $OUT/mvn.log)"
  fi
  touch "$OUT/lib.stamp"
  built=1
fi
java_src=$SRC/src/main/java/ZipcBenchChronicle.java
if [ ! -f "$OUT/classes/ZipcBenchChronicle.class" ] || [ "$java_src" -nt "$OUT/classes/ZipcBenchChronicle.class" ] ||
   [ "$OUT/lib.stamp" -nt "$OUT/classes/ZipcBenchChronicle.class" ]; then
  rm -rf "$OUT/classes"
  if ! "$JAVA_HOME/bin/javac" -nowarn --release 17 -cp "$OUT/lib/*" -d "$OUT/classes" "$java_src" 2>&1 | head -30; then
    skip "javac failed (see above)"
  fi
  built=1
fi

# The launcher: the --add-exports/--add-opens Chronicle's libraries need on
# Java 17 (Chronicle's "Java 17 support" notes), its usage analytics off.
# Child JVMs (appender, tailers) inherit the same options.
cat >"$BIN/zipc-bench-chronicle" <<LAUNCHER
#!/bin/sh
# Written by scripts/build-chronicle-peer.sh: Chronicle Queue benchmark peer (docs/design/peers.md).
exec "$JAVA_HOME/bin/java" \\
  --add-exports=java.base/jdk.internal.ref=ALL-UNNAMED --add-exports=java.base/sun.nio.ch=ALL-UNNAMED \\
  --add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED --add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED \\
  --add-opens=jdk.compiler/com.sun.tools.javac=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED \\
  --add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED \\
  --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED \\
  -Dchronicle.analytics.disable=true -Djvm.resource.tracing=false -Dslf4j.internal.verbosity=ERROR \\
  -cp "$OUT/classes:$OUT/lib/*" ZipcBenchChronicle "\$@"
LAUNCHER
chmod +x "$BIN/zipc-bench-chronicle"
if [ "$built" = 1 ]; then
  printf 'run-bench: chronicle peer built in %.1f s (Maven + javac, cached in %s)\n' \
    "$(echo "$(date +%s.%N) - $t0" | bc)" "$OUT"
fi
exit 0
