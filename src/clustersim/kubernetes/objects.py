"""Kubernetes JSON objects of simulated nodes and pods, with timestamps in simulated time.

Simulated time t is shown as EPOCH + t seconds (EPOCH = 2000-01-01T00:00:00Z), so `creationTimestamp`,
`startTime` and condition times are reproducible and say when things happened in the simulation.
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime, timedelta

from clustersim.core.sharing import allocatable
from clustersim.platform.kube_labels import node_labels, node_taints
from clustersim.platform.model import Node
from clustersim.workload.job import Job
from clustersim.workload.pods import PodSpec

EPOCH = datetime(2000, 1, 1, tzinfo=UTC)

Obj = dict[str, object]


def timestamp(seconds: float) -> str:
    """RFC 3339 time of simulated second `seconds` (whole seconds, as Kubernetes serialises them)."""
    return _timestamp(int(seconds))


@functools.lru_cache(maxsize=4096)
def _timestamp(seconds: int) -> str:
    """Memoised: every object written at one instant carries the same few timestamps."""
    return (EPOCH + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def quantity(name: str, amount: int) -> str:
    """A resource amount as Kubernetes prints it: cpu in millicores (`1500m`, `2`), others as integers."""
    if name == "cpu":
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    return str(amount)


def _resources(vector: dict[str, int]) -> dict[str, str]:
    return {name: quantity(name, amount) for name, amount in vector.items()}


def node_object(node: Node) -> Obj:
    capacity = _resources(allocatable(node))
    spec: Obj = {}
    taints = node_taints(node)
    if taints:
        spec["taints"] = [{"key": t.key, "value": t.value, "effect": t.effect} for t in taints]
    return {
        "kind": "Node",
        "apiVersion": "v1",
        "metadata": {"name": node.name, "labels": dict(node_labels(node)), "creationTimestamp": timestamp(0)},
        "spec": spec,
        "status": {
            "capacity": capacity,
            "allocatable": dict(capacity),
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                            "lastHeartbeatTime": timestamp(0), "lastTransitionTime": timestamp(0),
                            "message": "simulated by clustersim"}],
            "addresses": [{"type": "Hostname", "address": node.name}],
            "nodeInfo": {"kubeletVersion": "v1.26.0-clustersim", "architecture": "amd64", "operatingSystem": "linux",
                         "containerRuntimeVersion": "clustersim://0", "kernelVersion": "", "osImage": "clustersim",
                         "kubeProxyVersion": "", "machineID": "", "systemUUID": "", "bootID": ""},
        },
    }


def pod_object(job: Job, spec: PodSpec, now: float) -> Obj:
    """A pending pod as the apiserver would show it right after creation."""
    request = _resources(dict(job.request or {}))
    resources: Obj = {"requests": request}
    if spec.limits:
        resources["limits"] = _resources(dict(spec.limits))
    pod_spec: Obj = {
        "containers": [{"name": "main", "image": "clustersim/delay", "resources": resources}],
        "schedulerName": spec.scheduler_name,
        "priority": spec.priority,
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": 0,
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": False,
        "preemptionPolicy": "PreemptLowerPriority",
        "tolerations": [{k: v for k, v in (("key", t.key), ("operator", t.operator), ("value", t.value),
                                           ("effect", t.effect)) if v} for t in spec.tolerations],
    }
    if spec.node_selector:
        pod_spec["nodeSelector"] = dict(spec.node_selector)
    if spec.required_terms:
        pod_spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": r.key, "operator": r.operator, **({"values": list(r.values)} if r.values else {})}
                for r in term]} for term in spec.required_terms]}}}
    if spec.node_name:
        pod_spec["nodeName"] = spec.node_name
    annotations = {**spec.annotations, "clustersim.io/job": job.key}
    return {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {"name": spec.name, "namespace": spec.namespace, "labels": dict(spec.labels),
                     "annotations": annotations, "creationTimestamp": timestamp(now)},
        "spec": pod_spec,
        "status": {"phase": "Pending", "qosClass": "Burstable" if request else "BestEffort"},
    }


def namespace_object(name: str) -> Obj:
    return {"kind": "Namespace", "apiVersion": "v1",
            "metadata": {"name": name, "creationTimestamp": timestamp(0)}, "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"}}
