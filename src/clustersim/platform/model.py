"""Nodes and platforms: what the simulated cluster is made of.

A platform is a list of nodes plus the allocation unit a workload's `N resources` refers to: whole hosts (as
Batsim does) or cores (as an SWF trace of multi-core nodes does). Either way the units are numbered 0..R-1,
node by node, and every policy allocates these unit ids.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum

from clustersim.errors import InputError
from clustersim.intervals import IntervalSet
from clustersim.limits import MAX_NODES, MAX_UNITS
from clustersim.platform.power_model import PowerModel


class Unit(Enum):
    """What one requested resource is: a whole host or one core."""

    HOST = "host"
    CORE = "core"


@dataclass(frozen=True, slots=True)
class Node:
    """A compute node: multi-dimensional resources and a per-core speed in flop/s."""

    id: int
    name: str
    cores: int = 1
    speed: float = 1.0
    memory: int = 0
    gpus: int = 0
    extras: Mapping[str, int] = field(default_factory=dict)
    properties: Mapping[str, str] = field(default_factory=dict)
    power: PowerModel | None = None
    """Watts drawn by the node (None: the platform has no energy model)."""


class Platform:
    """An immutable cluster description with its allocation units numbered 0..R-1."""

    def __init__(
        self,
        nodes: list[Node] | tuple[Node, ...],
        unit: Unit = Unit.HOST,
        name: str = "platform",
        storage_hosts: tuple[str, ...] = (),
    ):
        """`storage_hosts` name the hosts with Batsim's role `storage`: not compute nodes, but I/O profiles
        (`parallel_homogeneous_pfs`, `data_staging`) read and write there."""
        if not nodes:
            raise ValueError("a platform needs at least one node")
        units = len(nodes) if unit is Unit.HOST else sum(n.cores for n in nodes)
        if len(nodes) > MAX_NODES or units > MAX_UNITS:  # readers refuse earlier, naming the field
            raise InputError(name, f"more than {MAX_NODES} nodes or {MAX_UNITS} {unit.value}s (docs/limits.md)")
        self.nodes: tuple[Node, ...] = tuple(nodes)
        self.storage_hosts = storage_hosts
        self.unit = unit
        self.name = name
        if unit is Unit.HOST:
            unit_node = list(range(len(self.nodes)))
        else:
            unit_node = [n.id for n in self.nodes for _ in range(n.cores)]
        self._unit_node: tuple[int, ...] = tuple(unit_node)
        self._first_unit: dict[int, int] = {}
        for unit_id, node_id in enumerate(unit_node):
            self._first_unit.setdefault(node_id, unit_id)
        self.unit_speeds: tuple[float, ...] = tuple(self.nodes[i].speed for i in unit_node)
        self.homogeneous_speed: float | None = (
            self.nodes[0].speed if len({n.speed for n in self.nodes}) == 1 else None
        )

    @property
    def nb_resources(self) -> int:
        """How many allocation units (hosts or cores) the platform offers."""
        return len(self._unit_node)

    @property
    def all_resources(self) -> IntervalSet:
        return IntervalSet.range(0, self.nb_resources)

    def node_of(self, resource: int) -> Node:
        return self.nodes[self._unit_node[resource]]

    def units_of(self, node: int) -> IntervalSet:
        """The allocation units of a node (itself on a per-host platform, its cores otherwise)."""
        first = self._first_unit[node]
        count = 1 if self.unit is Unit.HOST else self.nodes[node].cores
        return IntervalSet.range(first, first + count)

    def min_speed(self, resources: IntervalSet) -> float:
        """The speed of the slowest unit of an allocation: a synchronous parallel job runs at its pace."""
        if self.homogeneous_speed is not None:
            return self.homogeneous_speed
        return min(self.unit_speeds[r] for r in resources)

    def __repr__(self) -> str:
        return f"Platform({self.name!r}, {len(self.nodes)} nodes, {self.nb_resources} {self.unit.value}s)"
