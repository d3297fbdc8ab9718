"""Cross-language tests: Python against the C++ peer (tests/cross/peer.cpp),
both sides verifying the shared test vectors (vectors.py / vectors.hpp)."""

from __future__ import annotations

import subprocess
from typing import List

import zipc
from conftest import parse_ok, run_peer
from vectors import REPLY_OFFSET, check_vector, make_vector

COUNT = 2000


def _wait_ready(p: subprocess.Popen[str]) -> None:
    assert p.stdout is not None
    line = p.stdout.readline()
    assert line.strip() == "ready", f"peer said {line!r}"


def _finish(p: subprocess.Popen[str]) -> str:
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0 and out.strip().splitlines()[-1].startswith("ok"), f"rc={p.returncode} out={out!r} err={err!r}"
    return out.strip().splitlines()[-1]


def test_a_python_producer_feeds_a_cpp_consumer(name: str, peer: List[str]) -> None:
    with zipc.Queue.create(name, block_size=256, block_count=64) as q:
        p = subprocess.Popen(peer + ["queue-consume", name, str(COUNT)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for i in range(COUNT):
            if i % 2:
                q.send(make_vector(i), timeout=10)
            else:  # every other one through a loan
                v = make_vector(i)
                with q.reserve(len(v), timeout=10) as buf:
                    buf[:] = v
        assert parse_ok(_finish(p))["received"] == COUNT


def test_a_cpp_producer_feeds_a_python_consumer(name: str, peer: List[str]) -> None:
    with zipc.Queue.create(name, block_size=256, block_count=64) as q:
        p = subprocess.Popen(peer + ["queue-produce", name, str(COUNT)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        seen = []
        for i in range(COUNT):
            if i % 2:
                seen.append(check_vector(q.recv(timeout=10)))
            else:
                with q.acquire(timeout=10) as view:
                    seen.append(check_vector(bytes(view)))
        _finish(p)
        assert seen == list(range(COUNT))


def test_a_python_publisher_feeds_cpp_reliable_and_lossy_subscribers(name: str, peer: List[str]) -> None:
    with zipc.Topic.create(name, capacity_bytes=1 << 20, max_message_size=1024) as t:
        subs = [subprocess.Popen(peer + ["topic-subscribe", name, str(COUNT), mode], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True) for mode in ("reliable", "lossy")]
        for s in subs:
            _wait_ready(s)
        pub = t.publisher()
        for i in range(COUNT):
            v = make_vector(i)
            if i % 2:
                assert pub.publish(v, timeout=10) == i
            else:
                with pub.reserve(len(v), timeout=10) as buf:
                    buf[:] = v
        reliable, lossy = (parse_ok(_finish(s)) for s in subs)
        assert reliable["received"] == COUNT and reliable["lost"] == 0
        assert lossy["received"] + lossy["lost"] == COUNT


def test_a_cpp_publisher_feeds_python_reliable_and_lossy_subscribers(name: str, peer: List[str]) -> None:
    with zipc.Topic.create(name, capacity_bytes=1 << 20, max_message_size=1024) as t:
        reliable = t.subscribe(start="oldest")
        lossy = t.subscribe(start="oldest", delivery=zipc.Delivery.lossy)
        run_peer(peer + ["topic-publish", name, str(COUNT)])
        for i in range(COUNT):
            if i % 2:
                data, seq, _ = reliable.recv_info(timeout=10)
                assert seq == i and check_vector(data) == i
            else:
                with reliable.acquire(timeout=10) as view:
                    assert check_vector(bytes(view)) == i
        got = 0
        while (m := lossy.try_recv()) is not None:
            assert check_vector(m) is not None
            got += 1
        assert got + lossy.lost == COUNT


def test_a_python_client_calls_a_cpp_server(name: str, peer: List[str]) -> None:
    p = subprocess.Popen(peer + ["rpc-serve", name, str(COUNT)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_ready(p)
    c = zipc.RpcClient.connect(name, timeout=10)
    for i in range(0, COUNT, 2):
        assert check_vector(c.call(make_vector(i), timeout=10)) == i + REPLY_OFFSET
        t = c.call_async(make_vector(i + 1))
        assert check_vector(t.wait(10)) == i + 1 + REPLY_OFFSET
    assert parse_ok(_finish(p))["served"] == COUNT


def test_a_cpp_client_calls_a_python_server(name: str, peer: List[str]) -> None:
    bad: list[bytes] = []

    def handler(req: bytes) -> bytes:
        seq = check_vector(req)
        if seq is None:
            bad.append(req)
            return b""
        return make_vector(seq + REPLY_OFFSET)

    with zipc.RpcServer.create(name) as server:
        server.start(handler, threads=2)
        assert parse_ok(run_peer(peer + ["rpc-call", name, str(COUNT)]))["calls"] == COUNT
        assert not bad


def test_a_c_program_consumes_what_python_produces_and_the_reverse(name: str, c_peer: List[str]) -> None:
    with zipc.Queue.create(name, block_size=256, block_count=64) as q:
        p = subprocess.Popen(c_peer + ["queue-consume", name, str(COUNT)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for i in range(COUNT):
            q.send(make_vector(i), timeout=10)
        assert parse_ok(_finish(p))["received"] == COUNT
        p = subprocess.Popen(c_peer + ["queue-produce", name, str(COUNT)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert [check_vector(q.recv(timeout=10)) for _ in range(COUNT)] == list(range(COUNT))
        _finish(p)
