"""The scheduling queue by bands: `SchedulingQueue`'s decisions when pods never back off and every pass tries every
active pod (the `kube` policy's defaults, as kube-scheduler's simulation build), at a cost that does not grow with
the pods queued.

A saturated cluster keeps thousands of pods queued, and each pod end moves every pod refused for room back to the
active queue (NodeResourcesFit's queueing hint): a pass per pod end over each of them costs pods x ends. Yet once a
pod has failed in a pass, every later pod of its signature fails alike without a search (`KubePolicy._cycle`): same
reason, same time, one more attempt, and their queueing times refreshed in the order they had. A band is such a
group: pods of one priority and signature, in queue order, that arrived or last failed together. A pass merges the
bands' heads in queue order and fails a band as a whole, so it costs the pods it places and the bands, not the pods.

The order is kept without touching the pods: a pod's is (-priority, its band's era, its arrival tick). A pass puts
the pods it failed behind every pod it did not try (kube-scheduler's refreshed queueing times); when they are not
already behind, their bands take new eras after all others, in the order of their old ones, which keeps their order
among themselves. A pod's attempts are its band's failures plus its own offset (bands that merge had different
counts). A pod deleted while queued leaves the queue when it reaches the head of its band.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping

from clustersim.core.state import ClusterView
from clustersim.policies.kube.filters import waits_for_pods
from clustersim.policies.kube.framework import NodeInfo, PodInfo, Signature
from clustersim.policies.kube.queue import MAX_UNSCHEDULABLE, QueuedPod

Key = tuple[int, int, int]
"""(-priority, era, arrival tick): the queue order."""


class Band:
    """Pods of one priority and signature that arrived or last failed together, in queue order.

    (A plain class, not a dataclass: a compiled dataclass is built through its generated, interpreted `__init__`,
    and a band is built at most instants.)"""

    __slots__ = ("era", "fails", "parked", "pods", "priority", "reason", "signature", "waits")

    def __init__(self, priority: int, signature: Signature, era: int, pods: deque[QueuedPod]):
        self.priority = priority
        """Minus the pods' priority (higher priority first)."""
        self.signature = signature
        self.era = era
        self.pods = pods
        """Each with its arrival tick as `order[1]` and its attempts minus `fails` as `attempts`."""
        self.fails = 0
        self.parked = 0.0
        self.reason = ""
        self.waits = True

    def first(self) -> Key:
        return self.priority, self.era, self.pods[0].order[1]

    def last(self) -> Key:
        return self.priority, self.era, self.pods[-1].order[1]


