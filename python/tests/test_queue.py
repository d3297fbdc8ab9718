from __future__ import annotations

import datetime
import threading
import time

import numpy as np
import pytest

import zipc


def test_copy_send_and_recv_round_trip_bytes_like_objects(name: str) -> None:
    with zipc.Queue.create(name, block_size=64, block_count=4) as q:
        q.send(b"abc")
        q.send(bytearray(b"def"), timeout=1.0)
        q.send(memoryview(b"ghi"), timeout=datetime.timedelta(seconds=1))
        assert [q.recv(timeout=1), q.recv(timeout=1), q.recv()] == [b"abc", b"def", b"ghi"]
        assert q.try_recv() is None
        assert q.stats()["sent"] == 3 and q.stats()["received"] == 3


def test_try_send_says_false_when_full_and_a_blocking_send_times_out(name: str) -> None:
    with zipc.Queue.create(name, block_size=8, block_count=2) as q:
        assert q.try_send(b"1") and q.try_send(b"2")
        assert q.try_send(b"3") is False
        with pytest.raises(zipc.Timeout) as e:
            q.send(b"3", timeout=0.01)
        assert isinstance(e.value, TimeoutError) and name in str(e.value)


def test_a_message_over_the_block_size_is_too_large(name: str) -> None:
    with zipc.Queue.create(name, block_size=8, block_count=2) as q:
        with pytest.raises(zipc.TooLarge):
            q.send(b"123456789")
        with pytest.raises(zipc.TooLarge):
            q.reserve(9)


def test_error_classes_carry_the_cpp_message(name: str) -> None:
    with pytest.raises(zipc.NotFound) as nf:
        zipc.Queue.open(name)
    assert "not found" in str(nf.value) and name in str(nf.value)
    q = zipc.Queue.create(name, block_size=8, block_count=2)
    with pytest.raises(zipc.AlreadyExists):
        zipc.Queue.create(name, block_size=8, block_count=2)
    with pytest.raises(zipc.InvalidArgument):
        zipc.Queue.create(name + "x", block_size=7, block_count=2)
    with pytest.raises(zipc.InvalidName):
        zipc.Queue.create("bad/name", block_size=8, block_count=2)
    with pytest.raises(zipc.WrongKind):
        zipc.Topic.open(name)
    assert issubclass(zipc.NotFound, zipc.Error) and issubclass(zipc.Truncated, zipc.Corrupt)
    q.detach()


def test_write_loan_commits_the_reserved_bytes_on_exit(name: str) -> None:
    with zipc.Queue.create(name, block_size=64, block_count=4) as q:
        with q.reserve(5, timeout=1) as buf:
            assert isinstance(buf, memoryview) and not buf.readonly and len(buf) == 5
            buf[:] = b"hello"
        assert q.recv(timeout=1) == b"hello"
        loan = q.reserve(timeout=1)
        with loan as buf:
            assert len(buf) == 64
            buf[:3] = b"xyz"
            loan.commit(3)
        assert q.recv(timeout=1) == b"xyz"


def test_write_loan_is_aborted_when_the_block_raises(name: str) -> None:
    with zipc.Queue.create(name, block_size=64, block_count=4) as q:
        with pytest.raises(RuntimeError):
            with q.reserve(4, timeout=1) as buf:
                buf[:] = b"lost"
                raise RuntimeError("boom")
        assert q.try_recv() is None
        assert q.try_send(b"ok")


def test_read_loan_is_a_read_only_view_released_on_exit(name: str) -> None:
    with zipc.Queue.create(name, block_size=64, block_count=2) as q:
        q.send(b"payload")
        with q.acquire(timeout=1) as view:
            assert view.readonly and bytes(view) == b"payload"
            with pytest.raises(TypeError):
                view[0] = 1
        q.send(b"a")
        q.send(b"b")  # both blocks free again: the loan was given back


def test_a_view_touched_after_its_loan_ended_raises(name: str) -> None:
    with zipc.Queue.create(name, block_size=64, block_count=4) as q:
        q.send(b"payload")
        with q.acquire(timeout=1) as view:
            pass
        with pytest.raises(ValueError):
            bytes(view)
        with q.reserve(4, timeout=1) as wbuf:
            wbuf[:] = b"abcd"
        with pytest.raises(ValueError):
            wbuf[0] = 1
        loan = q.acquire(timeout=1)
        loan.release()
        with pytest.raises(zipc.LoanEnded):
            loan.view()


def test_numpy_arrays_share_the_loaned_memory(name: str) -> None:
    with zipc.Queue.create(name, block_size=4096, block_count=4) as q:
        src = np.arange(256, dtype=np.float64)
        with q.reserve(src.nbytes, timeout=1) as buf:
            arr = np.frombuffer(buf, dtype=np.float64)
            assert not arr.flags.owndata
            arr[:] = src  # written straight into the block
            del arr
        with q.acquire(timeout=1) as view:
            got = np.frombuffer(view, dtype=np.float64)
            assert got.base is not None and np.array_equal(got, src)
            assert not got.flags.writeable
            del got


