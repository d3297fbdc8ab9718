"""RpcServer and RpcClient across threads and interpreter exit: closing a
server while another thread serves it, or detaching a client while another
thread waits for a response, makes that thread raise zipc.Closed; exiting
with daemon threads blocked in connect, wait or serve_pending is clean. Each
case runs in a child interpreter, so a crash (SIGSEGV, abort) or a hang (the
watchdog: the child's timeout) fails the case instead of the run."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Dict, List, Tuple

import pytest

import zipc

WATCHDOG = 30  # seconds; a child normally ends within a second

# Child prelude: NAME is unique to the child; waiter(fn) runs fn in a thread
# and records what it raised; finish(t) prints it after RESULT.
PRELUDE = """
import sys, threading, time, zipc
NAME = sys.argv[1]
got = []
def waiter(fn, daemon=False, settle=0.15):
    def run():
        try:
            fn()
            got.append('returned')
        except BaseException as e:
            got.append(type(e).__name__ + ': ' + str(e))
    t = threading.Thread(target=run, daemon=daemon)
    t.start()
    time.sleep(settle)  # inside the call by now
    return t
def finish(t):
    t.join(10)
    assert not t.is_alive(), 'the waiting thread never returned'
    print('RESULT', got[0], flush=True)
"""

BODIES: Dict[str, str] = {}


def child(key: str, body: str) -> str:
    BODIES[key] = PRELUDE + body
    return key


child("close while serve_pending polls", """
srv = zipc.RpcServer.create(NAME)
def poll():
    while True:
        srv.serve_pending(lambda r: r)
        time.sleep(0.001)
t = waiter(poll)
srv.close()
finish(t)
""")
child("close while serve_pending runs a handler", """
srv = zipc.RpcServer.create(NAME)
c = zipc.RpcClient.connect(NAME)
entered = threading.Event()
def slow(r):
    entered.set()
    time.sleep(0.3)
    return r
ticket = c.call_async(b'x')
t = waiter(lambda: srv.serve_pending(slow), settle=0)
entered.wait(5)
srv.close()  # waits until serve_pending has left the handler
finish(t)
try:
    ticket.wait(5)
    print('CALLER returned')
except zipc.Error as e:
    print('CALLER', type(e).__name__)
""")
child("close while serve runs", """
srv = zipc.RpcServer.create(NAME)
t = waiter(lambda: srv.serve(lambda r: r, threads=2))
srv.close()
finish(t)
""")
child("detach while call waits", """
srv = zipc.RpcServer.create(NAME)  # never serves: the call waits
c = zipc.RpcClient.connect(NAME)
t = waiter(lambda: c.call(b'x'))
c.detach()
finish(t)
try:
    c.call(b'y', timeout=0)
except zipc.Closed:
    print('LATER Closed', flush=True)
""")
child("detach while ticket waits", """
srv = zipc.RpcServer.create(NAME)
c = zipc.RpcClient.connect(NAME)
ticket = c.call_async(b'x')
t = waiter(lambda: c.wait(ticket))
c.detach()
finish(t)
try:
    ticket.wait(0)
except zipc.Closed:
    print('LATER Closed', flush=True)
