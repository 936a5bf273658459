"""What every scheduler shares whatever the architecture: think time, retry rules, and busy-time accounting.

A scheduler takes `t_job + t_task * tasks` seconds of simulated time per decision (tasks still unplaced at the
start of the attempt), during which it is busy. The paper splits busy time into useful work and work wasted on
transactions that conflicted; attempts that found no room for any task are kept apart (`no_fit`) so the split is
exact. A job not fully placed is retried after `retry_delay`, and abandoned after `max_attempts` attempts.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from enum import Enum

from clustersim.architectures.pickers import RandomizedFirstFit, TaskPicker

DEFAULT_MAX_ATTEMPTS = 1000
"""The paper gave up on a job after 1,000 scheduling attempts."""


@dataclass(frozen=True)
class SchedulerSpec:
    """One scheduler's configuration."""

    name: str
    t_job: float
    t_task: float
    picker: TaskPicker = field(default_factory=RandomizedFirstFit)
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    retry_delay: float = 1.0

    def think_time(self, tasks: int) -> float:
        return self.t_job + self.t_task * tasks


class Outcome(Enum):
    """How an attempt's think time counts."""

    USEFUL = "useful"
    WASTED = "wasted"
    NO_FIT = "no_fit"


@dataclass
class SchedulerStats:
    """Counters of one decision path (a scheduler, or the single path of a monolithic scheduler)."""

    name: str
    job_types: tuple[str, ...] = ()
    useful_time: float = 0.0
    wasted_time: float = 0.0
    no_fit_time: float = 0.0
    unfinished_time: float = 0.0
    attempts: int = 0
    committed: int = 0
    failed: int = 0
    retried: int = 0
    tasks_committed: int = 0
    tasks_conflicted: int = 0
    busy_since: float | None = None

    @property
    def busy_time(self) -> float:
        return self.useful_time + self.wasted_time + self.no_fit_time + self.unfinished_time

    def start_busy(self, now: float) -> None:
        self.busy_since = now

    def stop_busy(self) -> None:
        self.busy_since = None

    def close(self, end: float) -> None:
        """Count the part of a decision still in progress at the end of the run."""
        if self.busy_since is not None:
            self.unfinished_time += max(0.0, end - self.busy_since)
            self.busy_since = None


@dataclass
class SchedulerSet:
    """The configured schedulers, their own random generators (never shared), and the job types they serve."""

    specs: dict[str, SchedulerSpec]
    rngs: dict[str, random.Random]
    job_types: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def names(self) -> list[str]:
        return list(self.specs)

    def all_job_types(self) -> tuple[str, ...]:
        return tuple(t for name in self.specs for t in self.job_types.get(name, ()))
