"""Filter plugins with kube-scheduler v1.26's names and failure messages (the default set, minus volumes/ports)."""

from __future__ import annotations

from clustersim.policies.kube.framework import NodeInfo, PodInfo

UNSCHEDULABLE = "node(s) were unschedulable"
TOO_MANY_PODS = "Too many pods"


def insufficient(resource: str) -> str:
    return f"Insufficient {resource}"


def unavailable(total: int, reasons: dict[str, int]) -> str:
    """kube-scheduler's message for a pod no node takes: `0/N nodes are available: ` and the count per reason."""
    detail = ", ".join(f"{count} {why}" for why, count in sorted(reasons.items()))
    return f"0/{total} nodes are available: {detail}."


def waits_for_pods(message: str) -> bool:
    """Whether a pod refused with this `0/N nodes are available: ...` message may fit once a pod ends: some node
    lacked room (kube-scheduler's NodeResourcesFit, whose queueing hint requeues on any pod deletion) or was held
    by an exclusive job; not when every node refused it for its node name, affinity or taints."""
    return "Insufficient " in message or TOO_MANY_PODS in message or UNSCHEDULABLE in message


class NodeUnschedulable:
    """A node that is off or held by an exclusive job takes no pod (kube: `spec.unschedulable`)."""

    name = "NodeUnschedulable"

    def applies(self, pod: PodInfo) -> bool:
        return True

    def filter(self, pod: PodInfo, node: NodeInfo) -> str | None:
        return None if node.available else UNSCHEDULABLE


class NodeName:
    """A pod that names a node (`spec.nodeName`) fits only that node."""

    name = "NodeName"

    def applies(self, pod: PodInfo) -> bool:
        return bool(pod.spec.node_name)

    def filter(self, pod: PodInfo, node: NodeInfo) -> str | None:
        wanted = pod.spec.node_name
        return None if not wanted or wanted == node.node.name else "node(s) didn't match the requested node name"


class TaintToleration:
    """NoSchedule and NoExecute taints repel pods that do not tolerate them; PreferNoSchedule does not filter."""

    name = "TaintToleration"

    def applies(self, pod: PodInfo) -> bool:
        return True

    def filter(self, pod: PodInfo, node: NodeInfo) -> str | None:
        tolerations = pod.spec.tolerations
        for taint in node.taints:
            if taint.effect == "PreferNoSchedule":
                continue
            if not any(t.tolerates(taint) for t in tolerations):
                return f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"
        return None


class NodeAffinity:
    """`nodeSelector` (all labels equal) and required node affinity (any term whose requirements all match)."""

    name = "NodeAffinity"

    def applies(self, pod: PodInfo) -> bool:
        return bool(pod.spec.node_selector or pod.spec.required_terms)

    def filter(self, pod: PodInfo, node: NodeInfo) -> str | None:
        spec, labels = pod.spec, node.labels
        if any(labels.get(key) != value for key, value in spec.node_selector.items()):
            return "node(s) didn't match Pod's node affinity/selector"
        terms = spec.required_terms
        if terms and not any(all(r.matches(labels) for r in term) for term in terms):
            return "node(s) didn't match Pod's node affinity/selector"
        return None


class NodePodCount:
    """At most `pods` allocatable pods per node (110 by default); kube reports it from NodeResourcesFit."""

    name = "NodePodCount"

    def applies(self, pod: PodInfo) -> bool:
        return True

    def filter(self, pod: PodInfo, node: NodeInfo) -> str | None:
        return None if node.free.get("pods", 0) >= 1 else TOO_MANY_PODS


class NodeResourcesFit:
    """Every requested resource (cpu, memory, gpus, extended) fits what the node has left."""

    name = "NodeResourcesFit"

    def applies(self, pod: PodInfo) -> bool:
        return True

    def filter(self, pod: PodInfo, node: NodeInfo) -> str | None:
        free = node.free
        for resource, amount in pod.request.items():
            if amount > free.get(resource, 0):
                return insufficient(resource)
        return None


STATIC_FILTERS = (NodeName(), TaintToleration(), NodeAffinity())
"""The filters that read only the pod's spec and the node's name, labels and taints (never what is free)."""
DEFAULT_FILTERS = (NodeUnschedulable(), *STATIC_FILTERS, NodePodCount(), NodeResourcesFit())
"""In kube-scheduler's order: cheap, rarely failing checks first; the first failure is the node's reason."""
