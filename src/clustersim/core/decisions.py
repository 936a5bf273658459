"""What a decision process may ask the core to do. The core validates each one before applying it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from clustersim.core.events import FinalState
from clustersim.intervals import IntervalSet
from clustersim.workload.job import Job


@dataclass(slots=True)
class StartJob:
    """Start a pending job now on exactly these resources (allocation unit ids).

    `storage_mapping` maps an I/O profile's storage labels to storage host names (Batsim's EXECUTE_JOB
    `storage_mapping`); None: a label is a storage host's name. Only the simgrid model times I/O.
    """

    job_key: str
    resources: IntervalSet
    storage_mapping: Mapping[str, str] | None = None

    def __init__(self, job_key: str, resources: IntervalSet, storage_mapping: Mapping[str, str] | None = None):
        # (Written out: compiled, the `__init__` that `@dataclass` writes is Python code, and one runs per job.)
        self.job_key = job_key
        self.resources = resources
        self.storage_mapping = storage_mapping


@dataclass(slots=True)
class RejectJob:
    """Refuse a pending job; it ends in the REJECTED state without running."""

    job_key: str


@dataclass(slots=True)
class KillJob:
    """Stop a running job now; it ends in `state`, COMPLETED_KILLED unless told otherwise.

    Another final state is Batsim's CHANGE_JOB_STATE of a running job (e.g. to COMPLETED_SUCCESSFULLY).
    """

    job_key: str
    state: FinalState = FinalState.COMPLETED_KILLED


@dataclass(slots=True)
class CallMeLater:
    """Ask to be woken up at simulated time `time` (not before now).

    With `first`, the call comes before every other event of that instant: the Batsim adapter uses it to apply
    decisions timestamped in the future (a KILL_JOB at t' > now) when t' comes, as Batsim does. With `last`, after
    them: the Batsim adapter's scheduler, whose reply is dated `time`, is ready again once that instant's other
    events are in.
    """

    time: float
    first: bool = False
    last: bool = False


@dataclass(slots=True)
class SetJobMetadata:
    """Attach a free-form string to a job, written in the `metadata` column of jobs.csv."""

    job_key: str
    metadata: str


@dataclass(slots=True)
class SubmitJob:
    """Submit a new job now (`job.submit_time` must be now): jobs created while the simulation runs.

    Batsim's dynamic jobs (REGISTER_JOB). The job is pending at once, so later decisions of the same call may
    start it; the decision process also gets a JobSubmitted event for it at this instant, after this call, as
    for the workload's jobs. Its key must not be pending or running already.
    """

    job: Job


@dataclass(slots=True)
class SwitchOff:
    """Put idle nodes to sleep (their first sleep state); their units are unavailable until switched on."""

    nodes: tuple[int, ...]


@dataclass(slots=True)
class SwitchOn:
    """Wake sleeping nodes; their units become free once the switch-on transition is over.

    `pstate` is the computation power state they wake into (Batsim's SET_RESOURCE_STATE names it); None: the one
    they computed in before they slept."""

    nodes: tuple[int, ...]
    pstate: int | None = None


@dataclass(slots=True)
class SetPState:
    """Put nodes that are on (idle or computing) in another computation power state now (DVFS): their speed and
    watts become that state's, and the jobs running there go on at the new speed (Batsim's SET_RESOURCE_STATE
    to a computation pstate)."""

    nodes: tuple[int, ...]
    pstate: int


Decision = (
    StartJob | RejectJob | KillJob | CallMeLater | SetJobMetadata | SwitchOff | SwitchOn | SetPState | SubmitJob
)
