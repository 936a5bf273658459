"""The paper's experiment: vary one scheduler's `t_job` (log scale) under monolithic and Omega.

With a monolithic scheduler, every job waits behind the slow decisions: its busyness saturates and waits
explode for every job type. Under Omega only the slow scheduler's own work grows; the other scheduler's
busyness and waits stay put, at the price of conflicts, which coarse-grained detection (sequence numbers) and
all-or-nothing transactions make more frequent. Every run uses the same workload (same seed, same streams);
only the think time changes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from clustersim.architectures.architecture import ArchitectureSpec
from clustersim.architectures.config import Config
from clustersim.architectures.metrics import Waits
from clustersim.architectures.monolithic import MonolithicSpec
from clustersim.architectures.omega import OmegaSpec
from clustersim.architectures.outputs import WAIT_COLUMNS, Cell, CsvStream
from clustersim.architectures.simulation import RunResult, simulate

VARIANTS: tuple[ArchitectureSpec, ...] = (
    MonolithicSpec(),
    OmegaSpec("resource-fit", "incremental"),
    OmegaSpec("sequence-numbers", "incremental"),
    OmegaSpec("resource-fit", "all-or-nothing"),
    OmegaSpec("sequence-numbers", "all-or-nothing"),
)
"""Monolithic, and Omega with fine or coarse conflict detection and incremental or all-or-nothing commits."""

COLUMNS = ("variant", "architecture", "t_job", "job_type", "scheduler", "busyness", "busyness_wasted",
           "conflict_fraction", "transactions_committed", "transactions_failed", "jobs", "jobs_abandoned",
           "jobs_pending", *WAIT_COLUMNS)


@dataclass(frozen=True)
class SweepRow:
    """One job type in one run: its waits, and the counters of the decision path that served it."""

    variant: str
    architecture: str
    t_job: float
    job_type: str
    scheduler: str
    busyness: float
    busyness_wasted: float
    conflict_fraction: float
    transactions_committed: int
    transactions_failed: int
    jobs: int
    jobs_abandoned: int
    jobs_pending: int
    waits: Waits

    def cells(self) -> tuple[Cell, ...]:
        w = self.waits
        return (self.variant, self.architecture, self.t_job, self.job_type, self.scheduler, self.busyness,
                self.busyness_wasted, self.conflict_fraction, self.transactions_committed,
                self.transactions_failed, self.jobs, self.jobs_abandoned, self.jobs_pending, w.first_mean,
                w.first_p90, w.full_mean, w.full_p90, w.queue_mean, w.queue_p90)


def rows_of(result: RunResult, architecture: str, t_job: float) -> list[SweepRow]:
    paths = {m.scheduler: m for m in result.schedulers}
    rows = []
    for workload in result.workloads:
        path = paths[workload.scheduler]
        rows.append(SweepRow(
            result.architecture, architecture, t_job, workload.job_type, workload.scheduler, path.busyness,
            path.busyness_wasted, path.conflict_fraction, path.transactions_committed, path.transactions_failed,
            workload.jobs, workload.jobs_abandoned, workload.jobs_pending, workload.waits,
        ))
    return rows


def run_sweep(config: Config, scheduler: str, t_jobs: Sequence[float],
              variants: Sequence[ArchitectureSpec] = VARIANTS,
              progress: Callable[[str, float], None] | None = None) -> list[SweepRow]:
    """Every variant at every t_job value, in that order."""
    if scheduler not in config.schedulers:
        from clustersim.errors import UnknownNameError

        raise UnknownNameError("scheduler", scheduler, list(config.schedulers))
    rows: list[SweepRow] = []
    for spec in variants:
        for t_job in t_jobs:
            if progress is not None:
                progress(spec.label(), t_job)
            result = simulate(config.with_t_job(scheduler, t_job), spec)
            rows.extend(rows_of(result, spec.name, t_job))
    return rows


def write_sweep(path: Path, rows: Sequence[SweepRow]) -> None:
    with CsvStream(path, COLUMNS) as out:
        for row in rows:
            out.row(row.cells())
