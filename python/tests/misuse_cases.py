"""Misuse cases of every Python class, run in a child interpreter by
test_misuse.py: `python misuse_cases.py NAME case...` prints one line per case,
"CASE <case> ok" when the case raised what it should (or behaved as it
should), else "CASE <case> FAIL <what happened>". A case that crashes the
child prints nothing; test_misuse.py then finds it missing."""

from __future__ import annotations

import asyncio
import itertools
import sys
from typing import Any, Callable, Dict, Optional, Tuple, Type

import zipc
import zipc.aio

_n = itertools.count()
BASE = ""


def fresh() -> str:
    """A unique segment name whose segment is removed right away (mappings stay)."""
    return f"{BASE}.{next(_n)}"


def queue(**kw: Any) -> zipc.Queue:
    n = fresh()
    q = zipc.Queue.create(n, block_size=kw.pop("block_size", 64), block_count=kw.pop("block_count", 4), **kw)
    zipc.Queue.remove(n)
    return q


def topic(**kw: Any) -> zipc.Topic:
    n = fresh()
    t = zipc.Topic.create(n, **kw)
    zipc.Topic.remove(n)
    return t


def detached(h: Any) -> Any:
    h.detach()
    return h


def detached_queue() -> zipc.Queue:
    q = queue()
    q.detach()
    return q


def detached_subscriber() -> zipc.Subscriber:
    s = topic().subscribe()
    s.detach()
    return s


def detached_publisher() -> zipc.Publisher:
    p = topic().publisher()
    p.detach()
    return p


def heap() -> zipc.Heap:
    n = fresh()
    h = zipc.Heap.create(n, 1 << 16)
    zipc.Heap.remove(n)
    return h


def event_channel() -> zipc.EventChannel:
    n = fresh()
    c = zipc.EventChannel.create(n)
    zipc.EventChannel.remove(n)
    return c


def listener() -> zipc.Listener:
    return event_channel().listener()


def read_loan() -> zipc.QueueReadLoan:
    q = queue()
    q.send(b"hello")
    return q.acquire(timeout=1)


def write_loan() -> zipc.QueueWriteLoan:
    return queue().reserve(timeout=1)


def topic_read_loan() -> Tuple[zipc.Subscriber, zipc.TopicReadLoan]:
    t = topic()
    s = t.subscribe()
    t.publisher().publish(b"hello")
    return s, s.acquire(timeout=1)


def released(loan: Any) -> Any:
    loan.release()
    return loan


def aborted(loan: Any) -> Any:
    loan.abort()
    return loan


def committed(loan: Any) -> Any:
    loan.commit()
    return loan


def view_then_release_loan() -> memoryview:
    loan = read_loan()
    v = loan.view()
    loan.release()
    return v


def commit_with_export() -> None:
    loan = write_loan()
    v = loan.view()
    keep = v[0:4]  # a second view of the same export: the first cannot be released
    try:
        loan.commit()
    finally:
        keep.release()


def loan_outlives_its_handle() -> None:
    q = queue()
    q.send(b"kept")
    loan = q.acquire(timeout=1)
    del q  # the loan keeps the handle (and its mapping) alive
    assert loan.tobytes() == b"kept"
    loan.release()


def export_outlives_its_loan() -> None:
    import numpy as np  # a numpy array made from a view keeps the loan until it goes

    q = queue()
    q.send(b"abcd")
    with q.acquire(timeout=1) as view:
        arr = np.frombuffer(view, dtype=np.uint8)
    del q
    assert bytes(arr[:4]) == b"abcd"


def heap_detach_with_view() -> None:
    h = heap()
    off = h.allocate(64)
    v = h.view(off, 64)
    try:
        h.detach()
    finally:
        v.release()


def subscriber_acquire_twice() -> None:
    s, loan = topic_read_loan()
    try:
        s.acquire(timeout=0)
    finally:
        loan.release()


def subscriber_detach_with_loan() -> None:
    s, loan = topic_read_loan()
    try:
        s.detach()
    finally:
        loan.release()


def publisher_reserve_twice() -> None:
    p = topic().publisher()
    loan = p.reserve(8)
    try:
        p.reserve(8)
    finally:
        loan.abort()


def queue_detach_with_loan() -> None:
    q = queue()
    q.send(b"x")
    loan = q.acquire(timeout=1)
    try:
        q.detach()
    finally:
        loan.release()


def detach_twice() -> None:
    q = queue()
    q.detach()
    q.detach()
    assert not q.is_attached


def detach_then_aio_release() -> None:
    t = topic()
    s = t.subscribe()
    t.publisher().publish(b"x")
    assert asyncio.run(zipc.aio.recv(s, timeout=1)) == b"x"
    s.detach()  # aio's WaitSet lets go of it first
    zipc.aio.release(s)


