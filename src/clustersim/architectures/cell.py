"""The cell: the shared cluster's true state, which only committed claims and ended tasks change.

Machines have cpu (millicores) and memory (bytes). Free resources are what no task uses and no outstanding
Mesos offer holds. Every change to a machine bumps its sequence number and every change to the cell bumps the
cell's version: Omega's conflict detectors compare them with the values a scheduler saw in its snapshot.
A claim that would over-allocate a machine is refused with a `DecisionError` and changes nothing, so a bug in
an architecture cannot corrupt the state it is judged on.

State is kept in numpy arrays because architectures look at every machine per decision (10,000 machines in the
benchmark) and Mesos offers lock every free resource at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from clustersim.errors import DecisionError

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True, eq=False)
class Placement:
    """Tasks of one job (all of the same size) per machine: `counts[i]` tasks on machine `machines[i]`."""

    machines: IntArray
    counts: IntArray
    cpu: int
    memory: int

    @property
    def tasks(self) -> int:
        return int(self.counts.sum())

    def keep(self, counts: IntArray) -> Placement:
        """The same machines with other counts, dropping machines left with none."""
        mask = counts > 0
        return Placement(self.machines[mask], counts[mask], self.cpu, self.memory)

    @staticmethod
    def empty(cpu: int, memory: int) -> Placement:
        return Placement(np.zeros(0, np.int64), np.zeros(0, np.int64), cpu, memory)

    def __repr__(self) -> str:
        pairs = ", ".join(f"m{m}x{c}" for m, c in zip(self.machines.tolist(), self.counts.tolist(), strict=True))
        return f"Placement({pairs}; {self.cpu}m cpu, {self.memory} B per task)"


@dataclass(frozen=True, slots=True, eq=False)
class Lock:
    """Resources held by an outstanding offer: unavailable to everyone else until unlocked."""

    cpu: IntArray
    memory: IntArray


class Cell:
    """Machines' capacities, free resources, sequence numbers, and usage per owner (scheduler)."""

    def __init__(self, cpu: IntArray, memory: IntArray):
        if len(cpu) == 0 or len(cpu) != len(memory):
            raise ValueError("a cell needs one cpu and one memory capacity per machine, at least one machine")
        self.capacity_cpu: IntArray = np.array(cpu, np.int64)
        self.capacity_memory: IntArray = np.array(memory, np.int64)
        self.free_cpu: IntArray = self.capacity_cpu.copy()
        self.free_memory: IntArray = self.capacity_memory.copy()
        self.seq: IntArray = np.zeros(len(cpu), np.int64)
        self.version = 0
        self.total_cpu = int(self.capacity_cpu.sum())
        self.total_memory = int(self.capacity_memory.sum())
        self.used_cpu = 0
        self.used_memory = 0
        self.locked_cpu = 0
        self.locked_memory = 0
        self.usage: dict[str, list[int]] = {}
        self._last_change = 0.0
        self._cpu_seconds = 0.0
        self._memory_seconds = 0.0

    @property
    def machines(self) -> int:
        return len(self.capacity_cpu)

    def fitting(self, placement: Placement) -> IntArray:
        """How many of each machine's tasks fit in its free resources now."""
        ms = placement.machines
        fit: IntArray = np.minimum(self.free_cpu[ms] // placement.cpu, self.free_memory[ms] // placement.memory)
        return np.minimum(placement.counts, fit)

    def claim(self, owner: str, placement: Placement, now: float) -> None:
        """Start the placement's tasks; refused (state untouched) if any machine lacks the resources."""
        if placement.cpu <= 0 or placement.memory <= 0:
            raise DecisionError(placement, "tasks must ask for some cpu and some memory")
        if np.any(self.fitting(placement) < placement.counts):
            raise DecisionError(placement, f"{owner} claims more than the free resources of a machine")
        self._change(owner, placement, now, -1)

    def release(self, owner: str, placement: Placement, now: float) -> None:
        """The placement's tasks ended: give their resources back."""
        self._change(owner, placement, now, +1)

    def _change(self, owner: str, placement: Placement, now: float, sign: int) -> None:
        self._advance(now)
        ms = placement.machines
        cpu = placement.counts * placement.cpu
        memory = placement.counts * placement.memory
        self.free_cpu[ms] += sign * cpu
        self.free_memory[ms] += sign * memory
        self.seq[ms] += 1
        self.version += 1
        total_cpu, total_memory = int(cpu.sum()), int(memory.sum())
        self.used_cpu -= sign * total_cpu
        self.used_memory -= sign * total_memory
        usage = self.usage.setdefault(owner, [0, 0])
        usage[0] -= sign * total_cpu
        usage[1] -= sign * total_memory

    def lock_all(self, now: float) -> Lock | None:
        """Hold every free resource for one offer; None when nothing is free."""
        if not (np.any(self.free_cpu) and np.any(self.free_memory)):
            return None
        self._advance(now)
        lock = Lock(self.free_cpu.copy(), self.free_memory.copy())
        self.locked_cpu += int(lock.cpu.sum())
        self.locked_memory += int(lock.memory.sum())
        self.free_cpu[:] = 0
        self.free_memory[:] = 0
        return lock

    def unlock(self, lock: Lock, now: float) -> None:
        self._advance(now)
        self.free_cpu += lock.cpu
        self.free_memory += lock.memory
        self.locked_cpu -= int(lock.cpu.sum())
        self.locked_memory -= int(lock.memory.sum())

    def dominant_share(self, owner: str) -> float:
        """The owner's largest share of the cell's cpu or memory (DRF's measure)."""
        cpu, memory = self.usage.get(owner, (0, 0))
        return max(cpu / self.total_cpu, memory / self.total_memory)

    def _advance(self, now: float) -> None:
        elapsed = now - self._last_change
        if elapsed > 0:
            self._cpu_seconds += self.used_cpu * elapsed
            self._memory_seconds += self.used_memory * elapsed
            self._last_change = now

    def mean_utilisation(self, end: float) -> tuple[float, float]:
        """Time-weighted mean fraction of cpu and memory in use from 0 to `end`."""
        self._advance(end)
        if end <= 0:
            return self.used_cpu / self.total_cpu, self.used_memory / self.total_memory
        return self._cpu_seconds / end / self.total_cpu, self._memory_seconds / end / self.total_memory
