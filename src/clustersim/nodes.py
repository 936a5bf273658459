"""Per-node state the core keeps when power management is on: busy units and power state of each node.

Each node is in exactly one of five states, each a dict of node id -> time it entered the state (insertion
order = order of entry), so moving a node and counting a state are O(1), and policies can find the nodes idle
the longest or asleep without scanning the platform.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from enum import Enum
from types import MappingProxyType

from clustersim.intervals import IntervalSet
from clustersim.platform.model import Platform, Unit


class NodeState(Enum):
    """Batsim's machine states."""

    COMPUTING = "computing"
    IDLE = "idle"
    SLEEPING = "sleeping"
    SWITCHING_ON = "switching_on"
    SWITCHING_OFF = "switching_off"


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
        self._members: dict[NodeState, dict[int, float]] = {state: {} for state in NodeState}
        self._state = [NodeState.IDLE] * len(nodes)
        self._members[NodeState.IDLE].update(dict.fromkeys(range(len(nodes)), 0.0))
        self._unit_node = [i for i, count in enumerate(per_node) for _ in range(count)]

    def state(self, node: int) -> NodeState:
        return self._state[node]

    def members(self, state: NodeState) -> Mapping[int, float]:
        """Nodes in `state` -> since when, oldest first (read-only)."""
        return MappingProxyType(self._members[state])

    def count(self, state: NodeState) -> int:
        return len(self._members[state])

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
        del self._members[old][node]
        self._members[state][node] = now
        self._state[node] = state
        return old

    def occupy(self, resources: IntervalSet, now: float) -> list[int]:
        """Mark units busy; returns the nodes that went from idle to computing."""
        started = []
        busy = self.busy
        for node, count in self.split(resources):
            if busy[node] == 0:
                self.move(node, NodeState.COMPUTING, now)
                started.append(node)
            busy[node] += count
        return started

    def release(self, resources: IntervalSet, now: float) -> list[int]:
        """Mark units free; returns the nodes that went from computing to idle."""
        idle = []
        busy = self.busy
        for node, count in self.split(resources):
            busy[node] -= count
            if busy[node] == 0:
                self.move(node, NodeState.IDLE, now)
                idle.append(node)
        return idle
