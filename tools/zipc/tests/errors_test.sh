#!/usr/bin/env bash
# Every subcommand's --help has an example; errors are one line on stderr
# naming the object, with the documented exit code for each cause
# (docs/guide/cli.md, "Exit codes"): 2 invalid, 3 not found, 4 permission,
# 5 timeout, 6 corrupt, 7 conflict, 8 closed/peer dead, 9 I/O.
set -uo pipefail
zipc=$1
t="t.clierr.$$"
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
  rm -f /dev/shm/zipc.$t /dev/shm/zipc.$t.*
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

# expect CODE OBJECT -- command...: exit CODE, one stderr line naming OBJECT.
expect() {
  local code=$1 object=$2
  shift 3
  "$@" > "$tmp/out" 2> "$tmp/err"
  local rc=$?
  [ "$rc" -eq "$code" ] || fail "$* exited $rc, expected $code: $(cat "$tmp/err")"
  [ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "$*: not one line: $(cat "$tmp/err")"
  grep -qF -- "$object" "$tmp/err" || fail "$*: the error does not name $object: $(cat "$tmp/err")"
  grep -q "^zipc" "$tmp/err" || fail "$*: the error does not start with zipc: $(cat "$tmp/err")"
}

# 1. --help: exit 0, an "Example:" section that runs this subcommand.
for c in ls stat top pub sub call serve record replay rm gc create bench; do
  "$zipc" "$c" --help > "$tmp/help" || fail "$c --help exited $?"
  sed -n '/^Example/,$p' "$tmp/help" | grep "zipc $c " >/dev/null || fail "$c --help: no example of zipc $c"
done

"$zipc" create "$t" --kind topic --capacity 1MiB --mode 600 >/dev/null || fail "create"
printf 'one\n' | "$zipc" pub "$t" || fail "pub"

# 2. invalid usage.
expect 2 "--from" -- "$zipc" sub "$t" --from nonsense
expect 2 "--interval" -- "$zipc" top --interval 0 --once
expect 2 "--repeat" -- "$zipc" call "$t.none" x --repeat 0
# 3. not found: a channel, a record file.
expect 3 "$t.none" -- "$zipc" stat "$t.none"
expect 3 "$tmp/none.zrec" -- "$zipc" replay "$tmp/none.zrec" "$t"
# 5. timeout.
expect 5 "$t" -- "$zipc" sub "$t" --from latest --count 1 --timeout 0.1
# 6. corrupt: a record file that is not one.
head -c 100 /dev/urandom > "$tmp/foreign.zrec"
expect 6 "foreign.zrec" -- "$zipc" replay "$tmp/foreign.zrec" "$t"
# 7. conflict: exists already; wrong kind.
expect 7 "$t" -- "$zipc" create "$t" --kind topic
"$zipc" create "$t.q" --kind queue >/dev/null || fail "create queue"
expect 7 "$t.q" -- "$zipc" record "$t.q" "$tmp/q.zrec" --count 1
# 8. peer dead: an Rpc whose server was killed.
"$zipc" serve "$t.rpc" > /dev/null 2>&1 &
srv=$!
pids+=("$srv")
# Killed only once it answers (a server killed while it initializes is a
# creator that died, exit 6: another case).
for _ in $(seq 100); do "$zipc" call "$t.rpc" ping --timeout 1 >/dev/null 2>&1 && break; sleep 0.05; done
kill -9 "$srv"
wait "$srv" 2>/dev/null
expect 8 "$t.rpc" -- "$zipc" call "$t.rpc" hello --timeout 0.2
# 9. I/O error: the output device is full.
expect 9 "" -- sh -c "\"$zipc\" sub \"$t\" --from oldest --count 1 > /dev/full"
# 4. permission: another user opens a mode-600 channel (root reads anything).
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
  mkdir -p "$tmp/bin"
  cp "$zipc" "$tmp/bin/zipc"
  chmod 755 "$tmp" "$tmp/bin" "$tmp/bin/zipc"
  expect 4 "$t" -- setpriv --reuid=65534 --regid=65534 --clear-groups "$tmp/bin/zipc" sub "$t" --count 1 --timeout 0.1
else
  echo "permission check skipped (needs root and setpriv)"
fi
echo "errors test: ok"
