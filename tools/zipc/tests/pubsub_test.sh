#!/usr/bin/env bash
# zipc pub / sub / call / stat end to end with real processes: byte-identical
# pipes, every format, queues, --from, exit codes, stat's lag and JSON.
set -euo pipefail
zipc=$1
t="t.clips.$$"
q="t.cliq.$$"
r="t.clir.$$"
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
  rm -f /dev/shm/zipc.$t /dev/shm/zipc.$q /dev/shm/zipc.$r /dev/shm/zipc.$r.err
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

# 1. lines: byte-identical through a topic (the sub attaches first).
seq 200000 > "$tmp/in.txt"
"$zipc" create "$t" --kind topic --capacity 1MiB | grep "created topic $t" >/dev/null
"$zipc" sub "$t" --count 200000 --timeout 20 > "$tmp/out.txt" &
sub=$!
"$zipc" pub "$t" --wait-subscribers 1 < "$tmp/in.txt"
wait $sub || fail "sub exited $?"
cmp "$tmp/in.txt" "$tmp/out.txt" || fail "lines differ"

# 2. --from SEQ replays what the log still holds; json lines carry seq and size.
"$zipc" sub "$t" --from 199990 --count 3 --format json > "$tmp/j.txt"
python3 - "$tmp/j.txt" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert [r["seq"] for r in rows] == [199990, 199991, 199992], rows
assert rows[0]["data"] == "199991" and rows[0]["size"] == 6 and rows[0]["time_ns"] > 0, rows[0]
PY

# 3. len32 and json input; hex output.
"$zipc" sub "$t" --count 3 --format hex > "$tmp/hex.txt" &
sub=$!
printf '\x02\x00\x00\x00hi\x00\x00\x00\x00' > "$tmp/frames.bin"
"$zipc" pub "$t" --format len32 --wait-subscribers 1 < "$tmp/frames.bin"
echo '{"hex":"00ff"}' | "$zipc" pub "$t" --format json
wait $sub
printf '6869\n\n00ff\n' | cmp - "$tmp/hex.txt" || fail "len32/json/hex: $(cat "$tmp/hex.txt")"

# 4. a queue: pub sends, sub receives (consumes), stat shows the backlog.
seq 50 | "$zipc" pub "$q" --create --kind queue --block-size 64 --block-count 64
"$zipc" stat "$q" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["kind"]=="queue" and d["counters"]["sent"]==50 and d["counters"]["backlog"]==50, d'
"$zipc" sub "$q" --count 50 > "$tmp/q.txt"
seq 50 | cmp - "$tmp/q.txt" || fail "queue order"
"$zipc" stat "$q" | grep "backlog=0" >/dev/null || fail "queue backlog not drained"

# 5. stat shows a live reliable subscriber and its lag.
"$zipc" sub "$t" --from oldest --count 1000000 --timeout 30 > "$tmp/slow.txt" &
slow=$!
pids+=("$slow")
for _ in $(seq 100); do
  "$zipc" stat "$t" --json > "$tmp/stat.json"
  grep -q "\"pid\": $slow," "$tmp/stat.json" && break
  sleep 0.05
done
python3 - "$tmp/stat.json" "$slow" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "zipc.channel/1" and d["kind"] == "topic", d
subs = [p for p in d["participants"] if p["role"] == "subscriber" and p["pid"] == int(sys.argv[2])]
assert subs and subs[0]["alive"] and subs[0]["mode"] == "reliable", d["participants"]
assert "lag" in subs[0] and d["counters"]["published"] == 200003, d["counters"]
PY
kill "$slow" 2>/dev/null || true

# 6. call / serve.
"$zipc" serve "$r" --upper --count 2 &
srv=$!
pids+=("$srv")
for _ in $(seq 100); do [ -e /dev/shm/zipc.$r ] && break; sleep 0.05; done
[ "$("$zipc" call "$r" 'hello zipc')" = "HELLO ZIPC" ] || fail "call with an argument"
[ "$(printf 'from stdin' | "$zipc" call "$r")" = "FROM STDIN" ] || fail "call from stdin"
wait "$srv"

# 6b. a handler that fails: zipc call prints its type, code and message on one
# line of stderr and exits 10 (the Python package serves, when it is installed).
if python3 -c 'import zipc' 2>/dev/null; then
  python3 - "$r.err" <<'PY' &
