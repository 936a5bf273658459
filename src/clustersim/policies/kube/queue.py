"""The scheduling queue: active pods by priority then queueing time, unschedulable pods, and their backoff.

Queueing time is kube-scheduler's `QueuedPodInfo.Timestamp`: when the pod entered the queue, refreshed at each
failed attempt, so pods that keep failing take turns (the one that failed longest ago comes first) instead of
the oldest pod always coming first. Here it is a counter, ticked at each arrival and each failure.

As in kube-scheduler, a pod that fits nowhere waits in the unschedulable set until a cluster event may make it
fit (v1.34's queueing hints): a pod's end moves the pods that some node refused for want of room (NodeResourcesFit:
`Insufficient cpu`, `Too many pods`; here also a node held by an exclusive job), not those refused only for their
node name, affinity or taints; a node change (labels, taints, cordon) moves every pod; and a pod left there for
5 minutes (`podMaxInUnschedulablePodsDuration`) is moved whatever happened. A moved pod goes back to the active
queue, or to the backoff queue until its backoff (1 s, doubling per failed attempt, at most 10 s) has passed
since its last attempt. Times are simulated seconds. Since v1.33
(feature SchedulerPopFromBackoffQ, on by default) a scheduler whose active queue is empty takes pods from the
backoff queue without waiting: earliest backoff end first (in 1 s windows), then the active queue's order.

This queue holds each pod on its own: the reference. Without backoff and with drained passes (the policy's
defaults), `bands.BandQueue` makes the same decisions by groups of pods, at a cost that does not grow with them.
"""

from __future__ import annotations

import heapq
import itertools
import math
from operator import attrgetter

from clustersim.policies.kube.filters import waits_for_pods
from clustersim.policies.kube.framework import PodInfo


class QueuedPod:
    """kube-scheduler's QueuedPodInfo: a pod, its place in the queue and its failed attempts.

    (A plain class, not a dataclass: a compiled dataclass is built through its generated, interpreted `__init__`,
    and one is built per pod.)"""

    __slots__ = ("attempts", "backoff_end", "order", "parked", "pod", "reason", "waits_for_pods")

    def __init__(self, pod: PodInfo, order: tuple[int, int], attempts: int = 0, backoff_end: float = 0.0,
                 parked: float = 0.0, waits_for_pods: bool = True, reason: str = ""):
        self.pod = pod
        self.order = order
        """Higher priority first, then earlier queueing (arrival, or last failed attempt)."""
        self.attempts = attempts
        self.backoff_end = backoff_end
        self.parked = parked
        """When it last became unschedulable."""
        self.waits_for_pods = waits_for_pods
        """A pod's end may make it fit (some node refused it for want of room)."""
        self.reason = reason
        """Why it last failed, as kube-scheduler reports it (`0/N nodes are available: ...`)."""

    def __repr__(self) -> str:
        return f"QueuedPod({self.pod.key!r}, order={self.order}, attempts={self.attempts})"


_ORDER = attrgetter("order")
MAX_UNSCHEDULABLE = 300.0
"""kube-scheduler's podMaxInUnschedulablePodsDuration: 5 minutes."""


class SchedulingQueue:
    """Active, unschedulable and backoff pods of one policy instance."""

    def __init__(self, initial_backoff: float = 1.0, max_backoff: float = 10.0,
                 max_unschedulable: float = MAX_UNSCHEDULABLE):
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.max_unschedulable = max_unschedulable
        self._backoffs = [min(initial_backoff * 2.0**i, max_backoff) for i in range(1024)]
        """The backoff after 1, 2... failed attempts (2.0 ** 1024 would overflow; the maximum comes long before)."""
        self._active: list[QueuedPod] = []
        self._unschedulable: list[QueuedPod] = []
        self._backoff: dict[float, list[QueuedPod]] = {}
        """Pods by the end of their backoff: many share one (they failed at the same instant, at the maximum)."""
        self._ends: list[float] = []
        """A heap of `_backoff`'s keys."""
        self._clock = itertools.count()
        """Queueing times: arrivals and failures, in the order they happen."""

    def add(self, pod: PodInfo) -> None:
        self._active.append(QueuedPod(pod, (-pod.spec.priority, next(self._clock))))

    def pop_all(self) -> list[QueuedPod]:
        """Every active pod, in queue order; none is left active (the cycle takes them all)."""
        active = self._active
        self._active = []
        active.sort(key=_ORDER)
        return active

    def requeue(self, pods: list[QueuedPod]) -> None:
        """Pods a pass did not reach: active again, with their queueing times (ahead of later failures)."""
        self._active.extend(pods)

    def __len__(self) -> int:
        return len(self._active)

    def unschedulable(self, queued: QueuedPod, now: float, reason: str) -> None:
        """The pod fit nowhere at `now`, for `reason`: park it until a cluster event may make it fit."""
        queued.attempts += 1
        queued.reason = reason
        queued.order = (queued.order[0], next(self._clock))
        queued.backoff_end = now + self._backoffs[min(queued.attempts, 1024) - 1]
        queued.parked = now
        queued.waits_for_pods = waits_for_pods(reason)
        self._unschedulable.append(queued)

    def parked(self) -> list[QueuedPod]:
        """The unschedulable pods, in the order they were parked."""
        return list(self._unschedulable)

    def reasons(self) -> dict[str, str]:
        """The last failure message of each queued pod that has failed."""
        held = [*self._active, *self._unschedulable, *(queued for pods in self._backoff.values() for queued in pods)]
        return {queued.pod.key: queued.reason for queued in held if queued.attempts}

    def flush_due(self, now: float) -> bool:
        """Some pod has been unschedulable for `max_unschedulable` seconds (they are parked in time order)."""
        return bool(self._unschedulable) and now - self._unschedulable[0].parked >= self.max_unschedulable

    def cluster_changed(self, now: float, pod_ended: bool = True, node_changed: bool = False) -> float | None:
        """Move the unschedulable pods the event may make fit (and those parked too long) to active, or backoff;
        the earliest backoff end still to come, if any."""
        backoff = self._backoff
        kept = []
        oldest = now - self.max_unschedulable
        for queued in self._unschedulable:
            if not (node_changed or (pod_ended and queued.waits_for_pods) or queued.parked <= oldest):
                kept.append(queued)
                continue
            end = queued.backoff_end
            if end <= now:
                self._active.append(queued)
            elif end in backoff:
                backoff[end].append(queued)
            else:
                backoff[end] = [queued]
                heapq.heappush(self._ends, end)
        self._unschedulable = kept
        return self._ends[0] if self._ends else None

    def pop_backoff(self) -> list[QueuedPod]:
        """Every pod still backing off, in the order an idle kube-scheduler (v1.33+) pops them."""
        popped = [queued for end in self._ends for queued in self._backoff[end]]
        self._backoff.clear()
        self._ends.clear()
        popped.sort(key=lambda queued: (math.floor(queued.backoff_end), queued.order))
        return popped

    def backoff_over(self, now: float) -> float | None:
        """Move pods whose backoff has ended to active; the next backoff end, if any."""
        ends = self._ends
        while ends and ends[0] <= now:
            self._active.extend(self._backoff.pop(heapq.heappop(ends)))
        return ends[0] if ends else None
