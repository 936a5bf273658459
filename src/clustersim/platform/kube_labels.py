"""Kubernetes labels and taints of simulated nodes, kept in `Node.properties` (no change to the core's Node).

Convention: every property of a node is a label, except `clustersim.io/taints`, which holds the node's taints
as `key=value:Effect` items separated by commas (`gpu=true:NoSchedule,dedicated:NoExecute`). Every node also
carries `kubernetes.io/hostname` (its name), as a kubelet would set it.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from clustersim.platform.model import Node
from clustersim.workload.pods import Taint

TAINTS_PROPERTY = "clustersim.io/taints"
HOSTNAME_LABEL = "kubernetes.io/hostname"
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def node_labels(node: Node) -> Mapping[str, str]:
    """A node's labels: its properties but the taints, plus its hostname label."""
    labels = {key: value for key, value in node.properties.items() if key != TAINTS_PROPERTY}
    labels.setdefault(HOSTNAME_LABEL, node.name)
    return MappingProxyType(labels)


def node_taints(node: Node) -> tuple[Taint, ...]:
    text = node.properties.get(TAINTS_PROPERTY, "")
    return parse_taints(text) if text else ()


def parse_taints(text: str) -> tuple[Taint, ...]:
    """Taints from `key=value:Effect,key:Effect` (the effect defaults to NoSchedule); bad ones raise ValueError."""
    taints = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        pair, _, effect = item.partition(":")
        key, _, value = pair.partition("=")
        effect = effect or "NoSchedule"
        if not key or effect not in EFFECTS:
            raise ValueError(f"'{item}' is not a taint: expected key[=value][:Effect], Effect one of {EFFECTS}")
        taints.append(Taint(key, value, effect))
    return tuple(taints)


def format_taints(taints: tuple[Taint, ...] | list[Taint]) -> str:
    """The property value of a list of taints (the inverse of `parse_taints`)."""
    return ",".join(f"{t.key}{'=' + t.value if t.value else ''}:{t.effect}" for t in taints)
