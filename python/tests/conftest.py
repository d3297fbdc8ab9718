from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Iterator, List

import pytest

import zipc

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
_counter = itertools.count()


@pytest.fixture
def name() -> Iterator[str]:
    """A unique segment name, removed after the test."""
    n = f"pyt.{os.getpid()}.{next(_counter)}"
    yield n
    zipc.remove_segment(n)


def _find_peer(program: str = "zipc_cross_peer") -> str | None:
    env = os.environ.get("ZIPC_CROSS_PEER")
    if env:
        env = str(Path(env).with_name(program))
        if Path(env).exists():
            return env
    for sub in ("release", "dev", "asan", "debug"):
        p = REPO / "build" / sub / "tests" / "cross" / program
        if p.exists():
            return str(p)
    return shutil.which(program)


@pytest.fixture
def peer() -> List[str]:
    p = _find_peer()
    if p is None:
        pytest.skip("zipc_cross_peer not built (cmake --build <dir> --target zipc_cross_peer, or set ZIPC_CROSS_PEER)")
    return [p]


@pytest.fixture
def c_peer() -> List[str]:
    p = _find_peer("zipc_cross_c_peer")
    if p is None:
        pytest.skip("zipc_cross_c_peer not built (needs the C ABI, include/zipc/zipc.h)")
    return [p]


def run_peer(cmd: List[str], timeout: float = 60) -> str:
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0 and r.stdout.startswith("ok"), f"{cmd}: rc={r.returncode} out={r.stdout!r} err={r.stderr!r}"
    return r.stdout.strip()


def parse_ok(line: str) -> dict[str, int]:
    return {k: int(v) for k, v in (kv.split("=") for kv in line.split()[1:])}
