"""Misuse is an exception, never a crash: every case of misuse_cases.py, one
test each. The cases run in child interpreters (all in one child first; a
case missing from its output, because the child died or hung there, is run
again alone), so a crash or a hang fails that case and not the test run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

import zipc

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from misuse_cases import CASES  # noqa: E402

WATCHDOG = 60  # seconds for the whole batch; a case alone gets 20


def _run(base: str, cases: List[str], timeout: float) -> Dict[str, str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE)] + sys.path))
    out = ""
    try:
        r = subprocess.run([sys.executable, str(HERE / "misuse_cases.py"), base] + cases, capture_output=True,
                           text=True, timeout=timeout, env=env)
        out = r.stdout
        tail = f"rc={r.returncode} stderr={r.stderr[-2000:]!r}"
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        tail = f"hung (watchdog {timeout} s)"
    got: Dict[str, str] = {}
    for line in out.splitlines():
        if line.startswith("CASE "):
            body = line[len("CASE "):]
            for c in cases:
                if body.startswith(c + " "):
                    got[c] = body[len(c) + 1:]
    for c in cases:
        got.setdefault(c, f"FAIL the child died or hung in it: {tail}")
    return got


@pytest.fixture(scope="module")
def outcomes() -> Dict[str, str]:
    base = f"pym.{os.getpid()}"
    got = _run(base, sorted(CASES), WATCHDOG)
    for c, v in list(got.items()):
        if v.startswith("FAIL the child died"):
            got.update(_run(f"{base}.{len(got)}", [c], 20))
    for s in zipc.segments():  # every case removes its names at once; a failure may not have
        if s.name.startswith(base):
            zipc.remove_segment(s.name)
    return got


@pytest.mark.parametrize("case", sorted(CASES))
def test_misuse_raises_an_exception_and_never_crashes(outcomes: Dict[str, str], case: str) -> None:
    assert outcomes[case] == "ok", outcomes[case]