def test_a_numpy_array_outliving_a_read_loan_keeps_the_block_until_it_dies(name: str) -> None:
    with zipc.Queue.create(name, block_size=64, block_count=2) as q:
        q.send(b"12345678")
        with q.acquire(timeout=1) as view:
            arr = np.frombuffer(view, dtype=np.uint8)
        assert bytes(arr) == b"12345678"  # still valid memory: the block is held
        assert q.try_send(b"x") and not q.try_send(b"y")  # one block still loaned
        del arr, view
        assert q.try_send(b"y")


def test_committing_a_write_loan_with_a_live_numpy_export_raises_buffer_error(name: str) -> None:
    with zipc.Queue.create(name, block_size=64, block_count=2) as q:
        with pytest.raises(BufferError):
            with q.reserve(8, timeout=1) as buf:
                arr = np.frombuffer(buf, dtype=np.uint8)
                arr[:] = 1
        del arr, buf
        assert q.try_recv() is None  # aborted, never delivered


def test_iteration_drains_then_stops_when_closed(name: str) -> None:
    with zipc.Queue.create(name, block_size=16, block_count=8) as q:
        for i in range(3):
            q.send(b"%d" % i)
        q.close()
        assert q.closed
        assert list(q) == [b"0", b"1", b"2"]
        with pytest.raises(zipc.Closed):
            q.send(b"x")


def test_a_blocked_recv_releases_the_gil(name: str) -> None:
    with zipc.Queue.create(name, block_size=16, block_count=8) as q:
        got: list[bytes] = []
        t = threading.Thread(target=lambda: got.append(q.recv(timeout=10)))
        t.start()
        ticks = 0
        end = time.monotonic() + 0.3
        while time.monotonic() < end:  # runs while the other thread blocks
            ticks += 1
        assert ticks > 1000
        assert t.is_alive()
        with zipc.Queue.open(name) as q2:
            q2.send(b"wake")
        t.join(10)
        assert got == [b"wake"]


def test_detach_refuses_while_a_loan_is_out(name: str) -> None:
    q = zipc.Queue.create(name, block_size=16, block_count=2)
    loan = q.reserve(timeout=1)
    with pytest.raises(zipc.InvalidArgument):
        q.detach()
    loan.abort()
    q.detach()
    assert not q.is_attached
    with pytest.raises(zipc.Closed):
        q.send(b"x")


def test_options_are_keyword_arguments_with_unit_names(name: str) -> None:
    with zipc.Queue.create(name, block_size=128, block_count=16, producers=zipc.Multiplicity.single,
                           consumers=zipc.Multiplicity.multi, recovery_time=datetime.timedelta(milliseconds=50),
                           wait=zipc.WaitStrategy.busy) as q:
        assert q.block_size == 128 and q.block_count == 16
        assert q.producers == zipc.Multiplicity.single
    with pytest.raises(TypeError):
        zipc.Queue.create(name, 128)  # type: ignore[misc]


def test_an_array_outliving_its_queue_handle_still_reads_mapped_memory(name: str) -> None:
    import gc

    q = zipc.Queue.create(name, block_size=64, block_count=2)
    q.send(b"x" * 8)
    with q.acquire(timeout=1) as view:
        arr = np.frombuffer(view, dtype=np.uint8)
    del q, view
    gc.collect()
    assert bytes(arr) == b"x" * 8  # the export keeps the loan, its handle and the mapping
    del arr
    gc.collect()


def test_batches_send_a_prefix_and_receive_what_is_there(name: str) -> None:
    with zipc.Queue.create(name, block_size=16, block_count=4) as q:
        assert q.send_batch([b"a", bytearray(b"b"), memoryview(b"c")], timeout=1) == 3
        assert q.send_batch([b"d", b"e"], timeout=0.01) == 1  # room for one more only
        assert q.recv_batch(max=8, timeout=1) == [b"a", b"b", b"c", b"d"]
        with pytest.raises(zipc.Timeout):
            q.recv_batch(timeout=0.01)
        q.close()
        with pytest.raises(zipc.Closed):
            q.send_batch([b"x"], timeout=1)


def test_a_queue_with_an_oversize_region_carries_messages_over_the_block(name: str) -> None:
    q = zipc.Queue.create(name, block_size=64, block_count=8, oversize_bytes=1 << 20)
    assert q.oversize_bytes == 1 << 20
    big = bytes(range(256)) * 1000
    q.send(big, timeout=1)
    assert q.recv(timeout=1) == big
    with q.reserve(100000, timeout=1) as buf:
        buf[:] = b"\x07" * 100000
    with q.acquire(timeout=1) as view:
        assert len(view) == 100000 and view[99999] == 7
    small = zipc.Queue.create(name + ".s", block_size=64, block_count=8)
    try:
        with pytest.raises(zipc.TooLarge):
            small.reserve(65, timeout=0)
    finally:
        zipc.remove_segment(name + ".s")
