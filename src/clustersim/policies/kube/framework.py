"""The kube-scheduler framework's shapes, small: what a plugin sees of a pod and a node, and its result.

A filter answers None (the node fits) or the reason it does not, in kube-scheduler's words; a score plugin
answers 0..100 for a node that passed every filter. Plugins hold no cluster state: they read `PodInfo` and
`NodeInfo`, built by the policy from the core's read-only view.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from clustersim.platform.model import Node
from clustersim.workload.pods import PodSpec, Taint

MAX_NODE_SCORE = 100
DEFAULT_MILLI_CPU_REQUEST = 100
"""kube-scheduler scores a pod without a cpu request as if it asked for 100m (`GetNonzeroRequests`)."""
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
"""...and one without a memory request as if it asked for 200Mi."""


class Signature:
    """What decides where a pod may go (`PodInfo.signature`): its requests, node name, node selector, required
    affinity terms and tolerations, as `key`. Signatures are dict keys on every attempt: the hash is computed
    once, and a policy hands equal signatures out as one object (`KubePolicy`), so a lookup compares no tuples."""

    __slots__ = ("_hash", "key")

    def __init__(self, key: tuple[object, ...]):
        self.key = key
        self._hash = hash(key)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Signature) and self._hash == other._hash and self.key == other.key)

    def __repr__(self) -> str:
        return f"Signature({self.key!r})"


@dataclass(slots=True)
class PodInfo:
    """A pending pod as plugins see it: its requests, its spec and its queue order."""

    key: str
    request: Mapping[str, int]
    spec: PodSpec
    created: float
    seq: int

    scoring_request: dict[str, int] = field(init=False)
    """Requests with kube-scheduler's non-zero defaults for cpu and memory, used by score plugins only."""
    signature: Signature = field(init=False)
    """What decides where the pod may go: two pods with equal signatures fit exactly the same nodes."""

    def __post_init__(self) -> None:
        request = dict(self.request)
        if not request.get("cpu"):
            request["cpu"] = DEFAULT_MILLI_CPU_REQUEST
        if not request.get("memory"):
            request["memory"] = DEFAULT_MEMORY_REQUEST
        self.scoring_request = request
        spec = self.spec
        self.signature = Signature((tuple(sorted(self.request.items())), spec.node_name,
                                    tuple(sorted(spec.node_selector.items())), spec.required_terms, spec.tolerations))


@dataclass(slots=True)
class NodeInfo:
    """A node's static Kubernetes description plus, when filled, what pods have left on it."""

    index: int
    node: Node
    unit: int
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]
    allocatable: Mapping[str, int]
    free: Mapping[str, int]
    available: bool = True
    """False when the node is off or an exclusive (non-pod) job holds it."""


class FilterPlugin(Protocol):
    name: str

    def applies(self, pod: PodInfo) -> bool:
        """False when the filter cannot fail for this pod whatever the node (its calls are skipped)."""
        ...

    def filter(self, pod: PodInfo, node: NodeInfo) -> str | None:
        """None if the pod may go on the node, else why not (kube-scheduler's message)."""
        ...


class ScorePlugin(Protocol):
    name: str
    resources: Mapping[str, int]
    """The resources whose allocatable, free and requested amounts are all the score depends on (so the policy
    may reuse a score computed for the same amounts)."""

    def score(self, pod: PodInfo, node: NodeInfo) -> int:
        """0..100, higher is better."""
        ...
