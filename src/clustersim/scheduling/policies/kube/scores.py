"""Score plugins: NodeResourcesFit's three strategies and NodeResourcesBalancedAllocation, in Go's integer math.

Scores follow kube-scheduler v1.26 (`pkg/scheduler/framework/plugins/noderesources`): each resource scores
0..100 with integer division, weighted by its resource weight; a resource the node has none of scores 0
(and is skipped by BalancedAllocation).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from clustersim.scheduling.policies.kube.framework import MAX_NODE_SCORE, NodeInfo, PodInfo

DEFAULT_RESOURCES: Mapping[str, int] = {"cpu": 1, "memory": 1}


def _least(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def _most(requested: int, capacity: int) -> int:
    if capacity == 0:
        return 0
    return min(requested, capacity) * MAX_NODE_SCORE // capacity


def _broken_linear(points: Sequence[tuple[int, int]]) -> Callable[[int, int], int]:
    """RequestedToCapacityRatio's shape: utilisation 0..100 -> score, linear between points (scores 0..10)."""
    scaled = [(u, s * MAX_NODE_SCORE // 10) for u, s in points]

    def score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return 0
        utilisation = requested * 100 // capacity
        for i, (u, s) in enumerate(scaled):
            if utilisation <= u:
                if i == 0:
                    return s
                u0, s0 = scaled[i - 1]
                return s0 + (s - s0) * (utilisation - u0) // (u - u0)
        return scaled[-1][1]

    return score


@dataclass
class NodeResourcesFit:
    """LeastAllocated (spread, the default), MostAllocated (pack) or RequestedToCapacityRatio (a shape)."""

    strategy: str = "LeastAllocated"
    resources: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_RESOURCES))
    shape: Sequence[tuple[int, int]] = ((0, 10), (100, 0))
    name: str = "NodeResourcesFit"

    def __post_init__(self) -> None:
        strategies: dict[str, Callable[[int, int], int]] = {
            "LeastAllocated": _least,
            "MostAllocated": _most,
            "RequestedToCapacityRatio": _broken_linear(self.shape),
        }
        if self.strategy not in strategies:
            raise ValueError(f"unknown NodeResourcesFit strategy '{self.strategy}'; valid: {', '.join(strategies)}")
        self._scorer = strategies[self.strategy]

    def score(self, pod: PodInfo, node: NodeInfo) -> int:
        request = pod.scoring_request
        total = weights = 0
        for resource, weight in self.resources.items():
            capacity = node.allocatable.get(resource, 0)
            requested = capacity - node.free.get(resource, 0) + request.get(resource, 0)
            total += self._scorer(requested, capacity) * weight
            weights += weight
        return total // weights if weights else 0


@dataclass
class BalancedAllocation:
    """Favours nodes whose resources would be used in equal fractions: 100 x (1 - standard deviation)."""

    resources: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_RESOURCES))
    name: str = "NodeResourcesBalancedAllocation"

    def score(self, pod: PodInfo, node: NodeInfo) -> int:
        request = pod.scoring_request
        fractions = []
        for resource in self.resources:
            capacity = node.allocatable.get(resource, 0)
            if capacity == 0:
                continue
            requested = capacity - node.free.get(resource, 0) + request.get(resource, 0)
            fractions.append(min(requested / capacity, 1.0))
        if len(fractions) == 2:
            std = abs(fractions[0] - fractions[1]) / 2
        elif fractions:
            mean = sum(fractions) / len(fractions)
            std = (sum((f - mean) ** 2 for f in fractions) / len(fractions)) ** 0.5
        else:
            std = 0.0
        return int((1 - std) * MAX_NODE_SCORE)
