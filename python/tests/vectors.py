"""Shared test vectors (tests/cross/vectors.hpp builds the same bytes).

Message ``seq`` is ``16 + (seq * 37) % 239`` bytes: seq (u64 little endian),
the FNV-1a 64 hash of the body, then body byte i = (seq * 131 + i * 7) & 0xff.
"""

from __future__ import annotations

import struct
from typing import Optional

REPLY_OFFSET = 1_000_000
_MASK = (1 << 64) - 1


def fnv1a(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & _MASK
    return h


def vector_size(seq: int) -> int:
    return 16 + (seq * 37) % 239


def make_vector(seq: int) -> bytes:
    body = bytes(((seq * 131 + i * 7) & 0xFF) for i in range(vector_size(seq) - 16))
    return struct.pack("<QQ", seq, fnv1a(body)) + body


def check_vector(msg: bytes) -> Optional[int]:
    """The sequence number of a valid vector, else None."""
    if len(msg) < 16:
        return None
    seq, h = struct.unpack_from("<QQ", msg)
    if len(msg) != vector_size(seq) or fnv1a(bytes(msg[16:])) != h:
        return None
    if bytes(msg) != make_vector(seq):
        return None
    return int(seq)
