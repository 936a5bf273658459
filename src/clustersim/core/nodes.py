"""Per-node state the core keeps when power management is on: busy units and power state of each node.

Each node is in exactly one of five states, each a dict of node id -> time it entered the state (insertion
order = order of entry), so moving a node and counting a state are O(1), and policies can find the nodes idle
the longest or asleep without scanning the platform.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from enum import IntEnum
from itertools import repeat
from operator import sub
from types import MappingProxyType

from clustersim.intervals import IntervalSet
from clustersim.platform.model import Platform, Unit


class NodeState(IntEnum):
    """Batsim's machine states (an IntEnum: it hashes at C speed and indexes lists)."""

    COMPUTING = 0
    IDLE = 1
    SLEEPING = 2
    SWITCHING_ON = 3
    SWITCHING_OFF = 4

    @property
    def label(self) -> str:
        """Batsim's name of the state: computing, idle, sleeping, switching_on, switching_off."""
        return self.name.lower()


class NodeTracker:
    """Busy units and power state of every node."""

    def __init__(self, platform: Platform):
        self.platform = platform
        nodes = platform.nodes
        per_node = [1 if platform.unit is Unit.HOST else node.cores for node in nodes]
        self.first_unit: list[int] = []
        total = 0
        for count in per_node:
            self.first_unit.append(total)
            total += count
        self.nb_units = per_node
        self.busy = [0] * len(nodes)
        self.by_state: list[dict[int, float]] = [{} for _ in NodeState]
        """Nodes in each state (indexed by NodeState) -> since when, oldest first."""
        self._state = [NodeState.IDLE] * len(nodes)
        self.by_state[NodeState.IDLE].update(dict.fromkeys(range(len(nodes)), 0.0))
        self._unit_node = [i for i, count in enumerate(per_node) for _ in range(count)]
        self._one_unit_per_node = all(count == 1 for count in per_node)
        self._seconds_in = [0.0] * len(NodeState)
        self._units_in = [0] * len(NodeState)
        self._units_in[NodeState.IDLE] = total

    def state(self, node: int) -> NodeState:
        return self._state[node]

    def members(self, state: NodeState) -> Mapping[int, float]:
        """Nodes in `state` -> since when, oldest first (read-only)."""
        return MappingProxyType(self.by_state[state])

    def count(self, state: NodeState) -> int:
        return len(self.by_state[state])

    def units_in(self, state: NodeState) -> int:
        """Allocation units of the nodes in `state` (kept as a running count)."""
        return self._units_in[state]

    def seconds_in(self, state: NodeState) -> float:
        """Node-seconds of the periods spent in `state` that are over (charged when nodes leave it). Batsim's
        time_* columns count these only: it never closes the period each machine is in when the run ends."""
        return self._seconds_in[state]

    def units(self, node: int) -> IntervalSet:
        first = self.first_unit[node]
        return IntervalSet.range(first, first + self.nb_units[node])

    def split(self, resources: IntervalSet) -> Iterator[tuple[int, int]]:
        """(node, number of its units) for each node an allocation touches."""
        first_unit, nb_units, unit_node = self.first_unit, self.nb_units, self._unit_node
        for lo, hi in resources.intervals:
            node = unit_node[lo]
            while lo <= hi:
                last = min(hi, first_unit[node] + nb_units[node] - 1)
                yield node, last - lo + 1
                lo = last + 1
                node += 1

    def move(self, node: int, state: NodeState, now: float) -> NodeState:
        """Put a node in a new state; returns the old one."""
        old = self._state[node]
        self._seconds_in[old] += now - self.by_state[old].pop(node)
        self.by_state[state][node] = now
        self._state[node] = state
        units = self.nb_units[node]
        self._units_in[old] -= units
        self._units_in[state] += units
        return old

    def occupy(self, resources: IntervalSet, now: float) -> None:
        """Mark units busy; idle nodes they belong to start computing."""
        busy, states = self.busy, self._state
        idle, computing = self.by_state[NodeState.IDLE], self.by_state[NodeState.COMPUTING]
        idle_seconds = 0.0
        moved_units = 0
        if self._one_unit_per_node:  # whole ranges at C speed, in the same order as one node at a time
            for lo, hi in resources.intervals:
                nodes = range(lo, hi + 1)
                idle_seconds = sum(map(sub, repeat(now), map(idle.pop, nodes)), idle_seconds)
                computing.update(dict.fromkeys(nodes, now))
                states[lo : hi + 1] = [NodeState.COMPUTING] * len(nodes)
                busy[lo : hi + 1] = [1] * len(nodes)
            moved_units = len(resources)
        else:
            nb_units = self.nb_units
            for node, count in self.split(resources):
                if busy[node] == 0:
                    idle_seconds += now - idle.pop(node)
                    computing[node] = now
                    states[node] = NodeState.COMPUTING
                    moved_units += nb_units[node]
                busy[node] += count
        self._seconds_in[NodeState.IDLE] += idle_seconds
        self._units_in[NodeState.IDLE] -= moved_units
        self._units_in[NodeState.COMPUTING] += moved_units

    def release(self, resources: IntervalSet, now: float) -> None:
        """Mark units free; nodes left with no busy unit become idle."""
        busy, states = self.busy, self._state
        idle, computing = self.by_state[NodeState.IDLE], self.by_state[NodeState.COMPUTING]
        computing_seconds = 0.0
        moved_units = 0
        if self._one_unit_per_node:
            for lo, hi in resources.intervals:
                nodes = range(lo, hi + 1)
                computing_seconds = sum(map(sub, repeat(now), map(computing.pop, nodes)), computing_seconds)
                idle.update(dict.fromkeys(nodes, now))
                states[lo : hi + 1] = [NodeState.IDLE] * len(nodes)
                busy[lo : hi + 1] = [0] * len(nodes)
            moved_units = len(resources)
        else:
            nb_units = self.nb_units
            for node, count in self.split(resources):
                busy[node] -= count
                if busy[node] == 0:
                    computing_seconds += now - computing.pop(node)
                    idle[node] = now
                    states[node] = NodeState.IDLE
                    moved_units += nb_units[node]
        self._seconds_in[NodeState.COMPUTING] += computing_seconds
        self._units_in[NodeState.COMPUTING] -= moved_units
        self._units_in[NodeState.IDLE] += moved_units
