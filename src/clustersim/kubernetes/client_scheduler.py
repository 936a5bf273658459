"""A small Kubernetes scheduler written with the official Python client (`pip install kubernetes`).

Needs the `kubernetes` extra (`pip install 'clustersim[kubernetes]'`). It watches the pods that name it
(`schedulerName`), keeps its own account of what each node has left, and binds pending pods in queue order
(priority, then creation) to the node with the most room (LeastAllocated on cpu and memory, ties to the first
node listed); a pod that fits nowhere is reported once with PodScheduled=False. It is the real-client
counterpart of the built-in `kube` policy, and runs against the facade or a real cluster:

    python -m clustersim.kubernetes.client_scheduler --kubeconfig out/kubeconfig.yaml
"""

from __future__ import annotations

import argparse
import threading
from dataclasses import dataclass, field
from typing import Any

from kubernetes import client, config, watch

from clustersim._io.quantities import parse_bytes, parse_millicores

PHASE_SELECTOR = "status.phase!=Succeeded,status.phase!=Failed"


@dataclass
class _Pod:
    namespace: str
    name: str
    cpu: int
    memory: int
    order: tuple[int, str, int]
    node: str = ""
    reported: bool = False


@dataclass
class _Node:
    name: str
    cpu: int
    memory: int
    pods: int
    used_cpu: int = 0
    used_memory: int = 0
    used_pods: int = 0

    def fits(self, pod: _Pod) -> bool:
        return (self.used_cpu + pod.cpu <= self.cpu and self.used_memory + pod.memory <= self.memory
                and self.used_pods < self.pods)

    def score(self, pod: _Pod) -> int:
        total = 0
        for used, request, capacity in ((self.used_cpu, pod.cpu, self.cpu),
                                        (self.used_memory, pod.memory, self.memory)):
            requested = used + request
            total += (capacity - requested) * 100 // capacity if capacity and requested <= capacity else 0
        return total // 2


@dataclass
class ClientScheduler:
    """Schedules the pods naming `scheduler_name` until `stop` is set."""

    api: Any
    scheduler_name: str = "default-scheduler"
    stop: threading.Event = field(default_factory=threading.Event)
    nb_bound: int = 0

    def __post_init__(self) -> None:
        self.v1: Any = client.CoreV1Api(self.api)
        self._nodes: list[_Node] = []
        self._pods: dict[tuple[str, str], _Pod] = {}
        self._by_name: dict[str, _Node] = {}

    def run(self) -> None:
        """List, then watch from the list's version; relist when the server says the version is gone (410),
        as Kubernetes informers do."""
        version = self._relist()
        while not self.stop.is_set():
            stream: Any = watch.Watch()  # type: ignore[no-untyped-call]
            try:
                for event in stream.stream(self.v1.list_pod_for_all_namespaces, field_selector=PHASE_SELECTOR,
                                           resource_version=version, timeout_seconds=5):
                    pod = event["object"]
                    version = pod.metadata.resource_version
                    if event["type"] == "DELETED":
                        self._remove(pod, self._by_name)
                    else:
                        self._add(pod, self._by_name)
                    self._schedule(self._by_name)
                    if self.stop.is_set():
                        stream.stop()
                        break
            except client.ApiException as error:
                if error.status != 410:
                    raise
                version = self._relist()

    def _relist(self) -> str:
        """Rebuild what the scheduler knows from fresh lists of nodes and pods; returns the list's version."""
        self._nodes = []
        self._pods = {}
        for item in self.v1.list_node().items:
            allocatable = item.status.allocatable or {}
            self._nodes.append(_Node(item.metadata.name, parse_millicores(allocatable.get("cpu", "0")),
                                     parse_bytes(allocatable.get("memory", "0")), int(allocatable.get("pods", "110"))))
        self._by_name = {node.name: node for node in self._nodes}
        listing = self.v1.list_pod_for_all_namespaces(field_selector=PHASE_SELECTOR)
        for pod in listing.items:
            self._add(pod, self._by_name)
        self._schedule(self._by_name)
        return str(listing.metadata.resource_version)

    def _add(self, pod: Any, nodes: dict[str, _Node]) -> None:
        key = (pod.metadata.namespace, pod.metadata.name)
        known = self._pods.get(key)
        node_name = pod.spec.node_name or ""
        if known is None:
            requests: dict[str, str] = {}
            for container in pod.spec.containers:
                requests.update((container.resources and container.resources.requests) or {})
            created = pod.metadata.creation_timestamp
            known = _Pod(key[0], key[1], parse_millicores(requests.get("cpu", "0")),
                         parse_bytes(requests.get("memory", "0")),
                         (-(pod.spec.priority or 0), created.isoformat() if created else "",
                          int(pod.metadata.resource_version)))
            self._pods[key] = known
        if node_name and not known.node:
            known.node = node_name
            self._take(nodes.get(node_name), known, 1)
        elif not node_name and pod.spec.scheduler_name != self.scheduler_name:
            del self._pods[key]  # another scheduler's pod: not ours to place

    def _remove(self, pod: Any, nodes: dict[str, _Node]) -> None:
        known = self._pods.pop((pod.metadata.namespace, pod.metadata.name), None)
        if known is not None and known.node:
            self._take(nodes.get(known.node), known, -1)

    @staticmethod
    def _take(node: _Node | None, pod: _Pod, sign: int) -> None:
        if node is not None:
            node.used_cpu += sign * pod.cpu
            node.used_memory += sign * pod.memory
            node.used_pods += sign

    def _schedule(self, nodes: dict[str, _Node]) -> None:
        pending = sorted((p for p in self._pods.values() if not p.node), key=lambda p: p.order)
        for pod in pending:
            best: _Node | None = None
            for node in self._nodes:
                if node.fits(pod) and (best is None or node.score(pod) > best.score(pod)):
                    best = node
            if best is None:
                if not pod.reported:
                    self._report(pod)
                continue
            body = client.V1Binding(metadata=client.V1ObjectMeta(name=pod.name),
                                    target=client.V1ObjectReference(kind="Node", name=best.name))
            self.v1.create_namespaced_pod_binding(pod.name, pod.namespace, body, _preload_content=False)
            pod.node = best.name
            self._take(best, pod, 1)
            self.nb_bound += 1

    def _report(self, pod: _Pod) -> None:
        condition = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                     "message": f"0/{len(self._nodes)} nodes are available"}
        self.v1.patch_namespaced_pod_status(pod.name, pod.namespace, {"status": {"conditions": [condition]}})
        pod.reported = True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--scheduler-name", default="default-scheduler")
    args = parser.parse_args()
    config.load_kube_config(args.kubeconfig)  # type: ignore[no-untyped-call]
    ClientScheduler(client.ApiClient(), args.scheduler_name).run()


if __name__ == "__main__":
    main()
