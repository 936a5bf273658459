"""Nodes shared by pods: each pod takes a vector of resources (its Kubernetes requests) from one node.

Jobs with a `request` (pods) share nodes; other jobs hold whole allocation units. A node hosting pods is out of
the free set of whole units (no exclusive job may take it), and a node whose units an exclusive job holds takes
no pod. Amounts are integers: cpu in millicores, memory in bytes, `pods` in pods, any other name in its unit.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from clustersim.platform.model import Node, Platform

DEFAULT_MAX_PODS = 110
"""Kubernetes' default `pods` allocatable of a node."""

Vector = Mapping[str, int]


def allocatable(node: Node) -> dict[str, int]:
    """What pods may request of a node: cpu (millicores), memory (bytes), pods, gpus, extended resources.

    `extras` may set any of them (`pods: 20` caps the pods of a node); gpus are `nvidia.com/gpu`.
    """
    capacity = {"cpu": node.cores * 1000, "memory": node.memory, "pods": DEFAULT_MAX_PODS}
    if node.gpus:
        capacity["nvidia.com/gpu"] = node.gpus
    capacity.update(node.extras)
    return capacity


def shortfall(free: Vector, request: Vector) -> list[str]:
    """The resources of `request` that `free` cannot cover, as `name (requested, free)`; empty if it fits."""
    return [f"{name} ({amount} requested, {free.get(name, 0)} free)"
            for name, amount in request.items() if amount > free.get(name, 0)]


class SharedNodes:
    """Free resource vectors of the nodes that host pods, and how many pods each hosts."""

    def __init__(self, platform: Platform):
        self.platform = platform
        self._free: dict[int, dict[str, int]] = {}
        self._pods: dict[int, int] = {}
        self._subscribers: list[set[int]] = []

    def subscribe(self) -> set[int]:
        """A set to which every later `take` and `give_back` adds its node: a reader keeping its own copy of
        the free vectors drains it to learn which nodes to read again, instead of reading them all."""
        changed: set[int] = set()
        self._subscribers.append(changed)
        return changed

    def free(self, node: int) -> Vector:
        """What is left on a node for pods (read-only)."""
        vector = self._free.get(node)
        if vector is None:
            vector = self._free[node] = allocatable(self.platform.nodes[node])
        return MappingProxyType(vector)

    def pods(self, node: int) -> int:
        return self._pods.get(node, 0)

    def take(self, node: int, request: Vector) -> None:
        """Debit a pod's request (the caller has checked that it fits)."""
        self.free(node)
        vector = self._free[node]
        for name, amount in request.items():
            vector[name] = vector.get(name, 0) - amount
        vector["pods"] = vector.get("pods", DEFAULT_MAX_PODS) - 1
        self._pods[node] = self._pods.get(node, 0) + 1
        for changed in self._subscribers:
            changed.add(node)

    def give_back(self, node: int, request: Vector) -> bool:
        """Credit a pod's request back; True when the node hosts no pod any more."""
        vector = self._free[node]
        for name, amount in request.items():
            vector[name] += amount
        vector["pods"] += 1
        self._pods[node] -= 1
        for changed in self._subscribers:
            changed.add(node)
        if self._pods[node] == 0:
            del self._pods[node]
            del self._free[node]  # back to its allocatable, rebuilt when next used
            return True
        return False
