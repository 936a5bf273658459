"""CSV outputs of a run: per-job records (streamed), utilisation over time (streamed), per-scheduler and
per-job-type metrics, and a summary.

Numbers are written with `records.numbers.fmt` (exact, shortest), empty cells mean "no value" (a wait over no
job), so outputs are byte-identical for identical runs. Resources are written in cores and GiB, times in
simulated seconds. Columns are documented in docs/architectures.md.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Self, TextIO

from clustersim._io.numbers import fmt
from clustersim.architectures.jobs import GIB, MILLICORES, Job
from clustersim.architectures.metrics import SchedulerMetrics, Waits, WorkloadMetrics
from clustersim.architectures.simulation import RunResult, UtilisationSample

Cell = str | int | float | None

WAIT_COLUMNS = ("wait_first_mean", "wait_first_p90", "wait_full_mean", "wait_full_p90", "queue_wait_mean",
                "queue_wait_p90")
SCHEDULER_COLUMNS = (
    "architecture", "scheduler", "job_types", "busyness", "busyness_useful", "busyness_wasted", "busyness_no_fit",
    "busyness_unfinished", "conflict_fraction", "transactions_committed", "transactions_failed",
    "transactions_retried", "tasks_committed", "tasks_conflicted", "attempts", "jobs", "jobs_scheduled",
    "jobs_abandoned", "jobs_pending", *WAIT_COLUMNS,
)
WORKLOAD_COLUMNS = ("architecture", "job_type", "scheduler", "jobs", "tasks", "jobs_scheduled", "jobs_abandoned",
                    "jobs_pending", "decision_time", *WAIT_COLUMNS)
JOB_COLUMNS = ("job_id", "job_type", "scheduler", "submit", "tasks", "cpu", "memory", "runtime", "state",
               "tasks_scheduled", "attempts", "queue_wait", "first_scheduled", "fully_scheduled", "wait_first",
               "wait_full", "useful_time", "wasted_time", "no_fit_time")
UTILISATION_COLUMNS = ("time", "cpu", "memory", "cpu_locked", "memory_locked")


def text(value: Cell) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return fmt(value)
    return str(value)


class CsvStream:
    """A CSV file written row by row (`\\n` line ends, fixed column order)."""

    def __init__(self, path: Path, columns: Sequence[str]):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: TextIO = open(path, "w", newline="", encoding="utf-8")  # noqa: SIM115 (closed by close())
        self._writer = csv.writer(self._file, lineterminator="\n")
        self._writer.writerow(columns)

    def row(self, values: Iterable[Cell]) -> None:
        self._writer.writerow([text(v) for v in values])

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()


def _minus(a: float | None, b: float) -> float | None:
    return None if a is None else a - b


class JobsCsv(CsvStream):
    """jobs.csv: one row per job, written when it leaves its scheduler (pending ones at the end)."""

    def __init__(self, path: Path):
        super().__init__(path, JOB_COLUMNS)

    def write(self, job: Job, path: str) -> None:
        self.row((
            job.id, job.job_type, path, job.submit, job.tasks, job.cpu / MILLICORES, job.memory / GIB, job.runtime,
            job.state.value, job.tasks - job.unscheduled, job.attempts, job.queue_wait, job.first_scheduled,
            job.fully_scheduled, _minus(job.first_scheduled, job.submit), _minus(job.fully_scheduled, job.submit),
            job.useful_time, job.wasted_time, job.no_fit_time,
        ))


class UtilisationCsv(CsvStream):
    """utilisation.csv: fractions of the cell's cpu and memory in use (and held by Mesos offers) over time."""

    def __init__(self, path: Path):
        super().__init__(path, UTILISATION_COLUMNS)

    def write(self, sample: UtilisationSample) -> None:
        self.row((sample.time, sample.cpu, sample.memory, sample.cpu_locked, sample.memory_locked))


def _waits(waits: Waits) -> tuple[Cell, ...]:
    return (waits.first_mean, waits.first_p90, waits.full_mean, waits.full_p90, waits.queue_mean, waits.queue_p90)


def scheduler_row(architecture: str, m: SchedulerMetrics) -> tuple[Cell, ...]:
    return (
        architecture, m.scheduler, "+".join(m.job_types), m.busyness, m.busyness_useful, m.busyness_wasted,
        m.busyness_no_fit, m.busyness_unfinished, m.conflict_fraction, m.transactions_committed, m.transactions_failed,
        m.transactions_retried, m.tasks_committed, m.tasks_conflicted, m.attempts, m.jobs, m.jobs_scheduled,
        m.jobs_abandoned, m.jobs_pending, *_waits(m.waits),
    )


def workload_row(architecture: str, m: WorkloadMetrics) -> tuple[Cell, ...]:
    return (architecture, m.job_type, m.scheduler, m.jobs, m.tasks, m.jobs_scheduled, m.jobs_abandoned,
            m.jobs_pending, m.decision_time, *_waits(m.waits))


def write_metrics(directory: Path, results: Sequence[RunResult]) -> None:
    """schedulers.csv and workloads.csv for one or several runs (one block of rows per architecture)."""
    with CsvStream(directory / "schedulers.csv", SCHEDULER_COLUMNS) as out:
        for result in results:
            for metrics in result.schedulers:
                out.row(scheduler_row(result.architecture, metrics))
    with CsvStream(directory / "workloads.csv", WORKLOAD_COLUMNS) as out:
        for result in results:
            for workload in result.workloads:
                out.row(workload_row(result.architecture, workload))


def write_summary(path: Path, result: RunResult, seed: int, machines: int) -> None:
    """summary.csv: one `key,value` row per figure of the run."""
    rows: list[tuple[str, Cell]] = [
        ("architecture", result.architecture), ("seed", seed), ("duration", result.duration),
        ("machines", machines), ("jobs_submitted", result.jobs_submitted),
        ("mean_cpu_utilisation", result.mean_cpu), ("mean_memory_utilisation", result.mean_memory),
        ("prefill_jobs", result.prefill.jobs), ("prefill_tasks", result.prefill.tasks),
        ("prefill_tasks_skipped", result.prefill.skipped_tasks), ("prefill_jobs_with_end", result.prefill.with_end),
        ("events", result.events),
    ]
    with CsvStream(path, ("key", "value")) as out:
        for row in rows:
            out.row(row)
