#!/usr/bin/env bash
# zipc top in a real terminal: tmux runs it, a publisher and two subscribers
# run, the pane is captured twice; the topic's rate must show while it runs
# and change after it stops. No timing assertion beyond "it refreshed".
set -euo pipefail
zipc=$1
capture=${2:-}
command -v tmux >/dev/null || { echo "tmux not installed: skipped"; exit 77; }
t="t.clitop.$$"
session="zipc-top-$$"
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  tmux kill-session -t "$session" 2>/dev/null || true
  rm -rf "$tmp"
  rm -f /dev/shm/zipc.$t
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "--- pane:"; tmux capture-pane -p -t "$session" || true; exit 1; }

"$zipc" create "$t" --kind topic --capacity 4MiB >/dev/null
"$zipc" sub "$t" > /dev/null &
pids+=($!)
"$zipc" sub "$t" --lossy > /dev/null 2>&1 &
pids+=($!)
tmux new-session -d -s "$session" -x 160 -y 30 "$zipc top --interval 0.5 --match $t"
"$zipc" pub "$t" --wait-subscribers 2 --generate 100000000 --size 100 --rate 200000 &
pub=$!
pids+=("$pub")

# Wait until the pane shows the topic with a non-zero rate.
row() { tmux capture-pane -p -t "$session" | grep "^$t " || true; }
rate_of() { awk '{print $3}' <<< "$1"; }
for _ in $(seq 100); do
  line=$(row)
  r=$(rate_of "$line")
  [ -n "$line" ] && [ "$r" != "-" ] && [ "$r" != "0" ] && break
  sleep 0.1
done
[ -n "$line" ] || fail "the topic never showed"
[ "$r" != "-" ] && [ "$r" != "0" ] || fail "no rate while publishing: $line"
tmux capture-pane -p -t "$session" > "$tmp/running.txt"
grep -q "ALIVE" "$tmp/running.txt" || fail "no header"
alive=$(awk '{print $(NF-1)}' <<< "$line")
[ "$alive" -eq 3 ] || fail "expected 3 live participants (1 publisher, 2 subscribers): $line"
[ -n "$capture" ] && cp "$tmp/running.txt" "$capture"

kill "$pub"
wait "$pub" 2>/dev/null || true
for _ in $(seq 100); do
  line=$(row)
  [ "$(rate_of "$line")" = "0" ] && break
  sleep 0.1
done
[ "$(rate_of "$line")" = "0" ] || fail "rate did not fall to 0 after the publisher stopped: $line"
echo "top tmux test: ok"
