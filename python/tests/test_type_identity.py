"""Message type identity from Python: declare a channel's type (e.g. a numpy
dtype), read what a channel records, and get TypeMismatch on another type."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import zipc

QUOTE = np.dtype([("price", "<f8"), ("qty", "<u4")], align=True)


def test_a_queue_created_with_a_dtype_records_it_and_a_reader_sees_it(name: str) -> None:
    t = zipc.TypeIdentity.from_dtype(QUOTE, "demo.Quote")
    assert (t.name, t.size, t.align, t.field_count) == ("demo.Quote", 16, 8, 2)
    q = zipc.Queue.create(name, block_size=16, block_count=4, type=t)
    assert q.type_identity == t
    r = zipc.Queue.open(name)  # the byte API: no check, reads the type
    assert r.type_identity == t
    assert isinstance(r.type_identity, zipc.TypeIdentity)
    assert zipc.Queue.open(name, type=t).type_identity == t


def test_opening_with_another_type_raises_type_mismatch_naming_both(name: str) -> None:
    zipc.Queue.create(name, block_size=16, block_count=4, type=zipc.TypeIdentity.from_dtype(QUOTE, "demo.Quote"))
    other = zipc.TypeIdentity.from_dtype(np.dtype("<f8"))
    with pytest.raises(zipc.TypeMismatch) as e:
        zipc.Queue.open(name, type=other)
    assert "demo.Quote" in str(e.value) and "<f8" in str(e.value)
    with pytest.raises(zipc.TypeMismatch):
        zipc.Queue.open_or_create(name, block_size=16, block_count=4, type=other)


def test_a_queue_created_without_a_type_has_none_and_refuses_a_typed_open(name: str) -> None:
    q = zipc.Queue.create(name, block_size=16, block_count=4)
    assert q.type_identity is None
    with pytest.raises(zipc.TypeMismatch, match="byte API"):
        zipc.Queue.open(name, type=zipc.TypeIdentity.of("x", 8, 8))


def test_the_fingerprint_changes_with_size_version_and_fields() -> None:
    a = zipc.TypeIdentity.of("demo.Quote", 16, 8, field_count=2, version=1)
    assert a.fingerprint == zipc.TypeIdentity.of("demo.Quote", 16, 8, field_count=2, version=1).fingerprint
    assert a.fingerprint != zipc.TypeIdentity.of("demo.Quote", 24, 8, field_count=2, version=1).fingerprint
    assert a.fingerprint != zipc.TypeIdentity.of("demo.Quote", 16, 8, field_count=2, version=2).fingerprint
    assert a.fingerprint != zipc.TypeIdentity.of("demo.Quote", 16, 8, field_count=3, version=1).fingerprint


def test_a_bad_type_argument_is_invalid() -> None:
    with pytest.raises(zipc.InvalidArgument):
        zipc.Queue.create("pyt.never", type="not an identity")  # type: ignore[arg-type]
    with pytest.raises(zipc.InvalidArgument):
        zipc.Queue.create("pyt.never", type=zipc.TypeIdentity.of("n" * 200, 8, 8))


def test_a_topic_records_its_type_too(name: str) -> None:
    t = zipc.TypeIdentity.from_dtype(QUOTE, "demo.Quote")
    topic = zipc.Topic.create(name, type=t)
    assert topic.type_identity == t
    assert zipc.Topic.open(name).type_identity == t
    with pytest.raises(zipc.TypeMismatch):
        zipc.Topic.open(name, type=zipc.TypeIdentity.from_dtype(np.dtype("<i4")))


def test_another_process_opening_with_another_type_gets_type_mismatch(name: str) -> None:
    zipc.Queue.create(name, block_size=16, block_count=4, type=zipc.TypeIdentity.from_dtype(QUOTE, "demo.Quote"))
    code = textwrap.dedent(
        f"""
        import numpy as np, zipc
        try:
            zipc.Queue.open({name!r}, type=zipc.TypeIdentity.from_dtype(np.dtype("<i8")))
        except zipc.TypeMismatch as e:
            assert "demo.Quote" in str(e), e
            print("mismatch")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "mismatch"

