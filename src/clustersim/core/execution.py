"""The execution model interface the core asks, and the fast model that knows a job's end at its start.

The core owns time. At a job's start it asks the model `start`: the fast model answers with the run time, a
stepped model (SimGrid) answers None and later reports the end from `advance`, which the core calls with its
own next event time before each instant. `cancel` stops a job the core ended (walltime, kill).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from clustersim.core.state import RunningJob
from clustersim.platform.model import Platform
from clustersim.workload.profiles import Delay, ParallelHomogeneous, runtime_on


class ExecutionModel(Protocol):
    """What the core asks about executing jobs; `stepped` says whether ends come from `advance`."""

    stepped: bool

    def drive(self, loop: Callable[[], None]) -> None:
        """Run the core's event loop (inside the model's own engine for a stepped model)."""

    def start(self, running: RunningJob) -> float | None:
        """Begin executing a job; its run time in seconds, or None when `advance` will report its end."""

    def advance(self, until: float | None) -> Sequence[tuple[float, str]]:
        """Let simulated time pass until `until` (None: until a job ends) or an earlier job end.

        Returns `(end time, job key)` of the jobs that ended, all at the earliest end instant reached.
        """

    def cancel(self, key: str) -> None:
        """Stop a job's execution now (its walltime is reached, or it was killed); no-op if already over."""


class FastExecution:
    """A job runs for its profile's time at the pace of its slowest unit (a `parallel` profile's i-th amount at
    its i-th unit's speed); communication costs nothing."""

    stepped = False

    def __init__(self, platform: Platform):
        self.platform = platform

    def drive(self, loop: Callable[[], None]) -> None:
        loop()

    def start(self, running: RunningJob) -> float:
        profile = running.job.profile
        if type(profile) is Delay:
            return profile.seconds
        platform = self.platform
        if platform.homogeneous_speed is not None or type(profile) is ParallelHomogeneous:
            return profile.runtime(running.job.nb_res, platform.min_speed(running.resources))
        return runtime_on(profile, [platform.unit_speeds[r] for r in running.resources])  # per-host speeds

    def advance(self, until: float | None) -> Sequence[tuple[float, str]]:
        return ()

    def cancel(self, key: str) -> None:
        return None
