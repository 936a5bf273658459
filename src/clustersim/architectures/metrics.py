"""The paper's metrics, computed from a run's counters and job records (outside the core).

- busyness: fraction of the run a decision path spent deciding, split into useful work, work wasted on
  transactions that conflicted, attempts that found no room for any task, and a decision still unfinished
  when the run ends (the paper's busyness is useful + wasted);
- conflict fraction: conflicted transactions per committed one (the seed's definition; it can exceed 1);
- transactions committed, failed (conflicted) and retried (made by a job's second or later attempt);
- job waits, mean and 90th percentile: until the first task started, until the last one started, and in the
  queue until the first attempt began (the seed's "queue time till first scheduled");
- abandoned and still pending jobs.

Percentiles interpolate linearly between order statistics; a metric over no job is empty (None).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from clustersim.architectures.ledger import JobGroup
from clustersim.architectures.scheduler import SchedulerStats


def mean(values: Sequence[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0-100), linear between order statistics."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass(frozen=True)
class Waits:
    first_mean: float | None
    first_p90: float | None
    full_mean: float | None
    full_p90: float | None
    queue_mean: float | None
    queue_p90: float | None

    @staticmethod
    def of(group: JobGroup) -> Waits:
        return Waits(
            mean(group.wait_first), percentile(group.wait_first, 90),
            mean(group.wait_full), percentile(group.wait_full, 90),
            mean(group.queue_wait), percentile(group.queue_wait, 90),
        )


@dataclass(frozen=True)
class SchedulerMetrics:
    """One decision path's metrics."""

    scheduler: str
    job_types: tuple[str, ...]
    busyness: float
    busyness_useful: float
    busyness_wasted: float
    busyness_no_fit: float
    busyness_unfinished: float
    conflict_fraction: float
    transactions_committed: int
    transactions_failed: int
    transactions_retried: int
    tasks_committed: int
    tasks_conflicted: int
    attempts: int
    jobs: int
    jobs_scheduled: int
    jobs_abandoned: int
    jobs_pending: int
    waits: Waits

    @staticmethod
    def of(stats: SchedulerStats, group: JobGroup, duration: float) -> SchedulerMetrics:
        return SchedulerMetrics(
            stats.name, stats.job_types,
            busyness=stats.busy_time / duration,
            busyness_useful=stats.useful_time / duration,
            busyness_wasted=stats.wasted_time / duration,
            busyness_no_fit=stats.no_fit_time / duration,
            busyness_unfinished=stats.unfinished_time / duration,
            conflict_fraction=conflict_fraction(stats.failed, stats.committed),
            transactions_committed=stats.committed, transactions_failed=stats.failed,
            transactions_retried=stats.retried, tasks_committed=stats.tasks_committed,
            tasks_conflicted=stats.tasks_conflicted, attempts=stats.attempts,
            jobs=group.jobs, jobs_scheduled=group.scheduled, jobs_abandoned=group.abandoned,
            jobs_pending=group.pending, waits=Waits.of(group),
        )


def conflict_fraction(failed: int, committed: int) -> float:
    if committed:
        return failed / committed
    return math.inf if failed else 0.0


@dataclass(frozen=True)
class WorkloadMetrics:
    """One job type's metrics; `decision_time` is the think time spent on its jobs."""

    job_type: str
    scheduler: str
    jobs: int
    tasks: int
    jobs_scheduled: int
    jobs_abandoned: int
    jobs_pending: int
    decision_time: float
    waits: Waits

    @staticmethod
    def of(job_type: str, scheduler: str, group: JobGroup) -> WorkloadMetrics:
        return WorkloadMetrics(job_type, scheduler, group.jobs, group.tasks, group.scheduled, group.abandoned,
                               group.pending, group.decision_time, Waits.of(group))
