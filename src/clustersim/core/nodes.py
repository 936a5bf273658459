"""Per-node state the core keeps when power management is on: busy units and power state of each node.

Each node is in exactly one of five states. Policies see the nodes of a state as a dict of node id -> time it
entered the state (insertion order = order of entry), so they can find the nodes idle the longest or asleep
without scanning the platform. Those dicts are built only when first asked for: until then a platform of
one-unit nodes (hosts) keeps, per node, the change by which it entered its state (`_Change`: the state, when, in
which order), shared by the nodes that changed together, so a job's start or end costs one list store per host
of its allocation (most runs with energy but no power policy never ask).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from enum import IntEnum
from itertools import repeat
from operator import sub
from types import MappingProxyType
from typing import Final

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


COMPUTING, IDLE = NodeState.COMPUTING, NodeState.IDLE
_COMPUTING: Final = 0
_IDLE: Final = 1
"""COMPUTING's and IDLE's values as plain ints (compiled, an int indexes a list natively, an IntEnum through generic
calls)."""
_STATES: Final[list[NodeState]] = list(NodeState)
"""Each state, by its value."""


class _Change:
    """Nodes entering `state` (its value) together at `since`, the `order`-th change: each node of one keeps a
    reference to it until it changes again (one store per node, no time or number to box per node, compiled)."""

    __slots__ = ("order", "since", "state")

    def __init__(self, state: int, since: float, order: int) -> None:
        self.state = state
        self.since = since
        self.order = order


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
        self._state: list[NodeState] = []
        """Each node's state, once the dicts are built."""
        self._unit_node = [i for i, count in enumerate(per_node) for _ in range(count)]
        self._one_unit_per_node = all(count == 1 for count in per_node)
        self._seconds_in = [0.0] * len(NodeState)
        self.nodes_in = [0] * len(NodeState)
        """How many nodes are in each state (indexed by NodeState)."""
        self.nodes_in[NodeState.IDLE] = len(nodes)
        self._units_in = self.nodes_in if self._one_unit_per_node else [0] * len(NodeState)
        """Allocation units of the nodes in each state (on one-unit nodes, the same list as `nodes_in`)."""
        self._units_in[NodeState.IDLE] = total
        self._change = [_Change(NodeState.IDLE, 0.0, 0)] * len(nodes)
        """Until the dicts are built: the change by which each node entered its state (the nodes of one change
        enter in node order, so with a stable sort on the changes' order, the order of the dicts)."""
        self._changes = 0
        self._busy: list[int] = []
        """Busy units per node, once the dicts are built (until then a one-unit node is busy when computing)."""
        self._by_state: list[dict[int, float]] | None = None
        """Nodes in each state (indexed by NodeState) -> since when, oldest first; built on first use."""
        if not self._one_unit_per_node:
            self._build()

    def _build(self) -> list[dict[int, float]]:
        """The dicts of nodes per state, built from the nodes' changes in order of entry; kept up to date from then."""
        if self._by_state is None:
            by_state: list[dict[int, float]] = [{} for _ in NodeState]
            changes = self._change
            for node in sorted(range(len(changes)), key=lambda node: changes[node].order):  # stable: node order
                by_state[changes[node].state][node] = changes[node].since
            self._state = states = [_STATES[change.state] for change in changes]
            self._change = []
            computing = NodeState.COMPUTING
            self._busy = [self.nb_units[node] if state is computing else 0 for node, state in enumerate(states)]
            self._by_state = by_state
        return self._by_state

    def state(self, node: int) -> NodeState:
        return self._state[node] if self._by_state is not None else _STATES[self._change[node].state]

    def members(self, state: NodeState) -> Mapping[int, float]:
        """Nodes in `state` -> since when, oldest first (read-only)."""
        return MappingProxyType(self._build()[state])

    def count(self, state: NodeState) -> int:
        return self.nodes_in[state]

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
        by_state = self._by_state
        if by_state is None:
            change = self._change[node]
            old = _STATES[change.state]
            self._seconds_in[old] += now - change.since
            self._changes += 1
            self._change[node] = _Change(state, now, self._changes)
        else:
            old = self._state[node]
            self._seconds_in[old] += now - by_state[old].pop(node)
            by_state[state][node] = now
            self._state[node] = state
        self.nodes_in[old] -= 1
        self.nodes_in[state] += 1
        if self._units_in is not self.nodes_in:
            units = self.nb_units[node]
            self._units_in[old] -= units
            self._units_in[state] += units
        return old

    def occupy(self, resources: IntervalSet, now: float) -> None:
        """Mark units busy; idle nodes they belong to start computing."""
        if self._by_state is None:  # one-unit nodes, no dicts yet
            self._move_flat(resources, _IDLE, _COMPUTING, now)
            return
        busy, states = self._busy, self._state
        idle, computing = self._by_state[NodeState.IDLE], self._by_state[NodeState.COMPUTING]
        idle_seconds = 0.0
        moved_nodes = moved_units = 0
        if self._one_unit_per_node:  # whole ranges at C speed, in the same order as one node at a time
            for lo, hi in resources.intervals:
                nodes = range(lo, hi + 1)
                idle_seconds = sum(map(sub, repeat(now), map(idle.pop, nodes)), idle_seconds)
                computing.update(dict.fromkeys(nodes, now))
                states[lo : hi + 1] = [NodeState.COMPUTING] * len(nodes)
                busy[lo : hi + 1] = [1] * len(nodes)
            moved_nodes, moved_units = len(resources), 0  # (the units are the nodes)
        else:
            nb_units = self.nb_units
            for node, count in self.split(resources):
                if busy[node] == 0:
                    idle_seconds += now - idle.pop(node)
                    computing[node] = now
                    states[node] = NodeState.COMPUTING
                    moved_nodes += 1
                    moved_units += nb_units[node]
                busy[node] += count
        self.nodes_in[NodeState.IDLE] -= moved_nodes
        self.nodes_in[NodeState.COMPUTING] += moved_nodes
        self._seconds_in[NodeState.IDLE] += idle_seconds
        self._units_in[NodeState.IDLE] -= moved_units
        self._units_in[NodeState.COMPUTING] += moved_units

    def release(self, resources: IntervalSet, now: float) -> None:
        """Mark units free; nodes left with no busy unit become idle."""
        if self._by_state is None:  # one-unit nodes, no dicts yet
            self._move_flat(resources, _COMPUTING, _IDLE, now)
            return
        busy, states = self._busy, self._state
        idle, computing = self._by_state[NodeState.IDLE], self._by_state[NodeState.COMPUTING]
        computing_seconds = 0.0
        moved_nodes = moved_units = 0
        if self._one_unit_per_node:
            for lo, hi in resources.intervals:
                nodes = range(lo, hi + 1)
                computing_seconds = sum(map(sub, repeat(now), map(computing.pop, nodes)), computing_seconds)
                idle.update(dict.fromkeys(nodes, now))
                states[lo : hi + 1] = [NodeState.IDLE] * len(nodes)
                busy[lo : hi + 1] = [0] * len(nodes)
            moved_nodes, moved_units = len(resources), 0  # (the units are the nodes)
        else:
            nb_units = self.nb_units
            for node, count in self.split(resources):
                busy[node] -= count
                if busy[node] == 0:
                    computing_seconds += now - computing.pop(node)
                    idle[node] = now
                    states[node] = NodeState.IDLE
                    moved_nodes += 1
                    moved_units += nb_units[node]
        self.nodes_in[NodeState.COMPUTING] -= moved_nodes
        self.nodes_in[NodeState.IDLE] += moved_nodes
        self._seconds_in[NodeState.COMPUTING] += computing_seconds
        self._units_in[NodeState.COMPUTING] -= moved_units
        self._units_in[NodeState.IDLE] += moved_units

    def _move_flat(self, nodes: IntervalSet, left: int, state: int, now: float) -> None:
        """Before the dicts are built: one-unit nodes, all in `left`, enter `state` (states by value) now, by one
        change; their node-seconds in `left` are summed node by node, in order, as with the dicts. (A plain loop: most
        allocations are a few hosts, for which it beats slice operations in Python and is a native loop compiled.)"""
        self._changes += 1
        change = _Change(state, now, self._changes)
        changes = self._change
        left_seconds = 0.0
        moved = 0
        for lo, hi in nodes.intervals:
            stop = hi + 1
            for node in range(lo, stop):
                left_seconds += now - changes[node].since
                changes[node] = change
            moved += stop - lo
        self._seconds_in[left] += left_seconds
        counts = self.nodes_in  # (of units too)
        counts[left] -= moved
        counts[state] += moved
