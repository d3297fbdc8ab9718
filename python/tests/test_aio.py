"""zipc.WaitSet and zipc.aio: many channels at once, and asyncio on the loop's own epoll."""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import multiprocessing.synchronize
import time
from typing import List

import pytest

import zipc
import zipc.aio


def _publish_later(name: str, delay: float, count: int) -> None:
    time.sleep(delay)
    t = zipc.Topic.open(name)
    pub = t.publisher()
    for i in range(count):
        pub.publish(b"late %d" % i, timeout=5)


def test_a_waitset_reports_the_subscriber_that_has_data(name: str) -> None:
    with zipc.Topic.create(name + "a") as ta, zipc.Topic.create(name + "b") as tb:
        try:
            a, b = ta.subscribe(), tb.subscribe()
            ws = zipc.WaitSet()
            ia, ib = ws.attach(a), ws.attach(b)
            assert ia != ib and len(ws) == 2
            assert ws.wait(0) == []
            tb.publisher().publish(b"x")
            assert ws.wait(1.0) == [(ib, "subscriber")]
            assert ws.wait(0) == [(ib, "subscriber")], "level-triggered: still ready until read"
            assert b.try_recv() == b"x"
            assert ws.wait(0) == []
            a.detach()  # leaves the WaitSet first
            assert len(ws) == 1 and not ws.detach(ia)
            assert ws.detach(ib) and not ws.detach(ib)
            b.detach()
            ws.close()
        finally:
            zipc.remove_segment(name + "a")
            zipc.remove_segment(name + "b")


def test_a_waitset_refuses_what_it_cannot_wait_on(name: str) -> None:
    ws = zipc.WaitSet()
    with pytest.raises(TypeError, match="endpoint"):
        ws.attach(object())  # type: ignore[arg-type]
    with zipc.Queue.create(name, block_size=64, block_count=8, role=zipc.Role.producer) as q:
        with pytest.raises(zipc.InvalidArgument):
            ws.attach(q)  # a producer has nothing to receive


def test_the_readiness_fd_becomes_readable_when_another_process_publishes(name: str) -> None:
    with zipc.Topic.create(name) as t:
        sub = t.subscribe()
        ws = zipc.WaitSet()
        ws.attach(sub)
        if not ws.uses_io_uring:
            pytest.skip("no io_uring futex waits on this kernel: the WaitSet has no readiness fd")
        fd = ws.readiness_fd
        assert fd >= 0
        assert ws.wait(0) == []  # arms the wait
        import select

        assert select.select([fd], [], [], 0)[0] == []
        p = mp.get_context("fork").Process(target=_publish_later, args=(name, 0.05, 1))
        p.start()
        r, _, _ = select.select([fd], [], [], 10)
        p.join(10)
        assert r == [fd]
        assert len(ws.wait(0)) == 1
        assert sub.try_recv() == b"late 0"
        ws.close()


def test_await_recv_gets_a_message_published_later_by_another_process(name: str) -> None:
    async def main() -> List[bytes]:
        t = zipc.Topic.create(name)
        sub = t.subscribe()
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.005)
                ticks += 1

        tick_task = asyncio.create_task(ticker())
        p = mp.get_context("fork").Process(target=_publish_later, args=(name, 0.2, 3))
        p.start()
        got = [await zipc.aio.recv(sub, timeout=10) for _ in range(3)]
        p.join(10)
        tick_task.cancel()
        assert ticks >= 5, "the loop was blocked while waiting"
        zipc.aio.release(sub)
        t.detach()
        return got

    assert asyncio.run(main()) == [b"late 0", b"late 1", b"late 2"]


