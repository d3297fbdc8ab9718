#!/usr/bin/env bash
# Model-checks a Promela model with spin (docs/design/queue.md, "A
# machine-checked model"): the protocol as written must pass an exhaustive
# search (errors: 0, search completed, pan's exit status 0), and each mutation
# (one safety step of recovery removed) must make spin find an error, so the
# checker is shown able to fail.
#   check_model.sh <model.pml> <work dir> [mutation ...]
# Environment: MODEL_BOUNDS replaces the bounds below (spin -D options);
# MODEL_DEFINES adds spin -D options to every run.
# Exits 77 (skipped) when spin or a C compiler is missing.
set -euo pipefail

model=$1
work=$2
shift 2
mutations=("$@")

if ! command -v spin >/dev/null 2>&1; then
  echo "SKIP: spin is not installed (Debian package spin; scripts/install-deps.sh installs it)"
  exit 77
fi
cc=${CC:-gcc}
if ! command -v "$cc" >/dev/null 2>&1; then
  echo "SKIP: no C compiler ($cc) to build spin's verifier"
  exit 77
fi

# One bounded configuration, exhaustive: COLLAPSE compresses states
# (lossless); MEMLIM turns running out of memory into an incomplete search,
# which fails below.
# The protocol's search is compiled -O2 (it visits millions of states); a
# mutation's, -O0: spin finds its error within a second either way, and
# gcc -O2 over pan.c took 15 s to 2.5 min a mutation, most of the test's time.
pan_flags=(-DSAFETY -DCOLLAPSE -DMEMLIM=4000)
# shellcheck disable=SC2206 # (word splitting wanted: lists of -D options)
bounds=(${MODEL_BOUNDS:--DMSGS=1})
# shellcheck disable=SC2206
bounds+=(${MODEL_DEFINES:-})

# run <name> <spin -D defines...>: builds and runs pan in <work>/<name>;
# leaves its output in <work>/<name>/pan.out and returns pan's exit status.
run() {
  local name=$1
  local opt=-O0
  [ "$name" = protocol ] && opt=-O2
  shift
  local dir=$work/$name
  rm -rf "$dir"
  mkdir -p "$dir"
  cp "$model" "$dir/"
  (
    cd "$dir"
    spin "$@" -a "$(basename "$model")" >spin.out 2>&1 || {
      cat spin.out
      exit 2
    }
    "$cc" "$opt" "${pan_flags[@]}" -o pan pan.c >cc.out 2>&1 || {
      cat cc.out
      exit 2
    }
    ./pan -m200000 >pan.out 2>&1
  )
}

summary() {
  grep -E "errors:|states, stored|total actual memory|elapsed time|assertion violated|invalid end state" "$1" || true
}

status=0

echo "== $(basename "$model"): the protocol as written (${bounds[*]})"
rc=0
run protocol "${bounds[@]}" || rc=$?
out=$work/protocol/pan.out
summary "$out"
if [ "$rc" -ne 0 ] || ! grep -q "errors: 0" "$out"; then
  echo "FAIL: spin found an error in the protocol (pan exit $rc); trail: $work/protocol"
  status=1
elif grep -qE "Search not completed|reached -DMEMLIM|max search depth too small" "$out"; then
  echo "FAIL: the search did not complete (see $out)"
  status=1
else
  echo "ok: no error in any interleaving"
fi

for m in "${mutations[@]}"; do
  echo "== mutation $m (must be caught)"
  rc=0
  run "mutation$m" "${bounds[@]}" "-DMUTATION=$m" || rc=$?
  out=$work/mutation$m/pan.out
  summary "$out"
  if [ "$rc" -eq 2 ] || ! grep -qE "errors: [1-9]" "$out"; then
    echo "FAIL: spin did not catch mutation $m (pan exit $rc)"
    status=1
  else
    echo "ok: caught"
  fi
done
exit $status
