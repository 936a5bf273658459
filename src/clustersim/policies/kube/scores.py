"""Score plugins: NodeResourcesFit's three strategies and NodeResourcesBalancedAllocation, in Go's integer math.

Scores follow kube-scheduler v1.26 (`pkg/scheduler/framework/plugins/noderesources`): each resource scores
0..100 with integer division, weighted by its resource weight; a resource the node has none of scores 0
(and is skipped by BalancedAllocation). Each plugin also scores many nodes at once (`score_columns`, numpy
int64 columns of allocatable and free amounts) with the same integer (and float) operations, so the two agree
exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from clustersim.policies.kube.framework import MAX_NODE_SCORE, NodeInfo, PodInfo

if TYPE_CHECKING:  # numpy is imported by the column functions themselves: runs without `kube` never load it
    from clustersim.policies.kube.columns import Column

    Scorer = Callable[[Column, Column], Column]

DEFAULT_RESOURCES: Mapping[str, int] = {"cpu": 1, "memory": 1}


def _least(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def _least_columns(requested: Column, capacity: Column) -> Column:
    import numpy as np

    score = (capacity - requested) * MAX_NODE_SCORE // np.maximum(capacity, 1)
    return np.where((capacity == 0) | (requested > capacity), 0, score)


def _most(requested: int, capacity: int) -> int:
    if capacity == 0:
        return 0
    return min(requested, capacity) * MAX_NODE_SCORE // capacity


def _most_columns(requested: Column, capacity: Column) -> Column:
    import numpy as np

    return np.where(capacity == 0, 0, np.minimum(requested, capacity) * MAX_NODE_SCORE // np.maximum(capacity, 1))


def _scaled(points: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    return [(u, s * MAX_NODE_SCORE // 10) for u, s in points]


def _broken_linear(points: Sequence[tuple[int, int]]) -> Callable[[int, int], int]:
    """RequestedToCapacityRatio's shape: utilisation 0..100 -> score, linear between points (scores 0..10)."""
    scaled = _scaled(points)

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


def _broken_linear_columns(points: Sequence[tuple[int, int]]) -> Scorer:
    """`_broken_linear` for many nodes: each node takes the segment of the first point at or above it."""
    scaled = _scaled(points)

    def score(requested: Column, capacity: Column) -> Column:
        import numpy as np

        utilisation = requested * 100 // np.maximum(capacity, 1)
        result = np.full(len(requested), scaled[-1][1], dtype=np.int64)
        for i in reversed(range(len(scaled))):
            u, s = scaled[i]
            if i == 0:
                result = np.where(utilisation <= u, s, result)
            else:
                u0, s0 = scaled[i - 1]
                result = np.where(utilisation <= u, s0 + (s - s0) * (utilisation - u0) // (u - u0), result)
        return np.where((capacity == 0) | (requested > capacity), 0, result)

    return score


@dataclass
class NodeResourcesFit:
    """LeastAllocated (spread, the default), MostAllocated (pack) or RequestedToCapacityRatio (a shape)."""

    strategy: str = "LeastAllocated"
    resources: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_RESOURCES))
    shape: Sequence[tuple[int, int]] = ((0, 10), (100, 0))
    name: str = "NodeResourcesFit"

    def __post_init__(self) -> None:
        strategies: dict[str, tuple[Callable[[int, int], int], Scorer]] = {
            "LeastAllocated": (_least, _least_columns),
            "MostAllocated": (_most, _most_columns),
            "RequestedToCapacityRatio": (_broken_linear(self.shape), _broken_linear_columns(self.shape)),
        }
        if self.strategy not in strategies:
            raise ValueError(f"unknown NodeResourcesFit strategy '{self.strategy}'; valid: {', '.join(strategies)}")
        self._scorer, self._columns_scorer = strategies[self.strategy]

    def score(self, pod: PodInfo, node: NodeInfo) -> int:
        request = pod.scoring_request
        total = weights = 0
        for resource, weight in self.resources.items():
            capacity = node.allocatable.get(resource, 0)
            requested = capacity - node.free.get(resource, 0) + request.get(resource, 0)
            total += self._scorer(requested, capacity) * weight
            weights += weight
        return total // weights if weights else 0

    def score_columns(self, request: Mapping[str, int], allocatable: Mapping[str, Column],
                      free: Mapping[str, Column]) -> Column | int:
        """`score` of many nodes: columns of their allocatable and free amounts (an int: the same for all)."""
        total: Column | int = 0
        weights = 0
        for resource, weight in self.resources.items():
            capacity = allocatable[resource]
            requested = capacity - free[resource] + request.get(resource, 0)
            total += self._columns_scorer(requested, capacity) * weight
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

    def score_columns(self, request: Mapping[str, int], allocatable: Mapping[str, Column],
                      free: Mapping[str, Column]) -> Column | int:
        """`score` of many nodes, for two resources at most (more would not give bit-identical floats)."""
        import numpy as np

        if len(self.resources) < 2:  # one fraction or none: a standard deviation of 0
            return MAX_NODE_SCORE
        first, second = self.resources
        fractions = []
        for resource in (first, second):
            capacity = allocatable[resource]
            requested = capacity - free[resource] + request.get(resource, 0)
            fractions.append(np.minimum(requested / np.maximum(capacity, 1), 1.0))
        both = (allocatable[first] != 0) & (allocatable[second] != 0)
        std = np.where(both, np.abs(fractions[0] - fractions[1]) / 2, 0.0)
        return ((1 - std) * MAX_NODE_SCORE).astype(np.int64)
