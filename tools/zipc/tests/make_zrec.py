#!/usr/bin/env python3
"""Writes zipc record files for the tests, valid or forged (docs/guide/cli.md,
"Record file format"): make_zrec.py OUT RECORD... where each RECORD is
SEQ:NS:TEXT (a valid record), or claim:SIZE (a bare 24-byte record header that
claims SIZE payload bytes, with no payload after it)."""
import struct
import sys


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def record(seq, ns, payload):
    fields = struct.pack("<IQQ", len(payload), seq, ns)
    return struct.pack("<II", len(payload), crc32c(fields + payload)) + struct.pack("<QQ", seq, ns) + payload


def main():
    out = b"ZIPCREC\n" + struct.pack("<IIQQ", 1, 64, 0, 0) + b"test".ljust(32, b"\0")
    for spec in sys.argv[2:]:
        if spec.startswith("claim:"):
            out += struct.pack("<IIQQ", int(spec[6:]), 0, 0, 0)
        else:
            seq, ns, text = spec.split(":", 2)
            payload = text.encode() if not text.startswith("x") or not text[1:].isdigit() else b"x" * int(text[1:])
            out += record(int(seq), int(ns), payload)
    with open(sys.argv[1], "wb") as f:
        f.write(out)


main()
