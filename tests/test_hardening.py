"""The hostile pass's findings, each fixed: output directories that cannot mix runs, interrupted runs marked
partial (in extra_metrics.csv) whose schedule.csv agrees with jobs.csv, YAML 1.2 numbers, power policies acting
from t=0, and the limits table that docs/limits.md shows."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from clustersim._io.documents import load_document
from clustersim.cli import main
from clustersim.core.outcome import JobOutcome
from clustersim.errors import InputError
from clustersim.exit_codes import EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_OK
from clustersim.limits import LIMITS
from clustersim.platform.load import load_platform
from clustersim.policies.registry import create_policy
from clustersim.runner import simulate
from clustersim.workload.stream import Workload
from conftest import csv_rows, delay_job, hosts

ROOT = Path(__file__).parents[1]


def test_run_refuses_a_directory_holding_an_earlier_run_and_force_clears_its_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["run", "-o", str(out), "-q"]) == EXIT_OK
    assert (out / "gantt.png").exists()
    (out / "machine_states.csv").write_text("stale\n")
    (out / "notes.txt").write_text("mine\n")
    assert main(["run", "-o", str(out), "-q", "--no-gantt"]) == EXIT_BAD_INPUT
    assert main(["run", "-o", str(out), "-q", "--no-gantt", "--force"]) == EXIT_OK
    assert sorted(p.name for p in out.iterdir()) == ["extra_metrics.csv", "jobs.csv", "notes.txt", "schedule.csv"]


def test_a_complete_run_keeps_exactly_batsims_schedule_columns(tmp_path: Path) -> None:
    assert main(["run", "-o", str(tmp_path), "-q", "--no-gantt"]) == EXIT_OK
    assert "partial" not in csv_rows(tmp_path / "schedule.csv")[0]
    assert "partial" not in csv_rows(tmp_path / "extra_metrics.csv")[0]


class _InterruptAt:
    """A sink between the metrics and jobs.csv that sends Ctrl-C to this process at its n-th outcome: the
    moment the old code left schedule.csv counting one job more than jobs.csv."""

    def __init__(self, n: int):
        self.n = n
        self.seen = 0

    def record(self, outcome: JobOutcome) -> None:
        self.seen += 1
        if self.seen == self.n:
            os.kill(os.getpid(), signal.SIGINT)

    def close(self) -> None:
        pass


@pytest.mark.parametrize("n", [1, 5, 12])
def test_an_interrupted_run_marks_schedule_csv_partial_with_the_counts_of_jobs_csv(tmp_path: Path, n: int) -> None:
    workload = Workload.from_jobs([delay_job(i, float(i), 1, 10.0) for i in range(20)])
    with pytest.raises(KeyboardInterrupt):
        simulate(hosts(2), workload, create_policy("fcfs"), tmp_path, extra_sinks=[_InterruptAt(n)])
    schedule = csv_rows(tmp_path / "schedule.csv")[0]
    extra = csv_rows(tmp_path / "extra_metrics.csv")[0]
    assert extra["partial"] == "1" and list(extra)[-1] == "partial" and "partial" not in schedule
    assert int(schedule["nb_jobs"]) == len(csv_rows(tmp_path / "jobs.csv")) == n


def test_ctrl_c_during_run_says_schedule_csv_is_marked_partial(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import clustersim.runner

    original = clustersim.runner.simulate

    def interrupted(*args: object, **kwargs: object) -> object:
        kwargs["extra_sinks"] = [*kwargs.get("extra_sinks", []), _InterruptAt(3)]  # type: ignore[list-item]
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(clustersim.runner, "simulate", interrupted)
    assert main(["run", "-o", str(tmp_path), "-q", "--no-gantt"]) == EXIT_INTERRUPTED
    assert "partial: extra_metrics.csv says so" in capsys.readouterr().err
    assert csv_rows(tmp_path / "extra_metrics.csv")[0]["partial"] == "1"


def test_yaml_reads_exponent_numbers_as_numbers_and_refuses_duplicate_keys(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("nodes:\n  - {count: 1e2, speed: 1e9, cores: 2E0}\n")
    platform = load_platform(path)
    assert (len(platform.nodes), platform.nodes[0].speed, platform.nodes[0].cores) == (100, 1e9, 2)
    path.write_text("a: 1e15\nb: '1e15'\nc: 1.5e-3\nd: -2E+2\ne: 1_000\n")
    assert load_document(path) == {"a": 1e15, "b": "1e15", "c": 1.5e-3, "d": -200.0, "e": 1000}
    path.write_text("a: 1\nb: 2\na: 3\n")
    with pytest.raises(InputError, match=r"c\.yaml, line 3: invalid YAML: found duplicate key 'a'"):
        load_document(path)


def test_power_off_always_switches_idle_nodes_off_from_t0(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(
        "nodes:\n  - count: 4\n    power: {idle: 100, full: 200, sleep: {watts: 10, switch_off: {seconds: 1, "
        "joules: 100}, switch_on: {seconds: 1, joules: 100}}}\n")
    (tmp_path / "w.json").write_text('{"nb_res": 4, "jobs": [{"id": "1", "subtime": 1000, "res": 1, "profile": '
                                     '"p"}], "profiles": {"p": {"type": "delay", "delay": 10}}}')
    out = tmp_path / "out"
    assert main(["run", "-p", str(tmp_path / "p.yaml"), "-w", str(tmp_path / "w.json"), "--power-off", "always",
                 "-o", str(out), "-q", "--no-gantt"]) == EXIT_OK
    states = csv_rows(out / "machine_states.csv")
    assert (states[0]["time"], states[0]["nb_switching_off"]) == ("0", "4")
    assert (states[1]["time"], states[1]["nb_sleeping"]) == ("1", "4")
    # 4 nodes switch off (4 x 100 J), sleep 1..1000 s (3 of them until the end), one wakes for the job
    assert float(csv_rows(out / "schedule.csv")[0]["consumed_joules"]) < 1000 * 4 * 100 / 10


def test_docs_limits_shows_the_limits_table() -> None:
    text = (ROOT / "docs" / "limits.md").read_text()
    for limit in LIMITS:
        value = f"{limit.value:g}" if isinstance(limit.value, float) else f"{limit.value:,}".replace(",", " ")
        assert f"| `{limit.name}` | {value} | {limit.what} |" in text, limit.name
