"""Threads, signals and interpreter exit: a handle detached or closed from
another thread or a signal handler while a call waits on it makes that wait
raise zipc.Closed, and exiting with daemon threads blocked in zipc waits is
clean. Each case runs in a child interpreter, so a crash (SIGSEGV, abort) or a
hang (the watchdog: the child's timeout) fails the case instead of the run."""

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
# and records what it raised; RESULT prints it.
PRELUDE = """
import os, signal, sys, threading, time, zipc
NAME = sys.argv[1]
got = []
def waiter(fn, daemon=False):
    def run():
        try:
            fn()
            got.append('returned')
        except BaseException as e:
            got.append(type(e).__name__ + ': ' + str(e))
    t = threading.Thread(target=run, daemon=daemon)
    t.start()
    time.sleep(0.15)  # inside the wait by now
    return t
def finish(t):
    t.join(10)
    assert not t.is_alive(), 'the waiting thread never returned'
    print('RESULT', got[0], flush=True)
"""


# Every child this file runs, by key: started together (a few at a time) by
# the `children` fixture, so the file costs about the longest child, not the sum.
BODIES: Dict[str, str] = {}


def child(key: str, body: str) -> str:
    BODIES[key] = PRELUDE + body
    return key


@pytest.fixture(scope="module")
def children() -> Dict[str, "subprocess.CompletedProcess[str]"]:
    base = f"pyth.{os.getpid()}"
    done: Dict[str, subprocess.CompletedProcess[str]] = {}
    pending = list(enumerate(sorted(BODIES)))
    running: List[Tuple[str, "subprocess.Popen[str]", float]] = []
    try:
        while pending or running:
            while pending and len(running) < 6:
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


def run_child(children: Dict[str, "subprocess.CompletedProcess[str]"], key: str) -> "subprocess.CompletedProcess[str]":
    """The child of key, which must have exited 0 without a crash or an abort."""
    r = children[key]
    assert r.returncode == 0, f"child died: rc={r.returncode}\nstdout={r.stdout}\nstderr={r.stderr}"
    assert "terminate called" not in r.stderr and "leaked" not in r.stderr, r.stderr
    return r


def result(r: "subprocess.CompletedProcess[str]") -> str:
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            return line[len("RESULT "):]
    raise AssertionError(f"no result: {r.stdout!r} {r.stderr!r}")


# A blocked call on `h` (made by `setup`), and how another thread ends it.
WAITS: Dict[str, str] = {
    "queue recv": "h = zipc.Queue.create(NAME, block_size=64, block_count=4)\nblock = h.recv",
    "queue acquire": "h = zipc.Queue.create(NAME, block_size=64, block_count=4)\nblock = h.acquire",
    "queue recv_batch": "h = zipc.Queue.create(NAME, block_size=64, block_count=4)\nblock = h.recv_batch",
    "queue send on a full queue": ("h = zipc.Queue.create(NAME, block_size=64, block_count=2)\n"
                                   "h.send(b'a'); h.send(b'b')\nblock = lambda: h.send(b'c')"),
    "queue reserve on a full queue": ("h = zipc.Queue.create(NAME, block_size=64, block_count=2)\n"
                                      "h.send(b'a'); h.send(b'b')\nblock = h.reserve"),
    "queue iteration": "h = zipc.Queue.create(NAME, block_size=64, block_count=4)\nblock = lambda: next(iter(h))",
    "subscriber recv": "t = zipc.Topic.create(NAME)\nh = t.subscribe()\nblock = h.recv",
    "subscriber acquire": "t = zipc.Topic.create(NAME)\nh = t.subscribe()\nblock = h.acquire",
    "lossy subscriber recv": ("t = zipc.Topic.create(NAME)\nh = t.subscribe(delivery=zipc.Delivery.lossy)\n"
                              "block = h.recv"),
    "subscriber iteration": "t = zipc.Topic.create(NAME)\nh = t.subscribe()\nblock = lambda: next(iter(h))",
    "publisher publish on a full topic": (
        "t = zipc.Topic.create(NAME, capacity_bytes=4096, max_message_size=1024)\n"
        "s = t.subscribe()\nh = t.publisher()\n"
        "block = lambda: [h.publish(bytes(1000)) for _ in range(100)]"),
    "listener wait": "c = zipc.EventChannel.create(NAME)\nh = c.listener()\nblock = h.wait",
    "waitset wait": ("t = zipc.Topic.create(NAME)\ns = t.subscribe()\nh = zipc.WaitSet()\nh.attach(s)\n"
                     "block = h.wait"),
}
DETACH = {"waitset wait": "close"}

for _what, _setup in WAITS.items():
    child(f"thread {_what}", _setup + f"\nt1 = waiter(block)\nh.{DETACH.get(_what, 'detach')}()\nfinish(t1)\n")

SIGNALLED = ["queue recv", "subscriber recv", "listener wait", "waitset wait"]
for _what in SIGNALLED:
    child(f"signal {_what}", WAITS[_what] + f"""
signal.signal(signal.SIGALRM, lambda *a: h.{DETACH.get(_what, 'detach')}())
signal.setitimer(signal.ITIMER_REAL, 0.1)
try:
    block()
    got.append('returned')
except zipc.Closed as e:
    got.append('Closed: ' + str(e))
print('RESULT', got[0], flush=True)
""")

child("subscriber timed recv", WAITS["subscriber recv"] + "\nt1 = waiter(lambda: h.recv(timeout=30))\nh.detach()\nfinish(t1)\n")
child("queue close", WAITS["queue recv"] + "\nt1 = waiter(block)\nh.close()\nfinish(t1)\n")
child("topic close", WAITS["subscriber recv"] + "\nt1 = waiter(block)\nt.close()\nfinish(t1)\n")
child("many threads", WAITS["queue recv"] + """
ts = [waiter(h.recv) for _ in range(4)]
h.detach()
for t1 in ts:
    t1.join(10)
assert not any(t1.is_alive() for t1 in ts)
print('RESULT', ','.join(sorted(set(g.split(':')[0] for g in got))), len(got), flush=True)
""")
child("later calls", WAITS["queue recv"] + """
t1 = waiter(block)
h.detach()
finish(t1)
try:
    h.send(b'x')
except zipc.Closed as e:
    print('LATER', 'Closed', flush=True)
assert not h.is_attached
""")

child("rpc server close", """
srv = zipc.RpcServer.create(NAME)
c = zipc.RpcClient.connect(NAME)
t1 = waiter(lambda: c.call(b'x'))
srv.close()
finish(t1)
""")
# An RpcClient has no detach(); its waits matter at exit.
EXIT_WAITS = dict(WAITS, **{
    "rpc call": "srv = zipc.RpcServer.create(NAME)\nh = zipc.RpcClient.connect(NAME)\nblock = lambda: h.call(b'x')"})

EXITS = ["queue recv", "queue acquire", "subscriber recv", "listener wait", "waitset wait", "rpc call"]
for _what in EXITS:
    child(f"exit {_what}",
          EXIT_WAITS[_what] + "\nfor _ in range(3):\n    waiter(block, daemon=True)\nprint('exiting', flush=True)\n")
child("exit polling", """
q = zipc.Queue.create(NAME, block_size=64, block_count=4)
def poll():
    while True:
        try:
            q.recv(timeout=0.001)
        except zipc.Timeout:
            pass
for _ in range(4):
    threading.Thread(target=poll, daemon=True).start()
time.sleep(0.2)
print('exiting', flush=True)
""")

Children = Dict[str, "subprocess.CompletedProcess[str]"]


@pytest.mark.parametrize("what", sorted(WAITS))
def test_detach_from_another_thread_makes_a_blocked_call_raise_closed(children: Children, what: str) -> None:
    got = result(run_child(children, f"thread {what}"))
    assert got.startswith("Closed: ") and "detached" in got, got


@pytest.mark.parametrize("what", SIGNALLED)
def test_detach_from_a_signal_handler_makes_the_interrupted_wait_raise_closed(children: Children, what: str) -> None:
    assert result(run_child(children, f"signal {what}")).startswith("Closed: ")


def test_a_subscriber_detached_by_another_thread_reports_closed_not_corrupt(children: Children) -> None:
    assert result(run_child(children, "subscriber timed recv")).startswith("Closed: ")


def test_closing_a_queue_from_another_thread_ends_a_blocked_recv_with_closed(children: Children) -> None:
    assert result(run_child(children, "queue close")).startswith("Closed: ")


def test_closing_a_topic_from_another_thread_ends_a_blocked_subscriber_with_closed(children: Children) -> None:
    assert result(run_child(children, "topic close")).startswith("Closed: ")


def test_closing_an_rpc_server_from_another_thread_ends_a_blocked_call_with_closed(children: Children) -> None:
    assert result(run_child(children, "rpc server close")).startswith("Closed: ")


def test_many_threads_blocked_on_one_queue_all_end_with_closed_when_it_is_detached(children: Children) -> None:
    assert result(run_child(children, "many threads")) == "Closed 4"


def test_a_handle_detached_by_another_thread_refuses_later_calls_with_closed(children: Children) -> None:
    assert "LATER Closed" in run_child(children, "later calls").stdout


@pytest.mark.parametrize("what", EXITS)
def test_interpreter_exit_with_a_daemon_thread_blocked_in_a_wait_is_clean(children: Children, what: str) -> None:
    r = run_child(children, f"exit {what}")
    assert "exiting" in r.stdout and r.stderr == "", r.stderr


def test_interpreter_exit_with_daemon_threads_polling_in_short_waits_is_clean(children: Children) -> None:
    r = run_child(children, "exit polling")
    assert "exiting" in r.stdout and r.stderr == "", r.stderr
