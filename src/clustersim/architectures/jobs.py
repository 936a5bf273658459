"""Jobs made of equal tasks, as in the Omega simulator, and what happens to them while they are scheduled.

A job is routed by its type (batch, service...) to a scheduler. All its tasks have the same cpu (millicores),
memory (bytes) and run time, so a placement is just "how many tasks on which machines". A job may be placed
over several attempts; each attempt costs think time, and a job that still has unplaced tasks after its
scheduler's maximum number of attempts is abandoned.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

MILLICORES = 1000
GIB = 2**30


class JobState(Enum):
    """Where a job is when it leaves its scheduler (or when the run ends)."""

    SCHEDULED = "scheduled"
    ABANDONED = "abandoned"
    PENDING = "pending"


@dataclass(slots=True, eq=False)
class Job:
    """A job and its scheduling history; times are simulated seconds."""

    id: int
    job_type: str
    scheduler: str
    submit: float
    tasks: int
    cpu: int
    memory: int
    runtime: float
    unscheduled: int = field(init=False)
    attempts: int = 0
    queue_wait: float | None = None
    first_scheduled: float | None = None
    fully_scheduled: float | None = None
    state: JobState = JobState.PENDING
    useful_time: float = 0.0
    wasted_time: float = 0.0
    no_fit_time: float = 0.0

    def __post_init__(self) -> None:
        self.unscheduled = self.tasks

    def placed(self, tasks: int, now: float) -> None:
        """Record that `tasks` more of its tasks started at `now`."""
        if tasks <= 0:
            return
        self.unscheduled -= tasks
        if self.first_scheduled is None:
            self.first_scheduled = now
        if self.unscheduled == 0:
            self.fully_scheduled = now
            self.state = JobState.SCHEDULED
