"""The Rpc error path from Python: a handler that raises (or returns the wrong
type) becomes zipc.RemoteError at the caller, with the remote exception's
type name and message; pipelined calls keep their own outcomes; threads= is
bounded."""

from __future__ import annotations

import sys
import time
from typing import Any, Iterator, List, Optional

import pytest

import zipc


class QuotaExceeded(Exception):
    pass


def handler(req: bytes) -> Any:
    """By the request's first byte: 'v' ValueError, 'q' QuotaExceeded,
    'r' zipc.RemoteError(code=404), 's' a str, 'i' an int, 'n' None; else echo."""
    kind = req[:1]
    if kind == b"v":
        raise ValueError("bad request " + req[1:].decode())
    if kind == b"q":
        raise QuotaExceeded("over quota")
    if kind == b"r":
        raise zipc.RemoteError("no such key", code=404)
    if kind == b"s":
        return "a str, not bytes"
    if kind == b"i":
        return 7
    if kind == b"n":
        return None
    return req


def logged(unraisable: List[Any], kind: type, text: str, exact: bool = False) -> bool:
    """Whether the server reported kind with text; it reports after it has
    answered, so the caller may see the answer first: wait up to 5 s."""
    give_up = time.monotonic() + 5
    while not any(t is kind and (m == text if exact else text in m) for t, m in unraisable):
        if time.monotonic() > give_up:
            return False
        time.sleep(0.01)
    return True


@pytest.fixture
def unraisable(monkeypatch: pytest.MonkeyPatch) -> Iterator[List[Any]]:
    """What the server reports as unraisable (its log of handler failures)."""
    seen: List[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: seen.append((u.exc_type, str(u.exc_value))))
    yield seen


@pytest.fixture
def client(name: str, unraisable: List[Any]) -> Iterator[zipc.RpcClient]:
    with zipc.RpcServer.create(name) as server:
        server.start(handler, threads=2)
        yield zipc.RpcClient.connect(name, timeout=2)
        server.stop()


def remote_error(client: zipc.RpcClient, req: bytes) -> zipc.RemoteError:
    with pytest.raises(zipc.RemoteError) as e:
        client.call(req, timeout=5)
    return e.value


def test_an_exception_in_a_handler_is_a_remote_error_with_its_type_and_message(
        client: zipc.RpcClient, unraisable: List[Any]) -> None:
    e = remote_error(client, b"v42")
    assert isinstance(e, zipc.Error)
    assert e.code == 1
    assert e.remote_type == "ValueError"
    assert e.remote_message == "bad request 42"
    assert "ValueError" in str(e) and "bad request 42" in str(e) and client.name in str(e)
    assert logged(unraisable, ValueError, "bad request 42", exact=True)  # reported at the server too


def test_a_user_exception_class_is_named_with_its_module(client: zipc.RpcClient) -> None:
    e = remote_error(client, b"q")
    assert e.remote_type.endswith("QuotaExceeded")
    assert e.remote_message == "over quota"


def test_raising_remote_error_in_a_handler_chooses_the_code_and_is_not_reported(
        client: zipc.RpcClient, unraisable: List[Any]) -> None:
    e = remote_error(client, b"r")
    assert e.code == 404
    assert e.remote_type == ""
    assert e.remote_message == "no such key"
    assert unraisable == []


@pytest.mark.parametrize("req, returned", [(b"s", "str"), (b"i", "int")])
def test_a_handler_returning_a_wrong_type_is_an_error_at_both_ends(
        client: zipc.RpcClient, unraisable: List[Any], req: bytes, returned: str) -> None:
    e = remote_error(client, req)
    assert e.code == 2
    assert e.remote_type == "TypeError"
    assert returned in e.remote_message and "bytes-like" in e.remote_message
    assert logged(unraisable, TypeError, returned)


def test_none_and_bytes_like_results_are_ordinary_replies(client: zipc.RpcClient) -> None:
    assert client.call(b"n", timeout=5) == b""
    assert client.call(bytearray(b"echo"), timeout=5) == b"echo"
    assert client.call(memoryview(b"mview"), timeout=5) == b"mview"


def test_pipelined_calls_keep_their_order_and_each_its_own_outcome(client: zipc.RpcClient) -> None:
    for _ in range(10):
        sent = [b"a0", b"v1", b"a2", b"s3", b"a4", b"r5", b"a6", b"v7"]
        tickets = [client.call_async(r) for r in sent]
        for req, t in zip(sent, tickets):
            if req[:1] == b"a":
                assert t.wait(timeout=5) == req
            else:
                with pytest.raises(zipc.RemoteError) as e:
                    t.wait(timeout=5)
                assert e.value.code == {b"v": 1, b"s": 2, b"r": 404}[req[:1]]


def test_a_failed_call_leaves_the_client_usable(client: zipc.RpcClient) -> None:
    for i in range(3 * client.inflight_limit):
        remote_error(client, b"v")
    assert client.call(b"after", timeout=5) == b"after"


def test_serve_pending_answers_errors_the_same_way(name: str, unraisable: List[Any]) -> None:
    with zipc.RpcServer.create(name) as server:
        client = zipc.RpcClient.connect(name, timeout=2)
        t = client.call_async(b"v9")
        u = client.call_async(b"ok")
        served = 0
        for _ in range(500):
            served += server.serve_pending(handler)
            if served == 2:
                break
        assert served == 2
        with pytest.raises(zipc.RemoteError) as e:
            t.wait(timeout=5)
        assert e.value.remote_type == "ValueError"
        assert u.wait(timeout=5) == b"ok"


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str for you")


def test_an_exception_whose_str_raises_still_ends_the_call_in_an_error(name: str, unraisable: List[Any]) -> None:
    def bad(req: bytes) -> Optional[bytes]:
        raise Unprintable()

    with zipc.RpcServer.create(name) as server:
        server.start(bad)
        client = zipc.RpcClient.connect(name, timeout=2)
        with pytest.raises(zipc.RemoteError) as e:
            client.call(b"x", timeout=5)
        assert e.value.code == 1
        server.stop()


@pytest.mark.parametrize("threads", [0, -1, 257, 10**6, 10**30])
def test_start_rejects_a_thread_count_outside_its_bound_naming_it(name: str, threads: int) -> None:
    with zipc.RpcServer.create(name) as server:
        with pytest.raises(ValueError, match=r"1\.\.256"):
            server.start(handler, threads=threads)
        with pytest.raises(ValueError, match=r"1\.\.256"):
            server.serve(handler, threads=threads, timeout=0.01)


def test_start_rejects_a_thread_count_that_is_no_int(name: str) -> None:
    with zipc.RpcServer.create(name) as server:
        with pytest.raises(TypeError):
            server.start(handler, threads="2")  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            server.start(handler, threads=2.0)  # type: ignore[arg-type]
