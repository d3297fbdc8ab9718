#!/usr/bin/env bash
# Hostile record files (issue 37): every record length is checked against the
# file's size and the topic's limit before anything is allocated. Each replay
# runs under `ulimit -v` (a 1 GiB allocation fails it) and a 10 s watchdog.
set -uo pipefail
zipc=$1
here=$(dirname "$0")
t="t.clireplay.$$"
tmp=$(mktemp -d)
cleanup() {
  rm -rf "$tmp"
  rm -f /dev/shm/zipc.$t /dev/shm/zipc.$t.*
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
zrec() { python3 "$here/make_zrec.py" "$@" || fail "make_zrec $*"; }
# A sanitizer reserves terabytes of address space for its shadow memory, so a
# sanitized build runs without the cap (the release leg checks it).
cap=524288
# (ldd's output is read whole: `grep -q` would close the pipe early, and
# under pipefail ldd's SIGPIPE would make the match look like a miss.)
libs=$(ldd "$zipc" 2>/dev/null || true)
case "$libs" in *libasan*|*libtsan*) cap=unlimited ;; esac
# replay_capped EXPECTED_RC FILE ARGS...: replay with address space capped at 512 MiB.
replay_capped() {
  local want=$1 file=$2
  shift 2
  (ulimit -v "$cap" && timeout -k 1 10 "$zipc" replay "$file" "$t" --fast "$@") > "$tmp/out" 2> "$tmp/err"
  local rc=$?
  [ "$rc" -eq "$want" ] || fail "replay $(basename "$file") $* exited $rc, expected $want: $(cat "$tmp/err")"
}
"$zipc" create "$t" --kind topic --capacity 1MiB --max-message 64KiB > /dev/null || fail "create"

# 1. The 188-byte forgery: one record that claims 1 GiB, with no payload.
zrec "$tmp/claim1g.zrec" 0:1:a claim:1073741824 0:1:never
replay_capped 0 "$tmp/claim1g.zrec" --stats
grep -q "claims 1073741824 bytes, past the end of the file" "$tmp/err" || fail "1 GiB claim: $(cat "$tmp/err")"
grep -q "1 messages" "$tmp/err" || fail "the valid record before the forged one was not replayed: $(cat "$tmp/err")"
# 2. Claims over the format's limit, and the largest 32-bit length.
zrec "$tmp/claim4g.zrec" claim:4294967295
replay_capped 0 "$tmp/claim4g.zrec"
grep -q "over the format's" "$tmp/err" || fail "4 GiB claim: $(cat "$tmp/err")"
# 3. A real record larger than the topic's limit: refused with both sizes, exit 2.
zrec "$tmp/big.zrec" 0:1:x70000
replay_capped 2 "$tmp/big.zrec"
grep -q "is 70000 bytes, larger than the topic $t's 65536-byte limit" "$tmp/err" || fail "70000 bytes: $(cat "$tmp/err")"
[ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "not one line: $(cat "$tmp/err")"
# 4. Random headers after a valid start: never more than the cap, never a hang.
for i in $(seq 8); do
  zrec "$tmp/r.zrec" 0:1:ok
  head -c $((RANDOM % 300)) /dev/urandom >> "$tmp/r.zrec"
  (ulimit -v "$cap" && timeout -k 1 10 "$zipc" replay "$tmp/r.zrec" "$t" --fast) > /dev/null 2> "$tmp/err"
  rc=$?
  [ "$rc" -eq 0 ] || [ "$rc" -eq 2 ] || fail "random tail $i: exit $rc: $(cat "$tmp/err")"
done
# 5. A header length that does not fit: exit 6, one line.
printf 'ZIPCREC\n\001\000\000\000\377\377\377\377' > "$tmp/hdr.zrec"
head -c 48 /dev/zero >> "$tmp/hdr.zrec"
replay_capped 6 "$tmp/hdr.zrec"
echo "replay files test: ok"
