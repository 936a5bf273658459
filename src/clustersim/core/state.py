"""The cluster's truth during a run, and the read-only view of it that decision processes get.

Only the simulation mutates `ClusterState`; decision processes see it through `ClusterView`, whose mappings
are live read-only proxies (no copy per decision, no way to write).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol

from clustersim.core.nodes import NodeState, NodeTracker
from clustersim.core.sharing import SharedNodes
from clustersim.intervals import IntervalSet
from clustersim.platform.model import Platform
from clustersim.workload.job import Job


@dataclass(slots=True)
class RunningJob:
    """A started job as a scheduler may know it: its actual run time is hidden, its walltime is not.

    `expected_end` is when the job ends at the latest: start + walltime (infinite without a walltime).
    """

    job: Job
    start: float
    resources: IntervalSet
    storage_mapping: Mapping[str, str] | None = None
    """The start decision's storage label to storage host name mapping, if any (see `StartJob`)."""
    expected_end: float = field(init=False)

    def __init__(
        self, job: Job, start: float, resources: IntervalSet, storage_mapping: Mapping[str, str] | None = None
    ) -> None:
        # (Written out: compiled, the `__init__` that `@dataclass` writes is Python code, and one runs per job.)
        self.job = job
        self.start = start
        self.resources = resources
        self.storage_mapping = storage_mapping
        walltime = job.walltime
        self.expected_end = math.inf if walltime is None else start + walltime


class NodesView(Protocol):
    """The read-only part of the per-node state, kept when power management is on."""

    def state(self, node: int) -> NodeState: ...

    def members(self, state: NodeState) -> Mapping[int, float]: ...

    def count(self, state: NodeState) -> int: ...

    def units_in(self, state: NodeState) -> int: ...

    def units(self, node: int) -> IntervalSet: ...


class EnergyReading(Protocol):
    """What the view reads of the energy meter: joules since t=0, integrated up to the current instant."""

    @property
    def energy(self) -> float: ...

    @property
    def total(self) -> Callable[[], float] | None:
        """SimGrid's energy plugin's total, when the execution model reads it (Batsim answers a QUERY from it)."""
        ...


class SharedView(Protocol):
    """The read-only part of the nodes shared by pods."""

    def free(self, node: int) -> Mapping[str, int]: ...

    def pods(self, node: int) -> int: ...

    def subscribe(self) -> set[int]:
        """A set the nodes whose free vector changes from now on are added to (the reader empties it)."""
        ...


class ClusterState:
    """Free resources, the queue of pending jobs (in queue order) and the running jobs.

    `free` holds the units no job holds on nodes that are on and available. `nodes` is the per-node state, kept
    only when power management is on (it costs time on every job start and end). `unavailable` holds the units
    of machines made unavailable by external events (a job may still be running there).
    """

    __slots__ = ("_holes", "free", "meter", "nodes", "now", "pending", "platform", "running", "shared", "unavailable")

    def __init__(self, platform: Platform, nodes: NodeTracker | None = None):
        self.platform = platform
        self.nodes = nodes
        self.shared = SharedNodes(platform)
        self.meter: EnergyReading | None = None
        self.now = 0.0
        self.free: IntervalSet = platform.all_resources
        self.pending: dict[str, Job] = {}
        self._holes = 0
        """Jobs taken off `pending` since it was last compacted (see `unqueue`)."""
        self.running: dict[str, RunningJob] = {}
        self.unavailable = IntervalSet()

    def unqueue(self, key: str) -> Job:
        """Take a job off the queue, which stays in order.

        A dict keeps a hole where each deleted entry was until it next grows, and iteration walks the holes:
        the head of a long queue (`next(iter(pending.values()))`, as policies look at it several times per job)
        would cost a walk over every job started since. The queue is compacted in place once the holes number
        about sqrt(128 x its length): the copy and the walks then cost each job about as much as each other. The
        copy is a dict (no (key, job) tuple per job), and refilling the emptied queue from it is one clone.
        """
        pending = self.pending
        job = pending.pop(key)
        self._holes += 1
        if self._holes >= 64 and self._holes * self._holes >= 128 * len(pending):
            jobs = dict(pending)
            pending.clear()
            pending.update(jobs)
            self._holes = 0
        return job

    def release(self, resources: IntervalSet) -> None:
        """A job gave its units back: those on available machines are free again."""
        unavailable = self.unavailable
        self.free = self.free | (resources - unavailable if unavailable else resources)

    def make_unavailable(self, resources: IntervalSet) -> IntervalSet:
        """Machines become unavailable (running jobs go on); returns the units that were available until now."""
        newly = resources - self.unavailable
        self.unavailable = self.unavailable | resources
        self.free = self.free - resources
        return newly

    def make_available(self, resources: IntervalSet) -> IntervalSet:
        """Machines become available again; those no running job holds are free. Returns the units back."""
        back = resources & self.unavailable
        self.unavailable = self.unavailable - resources
        held = IntervalSet([i for running in self.running.values() for i in running.resources.intervals])
        self.free = self.free | (back - held)
        return back


class ClusterView:
    """What a decision process sees: the current time and a read-only window on the cluster state."""

    __slots__ = ("_state", "pending", "quiet_calls", "running")

    def __init__(self, state: ClusterState, quiet_calls: bool = False):
        self._state = state
        self.pending: Mapping[str, Job] = MappingProxyType(state.pending)
        """Jobs submitted and not yet started or rejected, in queue order (submit order, ties by id)."""
        self.running: Mapping[str, RunningJob] = MappingProxyType(state.running)
        self.quiet_calls = quiet_calls
        """Whether a requested call changes nothing but the call itself: all the events of an instant reach the
        process in one call (`Delivery.INSTANT`) and the core does no work of its own at an instant (no energy
        meter, power management, stepped execution or machine events). A process that knows it would decide
        nothing at a call may then leave the call out and do its bookkeeping for it when it is next called."""

    @property
    def now(self) -> float:
        return self._state.now

    def head(self) -> Job | None:
        """The first job of the queue (queue order), or None when it is empty: `pending`'s first value, read from
        the queue itself (compiled, a native walk; through the read-only proxy, three Python-level calls)."""
        for job in self._state.pending.values():
            return job
        return None

    @property
    def platform(self) -> Platform:
        return self._state.platform

    @property
    def free(self) -> IntervalSet:
        """The allocation units no running job holds, on nodes that are on."""
        return self._state.free

    @property
    def unavailable(self) -> IntervalSet:
        """The units of machines that are unavailable (external events): no job may start there."""
        return self._state.unavailable

    @property
    def consumed_energy(self) -> float | None:
        """Joules consumed by the platform since t=0 (None when energy is not accounted for): SimGrid's energy plugin's
        when the execution model reads it, as Batsim does, else the meter's integral."""
        meter = self._state.meter
        if meter is None:
            return None
        return meter.energy if meter.total is None else meter.total()

    @property
    def shared(self) -> SharedView:
        """What pods have left on each node (free resource vectors) and how many pods each hosts."""
        return self._state.shared

    @property
    def nodes(self) -> NodesView | None:
        """Per-node busy and power states, when power management is on."""
        return self._state.nodes
