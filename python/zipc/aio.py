"""asyncio for zipc: ``await recv(sub)``, ``async for msg in messages(sub)``, ``await call(client, req)``,
``await serve(server, handler)``.

Built on :class:`zipc.WaitSet` and the event loop's ``add_reader`` on its
readiness fd: no thread per channel, and the loop sleeps in its own
``epoll_wait`` until a publisher's ordinary futex wake completes the
WaitSet's io_uring futex wait (Linux 6.7 and later). On older kernels the
WaitSet's readiness fd is a timer that wakes the loop every millisecond to
poll (documented in docs/design/waitset.md); ``fallback_interval`` is the poll
period should even that fd be missing.

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
import datetime
import math
from typing import Any, AsyncIterator, Awaitable, Callable, Dict, List, Optional, Tuple, TypeVar, Union

from ._zipc import Queue, RpcClient, RpcServer, Subscriber, WaitSet

Receiver = Union[Subscriber, Queue]
Endpoint = Union[Subscriber, Queue, RpcClient, RpcServer]

fallback_interval = 0.001

Timeoutish = Union[float, int, datetime.timedelta, None]
_T = TypeVar("_T")


def _seconds(timeout: Timeoutish) -> Optional[float]:
    """The sync API's timeout rules: None forever, 0 try once, negative/NaN ValueError."""
    if timeout is None:
        return None
    if isinstance(timeout, (bool, str, bytes)):
        raise TypeError(f"timeout: expected seconds (int or float), datetime.timedelta or None, "
                        f"not {type(timeout).__name__}")
    if isinstance(timeout, datetime.timedelta):
        seconds = timeout.total_seconds()
    else:
        try:
            seconds = float(timeout)  # an int, a float, a numpy scalar, a Fraction
        except OverflowError:  # an int beyond a double: only its sign matters
            seconds = -1.0 if timeout < 0 else math.inf
        except (TypeError, ValueError):
            raise TypeError(f"timeout: expected seconds (int or float), datetime.timedelta or None, "
                            f"not {type(timeout).__name__}") from None
    if math.isnan(seconds):
        raise ValueError("timeout: NaN is not a duration")
    if seconds < 0:
        raise ValueError(f"timeout: {repr(timeout)[:40]} is negative (0 tries once, None waits forever)")
    return None if math.isinf(seconds) else seconds


async def _within(what: str, aw: Awaitable[_T], seconds: float) -> _T:
    """``aw`` within ``seconds``, else :class:`zipc.Timeout` (not a bare TimeoutError)."""
    from . import Timeout  # the error classes live in the package

    try:
        return await asyncio.wait_for(aw, seconds)
    except asyncio.TimeoutError:
        raise Timeout(f"{what}: timed out after {seconds:g} s") from None

# One WaitSet per endpoint in use, keyed by the endpoint object's id (the
# WaitSet keeps the endpoint alive, so the id stays its own), with the
# client's reconnect count when it was made (an RpcClient attached to a
# server that was replaced must be attached again).
_waitsets: Dict[int, Tuple[Endpoint, WaitSet, int]] = {}


def _waitset_of(endpoint: Endpoint) -> WaitSet:
    # A detached endpoint left its WaitSet already (detach() does that): drop its entry.
    for key in [k for k, (e, _, _) in _waitsets.items() if not getattr(e, "is_attached", True)]:
        _waitsets.pop(key)[1].close()
    generation = endpoint.reconnects if isinstance(endpoint, RpcClient) else 0
    entry = _waitsets.get(id(endpoint))
    if entry is not None and entry[2] != generation:
        release(endpoint)
        entry = None
    if entry is None:
        ws = WaitSet()
        ws.attach(endpoint)
        entry = (endpoint, ws, generation)
        _waitsets[id(endpoint)] = entry
    return entry[1]


def release(endpoint: Endpoint) -> None:
    """Forgets the WaitSet made for ``endpoint``; optional (``endpoint.detach()``
    works without it, before or after)."""
    entry = _waitsets.pop(id(endpoint), None)
    if entry is not None:
        entry[1].close()


# Coroutines waiting for an fd: the loop keeps one reader callback per fd, so
# several awaiting one endpoint (pipelined calls of one client) share it.
_fd_waiters: Dict[int, List["asyncio.Future[None]"]] = {}


