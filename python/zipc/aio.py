"""asyncio for zipc: ``await recv(sub)``, ``async for msg in messages(sub)``.

Built on :class:`zipc.WaitSet` and the event loop's ``add_reader`` on its
readiness fd: no thread per channel, and the loop sleeps in its own
``epoll_wait`` until a publisher's ordinary futex wake completes the
WaitSet's io_uring futex wait (Linux 6.7 and later). On older kernels the
WaitSet has no readiness fd and these functions poll every
``fallback_interval`` seconds instead (documented in docs/waitset.md).

Use an endpoint from the loop's thread only while it is awaited here::

    import asyncio, zipc, zipc.aio

    async def main():
        sub = zipc.Topic.open("ticks").subscribe()
        async for msg in zipc.aio.messages(sub):
            print(msg)

    asyncio.run(main())
"""

from __future__ import annotations

import asyncio
from typing import AsyncIterator, Dict, Optional, Tuple, Union

from ._zipc import Queue, Subscriber, WaitSet

Endpoint = Union[Subscriber, Queue]

fallback_interval = 0.001

# One WaitSet per endpoint in use, keyed by the endpoint object's id (the
# WaitSet keeps the endpoint alive, so the id stays its own).
_waitsets: Dict[int, Tuple[Endpoint, WaitSet]] = {}


def _waitset_of(endpoint: Endpoint) -> WaitSet:
    entry = _waitsets.get(id(endpoint))
    if entry is None:
        ws = WaitSet()
        ws.attach(endpoint)
        entry = (endpoint, ws)
        _waitsets[id(endpoint)] = entry
    return entry[1]


def release(endpoint: Endpoint) -> None:
    """Forgets the WaitSet made for ``endpoint`` (needed before ``endpoint.detach()``)."""
    entry = _waitsets.pop(id(endpoint), None)
    if entry is not None:
        entry[1].close()


async def _readable(fd: int) -> None:
    loop = asyncio.get_running_loop()
    fut = loop.create_future()

    def wake() -> None:
        if not fut.done():
            fut.set_result(None)

    loop.add_reader(fd, wake)
    try:
        await fut
    finally:
        loop.remove_reader(fd)


async def recv(endpoint: Endpoint, timeout: Optional[float] = None) -> bytes:
    """The next message of a Subscriber or a Queue consumer, awaited on the loop.

    Raises :class:`zipc.Closed` when the channel is closed and drained, and
    :class:`asyncio.TimeoutError` after ``timeout`` seconds.
    """
    if timeout is not None:
        return await asyncio.wait_for(recv(endpoint), timeout)
    msg = endpoint.try_recv()
    if msg is not None:
        return msg
    ws = _waitset_of(endpoint)
    fd = ws.readiness_fd
    while True:
        # wait(0) arms the futex waits (or reports the endpoint ready); a
        # publish after it completes the armed wait and makes fd readable,
        # so no wake-up is lost between this check and the await.
        ready = ws.wait(0)
        msg = endpoint.try_recv()
        if msg is not None:
            return msg
        if ready:
            await asyncio.sleep(0)  # ready but nothing read (a closed, drained queue raises in try_recv)
            continue
        if fd >= 0:
            await _readable(fd)
        else:
            await asyncio.sleep(fallback_interval)


async def messages(endpoint: Endpoint) -> AsyncIterator[bytes]:
    """Every message of ``endpoint`` until its channel is closed and drained."""
    from . import Closed  # the error classes live in the package

    while True:
        try:
            yield await recv(endpoint)
        except Closed:
            return


__all__ = ["recv", "messages", "release", "fallback_interval"]
