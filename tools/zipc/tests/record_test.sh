#!/usr/bin/env bash
# zipc record / replay: a byte-exact round trip, a truncated and a corrupt
# tail (reported, skipped, not fatal), a foreign file (exit 6), --rate.
set -euo pipefail
zipc=$1
a="t.clirec-a.$$"
b="t.clirec-b.$$"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; rm -f /dev/shm/zipc.$a /dev/shm/zipc.$b' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# Binary-safe payloads: len32 frames of random bytes, including empty ones.
python3 - "$tmp/frames.bin" "$tmp/payloads.bin" <<'PY'
import os, random, struct, sys
random.seed(7)
with open(sys.argv[1], "wb") as f, open(sys.argv[2], "wb") as p:
    for i in range(3000):
        m = os.urandom(random.choice([0, 1, 7, 100, 1000, 5000]))
        f.write(struct.pack("<I", len(m)) + m)
        p.write(m)
PY
"$zipc" create "$a" --kind topic --capacity 1MiB >/dev/null
"$zipc" create "$b" --kind topic --capacity 1MiB >/dev/null
"$zipc" record "$a" "$tmp/a.zrec" --count 3000 --timeout 20 &
rec=$!
"$zipc" pub "$a" --format len32 --wait-subscribers 1 < "$tmp/frames.bin"
wait $rec || fail "record exited $?"

# Replay into b while b is recorded again: the payloads must match exactly.
"$zipc" record "$b" "$tmp/b.zrec" --count 3000 --timeout 20 &
rec=$!
"$zipc" replay "$tmp/a.zrec" "$b" --fast --wait-subscribers 1
wait $rec || fail "second record exited $?"
python3 - "$tmp/a.zrec" "$tmp/b.zrec" "$tmp/payloads.bin" <<'PY'
import struct, sys
def records(path):
    d = open(path, "rb").read()
    assert d[:8] == b"ZIPCREC\n" and struct.unpack_from("<I", d, 8)[0] == 1
    off, out = struct.unpack_from("<I", d, 12)[0], []
    while off < len(d):
        size, crc, seq, ns = struct.unpack_from("<IIQQ", d, off)
        out.append((seq, ns, d[off + 24: off + 24 + size]))
        off += 24 + size
    return out
a, b = records(sys.argv[1]), records(sys.argv[2])
assert len(a) == len(b) == 3000, (len(a), len(b))
assert [x[2] for x in a] == [x[2] for x in b], "payloads differ"
assert b"".join(x[2] for x in a) == open(sys.argv[3], "rb").read()
assert [x[0] for x in a] == list(range(3000)), "sequences"
assert all(a[i][1] <= a[i + 1][1] for i in range(2999)), "time stamps"
PY

# A truncated tail (a recorder killed mid-write): reported, the rest replayed.
size=$(stat -c %s "$tmp/a.zrec")
head -c $((size - 10)) "$tmp/a.zrec" > "$tmp/trunc.zrec"
"$zipc" sub "$b" --count 2999 --timeout 20 --format hex > "$tmp/t.txt" &
sub=$!
"$zipc" replay "$tmp/trunc.zrec" "$b" --fast --wait-subscribers 1 2> "$tmp/err" || fail "replay of a truncated file failed"
wait $sub || fail "sub of the truncated replay exited $?"
grep -q "truncated record" "$tmp/err" || fail "no truncation notice: $(cat "$tmp/err")"

# A flipped bit: the CRC catches it.
python3 -c "
import sys; d = bytearray(open('$tmp/a.zrec','rb').read()); d[len(d)//2] ^= 4; open('$tmp/flip.zrec','wb').write(d)"
"$zipc" replay "$tmp/flip.zrec" "$b" --fast 2> "$tmp/err" || fail "replay of a corrupt file failed"
grep -q "fails its CRC" "$tmp/err" || fail "no CRC notice: $(cat "$tmp/err")"

# A foreign file and a future version: exit 6 naming the file.
head -c 100 /dev/urandom > "$tmp/foreign.zrec"
set +e
"$zipc" replay "$tmp/foreign.zrec" "$b" 2> "$tmp/err"; rc=$?
python3 -c "
d = bytearray(open('$tmp/a.zrec','rb').read()); d[8] = 9; open('$tmp/v9.zrec','wb').write(d)"
"$zipc" replay "$tmp/v9.zrec" "$b" 2> "$tmp/err9"; rc9=$?
set -e
[ $rc -eq 6 ] && grep -q "foreign.zrec" "$tmp/err" || fail "foreign file: exit $rc $(cat "$tmp/err")"
[ $rc9 -eq 6 ] && grep -q "version 9" "$tmp/err9" || fail "future version: exit $rc9 $(cat "$tmp/err9")"

# --rate paces (200 messages at 1000/s take >= ~0.15 s; a loose bound, not a benchmark).
head -c $((64 + 200 * 0)) /dev/null
start=$(date +%s%N)
"$zipc" replay "$tmp/a.zrec" "$b" --rate 20000 >/dev/null
end=$(date +%s%N)
[ $(( (end - start) / 1000000 )) -ge 100 ] || fail "--rate did not pace"
echo "record test: ok"