def aio_recv_on_detached_subscriber() -> None:
    s = topic().subscribe()

    async def main() -> None:
        async def detach_soon() -> None:
            await asyncio.sleep(0.05)
            s.detach()

        task = asyncio.ensure_future(detach_soon())
        try:
            await zipc.aio.recv(s, timeout=10)
        finally:
            await task

    asyncio.run(main())


def closed_waitset() -> zipc.WaitSet:
    ws = zipc.WaitSet()
    ws.close()
    return ws


def context_exit_then_use() -> None:
    with queue() as q:
        pass
    q.send(b"x")


# name -> (what to run, the exception it must raise, or None: it must return)
CASES: Dict[str, Tuple[Callable[[], Any], Optional[Type[BaseException]]]] = {
    # Queue: calls on a detached handle
    "queue send after detach": (lambda: detached_queue().send(b"x"), zipc.Closed),
    "queue try_send after detach": (lambda: detached_queue().try_send(b"x"), zipc.Closed),
    "queue recv after detach": (lambda: detached_queue().recv(timeout=0), zipc.Closed),
    "queue try_recv after detach": (lambda: detached_queue().try_recv(), zipc.Closed),
    "queue acquire after detach": (lambda: detached_queue().acquire(timeout=0), zipc.Closed),
    "queue reserve after detach": (lambda: detached_queue().reserve(timeout=0), zipc.Closed),
    "queue send_batch after detach": (lambda: detached_queue().send_batch([b"x"]), zipc.Closed),
    "queue recv_batch after detach": (lambda: detached_queue().recv_batch(timeout=0), zipc.Closed),
    "queue iteration after detach": (lambda: next(iter(detached_queue())), zipc.Closed),
    "queue stats after detach": (lambda: detached_queue().stats(), zipc.Closed),
    "queue len after detach": (lambda: len(detached_queue()), zipc.Closed),
    "queue close after detach": (lambda: detached_queue().close(), zipc.Closed),
    "queue recover after detach": (lambda: detached_queue().recover(), zipc.Closed),
    "queue block_size after detach": (lambda: detached_queue().block_size, zipc.Closed),
    "queue used after its with block": (context_exit_then_use, zipc.Closed),
    "queue detach twice": (detach_twice, None),
    "queue detach with a loan out": (queue_detach_with_loan, zipc.InvalidArgument),
    # Queue loans
    "read loan view after release": (lambda: released(read_loan()).view(), zipc.LoanEnded),
    "read loan tobytes after release": (lambda: released(read_loan()).tobytes(), zipc.LoanEnded),
    "read loan released twice": (lambda: released(released(read_loan())), None),
    "memoryview of a released read loan": (lambda: bytes(view_then_release_loan()), ValueError),
    "write loan commit twice": (lambda: committed(write_loan()).commit(), zipc.LoanEnded),
    "write loan commit after abort": (lambda: aborted(write_loan()).commit(), zipc.LoanEnded),
    "write loan commit past its block": (lambda: write_loan().commit(65), zipc.TooLarge),
    "write loan view after commit": (lambda: committed(write_loan()).view(), zipc.LoanEnded),
    "write loan commit with a view still exported": (commit_with_export, BufferError),
    "read loan outlives its queue handle": (loan_outlives_its_handle, None),
    "numpy array outlives its loan and handle": (export_outlives_its_loan, None),
    # Queue arguments
    "queue reserve past block_size": (lambda: queue().reserve(65, timeout=0), zipc.TooLarge),
    "queue recv_batch max 0": (lambda: queue().recv_batch(max=0, timeout=0), ValueError),
    "queue send of an int": (lambda: queue().send(5), TypeError),  # type: ignore[arg-type]
    "queue negative block_size": (lambda: zipc.Queue.create(fresh(), block_size=-1), TypeError),
    "queue negative recovery_time": (lambda: zipc.Queue.create(fresh(), recovery_time=-1), ValueError),
    "queue recv timeout negative": (lambda: queue().recv(timeout=-1), ValueError),
    "queue recv timeout nan": (lambda: queue().recv(timeout=float("nan")), ValueError),
    "queue recv timeout str": (lambda: queue().recv(timeout="1"), TypeError),  # type: ignore[arg-type]
    # Topic, Publisher, Subscriber
    "topic subscribe after detach": (lambda: detached(topic()).subscribe(), zipc.Closed),
    "topic publisher after detach": (lambda: detached(topic()).publisher(), zipc.Closed),
    "topic close after detach": (lambda: detached(topic()).close(), zipc.Closed),
    "publisher publish after detach": (lambda: detached_publisher().publish(b"x"), zipc.Closed),
    "publisher reserve after detach": (lambda: detached_publisher().reserve(8), zipc.Closed),
    "publisher flush after detach": (lambda: detached_publisher().flush(), zipc.Closed),
    "publisher reserve while a loan is out": (publisher_reserve_twice, zipc.InvalidArgument),
    "subscriber recv after detach": (lambda: detached_subscriber().recv(timeout=0), zipc.Closed),
    "subscriber acquire after detach": (lambda: detached_subscriber().acquire(timeout=0), zipc.Closed),
    "subscriber lost after detach": (lambda: detached_subscriber().lost, zipc.Closed),
    "subscriber next_sequence after detach": (lambda: detached_subscriber().next_sequence, zipc.Closed),
    "subscriber iteration after detach": (lambda: next(iter(detached_subscriber())), zipc.Closed),
    "subscriber acquire while a read loan is held": (subscriber_acquire_twice, zipc.InvalidArgument),
    "subscriber detach with a loan out": (subscriber_detach_with_loan, zipc.InvalidArgument),
    "topic read loan view after release": (lambda: released(topic_read_loan()[1]).view(), zipc.LoanEnded),
    "topic write loan commit past its size": (lambda: topic().publisher().reserve(8).commit(9), zipc.TooLarge),
    "topic write loan commit twice": (lambda: committed(topic().publisher().reserve(8)).commit(), zipc.LoanEnded),
    "lossy subscriber acquire": (lambda: topic().subscribe(delivery=zipc.Delivery.lossy).acquire(timeout=0),
                                 zipc.NotSupported),
    "subscribe start negative": (lambda: topic().subscribe(start=-1), ValueError),
    "subscribe start float": (lambda: topic().subscribe(start=1.5), TypeError),  # type: ignore[arg-type]
    "subscribe start unknown word": (lambda: topic().subscribe(start="newest"), ValueError),
    "subscribe durable_grace negative": (lambda: topic().subscribe(durable_grace=-1), ValueError),
    # EventChannel, Listener
    "listener wait after detach": (lambda: detached(listener()).wait(0), zipc.Closed),
    "listener received after detach": (lambda: detached(listener()).received, zipc.Closed),
    "notify past max_event_id": (lambda: event_channel().notifier().notify(1000), zipc.TooLarge),
    # Heap
    "heap allocate after detach": (lambda: detached(heap()).allocate(8), zipc.Closed),
    "heap view after detach": (lambda: detached(heap()).view(0, 8), zipc.Closed),
    "heap stats after detach": (lambda: detached(heap()).stats(), zipc.Closed),
    "heap view outside the arena": (lambda: heap().view(1 << 20, 4), zipc.InvalidArgument),
    "heap free of a bogus offset": (lambda: heap().free(12345), zipc.InvalidArgument),
    "heap detach with a view exported": (heap_detach_with_view, zipc.InvalidArgument),
    # WaitSet
    "waitset wait after close": (lambda: closed_waitset().wait(0), zipc.Closed),
    "waitset attach after close": (lambda: closed_waitset().attach(topic().subscribe()), zipc.Closed),
    "waitset attach of a detached subscriber": (lambda: zipc.WaitSet().attach(detached_subscriber()), zipc.Closed),
    "waitset attach of a non-endpoint": (lambda: zipc.WaitSet().attach(object()), TypeError),  # type: ignore
    "waitset attach_interval zero": (lambda: zipc.WaitSet().attach_interval(0), ValueError),
    "waitset attach_interval negative": (lambda: zipc.WaitSet().attach_interval(-1), ValueError),
    "waitset attach_fd negative": (lambda: zipc.WaitSet().attach_fd(-1), ValueError),
    "waitset detach of an unknown id": (lambda: zipc.WaitSet().detach(12345), None),
    "waitset wait timeout negative": (lambda: zipc.WaitSet().wait(-1), ValueError),
    # asyncio
    "aio detach before release": (detach_then_aio_release, None),
    "aio recv while another task detaches": (aio_recv_on_detached_subscriber, zipc.Closed),
    "aio recv timeout negative": (lambda: asyncio.run(zipc.aio.recv(queue(), timeout=-1)), ValueError),
}


def run(case: str) -> str:
    fn, expected = CASES[case]
    try:
        fn()
    except BaseException as e:  # noqa: B036 - the case decides
        if expected is not None and isinstance(e, expected):
            return "ok"
        return f"FAIL raised {type(e).__name__}: {e}"
    return "ok" if expected is None else f"FAIL returned (expected {expected.__name__})"


if __name__ == "__main__":
    BASE = sys.argv[1]
    for c in sys.argv[2:]:
        print(f"CASE {c} {run(c)}", flush=True)
