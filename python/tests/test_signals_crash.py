"""Ctrl-C during blocking waits, and a Python process killed holding a loan."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import List

import pytest

import zipc
from conftest import parse_ok
from vectors import make_vector

BLOCKERS = {
    "queue recv": "q = zipc.Queue.create(NAME, block_size=64, block_count=4)\nready()\nq.recv()",
    "queue acquire": "q = zipc.Queue.create(NAME, block_size=64, block_count=4)\nready()\nq.acquire(timeout=600)",
    "subscriber iteration": "t = zipc.Topic.create(NAME)\ns = t.subscribe()\nready()\nfor m in s: pass",
    "rpc call": "srv = zipc.RpcServer.create(NAME)\nc = zipc.RpcClient.connect(NAME)\nready()\nc.call(b'x')",
    "rpc serve": "srv = zipc.RpcServer.create(NAME)\nready()\nsrv.serve(lambda b: b, threads=2)",
}


@pytest.mark.parametrize("what", sorted(BLOCKERS))
def test_ctrl_c_interrupts_a_blocking_wait_with_keyboard_interrupt(name: str, what: str) -> None:
    code = ("import sys, zipc\nNAME = sys.argv[1]\n"
            "def ready():\n    print('ready', flush=True)\n" + BLOCKERS[what])
    p = subprocess.Popen([sys.executable, "-c", code, name], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        time.sleep(0.2)  # inside the wait by now
        assert p.poll() is None
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=10)
        elapsed = time.monotonic() - t0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert "KeyboardInterrupt" in err, err
    assert p.returncode != 0
    assert elapsed < 5.0  # the design bound is ~20 ms (one wait slice); timing here is noisy


def test_a_python_consumer_killed_holding_a_loan_has_its_message_redelivered_to_cpp(name: str, peer: List[str]) -> None:
    count = 50
    with zipc.Queue.create(name, block_size=256, block_count=64, recovery_time=0.05) as q:
        for i in range(count):
            q.send(make_vector(i), timeout=5)
        holder = ("import sys, time, zipc\n"
                  "q = zipc.Queue.open(sys.argv[1], role=zipc.Role.consumer)\n"
                  "loan = q.acquire(timeout=5)\n"
                  "view = loan.view()\n"
                  "print('holding', bytes(view[:8]).hex(), flush=True)\n"
                  "time.sleep(600)\n")
        p = subprocess.Popen([sys.executable, "-c", holder, name], stdout=subprocess.PIPE, text=True)
        assert p.stdout is not None and p.stdout.readline().startswith("holding")
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        r = subprocess.run(peer + ["queue-consume", name, str(count)], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stdout + r.stderr
        result = parse_ok(r.stdout)
        assert result["received"] == count  # every message, the killed one's included
        assert result["redelivered"] >= 1
        assert q.stats()["redelivered"] >= 1
