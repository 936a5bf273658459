"""Events as the apiserver keeps them: in simulated time, and one store for both APIs.

A scheduler writes events with its own (wall) clock; in the simulation they are stamped with the simulated
instant instead, so `kubectl get events` and `describe` agree with the pods' times. A real apiserver stores
core/v1 and events.k8s.io/v1 events in one place, converting between them: kube-scheduler writes the latter,
kubectl reads the former. The facade writes each events.k8s.io event into core/v1 as well, converted.
"""

from __future__ import annotations

from collections.abc import Mapping

from clustersim.kubernetes.objects import timestamp
from clustersim.kubernetes.store import Obj

_TIMES = ("firstTimestamp", "lastTimestamp", "deprecatedFirstTimestamp", "deprecatedLastTimestamp")


def micro_time(now: float) -> str:
    """MicroTime of simulated second `now` (`eventTime`, `series.lastObservedTime`)."""
    return timestamp(now).replace("Z", ".000000Z")


def in_simulated_time(event: Obj, now: float) -> Obj:
    """The event with every time it carries set to the simulated instant `now`."""
    stamped = dict(event)
    for name in _TIMES:
        if stamped.get(name):
            stamped[name] = timestamp(now)
    if stamped.get("eventTime"):
        stamped["eventTime"] = micro_time(now)
    series = stamped.get("series")
    if isinstance(series, Mapping):
        stamped["series"] = {**series, "lastObservedTime": micro_time(now)} if "lastObservedTime" in series \
            else dict(series)
    return stamped


def core_event(event: Obj, now: float) -> Obj:
    """An events.k8s.io/v1 Event as core/v1 shows it (the apiserver's conversion)."""
    meta = event.get("metadata")
    series = event.get("series")
    count = series.get("count", 1) if isinstance(series, Mapping) else 1
    return {
        "kind": "Event", "apiVersion": "v1",
        "metadata": {k: v for k, v in (meta.items() if isinstance(meta, Mapping) else ())
                     if k in ("name", "namespace", "creationTimestamp", "labels", "annotations")},
        "involvedObject": event.get("regarding") or {},
        "related": event.get("related"),
        "reason": event.get("reason", ""),
        "message": event.get("note", ""),
        "type": event.get("type", "Normal"),
        "action": event.get("action", ""),
        "source": {"component": event.get("reportingController", "")},
        "reportingComponent": event.get("reportingController", ""),
        "reportingInstance": event.get("reportingInstance", ""),
        "eventTime": event.get("eventTime"),
        "firstTimestamp": timestamp(now),
        "lastTimestamp": timestamp(now),
        "count": count,
    }
