"""One meaning of a timeout in every blocking call, sync and asyncio: None
waits forever, 0 tries once, a negative or NaN timeout raises ValueError (as
queue.Queue.get does), any other type TypeError; a call that runs out of time
raises zipc.Timeout, a TimeoutError. Non-blocking try_* calls return None
(or False) and never raise Timeout or Empty."""

from __future__ import annotations

import asyncio
import datetime
import itertools
import os
from typing import Any, Callable, Dict, Iterator, List

import pytest

import zipc
import zipc.aio

_n = itertools.count()
Blocker = Callable[[Any], Any]
_keepalive: List[Any] = []  # what a blocker's channel needs alive (its topic, a server)


@pytest.fixture
def made() -> Iterator[List[str]]:
    names: List[str] = []
    yield names
    _keepalive.clear()
    for n in names:
        zipc.remove_segment(n)


def fresh(made: List[str]) -> str:
    n = f"pyto.{os.getpid()}.{next(_n)}"
    made.append(n)
    return n


def full_queue(made: List[str]) -> zipc.Queue:
    q = zipc.Queue.create(fresh(made), block_size=64, block_count=2)
    q.send(b"a")
    q.send(b"b")
    return q


def full_topic_publisher(made: List[str]) -> zipc.Publisher:
    t = zipc.Topic.create(fresh(made), capacity_bytes=4096, max_message_size=1024)
    keep = t.subscribe()  # a reliable subscriber that never reads: the ring fills
    p = t.publisher()
    while p.try_publish(bytes(1000)) is not None:
        pass
    _keepalive.append(keep)
    return p


def empty_queue(made: List[str]) -> zipc.Queue:
    return zipc.Queue.create(fresh(made), block_size=64, block_count=2)


def idle_subscriber(made: List[str]) -> zipc.Subscriber:
    t = zipc.Topic.create(fresh(made))
    _keepalive.append(t)
    return t.subscribe()


def unanswered_client(made: List[str]) -> zipc.RpcClient:
    n = fresh(made)
    server = zipc.RpcServer.create(n)  # never served: calls wait for ever
    _keepalive.append(server)
    return zipc.RpcClient.connect(n, timeout=5)


# Every blocking call, as timeout -> call, on a channel where it cannot succeed.
BLOCKING: Dict[str, Callable[[List[str]], Blocker]] = {
    "Queue.recv": lambda m: empty_queue(m).recv,
    "Queue.acquire": lambda m: empty_queue(m).acquire,
    "Queue.recv_batch": lambda m: (lambda q: lambda t: q.recv_batch(timeout=t))(empty_queue(m)),
    "Queue.send": lambda m: (lambda q: lambda t: q.send(b"c", timeout=t))(full_queue(m)),
    "Queue.reserve": lambda m: (lambda q: lambda t: q.reserve(timeout=t))(full_queue(m)),
    "Queue.send_batch": lambda m: (lambda q: lambda t: q.send_batch([b"c"], timeout=t))(full_queue(m)),
    "Publisher.publish": lambda m: (lambda p: lambda t: p.publish(bytes(1000), timeout=t))(full_topic_publisher(m)),
    "Publisher.reserve": lambda m: (lambda p: lambda t: p.reserve(1000, timeout=t))(full_topic_publisher(m)),
    "Subscriber.recv": lambda m: idle_subscriber(m).recv,
    "Subscriber.recv_info": lambda m: idle_subscriber(m).recv_info,
    "Subscriber.acquire": lambda m: idle_subscriber(m).acquire,
    "RpcClient.call": lambda m: (lambda c: lambda t: c.call(b"x", timeout=t))(unanswered_client(m)),
    "RpcTicket.wait": lambda m: unanswered_client(m).call_async(b"x").wait,
    "aio.recv(Subscriber)": lambda m: (lambda s: lambda t: asyncio.run(zipc.aio.recv(s, timeout=t)))(
        idle_subscriber(m)),
    "aio.recv(Queue)": lambda m: (lambda q: lambda t: asyncio.run(zipc.aio.recv(q, timeout=t)))(empty_queue(m)),
    "aio.call": lambda m: (lambda c: lambda t: asyncio.run(zipc.aio.call(c, b"x", timeout=t)))(
        unanswered_client(m)),
}


