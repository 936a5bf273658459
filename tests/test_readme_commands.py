"""Every command of the README's "Use" block runs as written in examples/ and does what its comment says.

Left out, each covered by its own tests with a live peer: the external Batsim scheduler (`-s tcp://...`:
test_batsim_*), `serve-k8s` (a real scheduler must bind its pods: test_kubernetes_api, test_kubernetes_nodejs),
`slurm-replay` (a real Slurm: test_slurm_validation); `--platform-model simgrid` (SimGrid runs one simulation
per process, so its tests run each in a subprocess: test_platform_model); and `autoscale` and `architectures`
without a file, which run the embedded examples (test_autoscaling_scenario, test_architectures_runs).
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest

from clustersim.cli import main
from conftest import csv_rows

ROOT = Path(__file__).resolve().parents[1]
SKIPPED = ("tcp://", "serve-k8s", "slurm-replay", "--platform-model simgrid", "autoscale", "architectures")


def _readme_commands() -> list[list[str]]:
    use = (ROOT / "README.md").read_text().split("## Use", 1)[1]
    block = re.search(r"```bash\n(.*?)```", use, flags=re.S)
    assert block is not None
    commands = []
    for line in block.group(1).splitlines():
        command = re.sub(r"\[[^\]]*\]", "", line.split(" #", 1)[0])  # drop comments and [optional] parts
        if command.strip() and not any(word in command for word in SKIPPED):
            commands.append(shlex.split(command))
    return commands


def test_the_readme_commands_run_on_the_examples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(ROOT / "examples", tmp_path, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.chdir(tmp_path)
    commands = _readme_commands()
    assert len(commands) == 18
    for argv in commands:
        assert argv[0] == "clustersim"
        if argv[1] in ("run", "run-k8s"):
            _records(argv, tmp_path).unlink(missing_ok=True)  # a run must not pass on an earlier run's outputs
        assert main([*argv[1:], "--quiet"] if argv[1] == "run" else argv[1:]) == 0, argv
        _check(argv, tmp_path, capsys.readouterr().out)


def _records(argv: list[str], where: Path) -> Path:
    if "-e" in argv:  # Batsim's output prefix: out/exp writes out/exp_jobs.csv
        return where / (argv[argv.index("-e") + 1] + "_jobs.csv")
    flag = next((f for f in ("-o", "--output") if f in argv), None)
    out = where / (argv[argv.index(flag) + 1] if flag else "clustersim-out")
    return out / ("pods.csv" if argv[1] == "run-k8s" else "jobs.csv")


def _check(argv: list[str], where: Path, stdout: str) -> None:
    """What each command must have produced, beyond its exit code."""
    command = argv[1]
    if command in ("run", "run-k8s"):
        rows = csv_rows(_records(argv, where))
        workload = argv[argv.index("-w" if "-w" in argv else "--workload") + 1]
        expected = {"trace.swf": 12, "workload.json": 5, "pods.yaml": 8, "job-scripts": 9}[workload]
        assert len(rows) == expected, argv
    elif command == "policies":
        assert [line.split()[0] for line in stdout.splitlines()] == [
            "batch", "conservative", "easy", "fcfs", "kube", "sjf", "slurm"]
    elif command == "convert":
        assert (where / "converted.json").read_text().count('"subtime"') == 12
    elif command == "gantt":
        assert (where / "gantt.png").read_bytes()[:4] == b"\x89PNG"
    elif command == "power-compare":
        (table,) = where.glob("*/comparison.csv")
        assert [row["power_off"] for row in csv_rows(table)] == ["never", "always", "idle-timeout:600"]
    elif command == "sweep":
        assert len(csv_rows(where / "campaign" / "results.csv")) == 6
    elif command == "report":
        assert "<html" in (where / "campaign" / "report.html").read_text()
    elif command == "view":
        assert "Gantt chart" in (where / "page.html").read_text()
