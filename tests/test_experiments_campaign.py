"""Campaigns end to end on tiny workloads: the local pool and a Dask LocalCluster give the same tables, a
restart skips complete runs, a failing run is recorded and the others complete, every run replays alone."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
import yaml

from clustersim.cli import main
from clustersim.experiments import DaskBackend, LocalBackend, load_experiment, run_campaign
from clustersim.experiments.execute import DONE_FILE, ERROR_FILE, RunRecord, RunTask, write_atomically
from clustersim.experiments.progress import CampaignProgress
from clustersim.experiments.results import collect_results, read_parquet_rows
from clustersim.experiments.stats import mean_ci


def write_workload(path: Path, jobs: int = 6) -> Path:
    """A Batsim JSON workload of a few jobs of 1 to 4 hosts, for 4 hosts."""
    document = {
        "nb_res": 4,
        "jobs": [
            {"id": i, "subtime": 10 * i, "res": 1 + i % 4, "walltime": 100, "profile": f"d{i % 3}"}
            for i in range(1, jobs + 1)
        ],
        "profiles": {f"d{k}": {"type": "delay", "delay": 20 + 15 * k} for k in range(3)},
    }
    path.write_text(json.dumps(document))
    return path


def write_experiment(folder: Path, axes: dict[str, list[object]], **base: object) -> Path:
    write_workload(folder / "w.json")
    document = {"name": "tiny", "base": {"workload": "w.json", "walltime": "uniform", "walltime_factor": 3, **base},
                "axes": axes}
    path = folder / "exp.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


AXES: dict[str, list[object]] = {"policy": ["fcfs", "easy", "nosuch"], "walltime_factor": [1.5, 3], "seed": [1, 2, 3]}


class Recording:
    """A backend that remembers which runs it was asked to execute."""

    def __init__(self, inner: LocalBackend | DaskBackend):
        self.inner = inner
        self.executed: list[str] = []

    def describe(self) -> str:
        return "recording"

    def run(self, tasks: Sequence[RunTask]) -> Iterator[RunRecord]:
        self.executed += [t.name for t in tasks]
        yield from self.inner.run(tasks)


@pytest.fixture(scope="module")
def local_campaign(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("local")
    experiment = load_experiment(write_experiment(folder, AXES), strict=True)
    run_campaign(experiment, folder / "out", LocalBackend(2), progress=False)
    return folder


def test_local_and_dask_backends_give_the_same_tables(local_campaign: Path, tmp_path: Path) -> None:
    experiment = load_experiment(write_experiment(tmp_path, AXES), strict=True)
    result = run_campaign(experiment, tmp_path / "out", DaskBackend(workers=2, processes=False), progress=False)
    assert (result.planned, result.ok, len(result.failed)) == (18, 12, 6)
    for table in ("results.csv", "summary.csv"):
        assert (tmp_path / "out" / table).read_bytes() == (local_campaign / "out" / table).read_bytes()
    assert read_parquet_rows(tmp_path / "out" / "results.parquet") == read_parquet_rows(
        local_campaign / "out" / "results.parquet"
    )
    name = "policy=easy,walltime_factor=3,seed=2"
    for output in ("jobs.csv", "schedule.csv", "config.yaml"):
        local = (local_campaign / "out" / "runs" / name / output).read_text()
        assert (tmp_path / "out" / "runs" / name / output).read_text() == local.replace(
            str(local_campaign), str(tmp_path)
        )


def test_a_dask_scheduler_address_gives_the_same_table(local_campaign: Path, tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    experiment = load_experiment(write_experiment(tmp_path, AXES), strict=True)
    options = {"n_workers": 2, "threads_per_worker": 1, "processes": False, "dashboard_address": None}
    with distributed.LocalCluster(**options) as cluster:
        backend = DaskBackend(cluster.scheduler_address)
        assert backend.describe() == f"the Dask scheduler at {cluster.scheduler_address}"
        run_campaign(experiment, tmp_path / "out", backend, progress=False)
    assert (tmp_path / "out" / "results.csv").read_bytes() == (local_campaign / "out" / "results.csv").read_bytes()


def test_a_run_whose_worker_dies_is_recorded_as_failed(tmp_path: Path) -> None:
    class Dying:
        def describe(self) -> str:
            return "dying"

        def run(self, tasks: Sequence[RunTask]) -> Iterator[RunRecord]:
            for task in tasks:
                Path(task.directory).mkdir(parents=True)
                yield RunRecord(task.name, "failed", "the worker running it failed: BrokenProcessPool: killed")

    result = run_campaign(load_experiment(write_experiment(tmp_path, {"seed": [1]})), tmp_path / "out", Dying(),
                          progress=False)
    assert [r.name for r in result.failed] == ["seed=1"]
    (row,) = collect_results(tmp_path / "out").rows
    assert (row["status"], row["error"]) == ("failed", "the worker running it failed: BrokenProcessPool: killed")


def test_results_table_has_one_row_per_run_with_axes_and_every_schedule_metric(local_campaign: Path) -> None:
    rows = read_parquet_rows(local_campaign / "out" / "results.parquet")
    assert len(rows) == 18
    schedule = (local_campaign / "out" / "runs" / "policy=fcfs,walltime_factor=1.5,seed=1" / "schedule.csv")
    metrics = schedule.read_text().splitlines()[0].split(",")
    metrics += schedule.with_name("extra_metrics.csv").read_text().splitlines()[0].split(",")
    axes = ["policy", "walltime_factor", "seed"]
    assert list(rows[0]) == ["run", "status", *axes, *metrics, "nb_jobs_unfinished", "error"]
    first = rows[0]
    assert (first["run"], first["status"], first["policy"], first["walltime_factor"], first["seed"]) == (
        "policy=fcfs,walltime_factor=1.5,seed=1", "ok", "fcfs", 1.5, 1
    )
    assert first["nb_jobs"] == 6 and first["error"] is None and isinstance(first["mean_waiting_time"], float)
    assert [r["status"] for r in rows].count("failed") == 6


def test_a_failing_run_is_recorded_and_the_others_complete(local_campaign: Path) -> None:
    out = local_campaign / "out"
    failed = out / "runs" / "policy=nosuch,walltime_factor=3,seed=2"
    assert (failed / ERROR_FILE).read_text().startswith("unknown policy 'nosuch'; valid:")
    assert not (failed / DONE_FILE).exists()
    assert (failed / "config.yaml").exists()
    rows = {r["run"]: r for r in read_parquet_rows(out / "results.parquet")}
    assert rows[failed.name]["status"] == "failed"
    assert str(rows[failed.name]["error"]).startswith("unknown policy 'nosuch'")
    assert rows[failed.name]["mean_waiting_time"] is None
    assert all((out / "runs" / str(name) / DONE_FILE).exists() for name, r in rows.items() if r["status"] == "ok")


def test_summary_averages_over_seeds_with_student_t_intervals(local_campaign: Path) -> None:
    out = local_campaign / "out"
    results = read_parquet_rows(out / "results.parquet")
    summary = read_parquet_rows(out / "summary.parquet")
    assert [(s["policy"], s["walltime_factor"], s["runs"], s["failed"]) for s in summary] == [
        ("fcfs", 1.5, 3, 0), ("fcfs", 3.0, 3, 0), ("easy", 1.5, 3, 0), ("easy", 3.0, 3, 0),
        ("nosuch", 1.5, 0, 3), ("nosuch", 3.0, 0, 3),
    ]
    waits = [float(r["mean_waiting_time"]) for r in results  # type: ignore[arg-type]
             if r["policy"] == "easy" and r["walltime_factor"] == 3]
    mean, std, half = mean_ci(waits)
    easy = summary[3]
    assert easy["mean_waiting_time_mean"] == pytest.approx(mean)
    assert easy["mean_waiting_time_std"] == pytest.approx(std)
    assert easy["mean_waiting_time_ci95"] == pytest.approx(half)
    assert summary[4]["mean_waiting_time_mean"] is None


def test_restart_skips_complete_runs_and_retries_failed_ones(tmp_path: Path) -> None:
    path = write_experiment(tmp_path, {"policy": ["fcfs", "nosuch"], "seed": [1, 2]})
    first = Recording(LocalBackend(2))
    run_campaign(load_experiment(path), tmp_path / "out", first, progress=False)
    assert len(first.executed) == 4
    done = tmp_path / "out" / "runs" / "policy=fcfs,seed=1" / DONE_FILE
    stamp = done.stat().st_mtime_ns
    table = (tmp_path / "out" / "results.csv").read_bytes()

    again = Recording(LocalBackend(2))
    result = run_campaign(load_experiment(path), tmp_path / "out", again, progress=False)
    assert sorted(again.executed) == ["policy=nosuch,seed=1", "policy=nosuch,seed=2"]
    assert (result.skipped, result.ok, len(result.failed)) == (2, 0, 2)
    assert done.stat().st_mtime_ns == stamp
    assert (tmp_path / "out" / "results.csv").read_bytes() == table


def test_restart_reruns_runs_whose_configuration_changed_and_new_axis_values(tmp_path: Path) -> None:
    run_campaign(load_experiment(write_experiment(tmp_path, {"seed": [1, 2]})), tmp_path / "out", LocalBackend(1),
                 progress=False)
    changed = Recording(LocalBackend(1))
    path = write_experiment(tmp_path, {"seed": [1, 2, 3]}, policy="fcfs")
    run_campaign(load_experiment(path), tmp_path / "out", changed, progress=False)
    assert changed.executed == ["seed=1", "seed=2", "seed=3"]
    extended = Recording(LocalBackend(1))
    run_campaign(load_experiment(write_experiment(tmp_path, {"seed": [1, 2, 3, 4]}, policy="fcfs")),
                 tmp_path / "out", extended, progress=False)
    assert extended.executed == ["seed=4"]


def test_a_run_without_its_marker_is_pending_and_is_run_again(tmp_path: Path) -> None:
    path = write_experiment(tmp_path, {"seed": [1, 2]})
    run_campaign(load_experiment(path), tmp_path / "out", LocalBackend(1), progress=False)
    (tmp_path / "out" / "runs" / "seed=2" / DONE_FILE).unlink()  # as if killed before its marker was written
    assert [r["status"] for r in collect_results(tmp_path / "out").rows] == ["ok", "pending"]
    again = Recording(LocalBackend(1))
    run_campaign(load_experiment(path), tmp_path / "out", again, progress=False)
    assert again.executed == ["seed=2"]


def test_a_missing_workload_fails_only_its_runs(tmp_path: Path) -> None:
    path = write_experiment(tmp_path, {"workload": ["w.json", "missing.json"]})
    result = run_campaign(load_experiment(path), tmp_path / "out", LocalBackend(2), progress=False)
    assert result.ok == 1
    assert [r.name for r in result.failed] == ["workload=missing.json"]
    assert "missing.json: cannot read the file" in result.failed[0].error


def test_markers_are_written_atomically(tmp_path: Path) -> None:
    write_atomically(tmp_path / DONE_FILE, '{"status": "ok"}\n')
    assert [p.name for p in tmp_path.iterdir()] == [DONE_FILE]


def test_a_run_replays_alone_from_its_config_yaml(local_campaign: Path, tmp_path: Path) -> None:
    run_dir = local_campaign / "out" / "runs" / "policy=easy,walltime_factor=3,seed=3"
    code = main(["run", "--config", str(run_dir / "config.yaml"), "-o", str(tmp_path / "replay"), "--no-gantt", "-q"])
    assert code == 0
    for output in ("jobs.csv", "schedule.csv"):
        assert (tmp_path / "replay" / output).read_bytes() == (run_dir / output).read_bytes()


def test_cli_sweep_reports_failures_with_exit_code_5_and_writes_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_experiment(tmp_path, {"policy": ["fcfs", "nosuch"]})
    code = main(["sweep", str(path), "-o", str(tmp_path / "out"), "--workers", "2", "--strict", "-q"])
    assert code == 5
    assert "run policy=nosuch failed: unknown policy 'nosuch'" in capsys.readouterr().err
    assert (tmp_path / "out" / "results.csv").read_text().count("\n") == 3
    assert main(["sweep", str(path), "-o", str(tmp_path / "out"), "-q"]) == 5


def test_cli_sweep_strict_refuses_unknown_keys_with_exit_code_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_experiment(tmp_path, {"polcy": ["fcfs"]})
    assert main(["sweep", str(path), "-o", str(tmp_path / "out"), "--strict"]) == 2
    assert "unknown key 'polcy' (did you mean 'policy'?)" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_progress_counts_runs_done_failed_and_remaining() -> None:
    with CampaignProgress(3, skipped=2, enabled=False) as progress:
        progress.update(RunRecord("a", "ok"))
        progress.update(RunRecord("b", "failed", "boom"))
        assert (progress.ok, progress.failed, progress.remaining) == (1, 1, 1)


def test_a_rerun_clears_the_outputs_of_the_earlier_attempt(tmp_path: Path) -> None:
    path = write_experiment(tmp_path, {"seed": [1]})
    run_campaign(load_experiment(path), tmp_path / "out", LocalBackend(1), progress=False)
    run_dir = tmp_path / "out" / "runs" / "seed=1"
    (run_dir / "machine_states.csv").write_text("stale")
    run_campaign(load_experiment(write_experiment(tmp_path, {"seed": [1]}, policy="fcfs")), tmp_path / "out",
                 LocalBackend(1), progress=False)
    assert sorted(p.name for p in run_dir.iterdir()) == [
        "config.yaml", DONE_FILE, "extra_metrics.csv", "jobs.csv", "schedule.csv"
    ]


def test_cli_sweep_on_a_dask_local_cluster_of_processes(local_campaign: Path, tmp_path: Path) -> None:
    path = write_experiment(tmp_path, AXES)
    assert main(["sweep", str(path), "-o", str(tmp_path / "out"), "--dask", "local", "--workers", "2", "-q"]) == 5
    assert (tmp_path / "out" / "results.csv").read_bytes() == (local_campaign / "out" / "results.csv").read_bytes()
