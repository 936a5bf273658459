"""The scheduling queue: active pods by priority then creation time, unschedulable pods, and their backoff.

As in kube-scheduler, a pod that fits nowhere waits in the unschedulable set until the cluster changes (a pod
ends); it then goes back to the active queue, or to the backoff queue until its backoff (1 s, doubling per
failed attempt, at most 10 s) has passed since its last attempt. Times are simulated seconds.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from operator import attrgetter

from clustersim.policies.kube.framework import PodInfo


@dataclass(slots=True)
class QueuedPod:
    """kube-scheduler's QueuedPodInfo: a pod, its place in the queue and its failed attempts."""

    pod: PodInfo
    order: tuple[int, float, int] = field(init=False)
    """Higher priority first, then earlier creation, then earlier arrival."""
    attempts: int = 0
    backoff_end: float = 0.0

    def __post_init__(self) -> None:
        self.order = (-self.pod.spec.priority, self.pod.created, self.pod.seq)


_ORDER = attrgetter("order")


class SchedulingQueue:
    """Active, unschedulable and backoff pods of one policy instance."""

    def __init__(self, initial_backoff: float = 1.0, max_backoff: float = 10.0):
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self._backoffs = [min(initial_backoff * 2.0**i, max_backoff) for i in range(1024)]
        """The backoff after 1, 2... failed attempts (2.0 ** 1024 would overflow; the maximum comes long before)."""
        self._active: list[QueuedPod] = []
        self._unschedulable: list[QueuedPod] = []
        self._backoff: dict[float, list[QueuedPod]] = {}
        """Pods by the end of their backoff: many share one (they failed at the same instant, at the maximum)."""
        self._ends: list[float] = []
        """A heap of `_backoff`'s keys."""

    def add(self, pod: PodInfo) -> None:
        self._active.append(QueuedPod(pod))

    def pop_all(self) -> list[QueuedPod]:
        """Every active pod, in queue order; none is left active (the cycle takes them all)."""
        active = self._active
        self._active = []
        active.sort(key=_ORDER)
        return active

    def __len__(self) -> int:
        return len(self._active)

    def unschedulable(self, queued: QueuedPod, now: float) -> None:
        """The pod fit nowhere at `now`: park it until the cluster changes."""
        queued.attempts += 1
        queued.backoff_end = now + self._backoffs[min(queued.attempts, 1024) - 1]
        self._unschedulable.append(queued)

    def cluster_changed(self, now: float) -> float | None:
        """Move unschedulable pods to active (or backoff); the earliest backoff end still to come, if any."""
        backoff = self._backoff
        for queued in self._unschedulable:
            end = queued.backoff_end
            if end <= now:
                self._active.append(queued)
            elif end in backoff:
                backoff[end].append(queued)
            else:
                backoff[end] = [queued]
                heapq.heappush(self._ends, end)
        self._unschedulable = []
        return self._ends[0] if self._ends else None

    def backoff_over(self, now: float) -> float | None:
        """Move pods whose backoff has ended to active; the next backoff end, if any."""
        ends = self._ends
        while ends and ends[0] <= now:
            self._active.extend(self._backoff.pop(heapq.heappop(ends)))
        return ends[0] if ends else None