class BandQueue:
    """Active and unschedulable pods of one policy instance, by bands (none backs off)."""

    def __init__(self, max_unschedulable: float = MAX_UNSCHEDULABLE):
        self.max_unschedulable = max_unschedulable
        self._active: list[Band] = []
        self._arrivals: dict[tuple[int, Signature], Band] = {}
        """The active bands of pods that arrived since the last pass, by priority and signature."""
        self._nb_active = 0
        self._unschedulable: list[Band] = []
        """In the order they were parked."""
        self._latest: dict[int, Key] = {}
        """The last pod of the unschedulable bands, by priority."""
        self._clock = itertools.count()
        self._era = 0
        """The latest era given: pods arriving now come after every pod queued."""

    def add(self, pod: PodInfo) -> None:
        lane = (-pod.spec.priority, pod.signature)
        band = self._arrivals.get(lane)
        if band is None:
            band = self._arrivals[lane] = Band(lane[0], pod.signature, self._era, deque())
            self._active.append(band)
        band.pods.append(QueuedPod(pod, (lane[0], next(self._clock))))
        self._nb_active += 1

    def __len__(self) -> int:
        return self._nb_active

    def flush_due(self, now: float) -> bool:
        """Some pod has been unschedulable for `max_unschedulable` seconds."""
        return bool(self._unschedulable) and now - self._unschedulable[0].parked >= self.max_unschedulable

    def cluster_changed(self, now: float, pod_ended: bool = True, node_changed: bool = False) -> float | None:
        """`SchedulingQueue.cluster_changed`, by bands: the pods moved are active at once (no backoff)."""
        kept = []
        oldest = now - self.max_unschedulable
        for band in self._unschedulable:
            if node_changed or (pod_ended and band.waits) or band.parked <= oldest:
                self._active.append(band)
                self._nb_active += len(band.pods)
            else:
                kept.append(band)
        if len(kept) < len(self._unschedulable):
            self._unschedulable = kept
            self._latest = {}
            self._note_latest(kept)
        return None

    def backoff_over(self, now: float) -> float | None:
        return None

    def drain(self, now: float, pending: Mapping[str, object],
              place: Callable[[PodInfo, ClusterView], tuple[NodeInfo | None, str]],
              view: ClusterView) -> Iterator[tuple[PodInfo, NodeInfo]]:
        """One pass over every active pod in queue order: each placed pod and its node (`place` of the pod in
        `view`; the caller starts it before asking for the next); the others are parked with the reason their
        signature failed for."""
        bands, self._active, self._arrivals, self._nb_active = self._active, [], {}, 0
        heap = [(band.first(), i, band) for i, band in enumerate(bands) if band.pods]
        heapq.heapify(heap)
        tie = itertools.count(len(heap))
        failed: dict[Signature, str] = {}
        failed_bands: list[Band] = []
        while heap:
            band = heapq.heappop(heap)[2]
            if band.signature in failed:
                failed_bands.append(band)
                continue
            pod = band.pods[0].pod
            if pod.key in pending:  # else deleted (or started by someone else): it leaves the queue
                node, reason = place(pod, view)
                if node is None:
                    failed[band.signature] = reason
                    failed_bands.append(band)
                    continue
                band.pods.popleft()
                yield pod, node
            else:
                band.pods.popleft()
            if band.pods:
                heapq.heappush(heap, (band.first(), next(tie), band))
        self._park(failed_bands, failed, now)

    def _park(self, bands: list[Band], reasons: dict[Signature, str], now: float) -> None:
        """The failed bands, behind every pod not tried (new eras if they are not already), merged by signature."""
        latest = self._latest
        if any(band.priority in latest and band.first() < latest[band.priority] for band in bands):
            eras = {era: self._era + 1 + i for i, era in enumerate(sorted({band.era for band in bands}))}
            for band in bands:
                band.era = eras[band.era]
            self._era += len(eras)
        merged: dict[tuple[int, Signature, int], Band] = {}
        for band in bands:
            band.fails += 1
            band.parked, band.reason = now, reasons[band.signature]
            band.waits = waits_for_pods(band.reason)
            lane = (band.priority, band.signature, band.era)
            other = merged.get(lane)
            if other is None:
                merged[lane] = band
            else:
                merged[lane] = _merge(other, band)
        self._unschedulable.extend(merged.values())
        self._note_latest(merged.values())

    def _note_latest(self, bands: Iterable[Band]) -> None:
        latest = self._latest
        for band in bands:
            last = band.last()
            if band.priority not in latest or last > latest[band.priority]:
                latest[band.priority] = last

    def parked(self) -> list[QueuedPod]:
        """The unschedulable pods (with their attempts), in the order they were parked."""
        return [QueuedPod(queued.pod, queued.order, band.fails + queued.attempts, band.parked, band.waits)
                for band in self._unschedulable for queued in band.pods]

    def reasons(self) -> dict[str, str]:
        """The last failure message of each queued pod that has failed."""
        return {queued.pod.key: band.reason for band in (*self._unschedulable, *self._active) if band.fails
                for queued in band.pods}


def _tick(queued: QueuedPod) -> int:
    return queued.order[1]


def _merge(one: Band, other: Band) -> Band:
    """One band of two of the same priority, signature and era: the larger takes the smaller's pods."""
    big, small = (one, other) if len(one.pods) >= len(other.pods) else (other, one)
    offset = small.fails - big.fails
    if offset:
        for queued in small.pods:
            queued.attempts += offset
    if big.pods[-1].order[1] < small.pods[0].order[1]:
        big.pods.extend(small.pods)
    elif small.pods[-1].order[1] < big.pods[0].order[1]:
        big.pods.extendleft(reversed(small.pods))
    else:
        big.pods = deque(heapq.merge(big.pods, small.pods, key=_tick))
    return big