del ticket  # the ticket ended with the connection: dropping it is harmless
""")

EXITS = {
    "connect": "block = lambda: zipc.RpcClient.connect(NAME, timeout=None)",
    "wait": ("srv = zipc.RpcServer.create(NAME)\nc = zipc.RpcClient.connect(NAME)\n"
             "block = lambda: c.call_async(b'x').wait()"),
    "serve_pending": ("srv = zipc.RpcServer.create(NAME)\nc = zipc.RpcClient.connect(NAME)\n"
                      "def busy(r):\n    while True:\n        time.sleep(0.001)\n"
                      "def block():\n    while True:\n        srv.serve_pending(busy)\n        time.sleep(0.001)\n"
                      "tickets = [c.call_async(b'x') for _ in range(3)]\n"),
}
for _what, _setup in EXITS.items():
    child(f"exit {_what}", _setup + "\nfor _ in range(3):\n    waiter(block, daemon=True)\nprint('exiting', flush=True)\n")


@pytest.fixture(scope="module")
def children() -> Dict[str, "subprocess.CompletedProcess[str]"]:
    base = f"pyrpct.{os.getpid()}"
    done: Dict[str, subprocess.CompletedProcess[str]] = {}
    pending = list(enumerate(sorted(BODIES)))
    running: List[Tuple[str, "subprocess.Popen[str]", float]] = []
    try:
        while pending or running:
            while pending and len(running) < 4:
                i, key = pending.pop(0)
                p = subprocess.Popen([sys.executable, "-c", BODIES[key], f"{base}.{i}"], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
                running.append((key, p, time.monotonic() + WATCHDOG))
            key, p, deadline = running.pop(0)
            try:
                out, err = p.communicate(timeout=max(0.0, deadline - time.monotonic()))
                rc = p.returncode
            except subprocess.TimeoutExpired:
                p.kill()
                out, err = p.communicate()
                rc, err = -999, err + f"\nhung: killed by the watchdog after {WATCHDOG} s"
            done[key] = subprocess.CompletedProcess(p.args, rc, out, err)
    finally:
        for _, p, _ in running:
            p.kill()
            p.wait()
        for s in zipc.segments():
            if s.name.startswith(base):
                zipc.remove_segment(s.name)
    return done


Children = Dict[str, "subprocess.CompletedProcess[str]"]


def clean_child(children: Children, key: str) -> "subprocess.CompletedProcess[str]":
    """The child of key, which must have exited 0 without a crash, an abort or anything on stderr."""
    r = children[key]
    assert r.returncode == 0, f"child died: rc={r.returncode}\nstdout={r.stdout}\nstderr={r.stderr}"
    assert r.stderr == "", r.stderr
    return r


def result(r: "subprocess.CompletedProcess[str]") -> str:
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            return line[len("RESULT "):]
    raise AssertionError(f"no result: {r.stdout!r} {r.stderr!r}")


def test_closing_a_server_from_another_thread_makes_its_serve_pending_loop_raise_closed(children: Children) -> None:
    got = result(clean_child(children, "close while serve_pending polls"))
    assert got.startswith("Closed: rpc '") and "serve_pending" in got, got


def test_closing_a_server_while_its_handler_runs_in_serve_pending_raises_closed_there(children: Children) -> None:
    r = clean_child(children, "close while serve_pending runs a handler")
    assert result(r).startswith("Closed: rpc '"), result(r)
    # The reply was sent after close(): delivered, or Closed for the caller; never lost without a word.
    assert "CALLER returned" in r.stdout or "CALLER Closed" in r.stdout, r.stdout


def test_closing_a_server_from_another_thread_makes_serve_raise_closed(children: Children) -> None:
    got = result(clean_child(children, "close while serve runs"))
    assert got.startswith("Closed: rpc '") and "serve" in got, got


@pytest.mark.parametrize("what", ["call", "ticket"])
def test_detaching_a_client_from_another_thread_makes_its_waiting_call_raise_closed(
        children: Children, what: str) -> None:
    r = clean_child(children, f"detach while {what} waits")
    got = result(r)
    assert got.startswith("Closed: rpc '") and "detached" in got, got
    assert "LATER Closed" in r.stdout, r.stdout


@pytest.mark.parametrize("what", sorted(EXITS))
def test_interpreter_exit_with_daemon_threads_blocked_in_rpc_calls_is_clean(children: Children, what: str) -> None:
    r = clean_child(children, f"exit {what}")
    assert "exiting" in r.stdout, r.stdout


def test_a_detached_client_refuses_calls_tickets_and_properties_with_closed(name: str) -> None:
    with zipc.RpcServer.create(name) as server:
        server.start(lambda r: r)
        sut = zipc.RpcClient.connect(name, timeout=2)
        ticket = sut.call_async(b"x")
        sut.detach()
        sut.detach()  # idempotent
        assert not sut.is_attached
        for op in (lambda: sut.call(b"y", timeout=1), lambda: sut.call_async(b"y"), lambda: ticket.wait(1),
                   lambda: sut.wait(ticket, 1), lambda: ticket.ready, lambda: sut.max_request_size):
            with pytest.raises(zipc.Closed, match="rpc '.*': .*detached"):
                op()
        del ticket
        with zipc.RpcClient.connect(name, timeout=2) as other:  # the service is still there
            assert other.call(b"z", timeout=5) == b"z"
        assert not other.is_attached
        server.stop()


def test_a_closed_server_refuses_to_serve_again_with_closed(name: str) -> None:
    sut = zipc.RpcServer.create(name)
    sut.close()
    sut.close()  # idempotent
    assert not sut.is_open
    for op in (lambda: sut.start(lambda r: r), lambda: sut.serve(lambda r: r, timeout=0.01),
               lambda: sut.serve_pending(lambda r: r), lambda: sut.connected_clients):
        with pytest.raises(zipc.Closed, match=f"rpc '{name}'"):
            op()
    with pytest.raises(zipc.NotFound):
        zipc.RpcClient.connect(name, timeout=0)


def test_a_handler_cannot_stop_the_threads_it_runs_on_and_its_caller_learns_why(name: str,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "unraisablehook", lambda u: None)
    with zipc.RpcServer.create(name) as sut:
        sut.start(lambda r: sut.stop(), threads=2)
        with zipc.RpcClient.connect(name, timeout=2) as c:
            with pytest.raises(zipc.RemoteError) as e:
                c.call(b"x", timeout=5)
            assert e.value.code == 1 and "InvalidArgument" in e.value.remote_type, e.value
            assert "own handler thread" in e.value.remote_message
        sut.stop()


def test_a_handler_that_closes_its_server_ends_serve_pending_with_closed(name: str) -> None:
    sut = zipc.RpcServer.create(name)
    with zipc.RpcClient.connect(name, timeout=2) as c:
        tickets = [c.call_async(b"x") for _ in range(2)]
        with pytest.raises(zipc.Closed, match="serve_pending"):
            sut.serve_pending(lambda r: sut.close())
        assert not sut.is_open and sut.served == 1
        with pytest.raises(zipc.Closed):
            tickets[1].wait(5)  # never served: the service closed
        del tickets
