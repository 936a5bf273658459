"""The public API: what `clustersim` exports is enough to run simulations and to write and select a policy.

The README's library example, the docs' examples and the out-of-tree policy in examples/ import nothing
deeper than `clustersim`; the out-of-tree policy runs from `clustersim run --policy module:Class`.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import clustersim
from conftest import csv_rows

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def _python_blocks(markdown: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", markdown, flags=re.S)


def _clustersim_imports(code: str) -> list[str]:
    """The modules of clustersim a piece of code imports."""
    found = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if alias.name.split(".")[0] == "clustersim"]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "clustersim":
            found.append(node.module)
    return found


def test_every_public_name_exists() -> None:
    missing = [name for name in clustersim.__all__ if not hasattr(clustersim, name)]
    assert missing == []


def test_the_readme_library_example_uses_only_the_public_api_and_runs(tmp_path: Path) -> None:
    readme = ROOT / "README.md"
    library = readme.read_text().split("## Library", 1)[1]
    code = _python_blocks(library)[0]
    assert set(_clustersim_imports(code)) == {"clustersim"}
    shutil.copy(EXAMPLES / "platform.yaml", tmp_path)
    shutil.copy(EXAMPLES / "workload.json", tmp_path)
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    _waiting, makespan = result.stdout.split()
    assert float(makespan) == 40.0  # easy: 1 and 3 at 0, 2 at 10, 4 at 20 (3 ends at 5, 4 waits for 2)
    assert (tmp_path / "out" / "jobs.csv").exists()


def test_the_docs_on_writing_a_policy_and_the_example_policy_import_only_clustersim() -> None:
    docs = _python_blocks((ROOT / "docs" / "writing-a-policy.md").read_text())
    for code in [*docs, (EXAMPLES / "largest_first.py").read_text()]:
        assert set(_clustersim_imports(code)) <= {"clustersim"}, code


def test_an_out_of_tree_policy_runs_from_the_command_line_by_module_and_class(tmp_path: Path) -> None:
    """Largest-first with EASY on examples/workload.json, by hand (4 hosts, all jobs at t=0):
    2 (4 hosts) starts at 0; at 10, 4 (3 hosts) starts and 1 (2 hosts) reserves t=30 with 2 hosts spare, so 3
    (1 host, ends at 15) backfills; 1 starts at 30. Job 5 asks for 9 hosts: rejected without the policy's help.
    """
    shutil.copy(EXAMPLES / "largest_first.py", tmp_path / "my_policies.py")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT / "src")])}
    result = subprocess.run(
        [sys.executable, "-m", "clustersim.cli", "run", "--policy", "my_policies:LargestFirst", "-q", "--no-gantt",
         "-w", str(EXAMPLES / "workload.json"), "-p", str(EXAMPLES / "platform.yaml"), "-o", "out"],
        cwd=tmp_path, env=env, capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr
    starts = {row["job_id"]: row["starting_time"] for row in csv_rows(tmp_path / "out" / "jobs.csv")}
    assert starts == {"1": "30", "2": "0", "3": "10", "4": "10", "5": ""}  # rejected: Batsim leaves its times empty
    assert [row["final_state"] for row in csv_rows(tmp_path / "out" / "jobs.csv") if row["job_id"] == "5"] == [
        "REJECTED"
    ]


def test_a_process_without_the_wrapper_leaves_a_job_that_never_fits_pending() -> None:
    """What `RejectNeverFitting` is for: passed to simulate directly, the policy leaves job 5 pending forever."""
    sys.path.insert(0, str(EXAMPLES))
    try:
        from largest_first import LargestFirst
    finally:
        sys.path.remove(str(EXAMPLES))
    platform = clustersim.load_platform(EXAMPLES / "platform.yaml")
    bare = clustersim.simulate(platform, clustersim.load_workload(EXAMPLES / "workload.json"), LargestFirst())
    assert bare.summary.unfinished == ["w0!5"]
    wrapped = clustersim.simulate(
        platform, clustersim.load_workload(EXAMPLES / "workload.json"), clustersim.RejectNeverFitting(LargestFirst())
    )
    assert wrapped.summary.unfinished == [] and wrapped.metrics.nb_rejected == 1


def test_a_policy_path_that_does_not_load_is_a_clear_error() -> None:
    with pytest.raises(clustersim.PluginError, match="cannot import module 'no_such_module'"):
        clustersim.create_policy("no_such_module:Policy")
    with pytest.raises(clustersim.PluginError, match="has no attribute 'Nope'"):
        clustersim.create_policy("clustersim:Nope")
    with pytest.raises(clustersim.UnknownNameError, match=r"valid: .*conservative, easy, fcfs"):
        clustersim.create_policy("no-such-policy")


def test_an_out_of_tree_policy_runs_from_a_sweep_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from clustersim.cli import main

    shutil.copytree(EXAMPLES, tmp_path, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "sweep.yaml").write_text(
        "base: {workload: workload.json, platform: platform.yaml}\n"
        "axes: {policy: [fcfs, 'largest_first:LargestFirst']}\n"
    )
    monkeypatch.chdir(tmp_path)  # the module is found in the current directory
    assert main(["sweep", "sweep.yaml", "-o", "campaign", "--workers", "1"]) == 0
    makespans = {row["policy"]: row["makespan"] for row in csv_rows(tmp_path / "campaign" / "results.csv")}
    assert makespans == {"fcfs": "40", "largest_first:LargestFirst": "40"}
    (ours,) = (tmp_path / "campaign" / "runs").glob("policy=largest_first*")
    assert {row["job_id"]: row["starting_time"] for row in csv_rows(ours / "jobs.csv")}["1"] == "30"
