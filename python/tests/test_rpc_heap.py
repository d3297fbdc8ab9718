from __future__ import annotations

import threading
import time

import pytest

import zipc


def test_a_python_handler_answers_calls_on_several_threads(name: str) -> None:
    seen: set[int] = set()

    def handler(req: bytes) -> bytes:
        seen.add(threading.get_ident())
        return req.upper()

    with zipc.RpcServer.create(name, max_clients=4) as server:
        server.start(handler, threads=3)
        client = zipc.RpcClient.connect(name, timeout=2)
        assert client.call(b"hello", timeout=2) == b"hello".upper()
        tickets = [client.call_async(b"c%d" % i) for i in range(6)]
        assert [t.wait(2) for t in tickets] == [b"C%d" % i for i in range(6)]
        deadline = time.monotonic() + 5  # served counts after the reply left
        while server.served < 7 and time.monotonic() < deadline:
            time.sleep(0.001)
        assert server.served >= 7 and len(seen) >= 1
        server.stop()


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_handler_that_raises_gives_the_caller_a_remote_error(name: str) -> None:
    def handler(req: bytes) -> bytes:
        raise ValueError("bad request")

    with zipc.RpcServer.create(name) as server:
        server.start(handler)
        client = zipc.RpcClient.connect(name, timeout=2)
        with pytest.raises(zipc.RemoteError, match="bad request"):
            client.call(b"x", timeout=2)


def test_a_call_times_out_when_nobody_serves(name: str) -> None:
    with zipc.RpcServer.create(name):
        client = zipc.RpcClient.connect(name, timeout=2)
        with pytest.raises(zipc.Timeout):
            client.call(b"x", timeout=0.05)


def test_connecting_to_a_missing_server_fails_with_not_found(name: str) -> None:
    with pytest.raises(zipc.NotFound) as e:
        zipc.RpcClient.connect(name, timeout=0.05)
    assert name in str(e.value)


def test_serve_returns_at_its_timeout(name: str) -> None:
    with zipc.RpcServer.create(name) as server:
        server.serve(lambda b: b, threads=2, timeout=0.1)
        assert server.served == 0


def test_heap_allocates_blocks_shared_by_offset(name: str) -> None:
    with zipc.Heap.create(name, 1 << 20) as h:
        off = h.allocate(64)
        v = h.view(off, 64)
        v[:5] = b"hello"
        with zipc.Heap.open(name) as h2:
            w = h2.view(off, 5)
            assert bytes(w) == b"hello"
            w.release()
        assert h.stats()["allocated_blocks"] >= 1
        with pytest.raises(zipc.InvalidArgument):
            h.detach()  # v is still exported
        v.release()
        h.free(off)
        with pytest.raises(zipc.InvalidArgument):
            h.free(off)
        with pytest.raises(zipc.OutOfMemory):
            h.allocate(1 << 30)
        assert h.check()[0]


def test_segments_lists_what_this_test_created(name: str) -> None:
    q = zipc.Queue.create(name, block_size=8, block_count=2)
    info = [s for s in zipc.segments() if s.name == name]
    assert len(info) == 1 and info[0].kind == "queue" and info[0].valid
    q.detach()
    assert zipc.remove_segment(name) and not zipc.remove_segment(name)
