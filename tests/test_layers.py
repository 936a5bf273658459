"""The layers import downwards only: import-linter's contracts (pyproject.toml, [tool.importlinter]) are kept.

A second contract keeps the extras (dask, pyarrow, the kubernetes client) out of everything a simulation
imports. The second test breaks a copy of the package on purpose (the core importing the CLI and pyarrow) and
checks that the same contracts catch it, so the first test cannot pass by checking nothing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINT = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"


def _lint(src: Path, config: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    return subprocess.run([sys.executable, "-c", LINT, "--config", str(config), "--no-cache", "--no-logo"],
                          cwd=src.parent, env=env, capture_output=True, text=True, check=False)


def test_every_layer_imports_only_layers_below_it() -> None:
    result = _lint(ROOT / "src", ROOT / "pyproject.toml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 kept, 0 broken" in result.stdout


def test_an_upward_import_breaks_the_layers_contract(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "clustersim", src / "clustersim", ignore=shutil.ignore_patterns("__pycache__"))
    engine = src / "clustersim" / "core" / "engine.py"
    engine.write_text(engine.read_text() + "\nimport clustersim.cli  # noqa\nimport pyarrow  # noqa\n")
    result = _lint(src, ROOT / "pyproject.toml")
    assert result.returncode != 0
    assert "clustersim.core.engine -> clustersim.cli" in result.stdout, result.stdout
    assert "clustersim.core.engine -> pyarrow" in result.stdout, result.stdout
    assert "0 kept, 2 broken" in result.stdout
