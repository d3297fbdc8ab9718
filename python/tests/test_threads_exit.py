"""Threads, signals and interpreter exit: a handle detached or closed from
another thread or a signal handler while a call waits on it makes that wait
raise zipc.Closed, and exiting with daemon threads blocked in zipc waits is
clean. Each case runs in a child interpreter, so a crash (SIGSEGV, abort) or a
hang (the watchdog: the child's timeout) fails the case instead of the run."""

from __future__ import annotations

import subprocess
import sys
from typing import Dict

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


def run_child(body: str, name: str) -> subprocess.CompletedProcess[str]:
    try:
        r = subprocess.run([sys.executable, "-c", PRELUDE + body, name], capture_output=True, text=True,
                           timeout=WATCHDOG)
    finally:
        for suffix in ("", ".b"):
            zipc.remove_segment(name + suffix)
    assert r.returncode == 0, f"child died: rc={r.returncode}\nstdout={r.stdout}\nstderr={r.stderr}"
    assert "terminate called" not in r.stderr and "leaked" not in r.stderr, r.stderr
    return r


def result(r: subprocess.CompletedProcess[str]) -> str:
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


@pytest.mark.parametrize("what", sorted(WAITS))
def test_detach_from_another_thread_makes_a_blocked_call_raise_closed(name: str, what: str) -> None:
    verb = DETACH.get(what, "detach")
    r = run_child(WAITS[what] + f"\nt1 = waiter(block)\nh.{verb}()\nfinish(t1)\n", name)
    assert result(r).startswith("Closed: "), r.stdout
    assert "detached" in result(r)


@pytest.mark.parametrize("what", ["queue recv", "subscriber recv", "listener wait", "waitset wait"])
def test_detach_from_a_signal_handler_makes_the_interrupted_wait_raise_closed(name: str, what: str) -> None:
    verb = DETACH.get(what, "detach")
    body = WAITS[what] + f"""
signal.signal(signal.SIGALRM, lambda *a: h.{verb}())
signal.setitimer(signal.ITIMER_REAL, 0.1)
try:
    block()
    got.append('returned')
except zipc.Closed as e:
    got.append('Closed: ' + str(e))
print('RESULT', got[0], flush=True)
"""
    assert result(run_child(body, name)).startswith("Closed: ")


def test_a_subscriber_detached_by_another_thread_reports_closed_not_corrupt(name: str) -> None:
    body = WAITS["subscriber recv"] + "\nt1 = waiter(lambda: h.recv(timeout=30))\nh.detach()\nfinish(t1)\n"
    assert result(run_child(body, name)).startswith("Closed: ")


def test_closing_a_queue_from_another_thread_ends_a_blocked_recv_with_closed(name: str) -> None:
    body = WAITS["queue recv"] + "\nt1 = waiter(block)\nh.close()\nfinish(t1)\n"
    assert result(run_child(body, name)).startswith("Closed: ")


def test_closing_a_topic_from_another_thread_ends_a_blocked_subscriber_with_closed(name: str) -> None:
    body = WAITS["subscriber recv"] + "\nt1 = waiter(block)\nt.close()\nfinish(t1)\n"
    assert result(run_child(body, name)).startswith("Closed: ")


def test_many_threads_blocked_on_one_queue_all_end_with_closed_when_it_is_detached(name: str) -> None:
    body = WAITS["queue recv"] + """
ts = [waiter(h.recv) for _ in range(4)]
h.detach()
for t1 in ts:
    t1.join(10)
assert not any(t1.is_alive() for t1 in ts)
print('RESULT', ','.join(sorted(set(g.split(':')[0] for g in got))), len(got), flush=True)
"""
    assert result(run_child(body, name)) == "Closed 4"


def test_a_handle_detached_by_another_thread_refuses_later_calls_with_closed(name: str) -> None:
    body = WAITS["queue recv"] + """
t1 = waiter(block)
h.detach()
finish(t1)
try:
    h.send(b'x')
except zipc.Closed as e:
    print('LATER', 'Closed', flush=True)
assert not h.is_attached
"""
    r = run_child(body, name)
    assert "LATER Closed" in r.stdout


EXITS: Dict[str, str] = {
    "queue recv": WAITS["queue recv"],
    "queue acquire": WAITS["queue acquire"],
    "subscriber recv": WAITS["subscriber recv"],
    "listener wait": WAITS["listener wait"],
    "waitset wait": WAITS["waitset wait"],
}


@pytest.mark.parametrize("what", sorted(EXITS))
def test_interpreter_exit_with_a_daemon_thread_blocked_in_a_wait_is_clean(name: str, what: str) -> None:
    body = EXITS[what] + "\nfor _ in range(3):\n    waiter(block, daemon=True)\nprint('exiting', flush=True)\n"
    r = run_child(body, name)
    assert "exiting" in r.stdout and r.stderr == "", r.stderr


def test_interpreter_exit_with_daemon_threads_polling_in_short_waits_is_clean(name: str) -> None:
    body = """
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
"""
    r = run_child(body, name)
    assert "exiting" in r.stdout and r.stderr == "", r.stderr
