#!/usr/bin/env bash
# Installs what zipc needs to build, test and benchmark, and only what is missing.
# Idempotent: a second run checks, says "nothing to install" and returns quickly.
#   ZIPC_DEPS=minimal  -> build + test tools only (no benchmark peers)
set -euo pipefail

want_apt=(
  build-essential cmake ninja-build pkg-config git
  libgtest-dev libgmock-dev
  clang-14 clang-format-14 libclang-rt-14-dev llvm-14
  libbenchmark-dev nlohmann-json3-dev libcli11-dev
)
if [ "${ZIPC_DEPS:-full}" != "minimal" ]; then
  # Peers measured by the benchmark suite (bench/peers): Debian packages only.
  want_apt+=(libboost-dev libzmq3-dev libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc)
fi
want_pip=(matplotlib)

missing_apt=()
for p in "${want_apt[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing_apt+=("$p")
  fi
done

if [ ${#missing_apt[@]} -gt 0 ]; then
  echo "install-deps: apt-get install ${missing_apt[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing_apt[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
missing_pip=()
for m in "${want_pip[@]}"; do
  if ! "$PY" -c "import $m" >/dev/null 2>&1; then missing_pip+=("$m"); fi
done
if [ ${#missing_pip[@]} -gt 0 ]; then
  echo "install-deps: pip install ${missing_pip[*]}"
  "$PY" -m pip install -q "${missing_pip[@]}" || echo "install-deps: pip install failed; charts will be skipped"
fi

if [ ${#missing_apt[@]} -eq 0 ] && [ ${#missing_pip[@]} -eq 0 ]; then
  echo "install-deps: nothing to install"
fi