import sys, time, zipc
def handler(req):
    if req == b"key":
        raise KeyError("user:9\nsecond line")
    raise zipc.RemoteError("no such key", code=404)
with zipc.RpcServer.create(sys.argv[1]) as server:
    server.start(handler)
    time.sleep(30)
PY
  pids+=("$!")
  for _ in $(seq 200); do [ -e /dev/shm/zipc.$r.err ] && break; sleep 0.05; done
  set +e
  "$zipc" call "$r.err" key --timeout 5 > "$tmp/out" 2> "$tmp/err"; rc=$?
  set -e
  [ $rc -eq 10 ] || fail "call of a failing handler: exit $rc ($(cat "$tmp/err"))"
  [ ! -s "$tmp/out" ] || fail "call of a failing handler printed a response: $(cat "$tmp/out")"
  [ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "remote error not one line: $(cat "$tmp/err")"
  grep -q "remote KeyError (code 1).*user:9" "$tmp/err" || fail "remote error text: $(cat "$tmp/err")"
  set +e
  "$zipc" call "$r.err" other --timeout 5 2> "$tmp/err"; rc=$?
  set -e
  [ $rc -eq 10 ] && grep -q "(code 404): no such key" "$tmp/err" || fail "remote code: exit $rc, $(cat "$tmp/err")"
  rm -f /dev/shm/zipc.$r.err
fi

# 7. exit codes and one-line errors naming the object.
set +e
"$zipc" sub "t.cli-absent.$$" --no-wait 2> "$tmp/err"; rc=$?  # without --no-wait it waits for the channel
set -e
[ $rc -eq 3 ] || fail "absent channel: exit $rc"
[ "$(wc -l < "$tmp/err")" -eq 1 ] && grep -q "t.cli-absent.$$" "$tmp/err" || fail "error line: $(cat "$tmp/err")"
set +e
"$zipc" sub "$t" --from nonsense 2>/dev/null; rc1=$?
"$zipc" sub "$t" --count 1 --timeout 0.2 >/dev/null 2>&1; rc2=$?
"$zipc" pub "$q" --bogus-option </dev/null 2>/dev/null; rc3=$?
"$zipc" call "t.cli-absent.$$" x --timeout 0.2 2>/dev/null; rc4=$?
"$zipc" create "$t" --kind topic >/dev/null 2>&1; rc5=$?
set -e
[ $rc1 -eq 2 ] || fail "bad --from: exit $rc1"
[ $rc2 -eq 5 ] || fail "sub timeout: exit $rc2"
[ $rc3 -eq 2 ] || fail "unknown option: exit $rc3"
[ $rc4 -eq 3 ] || [ $rc4 -eq 5 ] || fail "call of an absent service: exit $rc4"
[ $rc5 -eq 7 ] || fail "create over an existing channel: exit $rc5"

# 8. every subcommand's help has an example.
for c in ls stat top pub sub call serve record replay rm gc create bench; do
  "$zipc" "$c" --help | grep "Example" >/dev/null || fail "$c --help has no example"
done

# 9. external subcommands: zipc X runs zipc-X from PATH.
mkdir -p "$tmp/bin"
printf '#!/bin/sh\necho "external: $*"\n' > "$tmp/bin/zipc-hello"
chmod +x "$tmp/bin/zipc-hello"
[ "$(PATH="$tmp/bin:$PATH" "$zipc" hello a b)" = "external: a b" ] || fail "external subcommand"
# 10. ZIPC_LOG: the library's refusal of a corrupt segment is printed by the tool.
bad="t.clilog.$$"
"$zipc" create "$bad" --kind topic >/dev/null
python3 -c "
f = open('/dev/shm/zipc.$bad', 'r+b'); f.seek(64); b = f.read(1); f.seek(64); f.write(bytes([b[0] ^ 1]))"
set +e
ZIPC_LOG=warn "$zipc" sub "$bad" --count 1 --timeout 0.1 2> "$tmp/log"; rcl=$?
"$zipc" sub "$bad" --count 1 --timeout 0.1 2> "$tmp/nolog"
set -e
rm -f /dev/shm/zipc.$bad
[ $rcl -eq 6 ] || fail "corrupt segment: exit $rcl"
grep -q "zipc: warn: $bad: refused: header checksum mismatch" "$tmp/log" || fail "no log line: $(cat "$tmp/log")"
grep -q "zipc: warn" "$tmp/nolog" && fail "logged without ZIPC_LOG"
echo "pubsub test: ok"
