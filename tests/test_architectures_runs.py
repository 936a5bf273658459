"""Runs small enough to check by hand: think time, Omega conflicts, Mesos offers and DRF, abandonment, determinism."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from clustersim.architectures import default_spec, parse_config, run_architectures, simulate
from clustersim.architectures.cell import Cell, Placement
from clustersim.architectures.config import Config
from clustersim.architectures.context import Action, Context
from clustersim.architectures.jobs import GIB, Job, JobState
from clustersim.architectures.ledger import JobLedger
from clustersim.architectures.mesos import MesosSpec
from clustersim.architectures.omega import OmegaSpec
from clustersim.architectures.scheduler import SchedulerSet, SchedulerSpec
from clustersim.architectures.simulation import RunResult
from clustersim.cli import main
from clustersim.core.engine import EventClass, EventQueue

EXAMPLE = Path(__file__).resolve().parents[1] / "src" / "clustersim" / "examples" / "architectures.yaml"


class Jobs:
    """A job sink keeping the jobs by id."""

    def __init__(self) -> None:
        self.jobs: dict[int, Job] = {}
        self.paths: dict[int, str] = {}

    def write(self, job: Job, path: str) -> None:
        self.jobs[job.id] = job
        self.paths[job.id] = path

    def of(self, job_type: str) -> list[Job]:
        return [j for j in self.jobs.values() if j.job_type == job_type]


def one_job(job_type: str, at: float, tasks: int, cpu: float, runtime: float = 100.0) -> dict[str, Any]:
    """A workload giving exactly one job at `at` (the run must end before 2 * at)."""
    return {"interarrival": at, "tasks": tasks, "runtime": runtime, "cpu": cpu, "memory": 1}


def config(schedulers: dict[str, Any], workloads: dict[str, Any], machines: int = 1, duration: float = 20,
           **extra: Any) -> Config:
    return parse_config({
        "seed": 1, "duration": duration, "utilisation_period": 1,
        "cluster": {"machines": machines, "cpu": 4, "memory": 16},
        "schedulers": schedulers, "workloads": workloads, **extra,
    })


def run(cfg: Config, architecture: str, **options: Any) -> tuple[RunResult, Jobs]:
    spec = {"omega": OmegaSpec, "mesos": MesosSpec}[architecture](**options) if options else default_spec(
        architecture)
    jobs = Jobs()
    return simulate(cfg, spec, job_sink=jobs), jobs


# -- think time ---------------------------------------------------------------------------------------------

ONE_JOB = config({"batch": {"t_job": 2, "t_task": 0.5}}, {"batch": one_job("batch", 10, tasks=3, cpu=1)}, duration=19)


@pytest.mark.parametrize("architecture", ["monolithic", "omega"])
def test_a_decision_takes_t_job_plus_t_task_per_task_then_tasks_start(architecture: str) -> None:
    result, jobs = run(ONE_JOB, architecture)
    (job,) = jobs.jobs.values()
    assert (job.submit, job.first_scheduled, job.fully_scheduled, job.queue_wait) == (10, 13.5, 13.5, 0)
    assert job.useful_time == 3.5 and job.state is JobState.SCHEDULED
    (path,) = result.schedulers
    assert path.busyness == path.busyness_useful == 3.5 / 19
    assert (path.transactions_committed, path.transactions_failed, path.attempts) == (1, 0, 1)
    assert path.waits.first_mean == path.waits.first_p90 == 3.5
    cpu = {s.time: s.cpu for s in result.utilisation}
    assert cpu[13] == 0 and cpu[14] == 0.75  # three 1-core tasks on a 4-core machine


def test_mesos_adds_the_offer_round_to_the_wait() -> None:
    result, jobs = run(ONE_JOB, "mesos")
    (job,) = jobs.jobs.values()
    assert job.queue_wait == 1.0  # the batched offer round, 1 s after the request
    assert (job.first_scheduled, job.useful_time) == (14.5, 3.5)
    locked = {s.time: s.cpu_locked for s in result.utilisation}
    assert locked[12] == 1.0 and locked[15] == 0  # the whole cell is held while the framework thinks


# -- Omega conflicts -------------------------------------------------------------------------------------------

TWO_SCHEDULERS = {"a": {"t_job": 1, "t_task": 0}, "b": {"t_job": 1, "t_task": 0}}


def test_two_omega_schedulers_claiming_the_same_machine_conflict_and_the_loser_retries() -> None:
    # both see the empty 4-core machine at t=6 and claim 3 cores; a commits first (it arrived first)
    cfg = config(TWO_SCHEDULERS, {"a": one_job("a", 6, 1, cpu=3, runtime=2), "b": one_job("b", 6, 1, cpu=3)},
                 duration=11.5)
    result, jobs = run(cfg, "omega")
    a, b = (m for m in result.schedulers)
    assert (a.transactions_committed, a.transactions_failed, a.busyness_useful) == (1, 0, 1 / 11.5)
    # b: conflict at 7 (wasted), retry at 8 finds no room (a runs until 9), retry at 10 commits at 11
    assert (b.transactions_failed, b.transactions_committed, b.transactions_retried) == (1, 1, 1)
    assert (b.busyness_wasted, b.busyness_no_fit, b.busyness_useful) == (1 / 11.5, 1 / 11.5, 1 / 11.5)
    assert b.conflict_fraction == 1.0 and b.tasks_conflicted == 1
    (job_b,) = jobs.of("b")
    assert (job_b.attempts, job_b.first_scheduled, job_b.wasted_time) == (3, 11, 1)


def test_claims_that_both_fit_conflict_only_under_coarse_detection() -> None:
    cfg = config(TWO_SCHEDULERS, {"a": one_job("a", 5, 1, cpu=1), "b": one_job("b", 5, 1, cpu=1)}, duration=9)
    fine, _ = run(cfg, "omega", conflicts="resource-fit")
    coarse, _ = run(cfg, "omega", conflicts="sequence-numbers")
    assert [m.transactions_failed for m in fine.schedulers] == [0, 0]
    assert [m.transactions_failed for m in coarse.schedulers] == [0, 1]  # b's machine changed since its snapshot


def test_all_or_nothing_rejects_the_whole_job_incremental_keeps_the_part_that_fits() -> None:
    # a places 2 tasks of 3 cores, one per machine; b, quicker, takes one of the machines first
    cfg = config(
        {"a": {"t_job": 1, "t_task": 0}, "b": {"t_job": 0.5, "t_task": 0}},
        {"a": one_job("a", 5, 2, cpu=3), "b": one_job("b", 5, 1, cpu=3)}, machines=2, duration=6.5,
    )
    incremental, jobs_i = run(cfg, "omega", transactions="incremental")
    gang, jobs_g = run(cfg, "omega", transactions="all-or-nothing")
    assert (incremental.schedulers[0].tasks_committed, incremental.schedulers[0].tasks_conflicted) == (1, 1)
    assert (gang.schedulers[0].tasks_committed, gang.schedulers[0].tasks_conflicted) == (0, 2)
    assert jobs_i.of("a")[0].first_scheduled == 6 and jobs_g.of("a")[0].first_scheduled is None


# -- Mesos ---------------------------------------------------------------------------------------------------


def _harness(shares: dict[str, int], t_job: dict[str, float] | None = None) -> tuple[Context, Any]:
    """Mesos with frameworks a and b on 2 machines of 4 cores; `shares` gives cores each already uses."""
    cell = Cell(np.array([4000, 4000], np.int64), np.array([16 * GIB, 16 * GIB], np.int64))
    times = t_job or {"a": 1.0, "b": 1.0}
    specs = {n: SchedulerSpec(n, t_job=times[n], t_task=0.0) for n in ("a", "b")}
    schedulers = SchedulerSet(specs, {n: random.Random(n) for n in specs}, {"a": ("a",), "b": ("b",)})
    events: EventQueue[Action] = EventQueue()
    ctx = Context(events, cell, schedulers, JobLedger())
    for machine, (owner, cores) in enumerate(shares.items()):
        if cores:
            ctx.cell.claim(owner, Placement(np.array([machine]), np.array([cores]), 1000, GIB), 0.0)
    return ctx, MesosSpec().build(ctx)


def _submit(ctx: Context, architecture: Any, job: Job) -> None:
    ctx.ledger.submit(job, job.scheduler)
    architecture.submit(job)


def _submit_at(ctx: Context, architecture: Any, job: Job) -> None:
    ctx.events.push(job.submit, EventClass.JOB_SUBMIT, lambda: _submit(ctx, architecture, job))


def _run_until(ctx: Context, end: float) -> None:
    while ctx.events and (ctx.events.next_time() or 0) <= end:
        for _, action in ctx.events.pop_instant():
            action()


@pytest.mark.parametrize(("shares", "first"), [({"a": 2, "b": 0}, "b"), ({"a": 0, "b": 3}, "a")])
def test_offers_go_first_to_the_framework_with_the_lowest_dominant_share(shares: dict[str, int], first: str
                                                                          ) -> None:
    ctx, mesos = _harness(shares)
    jobs = {n: Job(i, n, n, 0.0, 1, 1000, GIB, 100.0) for i, n in enumerate(("a", "b"))}
    for job in jobs.values():  # both ask for offers at the same instant
        _submit(ctx, mesos, job)
    _run_until(ctx, 2.5)  # round at 1, the first framework answers at 2
    assert jobs[first].first_scheduled == 2.0
    other = jobs["a" if first == "b" else "b"]
    assert other.first_scheduled is None and other.attempts == 0  # nothing was free for it meanwhile
    _run_until(ctx, 10)
    assert other.first_scheduled == 4.0  # next round 1 s after the answer, then 1 s of thinking


def test_resources_offered_to_one_framework_are_unavailable_to_the_others() -> None:
    ctx, mesos = _harness({"a": 0, "b": 0}, t_job={"a": 10.0, "b": 1.0})
    job_a, job_b = Job(1, "a", "a", 0.5, 1, 1000, GIB, 100.0), Job(2, "b", "b", 2.0, 1, 1000, GIB, 100.0)
    for job in (job_a, job_b):
        _submit_at(ctx, mesos, job)
    _run_until(ctx, 11)
    # a got every free resource at 1.5 and thinks for 10 s: b's job, there at 2, sees nothing free
    assert ctx.cell.locked_cpu == 8000 and job_b.attempts == 0
    _run_until(ctx, 20)
    assert job_a.first_scheduled == 11.5  # a answers: its task starts, the rest of the offer is unlocked
    assert job_b.first_scheduled == 13.5  # next round at 12.5, then b's 1 s decision
    assert ctx.cell.locked_cpu == 0


# -- abandonment --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("architecture", ["monolithic", "omega", "mesos"])
def test_a_job_is_abandoned_after_max_attempts(architecture: str) -> None:
    # 2 of the 4 cores are held by a job running past the end: a 3-core task never fits
    cfg = config(
        {"batch": {"t_job": 0.5, "t_task": 0, "max_attempts": 5, "retry_delay": 1}},
        {"batch": one_job("batch", 12, 1, cpu=3)}, duration=23.9,
        initial_state={"jobs": [{"tasks": 1, "cpu": 2, "memory": 1}]},
    )
    result, jobs = run(cfg, architecture)
    (job,) = jobs.jobs.values()
    assert (job.state, job.attempts, job.no_fit_time, job.first_scheduled) == (JobState.ABANDONED, 5, 2.5, None)
    assert (result.schedulers[0].jobs_abandoned, result.schedulers[0].busyness_no_fit) == (1, 2.5 / 23.9)
    assert result.prefill.tasks == 1


# -- determinism and outputs -----------------------------------------------------------------------------------


def _short_example(tmp_path: Path) -> Path:
    """The shipped example, 15 minutes long."""
    document = yaml.safe_load(EXAMPLE.read_text())
    document["duration"] = 900
    path = tmp_path / "cell.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def test_same_configuration_same_bytes(tmp_path: Path) -> None:
    cfg_path = _short_example(tmp_path)
    from clustersim.architectures import load_config

    for name in ("one", "two"):
        run_architectures(load_config(cfg_path), "all", tmp_path / name)
    files = sorted(p.relative_to(tmp_path / "one") for p in (tmp_path / "one").rglob("*") if p.is_file())
    assert {f.name for f in files} >= {"jobs.csv", "schedulers.csv", "workloads.csv", "utilisation.csv",
                                       "summary.csv", "busyness.png", "utilisation.png"}
    for f in files:
        assert (tmp_path / "one" / f).read_bytes() == (tmp_path / "two" / f).read_bytes(), f


def test_one_workload_runs_under_every_architecture(tmp_path: Path) -> None:
    from clustersim.architectures import load_config

    results = run_architectures(load_config(_short_example(tmp_path)), "all", tmp_path, figures=False)
    assert [r.architecture for r in results] == ["mesos", "monolithic", "omega/resource-fit/incremental"]
    assert len({r.jobs_submitted for r in results}) == 1  # the same jobs for all three
    rows = (tmp_path / "schedulers.csv").read_text().splitlines()
    assert rows[0].startswith("architecture,scheduler,job_types,busyness,busyness_useful,busyness_wasted")
    assert len(rows) == 1 + 2 + 1 + 2


def test_cli_runs_one_architecture_and_reports_unknown_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                             ) -> None:
    cfg_path = _short_example(tmp_path)
    assert main(["architectures", str(cfg_path), "-o", str(tmp_path / "out"), "--architecture", "omega",
                 "--no-figures", "-q"]) == 0
    assert (tmp_path / "out" / "jobs.csv").exists() and not (tmp_path / "out" / "utilisation.png").exists()
    assert main(["architectures", str(cfg_path), "-o", str(tmp_path / "x"), "--architecture", "borg"]) == 2
    assert "unknown architecture 'borg'; valid: mesos, monolithic, omega" in capsys.readouterr().err