def test_one_loop_waits_on_sixteen_topics_and_a_queue_at_once(name: str) -> None:
    names = [f"{name}.t{i}" for i in range(16)]
    topics = [zipc.Topic.create(n) for n in names]
    q = zipc.Queue.create(name + ".q", block_size=64, block_count=64)
    try:
        subs = [t.subscribe() for t in topics]

        async def main() -> List[bytes]:
            async def first(s: zipc.Subscriber) -> bytes:
                return await zipc.aio.recv(s)

            waiters = [asyncio.create_task(first(s)) for s in subs]
            queue_waiter = asyncio.create_task(zipc.aio.recv(q))
            await asyncio.sleep(0.05)
            assert not any(w.done() for w in waiters)
            topics[11].publisher().publish(b"eleven")
            done, _ = await asyncio.wait(waiters, timeout=10, return_when=asyncio.FIRST_COMPLETED)
            assert [waiters.index(d) for d in done] == [11]
            q.send(b"job", timeout=1)
            job = await asyncio.wait_for(queue_waiter, 10)
            for w in waiters:
                w.cancel()
            await asyncio.gather(*waiters, return_exceptions=True)
            return [done.pop().result(), job]

        assert asyncio.run(main()) == [b"eleven", b"job"]
    finally:
        for s in subs:
            zipc.aio.release(s)
        zipc.aio.release(q)
        for t, n in zip(topics, names):
            t.detach()
            zipc.remove_segment(n)
        q.close()
        zipc.remove_segment(name + ".q")


def test_async_for_over_a_queue_ends_when_it_is_closed_and_drained(name: str) -> None:
    def produce(n: str) -> None:
        with zipc.Queue.open(n, role=zipc.Role.producer) as q:
            for i in range(100):
                q.send(b"%d" % i, timeout=5)
                if i % 10 == 0:
                    time.sleep(0.005)
            q.close()

    async def main() -> List[int]:
        q = zipc.Queue.create(name, block_size=64, block_count=16, role=zipc.Role.consumer)
        p = mp.get_context("fork").Process(target=produce, args=(name,))
        p.start()
        got = [int(m) async for m in zipc.aio.messages(q)]
        p.join(10)
        assert p.exitcode == 0
        zipc.aio.release(q)
        return got

    assert asyncio.run(main()) == list(range(100))


def test_a_timeout_raises_and_leaves_the_endpoint_usable(name: str) -> None:
    async def main() -> bytes:
        t = zipc.Topic.create(name)
        sub = t.subscribe()
        with pytest.raises(zipc.Timeout):  # a TimeoutError, as in the sync API
            await zipc.aio.recv(sub, timeout=0.05)
        t.publisher().publish(b"after")
        msg = await zipc.aio.recv(sub, timeout=5)
        zipc.aio.release(sub)
        return msg

    assert asyncio.run(main()) == b"after"


def test_a_producer_waits_for_room_in_a_waitset(name: str) -> None:
    with zipc.Queue.create(name, block_size=64, block_count=2, role=zipc.Role.producer) as q:
        c = zipc.Queue.open(name, role=zipc.Role.consumer)
        q.send(b"a", timeout=1)
        q.send(b"b", timeout=1)
        ws = zipc.WaitSet()
        rid = ws.attach_room(q)
        assert ws.wait(0) == []
        with pytest.raises(zipc.InvalidArgument):
            ws.attach_room(c)  # a consumer-only handle sends nothing
        assert c.recv(timeout=1) == b"a"
        assert ws.wait(1.0) == [(rid, "queue_room")]
        ws.close()
        c.detach()


def _echo_server(name: str, ready: "mp.synchronize.Event", delay: float) -> None:
    server = zipc.RpcServer.create(name)
    server.start(lambda req: (time.sleep(delay), b"re:" + req)[1], threads=2)
    ready.set()
    time.sleep(30)


