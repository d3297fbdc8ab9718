#!/usr/bin/env bash
# Builds a Java benchmark peer (bench/peers/NAME) on first use and writes the
# launcher BIN/zipc-bench-NAME, which zipc-bench runs like every
# zipc-bench-<name> program. Maven fetches the dependencies of
# bench/peers/NAME/pom.xml into BUILD/NAME-peer/lib, javac compiles the one
# source file in bench/peers/NAME/src/main/java; both are cached and redone only
# when the pom or the source is newer. The launcher runs the JVM with the
# options in bench/peers/NAME/jvm.options (where each comes from is noted there).
#   bash scripts/build-java-peer.sh NAME BUILD_DIR BIN_DIR     (NAME: aeron, chronicle)
# Prints "skipped: NAME (<why>)" and exits 77 when Java, javac or Maven is
# missing or Maven cannot resolve the artifacts; exits 0 when the peer is ready.
set -uo pipefail
cd "$(dirname "$0")/.."

usage="usage: build-java-peer.sh NAME BUILD_DIR BIN_DIR"
NAME=${1:?$usage}
BUILD=${2:?$usage}
BIN=${3:?$usage}
SRC=bench/peers/$NAME
OUT=$BUILD/$NAME-peer
skip() {
  echo "skipped: $NAME ($1)"
  rm -f "$BIN/zipc-bench-$NAME"
  exit 77
}
java_src=$(ls "$SRC"/src/main/java/*.java 2>/dev/null)
if [ ! -f "$SRC/pom.xml" ] || [ ! -f "$SRC/jvm.options" ] || [ "$(echo "$java_src" | wc -w)" != 1 ]; then
  echo "build-java-peer.sh: $SRC needs pom.xml, jvm.options and one src/main/java/*.java" >&2
  exit 2
fi
class=$(basename "$java_src" .java)

# The peers' sources use Java 17 (records, switch arrows); Aeron 1.51's class files need 17 too.
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
    skip "Maven could not fetch the dependencies of $SRC/pom.xml (see $OUT/mvn.log)"
  fi
  touch "$OUT/lib.stamp"
  built=1
fi
if [ ! -f "$OUT/classes/$class.class" ] || [ "$java_src" -nt "$OUT/classes/$class.class" ] ||
   [ "$OUT/lib.stamp" -nt "$OUT/classes/$class.class" ]; then
  rm -rf "$OUT/classes"
  if ! "$JAVA_HOME/bin/javac" -nowarn --release 17 -cp "$OUT/lib/*" -d "$OUT/classes" "$java_src" 2>&1 | head -30; then
    skip "javac failed (see above)"
  fi
  built=1
fi

# The launcher, with the peer's JVM options; child JVMs inherit them.
options=$(grep -v '^[[:space:]]*\(#\|$\)' "$SRC/jvm.options" | sed 's/$/ \\/; s/^/  /')
{
  echo "#!/bin/sh"
  echo "# Written by scripts/build-java-peer.sh: the $NAME benchmark peer (docs/design/peers.md)."
  echo "exec \"$JAVA_HOME/bin/java\" \\"
  echo "$options"
  echo "  -cp \"$OUT/classes:$OUT/lib/*\" $class \"\$@\""
} >"$BIN/zipc-bench-$NAME"
chmod +x "$BIN/zipc-bench-$NAME"
if [ "$built" = 1 ]; then
  printf 'run-bench: %s peer built in %.1f s (Maven + javac, cached in %s)\n' \
    "$NAME" "$(echo "$(date +%s.%N) - $t0" | bc)" "$OUT"
fi
exit 0
