"""The execution model interface the core asks, and the fast model that knows a job's end at its start.

The core owns time. At a job's start it asks the model `start`: the fast model answers with the run time, a
stepped model (SimGrid) answers None and later reports the end from `advance`, which the core calls with its
own next event time before each instant. `cancel` stops a job the core ended (walltime, kill). `change_speeds`
tells it that hosts compute at another speed from now on (DVFS): the fast model re-times the jobs running
there (their remaining work at the new speeds), a stepped model lets its engine do it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from clustersim.core.state import RunningJob
from clustersim.platform.model import Platform
from clustersim.workload.profiles import Composed, Delay, ParallelHomogeneous, Profile, runtime_on


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

    def change_speeds(
        self, now: float, speeds: Mapping[int, float], pstate: int, running: Mapping[str, RunningJob]
    ) -> Sequence[tuple[str, float]]:
        """Units compute at these speeds from `now` on (their hosts' computation power state `pstate`).

        `running` are all the running jobs. Returns `(job key, new end of its execution)` of the jobs whose end
        moved (a model that knows ends at start), or nothing (a stepped model reports ends from `advance`).
        """


class FastExecution:
    """A job runs for its profile's time at the pace of its slowest unit (a `parallel` profile's i-th amount at
    its i-th unit's speed); communication costs nothing."""

    stepped = False

    def __init__(self, platform: Platform):
        self.platform = platform
        self._speeds: list[float] | None = None
        """Each unit's speed once a power state changed one (None: the platform's speeds)."""
        self._progress: dict[str, tuple[float, int, float]] = {}
        """Job -> where it was at its last speed change: (time, step, seconds left in that step at those speeds)."""

    def drive(self, loop: Callable[[], None]) -> None:
        loop()

    def start(self, running: RunningJob) -> float:
        profile = running.job.profile
        if type(profile) is Delay:
            return profile.seconds
        platform = self.platform
        if self._speeds is not None:
            return runtime_on(profile, [self._speeds[r] for r in running.resources])
        if platform.homogeneous_speed is not None or type(profile) is ParallelHomogeneous:
            return profile.runtime(running.job.nb_res, platform.min_speed(running.resources))
        return runtime_on(profile, [platform.unit_speeds[r] for r in running.resources])  # per-host speeds

    def advance(self, until: float | None) -> Sequence[tuple[float, str]]:
        return ()

    def cancel(self, key: str) -> None:
        self._progress.pop(key, None)

    def change_speeds(
        self, now: float, speeds: Mapping[int, float], pstate: int, running: Mapping[str, RunningJob]
    ) -> list[tuple[str, float]]:
        """Each job on the changed units has done part of its steps at the old speeds; the rest takes the time
        the new speeds give it (a step's remaining work is its remaining time scaled by the ratio of its
        durations). Delays are not affected."""
        old = list(self._speeds if self._speeds is not None else self.platform.unit_speeds)
        new = list(old)
        for unit, speed in speeds.items():
            new[unit] = speed
        self._speeds = new
        self._progress = {key: place for key, place in self._progress.items() if key in running}
        moved = []
        for key, job in running.items():
            if not any(unit in speeds for unit in job.resources):
                continue
            steps_before = _step_times(job.job.profile, [old[r] for r in job.resources])
            steps_after = _step_times(job.job.profile, [new[r] for r in job.resources])
            since, step, left = self._progress.get(key, (job.start, 0, steps_before[0]))
            elapsed = now - since
            while elapsed > left and step + 1 < len(steps_before):  # steps finished since the last change
                elapsed -= left
                step += 1
                left = steps_before[step]
            left = max(0.0, left - elapsed)
            if steps_before[step] > 0:
                left *= steps_after[step] / steps_before[step]
            self._progress[key] = (now, step, left)
            moved.append((key, now + left + sum(steps_after[step + 1:], 0.0)))
        return moved


def _step_times(profile: Profile, speeds: list[float]) -> list[float]:
    """How long each step of a profile takes on units of these speeds (composed profiles unrolled)."""
    if type(profile) is Composed:
        once = [time for part in profile.sequence for time in _step_times(part, speeds)]
        return once * profile.repeat
    return [runtime_on(profile, speeds)]
