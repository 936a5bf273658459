"""The scheduling queue: active pods by priority then creation time, unschedulable pods, and their backoff.

As in kube-scheduler, a pod that fits nowhere waits in the unschedulable set until the cluster changes (a pod
ends); it then goes back to the active queue, or to the backoff queue until its backoff (1 s, doubling per
failed attempt, at most 10 s) has passed since its last attempt. Times are simulated seconds.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from clustersim.scheduling.policies.kube.framework import PodInfo


@dataclass
class _Attempts:
    pod: PodInfo
    count: int
    last: float


class SchedulingQueue:
    """Active (heap by -priority, created, seq), unschedulable and backoff pods of one policy instance."""

    def __init__(self, initial_backoff: float = 1.0, max_backoff: float = 10.0):
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self._active: list[tuple[int, float, int, PodInfo]] = []
        self._unschedulable: dict[str, _Attempts] = {}
        self._backoff: list[tuple[float, int, _Attempts]] = []
        self._attempts: dict[str, _Attempts] = {}

    def add(self, pod: PodInfo) -> None:
        heapq.heappush(self._active, (-pod.spec.priority, pod.created, pod.seq, pod))

    def pop(self) -> PodInfo | None:
        return heapq.heappop(self._active)[3] if self._active else None

    def __len__(self) -> int:
        return len(self._active)

    def unschedulable(self, pod: PodInfo, now: float) -> None:
        """The pod fit nowhere at `now`: park it until the cluster changes."""
        attempts = self._attempts.get(pod.key)
        if attempts is None:
            attempts = self._attempts[pod.key] = _Attempts(pod, 0, now)
        attempts.count += 1
        attempts.last = now
        self._unschedulable[pod.key] = attempts

    def forget(self, key: str) -> None:
        """The pod was placed or left the queue."""
        self._attempts.pop(key, None)
        self._unschedulable.pop(key, None)

    def backoff_end(self, attempts: _Attempts) -> float:
        backoff: float = self.initial_backoff * 2.0 ** (attempts.count - 1)
        return attempts.last + min(backoff, self.max_backoff)

    def cluster_changed(self, now: float) -> float | None:
        """Move unschedulable pods to active (or backoff); the earliest backoff end still to come, if any."""
        for attempts in self._unschedulable.values():
            end = self.backoff_end(attempts)
            if end <= now:
                self.add(attempts.pod)
            else:
                heapq.heappush(self._backoff, (end, attempts.pod.seq, attempts))
        self._unschedulable.clear()
        return self._backoff[0][0] if self._backoff else None

    def backoff_over(self, now: float) -> float | None:
        """Move pods whose backoff has ended to active; the next backoff end, if any."""
        backoff = self._backoff
        while backoff and backoff[0][0] <= now:
            self.add(heapq.heappop(backoff)[2].pod)
        return backoff[0][0] if backoff else None