@pytest.mark.parametrize("call", sorted(BLOCKING))
@pytest.mark.parametrize("timeout", [0, 0.02, datetime.timedelta(milliseconds=20)], ids=["0", "0.02", "timedelta"])
def test_a_blocking_call_that_runs_out_of_time_raises_zipc_timeout(made: List[str], call: str, timeout: Any) -> None:
    f = BLOCKING[call](made)
    with pytest.raises(zipc.Timeout) as e:
        f(timeout)
    assert isinstance(e.value, TimeoutError) and str(e.value)


@pytest.mark.parametrize("call", sorted(BLOCKING))
@pytest.mark.parametrize("timeout", [-1, -0.001, float("nan"), float("-inf"), -10**400],
                         ids=["-1", "-0.001", "nan", "-inf", "-10**400"])
def test_a_negative_or_nan_timeout_raises_value_error_naming_it(made: List[str], call: str, timeout: float) -> None:
    f = BLOCKING[call](made)
    with pytest.raises(ValueError, match="timeout"):
        f(timeout)


@pytest.mark.parametrize("call", sorted(BLOCKING))
@pytest.mark.parametrize("timeout", ["1", True, [1], 1j], ids=["str", "bool", "list", "complex"])
def test_a_timeout_of_another_type_raises_type_error_naming_it(made: List[str], call: str, timeout: Any) -> None:
    f = BLOCKING[call](made)
    with pytest.raises(TypeError, match="timeout"):
        f(timeout)


def test_none_and_inf_wait_until_the_message_arrives(made: List[str]) -> None:
    q = empty_queue(made)
    for forever in (None, float("inf"), 10**400):
        assert q.try_send(b"x")
        assert q.recv(timeout=forever) == b"x"
        assert q.try_send(b"y")
        assert asyncio.run(zipc.aio.recv(q, timeout=forever)) == b"y"


def test_numeric_types_other_than_int_and_float_are_seconds(made: List[str]) -> None:
    np = pytest.importorskip("numpy")
    from fractions import Fraction

    q = empty_queue(made)
    numbers: List[Any] = [np.int64(0), np.float32(0.01), Fraction(1, 100)]
    for t in numbers:
        with pytest.raises(zipc.Timeout):
            q.recv(timeout=t)
        with pytest.raises(zipc.Timeout):
            asyncio.run(zipc.aio.recv(q, timeout=t))
    with pytest.raises(ValueError, match="timeout"):
        q.recv(timeout=np.int64(-1))


def test_zero_takes_a_message_already_there(made: List[str]) -> None:
    q = empty_queue(made)
    q.send(b"x")
    assert q.recv(timeout=0) == b"x"
    assert q.try_send(b"y")
    assert asyncio.run(zipc.aio.recv(q, timeout=0)) == b"y"
    s = idle_subscriber(made)
    with pytest.raises(zipc.Timeout):
        asyncio.run(zipc.aio.recv(s, timeout=0))


def test_non_blocking_calls_return_none_and_never_raise_empty_or_timeout(made: List[str]) -> None:
    q = empty_queue(made)
    assert q.try_recv() is None and q.try_acquire() is None
    fq = full_queue(made)
    assert fq.try_send(b"c") is False and fq.try_reserve() is None
    s = idle_subscriber(made)
    assert s.try_recv() is None and s.try_acquire() is None
    p = full_topic_publisher(made)
    assert p.try_publish(bytes(1000)) is None and p.try_reserve(1000) is None


def test_readiness_waits_report_nothing_ready_as_an_empty_list(made: List[str]) -> None:
    ws = zipc.WaitSet()
    ws.attach(idle_subscriber(made))
    assert ws.wait(0) == [] and ws.wait(0.02) == []
    c = zipc.EventChannel.create(fresh(made))
    listener = c.listener()
    assert listener.wait(0) == [] and listener.wait(0.02) == [] and listener.try_wait() == []
    with pytest.raises(ValueError, match="timeout"):
        ws.wait(-1)
    with pytest.raises(ValueError, match="timeout"):
        listener.wait(float("nan"))
    ws.close()
    listener.detach()
