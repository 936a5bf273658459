"""Server-side Table output (`kubectl get`): columns per kind, ages in simulated time."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from clustersim.kubernetes.objects import EPOCH
from clustersim.kubernetes.store import Obj

Column = tuple[str, str, int, Callable[[Mapping[str, object], float], object]]


def _get(obj: Mapping[str, object], *path: str) -> object:
    value: object = obj
    for part in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def age(obj: Mapping[str, object], now: float) -> str:
    """Age in simulated time, as kubectl prints it (`5s`, `3m`, `2h`, `4d`)."""
    created = _get(obj, "metadata", "creationTimestamp")
    if not isinstance(created, str):
        return "<unknown>"
    from datetime import datetime

    seconds = now - (datetime.strptime(created, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=EPOCH.tzinfo) - EPOCH
                     ).total_seconds()
    seconds = max(int(seconds), 0)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size * 2 or (unit == "m" and seconds >= 120):
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _pod_status(obj: Mapping[str, object], now: float) -> str:
    phase = str(_get(obj, "status", "phase") or "Pending")
    return {"Succeeded": "Completed", "Failed": "Error"}.get(phase, phase)


def _ready(obj: Mapping[str, object], now: float) -> str:
    return "1/1" if _get(obj, "status", "phase") == "Running" else "0/1"


def _node_status(obj: Mapping[str, object], now: float) -> str:
    """`Ready`, and `SchedulingDisabled` once cordoned (`spec.unschedulable`), as kubectl prints it."""
    return "Ready,SchedulingDisabled" if _get(obj, "spec", "unschedulable") else "Ready"


_NAME: Column = ("Name", "string", 0, lambda o, now: _get(o, "metadata", "name"))
_AGE: Column = ("Age", "string", 0, age)
COLUMNS: dict[str, list[Column]] = {
    "Pod": [_NAME, ("Ready", "string", 0, _ready), ("Status", "string", 0, _pod_status),
            ("Restarts", "integer", 0, lambda o, now: 0), _AGE,
            ("IP", "string", 1, lambda o, now: _get(o, "status", "podIP") or "<none>"),
            ("Node", "string", 1, lambda o, now: _get(o, "spec", "nodeName") or "<none>"),
            ("Nominated Node", "string", 1, lambda o, now: _get(o, "status", "nominatedNodeName") or "<none>"),
            ("Readiness Gates", "string", 1, lambda o, now: "<none>")],
    "Node": [_NAME, ("Status", "string", 0, _node_status), ("Roles", "string", 0, lambda o, now: "<none>"),
             _AGE, ("Version", "string", 0, lambda o, now: _get(o, "status", "nodeInfo", "kubeletVersion")),
             ("Internal-IP", "string", 1, lambda o, now: "<none>"),
             ("External-IP", "string", 1, lambda o, now: "<none>"),
             ("OS-Image", "string", 1, lambda o, now: _get(o, "status", "nodeInfo", "osImage")),
             ("Kernel-Version", "string", 1, lambda o, now: _get(o, "status", "nodeInfo", "kernelVersion") or "<none>"),
             ("Container-Runtime", "string", 1,
              lambda o, now: _get(o, "status", "nodeInfo", "containerRuntimeVersion"))],
}
"""kube-apiserver's columns; priority 1 ones are shown by `kubectl get -o wide` only."""


def table(kind: str, items: list[Obj], rv: int, now: float) -> Obj:
    columns = COLUMNS.get(kind, [_NAME, _AGE])
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": str(rv)},
        "columnDefinitions": [{"name": name, "type": kind_, "format": "name" if name == "Name" else "",
                               "description": name, "priority": priority} for name, kind_, priority, _ in columns],
        "rows": [{"cells": [cell(item, now) for _, _, _, cell in columns],
                  "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                             "metadata": item.get("metadata")}} for item in items],
    }
