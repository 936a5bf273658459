"""Jobs as the workload describes them: immutable requests, independent of any simulation run."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from clustersim.workload.profiles import Profile


@dataclass(slots=True, eq=False)
class Job:
    """A job request. `nb_res` counts the platform's allocation units (hosts or cores).

    Read-only by convention: it is a plain slotted record (not frozen) because the readers build hundreds of
    thousands of them and frozen dataclasses cost four times more to construct.

    `walltime` is the requested time after which the job is killed; None means unlimited (Batsim's -1).
    `extra` keeps fields of the source format clustersim does not interpret, so they survive a round trip.
    """

    id: str
    submit_time: float
    nb_res: int
    profile: Profile
    walltime: float | None = None
    workload: str = "w0"
    profile_name: str = ""
    user: str = ""
    group: str = ""
    queue: str = ""
    extra: Mapping[str, object] = field(default_factory=dict)
    request: Mapping[str, int] | None = None
    """Kubernetes-style requests (cpu millicores, memory bytes, ...): the job is a pod sharing one node."""
    key: str = field(init=False, repr=False)
    """The globally unique id Batsim shows: `workload!id`."""

    def __init__(
        self, id: str, submit_time: float, nb_res: int, profile: Profile, walltime: float | None = None,
        workload: str = "w0", profile_name: str = "", user: str = "", group: str = "", queue: str = "",
        extra: Mapping[str, object] | None = None, request: Mapping[str, int] | None = None,
    ) -> None:
        """The fields in their order (`extra` None: a new empty dict). (Written out: compiled, the `__init__` that
        `@dataclass` writes is Python code, and the readers build a Job per record.)"""
        self.id = id
        self.submit_time = submit_time
        self.nb_res = nb_res
        self.profile = profile
        self.walltime = walltime
        self.workload = workload
        self.profile_name = profile_name
        self.user = user
        self.group = group
        self.queue = queue
        self.extra = {} if extra is None else extra
        self.request = request
        self.key = f"{workload}!{id}"


def id_order(job_id: str) -> tuple[int, int | str]:
    """Sort key that orders numeric ids numerically and puts them before other ids."""
    return (0, int(job_id)) if job_id.isascii() and job_id.isdigit() else (1, job_id)
