"""Job profiles: how long a job runs on the resources it was given, as Batsim's profiles define it.

`runtime` is the fast platform model's answer: a parallel task runs for its computation time on its slowest
host and communication costs nothing. The SimGrid platform model (clustersim.core.simgrid_execution) executes the
same profiles, communication included, as Batsim does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Delay:
    """Runs for a fixed number of seconds wherever it is placed (Batsim `delay`)."""

    seconds: float

    def runtime(self, nb_resources: int, min_speed: float) -> float:
        return self.seconds


@dataclass(frozen=True, slots=True)
class ParallelHomogeneous:
    """Each allocated unit computes `flops`; ends when the slowest unit is done (Batsim `parallel_homogeneous`).

    `comm_bytes` is what each unit sends to each other unit (the fast model ignores it).
    """

    flops: float
    comm_bytes: float = 0.0

    def runtime(self, nb_resources: int, min_speed: float) -> float:
        return self.flops / min_speed


@dataclass(frozen=True, slots=True)
class Parallel:
    """Per-unit computation amounts and the row-major `comm` matrix of bytes (Batsim `parallel`, `cpu`/`com`).

    An empty `comm` means no communication; the fast model ignores it anyway.
    """

    flops: tuple[float, ...]
    comm: tuple[float, ...] = ()

    def runtime(self, nb_resources: int, min_speed: float) -> float:
        return max(self.flops) / min_speed if self.flops else 0.0


@dataclass(frozen=True, slots=True)
class Composed:
    """A sequence of profiles run one after the other, `repeat` times (Batsim `composed`)."""

    sequence: tuple[Profile, ...]
    repeat: int = 1

    def runtime(self, nb_resources: int, min_speed: float) -> float:
        once = sum((p.runtime(nb_resources, min_speed) for p in self.sequence), 0.0)
        return once * self.repeat


@dataclass(frozen=True, slots=True)
class StorageTransfer:
    """Each allocated host reads `read_bytes` from a storage host and writes `write_bytes` to it, computing nothing
    (Batsim `parallel_homogeneous_pfs`). `storage` names the storage host. Only a network model times it: the
    fast model gives it no time."""

    read_bytes: float
    write_bytes: float
    storage: str = "pfs"

    def runtime(self, nb_resources: int, min_speed: float) -> float:
        return 0.0


@dataclass(frozen=True, slots=True)
class DataStaging:
    """`nb_bytes` move from the storage host `source` to the storage host `target` (Batsim `data_staging`); the
    job's own hosts take no part. Only a network model times it: the fast model gives it no time."""

    nb_bytes: float
    source: str
    target: str

    def runtime(self, nb_resources: int, min_speed: float) -> float:
        return 0.0


Profile = Delay | ParallelHomogeneous | Parallel | Composed | StorageTransfer | DataStaging


def needs_speed(profile: Profile) -> bool:
    """Whether the runtime depends on the speed of the allocated units (it does unless pure delays or I/O)."""
    if type(profile) is Delay:  # the common case (every SWF job), asked at each start and end with energy on
        return False
    if isinstance(profile, Delay | StorageTransfer | DataStaging):
        return False
    if isinstance(profile, Composed):
        return any(needs_speed(p) for p in profile.sequence)
    return True


def only_delays(profile: Profile) -> bool:
    """Whether executing the profile only waits: a delay, or a composition of delays."""
    if type(profile) is Delay:
        return True
    if isinstance(profile, Composed):
        return all(only_delays(p) for p in profile.sequence)
    return False


def local_work(profile: Profile) -> bool:
    """Whether executing the profile only waits or computes on the job's own hosts: a delay, a parallel task with
    some computation and no communication, or a composition of those (no I/O)."""
    if type(profile) is Delay:
        return True
    if isinstance(profile, ParallelHomogeneous):
        return profile.comm_bytes <= 0 and profile.flops > 0
    if isinstance(profile, Parallel):
        return not any(profile.comm) and any(flops > 0 for flops in profile.flops)
    if isinstance(profile, Composed):
        return all(local_work(p) for p in profile.sequence)
    return False


def communicates(profile: Profile) -> bool:
    """Whether executing the profile sends bytes between hosts, storage hosts included (only a network model can
    time that)."""
    if isinstance(profile, ParallelHomogeneous):
        return profile.comm_bytes > 0
    if isinstance(profile, StorageTransfer):
        return profile.read_bytes > 0 or profile.write_bytes > 0
    if isinstance(profile, DataStaging):
        return profile.nb_bytes > 0
    if isinstance(profile, Parallel):
        return any(profile.comm)
    if isinstance(profile, Composed):
        return any(communicates(p) for p in profile.sequence)
    return False


def runtime_on(profile: Profile, speeds: Sequence[float]) -> float:
    """The fast model's run time on hosts of these speeds (the allocation's, in id order), as Batsim computes a
    ptask without communication: the i-th amount of a `parallel` profile runs on the i-th host at that host's
    speed; other profiles go at the slowest host's pace."""
    if type(profile) is Parallel:
        return max((flops / speed for flops, speed in zip(profile.flops, speeds, strict=False)), default=0.0)
    if type(profile) is Composed:
        return sum((runtime_on(part, speeds) for part in profile.sequence), 0.0) * profile.repeat
    return profile.runtime(len(speeds), min(speeds))
