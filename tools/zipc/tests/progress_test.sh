#!/usr/bin/env bash
# Long operations show progress on a terminal and nothing when stderr is not
# one: replay of a record file and gc, once under a pseudo-terminal (script),
# once piped.
set -euo pipefail
zipc=$1
command -v script >/dev/null || { echo "script (util-linux) not installed: skipped"; exit 77; }
t="t.cliprog.$$"
tmp=$(mktemp -d)
cleanup() {
  rm -rf "$tmp"
  rm -f /dev/shm/zipc.$t /dev/shm/zipc.$t.*
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$zipc" create "$t" --kind topic --capacity 4MiB >/dev/null
"$zipc" record "$t" "$tmp/r.zrec" --count 20000 &
rec=$!
"$zipc" pub "$t" --wait-subscribers 1 --generate 20000 --size 100
wait $rec || fail "record exited $?"

# Replay on a terminal: "replay FILE: NN.N% (done/total)" on stderr.
script -qec "\"$zipc\" replay \"$tmp/r.zrec\" $t.copy --create --fast" /dev/null > "$tmp/tty.txt" ||
  fail "replay under a terminal exited $?"
grep -q "replay $tmp/r.zrec: .*%" "$tmp/tty.txt" || fail "no progress on a terminal: $(head -c 300 "$tmp/tty.txt")"
# Piped: no progress at all.
"$zipc" replay "$tmp/r.zrec" "$t.copy" --fast 2> "$tmp/piped.txt" || fail "piped replay exited $?"
grep -q "%" "$tmp/piped.txt" && fail "progress while piped: $(cat "$tmp/piped.txt")"

# gc on a terminal shows its progress over the segments; piped it does not.
script -qec "\"$zipc\" gc -n --match $t" /dev/null > "$tmp/gc_tty.txt" || fail "gc under a terminal exited $?"
grep -q "gc: .*%" "$tmp/gc_tty.txt" || fail "gc: no progress on a terminal: $(cat "$tmp/gc_tty.txt")"
"$zipc" gc -n --match "$t" 2> "$tmp/gc_piped.txt" > /dev/null
grep -q "%" "$tmp/gc_piped.txt" && fail "gc: progress while piped"
echo "progress test: ok"
