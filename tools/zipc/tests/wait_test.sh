#!/usr/bin/env bash
# Waits in the tool: `zipc sub` on a channel that does not exist yet waits
# for it (--no-wait fails at once); --timeout 0 tries once; every wait and
# sleep (replay pacing, sub, top, record) ends on SIGINT. A 5 s watchdog
# catches a wait that ignores the signal (the tool polls every <= 50 ms).
set -uo pipefail
zipc=$1
t="t.cliwait.$$"
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
  rm -f /dev/shm/zipc.$t /dev/shm/zipc.$t.*
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
# ends_within_5s PID: true when PID exits within 5 s (watchdog).
ends_within_5s() {
  for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.05; done
  return 1
}
# interrupt WHAT PID: SIGINT, then PID must end (and not by the signal).
interrupt() {
  local what=$1 pid=$2
  kill -0 "$pid" 2>/dev/null || fail "$what ended before the signal"
  local t0
  t0=$(date +%s%N)
  kill -INT "$pid"
  ends_within_5s "$pid" || fail "$what ignored SIGINT for 5 s"
  wait "$pid"
  local rc=$?
  [ "$rc" -lt 128 ] || fail "$what died of the signal (exit $rc) instead of stopping"
  echo "$what: stopped $(( ($(date +%s%N) - t0) / 1000000 )) ms after SIGINT (exit $rc)"
}

# 1. sub waits for the channel to be created, then reads it from its first message.
"$zipc" sub "$t" --count 2 > "$tmp/got" 2> "$tmp/err" &
sub=$!
pids+=("$sub")
sleep 0.3
kill -0 "$sub" 2>/dev/null || fail "sub did not wait for $t: $(cat "$tmp/err")"
"$zipc" create "$t" --kind topic --capacity 1MiB > /dev/null || fail "create"
printf 'x\ny\n' | "$zipc" pub "$t" || fail "pub"
ends_within_5s "$sub" || fail "sub did not get the messages of the topic it waited for"
wait "$sub" || fail "sub exited $?: $(cat "$tmp/err")"
[ "$(cat "$tmp/got")" = $'x\ny' ] || fail "sub got: $(cat "$tmp/got")"

# 2. --no-wait: exit 3 at once, one line, no option that does not exist.
"$zipc" sub "$t.none" --no-wait > /dev/null 2> "$tmp/err"
rc=$?
[ "$rc" -eq 3 ] || fail "sub --no-wait exited $rc: $(cat "$tmp/err")"
[ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "sub --no-wait: not one line: $(cat "$tmp/err")"
grep -q -- "--create" "$tmp/err" && fail "sub suggests --create, which it does not take: $(cat "$tmp/err")"
# --timeout bounds the wait for the channel too (exit 5).
"$zipc" sub "$t.none" --timeout 100ms > /dev/null 2> "$tmp/err"
[ $? -eq 5 ] || fail "sub --timeout 100ms on a missing channel: $(cat "$tmp/err")"

# 3. --timeout 0 tries once: what is there, then exit (5 when --count is not reached).
timeout -k 1 5 "$zipc" sub "$t" --from oldest --timeout 0 > "$tmp/got" 2> "$tmp/err" || fail "sub --timeout 0: $?"
[ "$(cat "$tmp/got")" = $'x\ny' ] || fail "sub --timeout 0 got: $(cat "$tmp/got")"
timeout -k 1 5 "$zipc" sub "$t" --from oldest --timeout 0 --count 3 > /dev/null 2> "$tmp/err"
[ $? -eq 5 ] || fail "sub --timeout 0 --count 3 (2 there): $(cat "$tmp/err")"
timeout -k 1 5 "$zipc" record "$t" "$tmp/two.zrec" --from oldest --duration 0 2> "$tmp/err" ||
  fail "record --duration 0: $? $(cat "$tmp/err")"

# 4. SIGINT ends every wait.
"$zipc" sub "$t.later" > /dev/null 2>&1 &
pids+=($!)
sleep 0.3
interrupt "sub waiting for its channel" $!
"$zipc" sub "$t" > /dev/null 2>&1 &
pids+=($!)
sleep 0.3
interrupt "sub waiting for a message" $!
"$zipc" top --interval 1h --match "$t" > /dev/null 2>&1 &
pids+=($!)
sleep 0.3
interrupt "top waiting an interval of 1h" $!
"$zipc" record "$t" "$tmp/r.zrec" > /dev/null 2>&1 &
pids+=($!)
sleep 0.3
interrupt "record waiting for a message" $!

# 5. Replay pacing: two records a century apart; SIGINT ends the wait between them.
python3 "$(dirname "$0")/make_zrec.py" "$tmp/gap.zrec" 0:1000:first "1:$((1000 + 100 * 365 * 24 * 3600 * 1000000000)):second"
"$zipc" replay "$tmp/gap.zrec" "$t" > /dev/null 2>&1 &
pids+=($!)
sleep 0.3
interrupt "replay pacing a century's gap" $!
"$zipc" replay "$tmp/gap.zrec" "$t" --speed 0.001 > /dev/null 2>&1 &
pids+=($!)
sleep 0.3
interrupt "replay --speed 0.001" $!
echo "wait test: ok"
