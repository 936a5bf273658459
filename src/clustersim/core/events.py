"""What the core tells a decision process happened since it was last asked."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from clustersim.intervals import IntervalSet
from clustersim.workload.job import Job


class FinalState(Enum):
    """How a job ended, with Batsim's names."""

    COMPLETED_SUCCESSFULLY = "COMPLETED_SUCCESSFULLY"
    COMPLETED_FAILED = "COMPLETED_FAILED"
    COMPLETED_WALLTIME_REACHED = "COMPLETED_WALLTIME_REACHED"
    COMPLETED_KILLED = "COMPLETED_KILLED"
    REJECTED = "REJECTED"
    PENDING = "PENDING"
    """Never started: still pending when nothing else could happen (not Batsim's; a Kubernetes pod's Pending)."""


@dataclass(slots=True)
class JobSubmitted:
    """A job of the workload (or a SubmitJob decision's) joined the queue."""

    job: Job

    def __init__(self, job: Job) -> None:
        # (Written out: compiled, the `__init__` that `@dataclass` writes is Python code, and one runs per job.)
        self.job = job


@dataclass(slots=True)
class JobCompleted:
    """A job that ran has ended: successfully, at its walltime, or killed."""

    job: Job
    state: FinalState
    resources: IntervalSet

    def __init__(self, job: Job, state: FinalState, resources: IntervalSet) -> None:
        # (Written out: compiled, the `__init__` that `@dataclass` writes is Python code, and one runs per job.)
        self.job = job
        self.state = state
        self.resources = resources


@dataclass(slots=True)
class RequestedCall:
    """The wake-up a CallMeLater decision asked for."""

    time: float


@dataclass(slots=True)
class NoMoreJobs:
    """The workload has no more jobs to submit (Batsim's `no_more_static_job_to_submit`)."""


@dataclass(slots=True)
class NodesSwitched:
    """Nodes finished switching: now asleep (`on` False) or on and idle (`on` True)."""

    nodes: tuple[int, ...]
    on: bool


@dataclass(slots=True)
class MachinesUnavailable:
    """Machines became unavailable (Batsim's external event `machine_unavailable`): nothing may start on them.

    Jobs already running on them go on, as in Batsim 4.2: ending them is the decision process's choice.
    """

    resources: IntervalSet


@dataclass(slots=True)
class MachinesAvailable:
    """Machines became available again (Batsim's external event `machine_available`)."""

    resources: IntervalSet


@dataclass(slots=True)
class NoMoreExternalEvents:
    """The events file has no more events (Batsim's `no_more_external_event_to_occur`)."""


Event = (
    JobSubmitted | JobCompleted | RequestedCall | NoMoreJobs | NodesSwitched | MachinesUnavailable | MachinesAvailable
    | NoMoreExternalEvents
)
