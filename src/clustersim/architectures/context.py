"""The services the core offers to architectures: time, the cell, starting tasks, and the rules of attempts.

Architectures are decision processes: they read the cell (or a snapshot, or an offer) and ask the core to start
tasks. Starting tasks goes through `Cell.claim`, which refuses over-allocation, and schedules the tasks' end
as a job-end event, so architectures never change the cell's truth themselves.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from clustersim.architectures.cell import Cell, Placement
from clustersim.architectures.jobs import Job, JobState
from clustersim.architectures.ledger import JobLedger
from clustersim.architectures.scheduler import Outcome, SchedulerSet, SchedulerSpec, SchedulerStats
from clustersim.architectures.transactions import (
    CommitResult,
    ConflictDetector,
    Transaction,
    TransactionMode,
    commit,
)
from clustersim.core.engine import EventClass, EventQueue

Action = Callable[[], None]


class Context:
    """Simulated time, the cell and the schedulers' settings, as architectures see them."""

    def __init__(self, events: EventQueue[Action], cell: Cell, schedulers: SchedulerSet, ledger: JobLedger):
        self.events = events
        self.cell = cell
        self.schedulers = schedulers
        self.ledger = ledger
        self.release_listeners: list[Action] = []

    @property
    def now(self) -> float:
        return self.events.now

    def after(self, delay: float, action: Action) -> None:
        self.events.push(self.events.now + delay, EventClass.CALL, action)

    def spec(self, scheduler: str) -> SchedulerSpec:
        return self.schedulers.specs[scheduler]

    def rng(self, scheduler: str) -> random.Random:
        return self.schedulers.rngs[scheduler]

    # -- starting tasks ------------------------------------------------------------------------------------

    def start(self, job: Job, placement: Placement) -> None:
        """Start the placement's tasks now (refused if they do not fit) and schedule their end."""
        if len(placement.machines) == 0:
            return
        self.cell.claim(job.scheduler, placement, self.now)
        self._started(job, placement)

    def transact(self, job: Job, transaction: Transaction, detector: ConflictDetector,
                 mode: TransactionMode) -> CommitResult:
        """Commit an Omega transaction for the job; its committed tasks start now."""
        result = commit(self.cell, transaction, detector, mode, self.now)
        if len(result.committed.machines):
            self._started(job, result.committed)
        return result

    def occupy(self, owner: str, placement: Placement, end: float | None) -> None:
        """Start tasks no architecture scheduled (the initial state); `end` None: they outlive the run."""
        self.cell.claim(owner, placement, self.now)
        if end is not None:
            self._release_at(owner, placement, end)

    def _started(self, job: Job, placement: Placement) -> None:
        job.placed(placement.tasks, self.now)
        self._release_at(job.scheduler, placement, self.now + job.runtime)

    def _release_at(self, owner: str, placement: Placement, end: float) -> None:
        def release() -> None:
            self.cell.release(owner, placement, self.events.now)
            for listener in self.release_listeners:
                listener()

        self.events.push(end, EventClass.JOB_END, release)

    # -- the rules of attempts -------------------------------------------------------------------------------

    def begin_attempt(self, job: Job) -> float:
        """Count an attempt starting now; returns its think time."""
        job.attempts += 1
        if job.queue_wait is None:
            job.queue_wait = self.now - job.submit
        return self.spec(job.scheduler).think_time(job.unscheduled)

    def end_attempt(self, job: Job, stats: SchedulerStats, think: float, outcome: Outcome, committed: int,
                    conflicted: int, requeue: Callable[[Job], None]) -> None:
        """Account the attempt's think time and transaction, then retry, abandon or release the job."""
        stats.attempts += 1
        if outcome is Outcome.USEFUL:
            stats.useful_time += think
            job.useful_time += think
        elif outcome is Outcome.WASTED:
            stats.wasted_time += think
            job.wasted_time += think
        else:
            stats.no_fit_time += think
            job.no_fit_time += think
        if committed or conflicted:
            if conflicted:
                stats.failed += 1
            else:
                stats.committed += 1
            if job.attempts > 1:
                stats.retried += 1
        stats.tasks_committed += committed
        stats.tasks_conflicted += conflicted
        if job.unscheduled == 0:
            self.ledger.leave(job)
            return
        spec = self.spec(job.scheduler)
        if job.attempts >= spec.max_attempts:
            job.state = JobState.ABANDONED
            self.ledger.leave(job)
            return
        self.after(spec.retry_delay, lambda: requeue(job))