def test_await_call_pipelines_requests_to_a_server_in_another_process(name: str) -> None:
    ctx = mp.get_context("fork")
    ready = ctx.Event()
    p = ctx.Process(target=_echo_server, args=(name, ready, 0.01))
    p.start()
    try:
        assert ready.wait(10)
        client = zipc.RpcClient.connect(name, timeout=5)

        async def main() -> List[bytes]:
            ticks = 0

            async def ticker() -> None:
                nonlocal ticks
                while True:
                    await asyncio.sleep(0.002)
                    ticks += 1

            t = asyncio.create_task(ticker())
            got = await asyncio.gather(*(zipc.aio.call(client, b"%d" % i, timeout=10) for i in range(4)))
            t.cancel()
            assert ticks >= 2, "the loop was blocked while the calls were in flight"
            return list(got)

        assert asyncio.run(main()) == [b"re:0", b"re:1", b"re:2", b"re:3"]

        async def after_kill() -> None:
            p.kill()
            p.join(10)
            with pytest.raises((zipc.PeerDead, zipc.Closed)):
                await zipc.aio.call(client, b"anyone?", timeout=10)

        asyncio.run(after_kill())
        zipc.aio.release(client)
    finally:
        if p.is_alive():
            p.kill()
        p.join(10)


def test_a_waitset_reports_an_rpc_server_with_a_request_waiting(name: str) -> None:
    with zipc.RpcServer.create(name) as server:
        client = zipc.RpcClient.connect(name, timeout=5)
        ws = zipc.WaitSet()
        sid = ws.attach(server)
        assert ws.wait(0) == []
        with pytest.raises(zipc.InvalidArgument):
            server.start(lambda req: req)  # threads would compete with the WaitSet for its requests
        ticket = client.call_async(b"ping")
        assert ws.wait(5) == [(sid, "rpc_server")]
        assert ws.wait(0) == [(sid, "rpc_server")], "level-triggered: still ready until claimed"
        assert server.serve_pending(lambda req: b"re:" + req) == 1
        assert ticket.wait(5) == b"re:ping"
        assert ws.wait(0) == []
        assert server.serve_pending(lambda req: req) == 0
        assert ws.detach(sid)
        ws.close()


def _call_later(name: str, delay: float, count: int, results: "mp.Queue[bytes]") -> None:
    time.sleep(delay)
    client = zipc.RpcClient.connect(name, timeout=5)
    for i in range(count):
        results.put(client.call(b"%d" % i, timeout=10))


def test_an_event_loop_serves_an_rpc_server_without_threads(name: str) -> None:
    ctx = mp.get_context("fork")
    results = ctx.Queue()
    server = zipc.RpcServer.create(name)
    p = ctx.Process(target=_call_later, args=(name, 0.05, 5, results))
    p.start()
    try:

        async def main() -> int:
            ticks = 0

            async def ticker() -> None:
                nonlocal ticks
                while True:
                    await asyncio.sleep(0.002)
                    ticks += 1

            t = asyncio.create_task(ticker())
            serving = asyncio.create_task(zipc.aio.serve(server, lambda req: b"re:" + req))
            # A call from this loop too: served by the same loop.
            here = zipc.RpcClient.connect(name, timeout=5)
            assert await zipc.aio.call(here, b"own", timeout=10) == b"re:own"
            zipc.aio.release(here)
            while server.served < 6:
                await asyncio.sleep(0.005)
            serving.cancel()
            with pytest.raises(asyncio.CancelledError):
                await serving
            t.cancel()
            return ticks

        assert asyncio.run(main()) >= 2, "the loop was blocked while serving"
        assert sorted(results.get(timeout=10) for _ in range(5)) == [b"re:%d" % i for i in range(5)]
        p.join(10)
        assert p.exitcode == 0
        server.start(lambda req: req)  # detached from the loop's WaitSet: threads may serve it again
        server.stop()
    finally:
        if p.is_alive():
            p.kill()
        p.join(10)
        server.close()


def test_serve_returns_when_the_server_is_closed(name: str) -> None:
    server = zipc.RpcServer.create(name)

    async def main() -> None:
        serving = asyncio.create_task(zipc.aio.serve(server, lambda req: req))
        await asyncio.sleep(0.02)
        server.close()
        await asyncio.wait_for(serving, 5)

    asyncio.run(main())
