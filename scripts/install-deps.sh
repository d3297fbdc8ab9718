#!/usr/bin/env bash
# Installs what zipc needs to build, test and benchmark, and only what is missing.
# Idempotent: a second run checks, says "nothing to install" and returns quickly.
#   ZIPC_DEPS=minimal  -> build + test tools only (no benchmark peers)
set -euo pipefail

want_apt=(
  build-essential cmake ninja-build pkg-config git file dpkg-dev
  libgtest-dev libgmock-dev
  clang-14 clang-format-14 libclang-rt-14-dev llvm-14
  libbenchmark-dev nlohmann-json3-dev libcli11-dev
  clang-tidy-14 tmux util-linux iproute2
  nats-server libnats-dev openssl liburing-dev libflatbuffers-dev flatbuffers-compiler
  libprotobuf-dev protobuf-compiler
  doxygen # the API reference (make docs, test docs.doxygen); draws no graphs, so no graphviz
  spin # the Promela model checker of tests/model (test model.queue_recovery)
  libcpp-httplib-dev # the HTTP server of zipc exporter
  prometheus # scrapes zipc exporter in test tool.zipc_exporter
)
if [ "${ZIPC_DEPS:-full}" != "minimal" ]; then
  # Peers measured by the benchmark suite (bench/peers): Debian packages only.
  want_apt+=(libboost-dev libzmq3-dev libgrpc++-dev protobuf-compiler-grpc)
  # The Aeron IPC peer (bench/peers/aeron): a JDK (17+) and Maven, which fetches
  # io.aeron:aeron-all from Maven Central on the first `make bench`.
  want_apt+=(openjdk-17-jdk-headless maven)
  # iceoryx classic 2.0 (bench/peers/transports/iceoryx.cpp): the posh and
  # hoofs headers and libraries, and iox-roudi, which the bench starts per row.
  want_apt+=(libiceoryx-posh-dev libiceoryx-hoofs-dev iceoryx)
fi
want_pip=(matplotlib nanobind scikit_build_core build.util numpy pytest zmq mypy pdoc prometheus_client)
# pip names where the import name differs (PyPI `build`, the sdist/wheel
# builder, is checked by a submodule: a bare `import build` finds ./build/)
declare -A pip_name=([scikit_build_core]=scikit-build-core [zmq]=pyzmq [build.util]=build [prometheus_client]=prometheus-client)

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
  if ! "$PY" -c "import $m" >/dev/null 2>&1; then missing_pip+=("${pip_name[$m]:-$m}"); fi
done
if [ "${ZIPC_DEPS:-full}" != "minimal" ] && ! "$PY" -c "import iceoryx2" >/dev/null 2>&1; then
  # a benchmark peer only: its absence is reported by the bench, not fatal here
  missing_pip+=(iceoryx2)
fi
if [ "${ZIPC_DEPS:-full}" != "minimal" ] && ! "$PY" -c "import zenoh" >/dev/null 2>&1; then
  missing_pip+=(eclipse-zenoh)  # a Python benchmark peer, as iceoryx2
fi
if [ "${ZIPC_DEPS:-full}" != "minimal" ] && ! "$PY" -c "import ecal.nanobind_core" >/dev/null 2>&1; then
  missing_pip+=(eclipse-ecal)  # a Python benchmark peer, as iceoryx2
fi
if [ ${#missing_pip[@]} -gt 0 ]; then
  echo "install-deps: pip install ${missing_pip[*]}"
  for m in "${missing_pip[@]}"; do
    "$PY" -m pip install -q --root-user-action=ignore "$m" || echo "install-deps: pip install $m failed"
  done
fi

if [ ${#missing_apt[@]} -eq 0 ] && [ ${#missing_pip[@]} -eq 0 ]; then
  echo "install-deps: nothing to install"
fi
