#!/usr/bin/env bash
# usage: check-install.sh BUILD_DIR CONSUMER_SRC CXX CC CMAKE CPACK
# Packs the build with cpack into a .deb, unpacks it into a scratch root and
# builds and runs an outside program against it every way a user can link
# zipc: find_package, pkg_check_modules and plain pkg-config, in C and in C++,
# static and shared. `cmake --install` of the same components must give the
# same files. Nothing is built in BUILD_DIR: it packs what is there.
set -euo pipefail
build=$1 src=$2 cxx=$3 cc=$4 cmake=$5 cpack=$6
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# 1. The .deb: its control fields, its files, unpacked under $work/root.
"$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$work/deb" >"$work/cpack.log" 2>&1 || {
  cat "$work/cpack.log"
  exit 1
}
debs=("$work"/deb/*.deb)
if [ ${#debs[@]} -ne 1 ]; then echo "cpack made ${#debs[@]} packages, expected one: ${debs[*]}"; exit 1; fi
deb=${debs[0]}
echo "cpack: $(basename "$deb"): $(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version), Depends: $(dpkg-deb -f "$deb" Depends)"
dpkg-deb -f "$deb" Depends | grep -q 'liburing2' || { echo "the package does not depend on liburing2"; exit 1; }
# libzipc.so.0 goes into /usr/lib: installing and removing run ldconfig.
for script in postinst postrm; do
  dpkg-deb -I "$deb" $script | grep -q ldconfig || { echo "the package's $script does not run ldconfig"; exit 1; }
done
dpkg-deb -x "$deb" "$work/root"
prefix=$work/root/usr

# 2. `cmake --install` of the packed components installs the same files.
for component in runtime development tool; do
  "$cmake" --install "$build" --prefix "$work/prefix" --component $component >/dev/null
done
listing() { (cd "$1" && find . \( -type f -o -type l \) | sort); }
if ! diff <(listing "$work/prefix") <(listing "$prefix") >"$work/diff"; then
  echo "cmake --install and the .deb differ (< cmake --install, > .deb):"
  cat "$work/diff"
  exit 1
fi
while read -r f; do
  if [ -f "$work/prefix/$f" ] && ! [ -L "$work/prefix/$f" ]; then cmp "$work/prefix/$f" "$prefix/$f"; fi
done < <(listing "$prefix")
echo "cmake --install: the same $(listing "$prefix" | wc -l) files as the .deb"

# 3. The layout, the soname and the export list of the shared library.
test -f "$prefix/include/zipc/zipc.hpp"
test -f "$prefix/include/zipc/zipc.h"
libdir=$(ls -d "$prefix"/lib* | head -1)
test -f "$libdir/libzipc.a"
test -L "$libdir/libzipc.so"
test -L "$libdir/libzipc.so.0"
ls "$libdir"/cmake/zipc/zipcConfig.cmake "$libdir"/pkgconfig/zipc.pc "$libdir"/pkgconfig/zipc-shared.pc >/dev/null
readelf -d "$libdir/libzipc.so" | grep 'Library soname: \[libzipc.so.0\]' >/dev/null
# Only the C ABI (zipc_*) and the C++ API (namespace zipc, minus
# zipc::platform and zipc::c_api) are exported.
exported=$(nm -D --defined-only "$libdir/libzipc.so" | awk '$2 != "A" {print $3}')
stray=$(echo "$exported" | grep -vE '^(zipc_|_ZN4zipc|_ZNK4zipc|_ZT[ISV]N4zipc|_ZT[ISV]NK4zipc|_ZGVZN4zipc|_ZZN4zipc)' || true)
if [ -n "$stray" ]; then echo "libzipc.so exports more than the zipc API:"; echo "$stray" | head -20; exit 1; fi
if echo "$exported" | grep -E '^_ZN4zipc(8platform|5c_api)' >/dev/null; then echo "libzipc.so exports internals"; exit 1; fi
echo "libzipc.so: soname libzipc.so.0, $(echo "$exported" | grep -c '^zipc_') C functions, $(echo "$exported" | grep -vc '^zipc_') C++ symbols"

# The zipc tool, when the build made it (tools need CLI11 and nlohmann-json).
if [ -e "$build/tools/zipc" ]; then
  [ "$("$prefix/bin/zipc" --version)" = "zipc $(dpkg-deb -f "$deb" Version)" ] || { echo "the packaged zipc tool does not run"; exit 1; }
fi

# 4. pkg-config's view: -L/-l, the static extras private, no language standard.
export PKG_CONFIG_PATH=$libdir/pkgconfig
libs=$(pkg-config --libs zipc)
read -r -a words <<<"$libs"
if [ ${#words[@]} -ne 2 ] || [ "${words[0]#-L}" = "${words[0]}" ] || [ "$(realpath "${words[0]#-L}")" != "$libdir" ] ||
  [ "${words[1]}" != -lzipc ]; then
  echo "pkg-config --libs zipc: '$libs', expected -L$libdir -lzipc"
  exit 1
fi
if pkg-config --cflags zipc | grep -e '-std=' >/dev/null; then echo "zipc.pc Cflags name a language standard"; exit 1; fi
if [ "$(pkg-config --libs zipc-shared)" != "$libs" ]; then echo "zipc-shared.pc links otherwise than zipc.pc"; exit 1; fi

# 5. The consumers. Each prints "ok" and exits 0 only when its round trip
# through the library was right; each is checked for the library it linked.
links_shared() { # program: needs libzipc.so.0 and finds it in $libdir
  readelf -d "$1" | grep -F 'Shared library: [libzipc.so.0]' >/dev/null || { echo "$1: does not need libzipc.so.0"; exit 1; }
  env "${@:2}" ldd "$1" | grep -F "libzipc.so.0 => $libdir/" >/dev/null || { echo "$1: libzipc.so.0 not from $libdir"; exit 1; }
}
links_static() {
  if readelf -d "$1" | grep -F 'libzipc' >/dev/null; then echo "$1: linked libzipc.so"; exit 1; fi
}
compile() { # a compile line; its output is shown only when it fails (a -static
  # link warns that glibc's getgrnam_r needs the shared glibc at run time)
  "$@" >"$work/compile.log" 2>&1 || { cat "$work/compile.log"; exit 1; }
}
ran=()
run() { # program [VAR=value...]
  env "${@:2}" "$1" >"$work/out" 2>&1 || { echo "$(basename "$1") failed:"; cat "$work/out"; exit 1; }
  ran+=("$(basename "$1")")
}

# 5a. CMake: find_package and pkg_check_modules (tests/install/consumer).
"$cmake" -S "$src" -B "$work/cmake-build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_C_COMPILER="$cc" >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; exit 1; }
"$cmake" --build "$work/cmake-build" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
for lang in c cxx; do
  # CMake writes the library's directory into the build tree's rpath.
  for kind in package_shared pkgconfig_shared; do
    links_shared "$work/cmake-build/${kind}_$lang"
    run "$work/cmake-build/${kind}_$lang"
  done
  for kind in package_static pkgconfig_static; do
    links_static "$work/cmake-build/${kind}_$lang"
    run "$work/cmake-build/${kind}_$lang"
  done
done

# 5b. Plain pkg-config on a compile line, C and C++.
c_flags=(-std=c11 -Wall -Wextra -Werror -pedantic -D_POSIX_C_SOURCE=200809L)
cxx_flags=(-std=c++20 -Wall -Wextra -Werror)
for lang in c cxx; do
  if [ $lang = c ]; then compiler=$cc flags=("${c_flags[@]}") source=$src/main.c; else
    compiler=$cxx flags=("${cxx_flags[@]}") source=$src/main.cpp; fi
  # Shared, the library's directory in the program's rpath.
  # shellcheck disable=SC2046
  compile "$compiler" "${flags[@]}" -o "$work/pc_rpath_$lang" "$source" $(pkg-config --cflags --libs zipc) -Wl,-rpath,"$libdir"
  links_shared "$work/pc_rpath_$lang"
  run "$work/pc_rpath_$lang"
  # Shared, no rpath: the loader is told with LD_LIBRARY_PATH (or ldconfig,
  # for a system directory); without either it does not find the library.
  # shellcheck disable=SC2046
  compile "$compiler" "${flags[@]}" -o "$work/pc_env_$lang" "$source" $(pkg-config --cflags --libs zipc)
  links_shared "$work/pc_env_$lang" LD_LIBRARY_PATH="$libdir"
  run "$work/pc_env_$lang" LD_LIBRARY_PATH="$libdir"
  if ! ldconfig -p | grep -F libzipc.so.0 >/dev/null && "$work/pc_env_$lang" >/dev/null 2>&1; then
    echo "pc_env_$lang ran without LD_LIBRARY_PATH: the test cannot tell where libzipc.so.0 came from"
    exit 1
  fi
  # Static: the --static line (Libs.private), linked -static.
  # shellcheck disable=SC2046
  compile "$compiler" "${flags[@]}" -static -o "$work/pc_static_$lang" "$source" $(pkg-config --static --cflags --libs zipc)
  links_static "$work/pc_static_$lang"
  run "$work/pc_static_$lang"
done
echo "install check: ${#ran[@]} consumers built against the .deb and ran: ${ran[*]}"
