"""The record of jobs: streamed to a sink as each job leaves its scheduler, summarised per path and job type.

A job leaves when all its tasks are placed or when it is abandoned; jobs still waiting when the run ends are
recorded last as pending, in submission order. Only the few numbers the metrics need are kept per job, so
memory follows the jobs alive plus one float per finished job and metric.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from clustersim.architectures.jobs import Job, JobState


class JobSink(Protocol):
    def write(self, job: Job, path: str) -> None: ...


@dataclass
class JobGroup:
    """What the metrics need about the jobs of one decision path or one job type."""

    jobs: int = 0
    tasks: int = 0
    scheduled: int = 0
    abandoned: int = 0
    pending: int = 0
    decision_time: float = 0.0
    wait_first: list[float] = field(default_factory=list)
    wait_full: list[float] = field(default_factory=list)
    queue_wait: list[float] = field(default_factory=list)

    def add(self, job: Job) -> None:
        self.jobs += 1
        self.tasks += job.tasks
        if job.state is JobState.SCHEDULED:
            self.scheduled += 1
        elif job.state is JobState.ABANDONED:
            self.abandoned += 1
        else:
            self.pending += 1
        self.decision_time += job.useful_time + job.wasted_time + job.no_fit_time
        if job.first_scheduled is not None:
            self.wait_first.append(job.first_scheduled - job.submit)
        if job.fully_scheduled is not None:
            self.wait_full.append(job.fully_scheduled - job.submit)
        if job.queue_wait is not None:
            self.queue_wait.append(job.queue_wait)


class JobLedger:
    """Jobs submitted and still with their schedulers, and the groups of those that left."""

    def __init__(self, sink: JobSink | None = None):
        self.sink = sink
        self._active: dict[int, tuple[Job, str]] = {}
        self.by_path: dict[str, JobGroup] = {}
        self.by_type: dict[str, JobGroup] = {}
        self.submitted = 0

    def submit(self, job: Job, path: str) -> None:
        self._active[job.id] = (job, path)
        self.submitted += 1

    def leave(self, job: Job) -> None:
        _, path = self._active.pop(job.id)
        self._record(job, path)

    def close(self) -> None:
        """Record every job still waiting as pending, in submission order."""
        for job_id in sorted(self._active):
            job, path = self._active[job_id]
            self._record(job, path)
        self._active.clear()

    def _record(self, job: Job, path: str) -> None:
        self.by_path.setdefault(path, JobGroup()).add(job)
        self.by_type.setdefault(job.job_type, JobGroup()).add(job)
        if self.sink is not None:
            self.sink.write(job, path)
