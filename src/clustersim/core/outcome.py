"""The record of how one job ended: what the outputs and metrics are computed from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Protocol

from clustersim.core.events import FinalState
from clustersim.intervals import IntervalSet
from clustersim.workload.job import Job

ZERO_RUNTIME: Final = 1e-5
"""The run time Batsim counts instead of 0 for a job that ran for no time: stretch and slowdown divide by it."""


@dataclass(slots=True)
class JobOutcome:
    """A job's final state. `start` and `finish` are None for a job that never ran (rejected)."""

    job: Job
    state: FinalState
    start: float | None
    finish: float | None
    resources: IntervalSet
    metadata: str = ""
    consumed_energy: float = -1.0

    def __init__(
        self, job: Job, state: FinalState, start: float | None, finish: float | None, resources: IntervalSet,
        metadata: str = "", consumed_energy: float = -1.0,
    ) -> None:
        # (Written out: compiled, the `__init__` that `@dataclass` writes is Python code, and one runs per job.)
        self.job = job
        self.state = state
        self.start = start
        self.finish = finish
        self.resources = resources
        self.metadata = metadata
        self.consumed_energy = consumed_energy

    @property
    def ran(self) -> bool:
        return self.start is not None


class OutcomeSink(Protocol):
    """Receives each job outcome as soon as the job ends (streaming), then `close` once."""

    def record(self, outcome: JobOutcome) -> None: ...

    def close(self) -> None: ...