async def _readable(fd: int) -> None:
    loop = asyncio.get_running_loop()
    fut: "asyncio.Future[None]" = loop.create_future()
    waiters = _fd_waiters.setdefault(fd, [])
    waiters.append(fut)

    def wake() -> None:
        loop.remove_reader(fd)
        for f in _fd_waiters.pop(fd, []):
            if not f.done():
                f.set_result(None)

    if len(waiters) == 1:
        loop.add_reader(fd, wake)
    try:
        await fut
    finally:
        left = _fd_waiters.get(fd)
        if left is not None and fut in left:  # cancelled (a timeout) before the fd woke it
            left.remove(fut)
            if not left:
                del _fd_waiters[fd]
                loop.remove_reader(fd)


async def call(client: RpcClient, request: bytes, timeout: Timeoutish = None) -> bytes:
    """Sends ``request`` and awaits its response on the loop (pipelining: many
    calls of one client may be awaited at once).

    ``timeout``: as in the sync API (None waits forever, 0 takes only a
    response already there, negative or NaN raises ValueError). Raises
    :class:`zipc.PeerDead` or :class:`zipc.Closed` when the server goes away,
    and :class:`zipc.Timeout` (a TimeoutError) when the time runs out (the
    call is then abandoned).
    """
    from . import Timeout  # the error classes live in the package

    seconds = _seconds(timeout)
    ticket = client.call_async(request)

    async def answer() -> bytes:
        while True:
            ws = _waitset_of(client)
            ready = ws.wait(0)  # arms the wait on the client's response event
            if ticket.ready or ready:
                try:
                    return ticket.wait(0)  # a response, or PeerDead / Closed
                except Timeout:
                    pass  # another call's response: its own awaiter takes it
            if ready:
                await asyncio.sleep(0)
            elif ws.readiness_fd >= 0:
                await _readable(ws.readiness_fd)
            else:
                await asyncio.sleep(fallback_interval)

    if seconds is None:
        return await answer()
    if seconds == 0:
        return ticket.wait(0)  # a response already there, else zipc.Timeout
    return await _within(f"rpc '{client.name}': call", answer(), seconds)


async def recv(endpoint: Receiver, timeout: Timeoutish = None) -> bytes:
    """The next message of a Subscriber or a Queue consumer, awaited on the loop.

    ``timeout``: as in the sync API (None waits forever, 0 takes only a
    message already there, negative or NaN raises ValueError). Raises
    :class:`zipc.Closed` when the channel is closed and drained (or the
    endpoint detached), and :class:`zipc.Timeout` (a TimeoutError) when the
    time runs out.
    """
    from . import Timeout  # the error classes live in the package

    seconds = _seconds(timeout)
    if seconds == 0:
        got = endpoint.try_recv()
        if got is None:
            raise Timeout(f"{type(endpoint).__name__}: recv: timed out (nothing there, timeout 0)")
        return got
    if seconds is not None:
        return await _within(f"{type(endpoint).__name__}: recv", recv(endpoint), seconds)
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


async def serve(server: RpcServer, handler: Callable[[bytes], Any]) -> None:
    """Serves ``server`` on the loop: ``handler(request) -> bytes-like | None``
    runs on the loop's thread for each request (no serving thread), until the
    task is cancelled or the server is closed (then it returns).

    The server must not be served by threads meanwhile (``start``/``serve``);
    the loop sleeps in its own ``epoll_wait`` between requests. A handler's
    exception is reported as unraisable and its client gets an empty response.
    """
    from . import Closed  # the error classes live in the package

    ws = _waitset_of(server)
    fd = ws.readiness_fd
    try:
        while True:
            # wait(0) arms the wait on the server's request event (or reports
            # it ready); a request after it makes fd readable: none is missed.
            ready = ws.wait(0)
            try:
                served = server.serve_pending(handler)
            except Closed:
                return
            if served:
                await asyncio.sleep(0)  # let the loop's other tasks run between batches
            elif ready or fd < 0:
                await asyncio.sleep(fallback_interval)  # ready with nothing to claim yet: no hot loop
            else:
                await _readable(fd)
    finally:
        release(server)


async def messages(endpoint: Receiver) -> AsyncIterator[bytes]:
    """Every message of ``endpoint`` until its channel is closed and drained."""
    from . import Closed  # the error classes live in the package

    while True:
        try:
            yield await recv(endpoint)
        except Closed:
            return


__all__ = ["call", "recv", "messages", "serve", "release", "fallback_interval"]
