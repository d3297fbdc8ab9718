#!/usr/bin/env bash
# Measures the zipc tool's pipe and recorder throughput (docs/journal/2026-11-24-cli-throughput.md has past runs).
#
#   scripts/cli-throughput.sh ZIPC [BASELINE_ZIPC] [RUNS]
#
#   pipe:   `zipc pub T < file` of 10 M lines (seq 10000000) into
#           `zipc sub T --count 10M > out`; wall time from pub start to sub exit;
#           the output must equal the input byte for byte.
#   record: `zipc record T FILE --count N` while a separate `zipc pub --generate N
#           --size 1KiB` process publishes at full rate; wall time from pub start
#           to the recorder's exit; the file must hold N records.
# Files live in $DIR (default /dev/shm: tmpfs, so the figure is the tool's, not
# a disk's). With BASELINE_ZIPC the two binaries alternate run by run and the
# medians are compared. Prints one line per run and the medians.
set -euo pipefail
zipc=$(readlink -f "$1")
base=${2:+$(readlink -f "$2")}
runs=${3:-5}
dir=${DIR:-/dev/shm}
lines=${LINES_N:-10000000}     # environment: LINES_N, RECORDS_N, DIR, ONLY=pipe|record
records=${RECORDS_N:-2000000}
tmp=$(mktemp -d "$dir/zipc-tput.XXXXXX")
t="tput.$$"
cleanup() { rm -rf "$tmp"; rm -f "/dev/shm/zipc.$t.pipe" "/dev/shm/zipc.$t.rec"; }
trap cleanup EXIT
now() { date +%s.%N; }

seq "$lines" > "$tmp/in"

pipe_run() {  # $1 binary -> lines/s
  local z=$1
  "$z" rm "$t.pipe" 2>/dev/null || true
  "$z" create "$t.pipe" --kind topic --capacity 4MiB >/dev/null
  "$z" sub "$t.pipe" --count "$lines" > "$tmp/out" &
  local sub=$!
  local t0; t0=$(now)
  "$z" pub "$t.pipe" --wait-subscribers 1 < "$tmp/in"
  wait "$sub"
  local t1; t1=$(now)
  cmp -s "$tmp/in" "$tmp/out" || { echo "pipe: output differs from input" >&2; exit 1; }
  "$z" rm "$t.pipe"
  echo "$lines $t0 $t1" | awk '{printf "%.0f\n", $1 / ($3 - $2)}'
}

record_run() {  # $1 binary -> msgs/s
  local z=$1
  "$z" rm "$t.rec" 2>/dev/null || true
  "$z" create "$t.rec" --kind topic --capacity 16MiB --max-message 4KiB >/dev/null
  "$z" record "$t.rec" "$tmp/rec.zrec" --count "$records" &
  local rec=$!
  local t0; t0=$(now)
  "$zipc" pub "$t.rec" --wait-subscribers 1 --generate "$records" --size 1024
  wait "$rec"
  local t1; t1=$(now)
  local size; size=$(stat -c %s "$tmp/rec.zrec")
  [ "$size" -eq $((64 + records * (24 + 1024))) ] || { echo "record: file has $size bytes" >&2; exit 1; }
  rm -f "$tmp/rec.zrec"
  "$z" rm "$t.rec"
  echo "$records $t0 $t1" | awk '{printf "%.0f\n", $1 / ($3 - $2)}'
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

for what in ${ONLY:-pipe record}; do
  : > "$tmp/new.$what"
  : > "$tmp/base.$what"
  for i in $(seq "$runs"); do
    r=$("${what}_run" "$zipc")
    echo "$r" >> "$tmp/new.$what"
    line="$what run $i: zipc $r/s"
    if [ -n "$base" ]; then
      b=$("${what}_run" "$base")
      echo "$b" >> "$tmp/base.$what"
      line="$line, baseline $b/s"
    fi
    echo "$line"
  done
  m=$(median < "$tmp/new.$what")
  if [ -n "$base" ]; then
    mb=$(median < "$tmp/base.$what")
    echo "$what median: zipc $m/s, baseline $mb/s, ratio $(awk -v a="$m" -v b="$mb" 'BEGIN {printf "%.2f", a / b}') (files in $dir)"
  else
    echo "$what median: $m/s (files in $dir)"
  fi
done
