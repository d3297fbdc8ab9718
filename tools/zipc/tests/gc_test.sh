#!/usr/bin/env bash
# zipc gc never removes a channel in use (issue 36 point 4): a topic whose
# creator (`zipc create`) exited but that a live subscriber reads stays, and
# the subscriber keeps receiving; --dry-run says what would go and why; rm of
# a channel in use needs --force and names who is attached.
set -uo pipefail
zipc=$1
t="t.cligc.$$"
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
  rm -f /dev/shm/zipc.$t /dev/shm/zipc.$t.*
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
# until_true CMD...: polls for up to 10 s (a watchdog, not a timing).
until_true() {
  for _ in $(seq 200); do "$@" && return 0; sleep 0.05; done
  return 1
}
live_subscribers() { "$zipc" stat "$1" --json 2>/dev/null | grep -c '"role": "subscriber"'; }
has_subscriber() { [ "$(live_subscribers "$1")" -ge 1 ]; }

# 1. The creator exits; a subscriber attaches and keeps reading.
"$zipc" create "$t" --kind topic --capacity 1MiB > /dev/null || fail "create"
"$zipc" sub "$t" --count 3 > "$tmp/got" 2> "$tmp/sub.err" &
sub=$!
pids+=("$sub")
until_true has_subscriber "$t" || fail "the subscriber never attached"

"$zipc" gc --dead --dry-run --match "$t" > "$tmp/dry" || fail "gc --dry-run exited $?"
grep -q "^would keep $t (creator dead, but in use by subscriber pid $sub)" "$tmp/dry" ||
  fail "gc --dry-run does not keep the topic in use: $(cat "$tmp/dry")"
"$zipc" gc --dead --match "$t" > "$tmp/gc" || fail "gc exited $?"
grep -q "^keeping $t " "$tmp/gc" || fail "gc does not say it keeps $t: $(cat "$tmp/gc")"
[ -e "/dev/shm/zipc.$t" ] || fail "gc --dead removed a topic a live subscriber reads"

# 2. rm without --force refuses and names the subscriber.
"$zipc" rm "$t" > /dev/null 2> "$tmp/rm.err"
rc=$?
[ "$rc" -eq 7 ] || fail "rm of a topic in use exited $rc, expected 7: $(cat "$tmp/rm.err")"
[ "$(wc -l < "$tmp/rm.err")" -eq 1 ] || fail "rm: not one line: $(cat "$tmp/rm.err")"
grep -q "in use by subscriber pid $sub (--force removes it anyway)" "$tmp/rm.err" ||
  fail "rm does not name the subscriber: $(cat "$tmp/rm.err")"
[ -e "/dev/shm/zipc.$t" ] || fail "rm without --force removed a topic in use"

# 3. The subscriber still receives what is published now.
printf 'one\ntwo\nthree\n' | "$zipc" pub "$t" || fail "pub to the kept topic"
for _ in $(seq 200); do kill -0 "$sub" 2>/dev/null || break; sleep 0.05; done
kill -0 "$sub" 2>/dev/null && fail "the subscriber did not get its 3 messages"
wait "$sub" || fail "the subscriber exited $?: $(cat "$tmp/sub.err")"
[ "$(cat "$tmp/got")" = $'one\ntwo\nthree' ] || fail "the subscriber got: $(cat "$tmp/got")"

# 4. Nobody attached now: gc --dead removes it and says why.
"$zipc" gc --dead --dry-run --match "$t" > "$tmp/dry" || fail "gc --dry-run exited $?"
grep -q "^would remove $t (creator dead, no live participant.*, mapped by no process)" "$tmp/dry" ||
  fail "gc --dry-run: $(cat "$tmp/dry")"
[ -e "/dev/shm/zipc.$t" ] || fail "gc --dry-run removed $t"
"$zipc" gc --dead --match "$t" > "$tmp/gc" || fail "gc exited $?"
[ -e "/dev/shm/zipc.$t" ] && fail "gc --dead kept an abandoned topic: $(cat "$tmp/gc")"

# 5. A user segment keeps no participant records: with no process mapping
# it, gc --dead removes it and says so.
"$zipc" create "$t.u" --size 4096 > /dev/null || fail "create a user segment"
"$zipc" gc --dead --dry-run --match "$t.u" | grep -q "^would remove $t.u (creator dead, no participant records, mapped by no process)" ||
  fail "gc on a user segment: $("$zipc" gc --dead --dry-run --match "$t.u")"

# 6. rm --force removes a queue in use, and a consumer's pid is named first.
"$zipc" create "$t.q" --kind queue > /dev/null || fail "create a queue"
"$zipc" sub "$t.q" > /dev/null 2>&1 &
q=$!
pids+=("$q")
until_true sh -c "\"$zipc\" stat \"$t.q\" --json | grep -q '\"pid\": $q'" || fail "the consumer never attached"
"$zipc" rm "$t.q" 2> "$tmp/rm.err"
[ $? -eq 7 ] && grep -q "pid $q" "$tmp/rm.err" || fail "rm of a queue in use: $(cat "$tmp/rm.err")"
"$zipc" rm --force "$t.q" || fail "rm --force exited $?"
[ -e "/dev/shm/zipc.$t.q" ] && fail "rm --force kept the queue"
kill "$q"
wait "$q" 2>/dev/null
echo "gc test: ok"
