"""Every examples/python/*.py runs as written; they pass mypy --strict."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

EXAMPLES = sorted((REPO / "examples" / "python").glob("*.py"))


def test_there_are_examples() -> None:
    assert len(EXAMPLES) >= 3


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_the_example_runs_as_written(path: Path) -> None:
    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120, cwd="/tmp")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().splitlines()[-1].startswith("ok"), r.stdout


def test_the_examples_pass_mypy_strict() -> None:
    pytest.importorskip("mypy")
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", *map(str, EXAMPLES)],
                       capture_output=True, text=True, timeout=300, cwd="/tmp")
    assert r.returncode == 0, r.stdout + r.stderr
