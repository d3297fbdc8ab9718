#!/usr/bin/env bash
# usage: check-install.sh BUILD_DIR CONSUMER_SRC CXX CC
set -euo pipefail
build=$1 src=$2 cxx=$3 cc=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
echo "installed into $work/prefix"
test -f "$work/prefix/include/zipc/zipc.hpp"
test -f "$work/prefix/include/zipc/zipc.h"
libdir=$(ls -d "$work"/prefix/lib* | head -1)
test -f "$libdir/libzipc.a"
test -L "$libdir/libzipc.so"
test -L "$libdir/libzipc.so.0"
ls "$libdir"/cmake/zipc/zipcConfig.cmake "$libdir"/pkgconfig/zipc.pc "$libdir"/pkgconfig/zipc-shared.pc >/dev/null

# The shared library: its soname, and only the C ABI (zipc_*) and the C++ API
# (namespace zipc, minus zipc::platform and zipc::c_api) exported.
readelf -d "$libdir/libzipc.so" | grep 'Library soname: \[libzipc.so.0\]' >/dev/null
exported=$(nm -D --defined-only "$libdir/libzipc.so" | awk '$2 != "A" {print $3}')
stray=$(echo "$exported" | grep -vE '^(zipc_|_ZN4zipc|_ZNK4zipc|_ZT[ISV]N4zipc|_ZT[ISV]NK4zipc|_ZGVZN4zipc|_ZZN4zipc)' || true)
if [ -n "$stray" ]; then echo "libzipc.so exports more than the zipc API:"; echo "$stray" | head -20; exit 1; fi
if echo "$exported" | grep -E '^_ZN4zipc(8platform|5c_api)' >/dev/null; then echo "libzipc.so exports internals"; exit 1; fi
echo "libzipc.so: soname libzipc.so.0, $(echo "$exported" | grep -c '^zipc_') C functions, $(echo "$exported" | grep -vc '^zipc_') C++ symbols"

# 1. CMake package: a C++ program on the static library, a C program on the shared one
cmake -S "$src" -B "$work/cmake-build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_C_COMPILER="$cc" >/dev/null
cmake --build "$work/cmake-build" >/dev/null
"$work/cmake-build/zipc_consumer"
"$work/cmake-build/zipc_c_consumer"
ldd "$work/cmake-build/zipc_c_consumer" | grep "libzipc.so.0 => $libdir" >/dev/null
if ldd "$work/cmake-build/zipc_consumer" | grep libzipc >/dev/null; then echo "static consumer linked libzipc.so"; exit 1; fi

# 2. pkg-config: zipc (static, C++) and zipc-shared (C)
export PKG_CONFIG_PATH=$libdir/pkgconfig
"$cxx" -o "$work/pc_consumer" "$src/main.cpp" $(pkg-config --cflags --libs zipc)
"$work/pc_consumer"
if ldd "$work/pc_consumer" | grep libzipc >/dev/null; then echo "pkg-config zipc linked libzipc.so"; exit 1; fi
"$cc" -std=c11 -Wall -Wextra -Werror -pedantic -D_POSIX_C_SOURCE=200809L -o "$work/pc_c_consumer" "$src/main.c" \
  $(pkg-config --cflags --libs zipc-shared) -Wl,-rpath,"$libdir"
"$work/pc_c_consumer"
echo "install check: find_package and pkg-config consumers (static C++, shared C) built and ran"
