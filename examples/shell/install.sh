#!/usr/bin/env bash
# Runs the README's install commands as written, in a scratch directory:
#   bash examples/shell/install.sh SOURCE_DIR WORK_DIR
# WORK_DIR holds a tree of links to SOURCE_DIR (so `build/` is made there, not
# in the clone; it is kept, so a later run only rebuilds what changed) and the
# install root. What a test cannot do for real is
# stood in for: `apt-get install` checks each name is an installed or known
# Debian package, `sudo` runs the command as is, `cmake --install` goes under
# WORK_DIR/root through DESTDIR, HOME is WORK_DIR/home (the virtualenv goes
# there), `ldconfig` and `pip install` are skipped (`make test` installs the
# Python package itself). Then the installed files are checked.
set -euo pipefail
src=$(cd "$1" && pwd)
mkdir -p "$2"
work=$(cd "$2" && pwd)
rm -rf "$work/root" "$work/home"
mkdir -p "$work/tree"
find "$work/tree" -mindepth 1 -maxdepth 1 -type l -delete  # tree/build stays: a later run builds incrementally
for f in "$src"/* "$src"/.clang-tidy; do
  [ -e "$f" ] && [ "$(basename "$f")" != build ] && ln -s "$f" "$work/tree/"
done
export DESTDIR="$work/root" HOME="$work/home"
mkdir -p "$HOME"
sudo() { "$@"; }
apt-get() {  # each package must be installed here or known to apt: a misspelt name fails
  [ "$1" = install ] && shift
  local p
  for p in "$@"; do
    dpkg-query -W "$p" >/dev/null 2>&1 || apt-cache show "$p" >/dev/null 2>&1 || { echo "FAIL: no Debian package $p"; exit 1; }
  done
}
ldconfig() { :; }
pip() { :; }
cd "$work/tree"

# readme:install:begin
sudo apt-get install g++ cmake pkg-config liburing-dev libcli11-dev nlohmann-json3-dev python3-dev python3-venv
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release \
      -DZIPC_BUILD_TESTS=OFF -DZIPC_BUILD_BENCH=OFF -DZIPC_BUILD_BRIDGE=OFF -DZIPC_BUILD_EXAMPLES=OFF
cmake --build build -j"$(nproc)"
sudo cmake --install build    # into /usr/local
sudo ldconfig                 # so that programs find libzipc.so.0
python3 -m venv ~/zipc-venv && . ~/zipc-venv/bin/activate   # Debian's own python3 takes no pip installs
pip install ./python          # the Python package (compiles the library again)
# readme:install:end

fail() { echo "FAIL: $*"; exit 1; }
prefix="$DESTDIR/usr/local"
[ -x "$prefix/bin/zipc" ] || fail "no bin/zipc under $prefix"
[ -f "$prefix/include/zipc/zipc.hpp" ] || fail "no include/zipc/zipc.hpp under $prefix"
ls "$prefix"/lib*/libzipc.a "$prefix"/lib*/libzipc.so.0 >/dev/null || fail "no libzipc.a or libzipc.so.0 under $prefix"
ls "$prefix"/lib*/pkgconfig/zipc.pc "$prefix"/lib*/cmake/zipc >/dev/null || fail "no pkg-config or CMake package files"
for t in tests bench bridge; do
  if [ -d build/$t ]; then fail "build/$t was configured although ZIPC_BUILD_${t^^}=OFF"; fi
done
"$prefix/bin/zipc" --help >/dev/null || fail "the installed zipc does not run"
# The README's way to build the tour against the installed library.
tour_dir="$work/tour"
rm -rf "$tour_dir"
mkdir -p "$tour_dir"
cp "$src/examples/tour.cpp" "$tour_dir/"
(
  cd "$tour_dir"
  export PKG_CONFIG_PATH=$(echo "$prefix"/lib*/pkgconfig) PKG_CONFIG_SYSROOT_DIR="$DESTDIR"
  g++ -std=c++20 tour.cpp -o tour $(pkg-config --cflags --libs zipc)
  # What ldconfig does for /usr/local, for a -lzipc that picks libzipc.so:
  LD_LIBRARY_PATH=$(echo "$prefix"/lib*) ZIPC_NAMESPACE="readme-install-$$" ./tour >/dev/null
) || fail "examples/tour.cpp does not build and run against the installed library"
echo "ok: the README's install commands build and install the library and the zipc tool alone"
