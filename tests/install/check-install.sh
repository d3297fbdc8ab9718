#!/usr/bin/env bash
# usage: check-install.sh BUILD_DIR CONSUMER_SRC CXX
set -euo pipefail
build=$1 src=$2 cxx=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
echo "installed into $work/prefix"
test -f "$work/prefix/include/zipc/zipc.hpp"
ls "$work"/prefix/lib*/cmake/zipc/zipcConfig.cmake >/dev/null
ls "$work"/prefix/lib*/pkgconfig/zipc.pc >/dev/null

# 1. CMake package
cmake -S "$src" -B "$work/cmake-build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_CXX_COMPILER="$cxx" >/dev/null
cmake --build "$work/cmake-build" >/dev/null
"$work/cmake-build/zipc_consumer"

# 2. pkg-config
export PKG_CONFIG_PATH=$(ls -d "$work"/prefix/lib*/pkgconfig | head -1)
"$cxx" -o "$work/pc_consumer" "$src/main.cpp" $(pkg-config --cflags --libs zipc)
"$work/pc_consumer"
echo "install check: find_package and pkg-config consumers built and ran"
