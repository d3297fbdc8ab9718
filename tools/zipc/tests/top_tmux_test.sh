#!/usr/bin/env bash
# zipc top in a real terminal: tmux runs it, a publisher and two subscribers
# run, the pane is captured twice; the topic's rate must show while it runs
# and change after it stops. An Rpc service under load shows calls/s and its
# in-flight count, a queue its messages/s and bytes/s; a call that fails (its
# server killed mid-call) shows in the Rpc's error count (zipc stat).
# No timing assertion beyond "it refreshed".
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
  rm -f /dev/shm/zipc.$t /dev/shm/zipc.$t.rpc /dev/shm/zipc.$t.q
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "--- pane:"; tmux capture-pane -p -t "$session" || true; exit 1; }

"$zipc" create "$t" --kind topic --capacity 4MiB >/dev/null
"$zipc" sub "$t" > /dev/null &
pids+=($!)
"$zipc" sub "$t" --lossy > /dev/null 2>&1 &
pids+=($!)
"$zipc" serve "$t.rpc" --max-response 8 > /dev/null 2>&1 &
server=$!
pids+=("$server")
"$zipc" create "$t.q" --kind queue --block-size 256 --block-count 1024 >/dev/null
"$zipc" sub "$t.q" > /dev/null &
pids+=($!)
"$zipc" pub "$t.q" --generate 100000000 --size 200 --rate 20000 &
pids+=($!)
for _ in $(seq 100); do "$zipc" call "$t.rpc" ping --timeout 1 >/dev/null 2>&1 && break; sleep 0.05; done
"$zipc" call "$t.rpc" hello --repeat 100000000 --rate 2000 > /dev/null 2>&1 &
caller=$!
pids+=("$caller")
tmux new-session -d -s "$session" -x 180 -y 30 "$zipc top --interval 0.5 --match $t"
"$zipc" pub "$t" --wait-subscribers 2 --generate 100000000 --size 100 --rate 200000 &
pub=$!
pids+=("$pub")

# Wait until the pane shows the topic with a non-zero rate.
row() { tmux capture-pane -p -t "$session" | grep "^${2:-$t} " || true; }
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

# The Rpc row: calls/s from the clients' records, ERR/S and INFLIGHT numbers.
for _ in $(seq 100); do
  rline=$(row x "$t.rpc")
  rr=$(rate_of "$rline")
  [ -n "$rline" ] && [ "$rr" != "-" ] && [ "$rr" != "0" ] && break
  sleep 0.1
done
[ "$rr" != "-" ] && [ "$rr" != "0" ] && [ -n "$rr" ] || fail "no call rate for the Rpc: $rline"
inflight=$(awk '{print $(NF-2)}' <<< "$rline")
[[ "$inflight" =~ ^[01]$ ]] || fail "INFLIGHT of a one-call-at-a-time client is not 0 or 1: $rline"
# The queue row: messages/s and bytes/s from the producer's record.
for _ in $(seq 100); do
  qline=$(row x "$t.q")
  qb=$(awk '{print $4}' <<< "$qline")
  [ -n "$qline" ] && [ "$(rate_of "$qline")" != "-" ] && [ "$qb" != "-" ] && [ "$qb" != "0" ] && break
  sleep 0.1
done
[ "$(rate_of "$qline")" != "-" ] && [ "$qb" != "-" ] && [ "$qb" != "0" ] || fail "no byte rate for the queue: $qline"
# docs/guide/cli.md's screen: every row showing its rates.
if [ -n "$capture" ]; then tmux capture-pane -p -t "$session" > "$capture"; fi
# A failed call counts: a reply over the server's --max-response fails it.
if "$zipc" call "$t.rpc" "longer than eight bytes" >/dev/null 2>&1; then fail "an over-long reply did not fail"; fi
errors=$("$zipc" stat "$t.rpc" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["counters"]["errors"])')
[ "$errors" -ge 1 ] || fail "the failed call was not counted (errors=$errors)"

kill "$pub"
wait "$pub" 2>/dev/null || true
for _ in $(seq 100); do
  line=$(row)
  [ "$(rate_of "$line")" = "0" ] && break
  sleep 0.1
done
[ "$(rate_of "$line")" = "0" ] || fail "rate did not fall to 0 after the publisher stopped: $line"
echo "top tmux test: ok"
