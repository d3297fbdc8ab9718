#!/usr/bin/env bash
# usage: check-lean-build.sh SOURCE_DIR CMAKE CXX CC
# What a user who wants only zipc configures: tests, benchmarks and bridge
# off must leave the library (static and shared) and the zipc tool as the
# only things built. Configures a scratch build directory; compiles nothing.
set -euo pipefail
source_dir=$1 cmake=$2 cxx=$3 cc=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$cmake" -S "$source_dir" -B "$work" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_C_COMPILER="$cc" \
  -DZIPC_BUILD_TESTS=OFF -DZIPC_BUILD_BENCH=OFF -DZIPC_BUILD_BRIDGE=OFF >"$work/configure.log" 2>&1 || {
  cat "$work/configure.log"
  exit 1
}
# Every program or library the default target links.
linked=$(ninja -C "$work" -t targets all | awk -F': ' '$2 ~ /LINKER/ {print $1}' | sort)
echo "linked by default:" $linked
extra=$(echo "$linked" | grep -vxE 'libzipc\.a|libzipc\.so\.[0-9.]+|tools/zipc' || true)
if [ -n "$extra" ]; then echo "more than the library and the tool:" $extra; exit 1; fi
echo "$linked" | grep -qx 'libzipc\.a' || { echo "libzipc.a is not built"; exit 1; }
echo "$linked" | grep -qE '^libzipc\.so\.' || { echo "libzipc.so is not built"; exit 1; }
echo "objects compiled: $(ninja -C "$work" -t targets all | grep -c 'COMPILER')"
