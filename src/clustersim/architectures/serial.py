"""A decision path that serves its queue one job at a time, the way Omega and monolithic schedulers do.

The path takes the job at the head of its queue, thinks for the job's think time, then applies its decision;
a job not fully placed goes back to the tail of the queue after the retry delay. What a decision is (nothing
prepared in advance, or claims made on a snapshot at the start) is the subclass's business.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from typing import Generic, TypeVar

from clustersim.architectures.context import Context
from clustersim.architectures.jobs import Job
from clustersim.architectures.scheduler import Outcome, SchedulerStats

D = TypeVar("D")


class SerialPath(ABC, Generic[D]):
    """A FIFO queue and one decision in progress at most."""

    def __init__(self, ctx: Context, stats: SchedulerStats):
        self.ctx = ctx
        self.stats = stats
        self.queue: deque[Job] = deque()
        self.busy = False

    def enqueue(self, job: Job) -> None:
        self.queue.append(job)
        if not self.busy:
            self._next()

    def _next(self) -> None:
        if not self.queue:
            return
        job = self.queue.popleft()
        self.busy = True
        think = self.ctx.begin_attempt(job)
        self.stats.start_busy(self.ctx.now)
        decision = self.prepare(job)
        self.ctx.after(think, lambda: self._finish(job, think, decision))

    def _finish(self, job: Job, think: float, decision: D) -> None:
        self.stats.stop_busy()
        outcome, committed, conflicted = self.apply(job, decision)
        self.ctx.end_attempt(job, self.stats, think, outcome, committed, conflicted, self.enqueue)
        self.busy = False
        self._next()

    @abstractmethod
    def prepare(self, job: Job) -> D:
        """What the decision fixes when it starts."""

    @abstractmethod
    def apply(self, job: Job, decision: D) -> tuple[Outcome, int, int]:
        """Apply the decision when thinking ends: (outcome, tasks committed, tasks conflicted)."""
