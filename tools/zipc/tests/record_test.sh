#!/usr/bin/env bash
# zipc record / replay: a byte-exact round trip, a truncated and a corrupt
# tail (reported, skipped, not fatal), a foreign file (exit 6), --rate; a
# lossy recording (read straight into the file's chunk) with valid CRCs.
set -euo pipefail
zipc=$1
a="t.clirec-a.$$"
b="t.clirec-b.$$"
c="t.clirec-c.$$"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; rm -f /dev/shm/zipc.$a /dev/shm/zipc.$b /dev/shm/zipc.$c' EXIT
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

# A lossy recorder that is never lapped (the topic holds the whole stream)
# records every payload exactly, each record with a valid CRC-32C.
"$zipc" create "$c" --kind topic --capacity 16MiB >/dev/null
"$zipc" record "$c" "$tmp/c.zrec" --lossy --count 3000 --timeout 20 2> "$tmp/lossy.txt" &
rec=$!
"$zipc" pub "$c" --format len32 --wait-subscribers 1 < "$tmp/frames.bin"
wait $rec || fail "lossy record exited $? $(cat "$tmp/lossy.txt")"
python3 - "$tmp/c.zrec" "$tmp/payloads.bin" <<'PY'
import struct, sys
table = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    table.append(c)
def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF
d = open(sys.argv[1], "rb").read()
off, payloads = struct.unpack_from("<I", d, 12)[0], []
while off < len(d):
    size, crc = struct.unpack_from("<II", d, off)
    h = d[off:off + 24]
    body = d[off + 24:off + 24 + size]
    assert crc32c(h[0:4] + h[8:24] + body) == crc, "bad CRC at %d" % off
    payloads.append(body)
    off += 24 + size
assert off == len(d), "trailing bytes"
assert len(payloads) == 3000, len(payloads)
assert b"".join(payloads) == open(sys.argv[2], "rb").read(), "lossy payloads differ"
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
