#!/usr/bin/env bash
# `make bench-cite RUN=<results json>`: makes RUN (a run `make bench` wrote
# under build/) the run the README cites. The tree keeps that one run and the
# history of all cited runs (docs/design/bench.md, "Where results go"):
#   - copies RUN, its full table (.md) and the charts the README shows
#     (-latency, -throughput, -transports .png) into bench/results/;
#   - deletes the files of the run the README cited before (git keeps them);
#   - appends RUN's line to bench/results/history.jsonl, with the commit the
#     line `make bench` wrote beside RUN names;
#   - regenerates the README's benchmark section from it (make readme).
# Then review `git status` and commit bench/results and README.md together.
#   bash scripts/bench-cite.sh RUN.json
set -euo pipefail
cd "$(dirname "$0")/.."

run=${1:-}
if [ -z "$run" ] || [ ! -f "$run" ]; then
  echo "bench-cite: no results file '${run}' (usage: make bench-cite RUN=build/release/bench-results/<run>.json)" >&2
  exit 1
fi
PY=${PYTHON:-python3}
# Checked before anything in the tree changes.
if ! "$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(not (isinstance(d, dict) and "machine" in d and "results" in d))' "$run" 2>/dev/null; then
  echo "bench-cite: $run is not a zipc-bench results file (JSON with 'machine' and 'results'); nothing changed" >&2
  exit 1
fi
dest=bench/results
stem=$(basename "${run%.json}")
src=${run%.json}
old=$("$PY" scripts/bench-readme.py --source README.md || true)

if [ "$(realpath "$(dirname "$run")")" != "$(realpath "$dest")" ]; then
  for f in "$src.json" "$src.md" "$src-latency.png" "$src-throughput.png" "$src-transports.png"; do
    if [ -f "$f" ]; then cp "$f" "$dest/"; fi
  done
fi

# The run cited before leaves the tree (only its own files, only from bench/results/).
if [ -n "$old" ] && [ "$(dirname "$old")" = "$dest" ]; then
  old_stem=$(basename "${old%.json}")
  if [ "$old_stem" != "$stem" ]; then
    for suffix in .json .md -latency.png -throughput.png -transports.png; do
      rm -f "$dest/$old_stem$suffix"
    done
    echo "bench-cite: removed $dest/$old_stem.* (the run cited before; git keeps it)"
  fi
fi

"$PY" scripts/bench-history.py "$dest/$stem.json" --to "$dest/history.jsonl" \
  --commit-from "$(dirname "$run")/history.jsonl"
"$PY" scripts/bench-readme.py "$dest/$stem.json" README.md
echo "bench-cite: now review and commit: git add -A $dest README.md"
