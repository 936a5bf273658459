"""The code passes the project's linters: ruff (style, bugs) and mypy --strict (types)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, check=False)


def test_ruff_finds_no_problem() -> None:
    result = _run("ruff", "check", "src", "tests", "benchmarks", "examples")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_finds_no_type_error() -> None:
    result = _run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr
