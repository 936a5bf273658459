"""The `kube` policy: kube-scheduler's scheduling cycle (queue sort, filters, scores, select) over the core.

One pod at a time from the active queue: filter nodes from a rotating start index until enough feasible nodes
are found (percentageOfNodesToScore), score them with weighted plugins, place the pod on the best one (ties:
lowest node id, or seeded random), else park it as unschedulable. Differences from v1.26 are in
docs/kubernetes.md. The plugins, node by node, are the reference; `columns.NodeColumns` computes the same
placements over all nodes at once and is used whenever the configuration allows (see `columns.vectorizable`).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING

from clustersim.core.decisions import CallMeLater, Decision, RejectJob, SetJobMetadata, StartJob
from clustersim.core.events import Event, JobCompleted, JobSubmitted, RequestedCall
from clustersim.core.sharing import allocatable
from clustersim.core.state import ClusterView
from clustersim.intervals import IntervalSet
from clustersim.platform.kube_labels import node_labels, node_taints
from clustersim.policies.base import Policy
from clustersim.policies.kube.bands import BandQueue
from clustersim.policies.kube.filters import DEFAULT_FILTERS, unavailable
from clustersim.policies.kube.framework import FilterPlugin, NodeInfo, PodInfo, ScorePlugin, Signature
from clustersim.policies.kube.queue import QueuedPod, SchedulingQueue
from clustersim.policies.kube.scores import BalancedAllocation, NodeResourcesFit
from clustersim.policies.registry import register_policy
from clustersim.workload.pods import Taint, pod_spec

if TYPE_CHECKING:
    from clustersim.policies.kube.columns import NodeColumns

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE = 5
MAX_SIGNATURES = 4096
"""Distinct pod signatures kept as shared objects (then forgotten: equal signatures still compare equal)."""


def nodes_to_find(nb_nodes: int, percentage: int) -> int:
    """kube-scheduler's numFeasibleNodesToFind: all below 100 nodes, else an adaptive share (at least 100)."""
    if nb_nodes < MIN_FEASIBLE_NODES_TO_FIND or percentage >= 100:
        return nb_nodes
    if percentage <= 0:
        percentage = max(50 - nb_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE)
    return max(nb_nodes * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)


@register_policy("kube")
class KubePolicy(Policy):
    """A kube-scheduler-like policy for pods (jobs with `request`); other jobs are rejected.

    Options (all optional, strings accepted from the CLI): `scheduler_name` (only pods naming this scheduler,
    or any if empty; default: any), `strategy` (LeastAllocated, MostAllocated, RequestedToCapacityRatio),
    `fit_weight`, `balanced_weight`, `percentage_of_nodes_to_score` (0 adaptive, 100 all), `seed` (ties
    broken at random with this seed instead of by lowest node id), `initial_backoff`, `max_backoff`
    (default 0 and 0, as the simulation build; 1 and 10 for kube-scheduler's own, in simulated seconds),
    `pop_from_backoff` (default true, as kube-scheduler v1.33+; false for v1.26's queue), `drain` (default true:
    every queued pod is tried at every event, as the simulation build, which reports the end of its whole pass
    to the facade; false: a pass stops once no queued pod fits, as the facade paces a scheduler that does not
    report it, e.g. the plain binary). The defaults are what matches the simulation build on saturated pods
    (docs/kubernetes.md has the figures).
    """

    def __init__(
        self,
        scheduler_name: str = "",
        strategy: str = "LeastAllocated",
        fit_weight: int | str = 1,
        balanced_weight: int | str = 1,
        percentage_of_nodes_to_score: int | str = 0,
        seed: int | str | None = None,
        initial_backoff: float | str = 0.0,
        max_backoff: float | str = 0.0,
        pop_from_backoff: bool | str = True,
        drain: bool | str = True,
    ):
        self.scheduler_name = scheduler_name
        self.filters: tuple[FilterPlugin, ...] = DEFAULT_FILTERS
        self.scores: list[tuple[ScorePlugin, int]] = [
            (NodeResourcesFit(strategy), int(fit_weight)),
            (BalancedAllocation(), int(balanced_weight)),
        ]
        self.percentage = int(percentage_of_nodes_to_score)
        self._score_resources = tuple(sorted({r for plugin, _ in self.scores for r in plugin.resources}))
        self._pair = len(self._score_resources) == 2
        self._memo: dict[tuple[int, ...], int] = {}
        """Weighted total score by (allocatable, free, requested) amounts of `_score_resources`: nodes alike and
        nodes that did not change since they were last scored are not scored again."""
        self._rng = random.Random(int(seed)) if seed not in (None, "") else None
        self.drain = _flag(drain)
        """True: every queued pod is tried before time moves on (as the facade waits for the simulation build's
        idle report). False: time moves on as soon as no pod left in the queue fits any node, as the facade moves
        it for a scheduler that does not report idleness; the rest stay queued, ahead of the pods that failed
        meanwhile (see `_cycle`)."""
        backoffs = float(initial_backoff), float(max_backoff)
        self.queue: SchedulingQueue | BandQueue = (
            BandQueue() if self.drain and min(backoffs) <= 0 else SchedulingQueue(*backoffs))
        """By bands when it computes the same (no backoff, drained passes); `SchedulingQueue` is the reference."""
        self.pop_from_backoff = _flag(pop_from_backoff)
        """kube-scheduler v1.33+ (SchedulerPopFromBackoffQ): an idle scheduler takes pods still backing off."""
        self._nodes: list[NodeInfo] = []
        self.vectorized = True
        """False keeps to the plugins, node by node (the reference the vectorized path is tested against)."""
        self._columns: NodeColumns | None = None
        self._start_index = 0
        self._wanted: dict[int, int] = {}
        """`nodes_to_find` of `_wanted_of` nodes, by percentage."""
        self._wanted_of = 0
        self._seq = 0
        self._signatures: dict[Signature, Signature] = {}
        """Each signature seen, as the one object the pods of that signature share."""
        self._calls: set[float] = set()
        self._node_changed = False

    @property
    def reasons(self) -> dict[str, str]:
        """The last failure message of each pod still queued that has failed, as kube-scheduler reports it."""
        return self.queue.reasons()

    def begin(self, view: ClusterView) -> None:
        platform = view.platform
        self._nodes = [
            NodeInfo(node.id, node, platform.units_of(node.id).intervals[0][0], node_labels(node), node_taints(node),
                     allocatable(node), {})
            for node in platform.nodes
        ]
        self._build_columns()

    def _build_columns(self) -> None:
        from clustersim.policies.kube.columns import NodeColumns, vectorizable  # numpy: only now

        vectorized = self.vectorized and vectorizable(self._nodes, self.filters, self.scores)
        self._columns = NodeColumns(self._nodes, self._score_resources) if vectorized else None

    def relabel(self, name: str, labels: Mapping[str, str], taints: tuple[Taint, ...]) -> None:
        """A node's labels or taints changed (e.g. through the Kubernetes API): later placements see them."""
        for node in self._nodes:
            if node.node.name == name:
                node.labels, node.taints = MappingProxyType(dict(labels)), taints
                self._build_columns()
                self._node_changed = True
                return

    def decide(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        changed = False
        queue = self.queue
        for event in events:
            if isinstance(event, JobSubmitted):
                job = event.job
                if job.request is None:
                    yield SetJobMetadata(job.key, "kube: not a pod (no resource requests)")
                    yield RejectJob(job.key)
                    continue
                spec = pod_spec(job)
                if self.scheduler_name and spec.scheduler_name != self.scheduler_name:
                    continue
                self._seq += 1
                pod = PodInfo(job.key, job.request, spec, job.submit_time, self._seq)
                signatures = self._signatures
                if len(signatures) >= MAX_SIGNATURES:
                    signatures.clear()
                pod.signature = signatures.setdefault(pod.signature, pod.signature)
                queue.add(pod)
            elif isinstance(event, JobCompleted):
                changed = True
            elif isinstance(event, RequestedCall):
                self._calls.discard(event.time)
        node_changed, self._node_changed = self._node_changed, False
        moving = changed or node_changed or queue.flush_due(now)
        wake = queue.cluster_changed(now, changed, node_changed) if moving else None
        later = queue.backoff_over(now)
        if self.pop_from_backoff and (len(queue) or wake is not None or later is not None):
            yield from self._cycle(now, view)  # pops every backing-off pod: no later call is needed
            return
        for time in (wake, later):
            if time is not None and time > now and time not in self._calls:
                self._calls.add(time)
                yield CallMeLater(time)
        if len(queue):
            yield from self._cycle(now, view)

    def schedule(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        """Unused: `decide` runs kube-scheduler's own cycle."""
        return iter(())

    def _cycle(self, now: float, view: ClusterView) -> Iterator[Decision]:
        """Schedule active pods one by one, then (the active queue being empty, scheduling taking no simulated
        time) the backoff queue's if `pop_from_backoff`; a pod identical to one that just failed fails without a
        search.

        Unless `drain`, the pass stops once no pod left in it fits any node: the facade moves simulated time on
        then (every pod that fits is bound or reported), while kube-scheduler is still going through pods that
        fit nowhere. Those stay in its active queue with their older queueing times, so at the next cluster
        event the scheduler resumes where it was, before the pods that failed in between.

        With the queue by bands (no backoff, `drain`: the defaults), `BandQueue.drain` makes the same pass."""
        queue = self.queue
        pending = view.pending
        if isinstance(queue, BandQueue):
            for placed, target in queue.drain(now, pending, self.place, view):
                yield StartJob(placed.key, IntervalSet.range(target.unit, target.unit + 1))
            return
        failed: dict[Signature, str] = {}
        pods = queue.pop_all()
        if self.pop_from_backoff:
            pods += queue.pop_backoff()
        pace = None if self.drain else _Pace(self, pods, view)
        for index, queued in enumerate(pods):
            pod = queued.pod
            if pod.key not in pending:  # deleted (or started by someone else): it leaves the queue
                continue
            if pace is not None and not pace.any_fits(index):
                queue.requeue(pods[index:])
                return
            reason = failed.get(pod.signature)
            if reason is None:
                node, reason = self.place(pod, view)
                if node is not None:
                    if pace is not None:
                        pace.placed()
                    yield StartJob(pod.key, IntervalSet.range(node.unit, node.unit + 1))
                    continue
                failed[pod.signature] = reason
                if pace is not None:
                    pace.known[pod.signature] = False
            queue.unschedulable(queued, now, reason)

    def fits(self, pod: PodInfo, view: ClusterView) -> bool:
        """The pod passes every filter on some node now (no side effect: the rotating start stays)."""
        columns = self._columns
        found = None if columns is None else columns.filter(pod, view, 0, 1)
        if found is not None:
            return len(found[0]) > 0
        shared, free_units = view.shared, view.free
        filters = [plugin for plugin in self.filters if plugin.applies(pod)]
        for node in self._nodes:
            node.free = shared.free(node.index)
            node.available = shared.pods(node.index) > 0 or node.unit in free_units
            if all(plugin.filter(pod, node) is None for plugin in filters):
                return True
        return False

    def place(self, pod: PodInfo, view: ClusterView) -> tuple[NodeInfo | None, str]:
        """The best feasible node for a pod, or None and kube-scheduler's `0/N nodes are available` message."""
        nodes = self._nodes
        total = len(nodes)
        wanted = self._wanted.get(self.percentage)
        if wanted is None or self._wanted_of != total:
            if self._wanted_of != total:
                self._wanted, self._wanted_of = {}, total
            wanted = self._wanted[self.percentage] = nodes_to_find(total, self.percentage)
        start = self._start_index
        columns = self._columns
        found = None if columns is None else columns.filter(pod, view, start, wanted)
        if columns is not None and found is not None:
            indices, processed, message = found
            self._start_index = (start + processed) % total
            if not len(indices):
                return None, message
            if len(indices) == 1:
                return nodes[int(indices[0])], ""
            if isinstance(indices, list):  # few: the plugins score them (the columns' scores are the same)
                few = [nodes[index] for index in indices]
                for node in few:
                    node.free = view.shared.free(node.index)
                return self._select(pod, few), ""
            return nodes[columns.select(pod, indices, self.scores, self._rng, _Scorer(self, pod, view))], ""
        shared, free_units = view.shared, view.free
        filters = [plugin for plugin in self.filters if plugin.applies(pod)]  # constraints the pod does not have
        feasible: list[NodeInfo] = []
        reasons: dict[str, int] = {}
        processed = 0
        for offset in range(total):
            node = nodes[(start + offset) % total]
            processed += 1
            index = node.index
            node.free = shared.free(index)
            node.available = shared.pods(index) > 0 or node.unit in free_units
            for plugin in filters:
                why = plugin.filter(pod, node)
                if why is not None:
                    reasons[why] = reasons.get(why, 0) + 1
                    break
            else:
                feasible.append(node)
                if len(feasible) >= wanted:
                    break
        self._start_index = (start + processed) % total
        if not feasible:
            return None, unavailable(total, reasons)
        if len(feasible) == 1:
            return feasible[0], ""
        return self._select(pod, feasible), ""

    def _select(self, pod: PodInfo, feasible: list[NodeInfo]) -> NodeInfo:
        best: NodeInfo | None = None
        best_score = -1
        ties = 0
        requested = tuple(pod.scoring_request.get(r, 0) for r in self._score_resources)
        for node in feasible:
            score = self._score(pod, node, requested)
            if score > best_score:
                best, best_score, ties = node, score, 1
            elif score == best_score:
                assert best is not None
                if self._rng is None:
                    if node.index < best.index:
                        best = node
                else:
                    ties += 1
                    if self._rng.randrange(ties) == 0:
                        best = node
        assert best is not None
        return best

    def _score(self, pod: PodInfo, node: NodeInfo, requested: tuple[int, ...]) -> int:
        """The node's weighted total score for the pod (its `free` filled; `requested`: the pod's scoring request
        of `_score_resources`), memoized by amounts."""
        allocatable, free = node.allocatable, node.free
        if self._pair:  # the default (cpu, memory): a key without generator overhead
            first, second = self._score_resources
            key = (*requested, allocatable.get(first, 0), allocatable.get(second, 0), free.get(first, 0),
                   free.get(second, 0))
        else:
            resources = self._score_resources
            key = (*requested, *(allocatable.get(r, 0) for r in resources), *(free.get(r, 0) for r in resources))
        score = self._memo.get(key)
        if score is None:
            if len(self._memo) > 1_000_000:
                self._memo.clear()
            score = self._memo[key] = sum(plugin.score(pod, node) * weight for plugin, weight in self.scores if weight)
        return score

class _Scorer:
    """`KubePolicy._score` of the node at an index, as it is when called (`NodeColumns.select` re-reads a few)."""

    def __init__(self, policy: KubePolicy, pod: PodInfo, view: ClusterView):
        self.policy, self.pod, self.nodes, self.shared = policy, pod, policy._nodes, view.shared
        self.requested = tuple(pod.scoring_request.get(r, 0) for r in policy._score_resources)

    def __call__(self, index: int) -> int:
        node = self.nodes[index]
        node.free = self.shared.free(index)
        return self.policy._score(self.pod, node, self.requested)


class _Pace:
    """Whether a pass must go on from a given pod: some pod from there on was never tried, or fits some node.
    Placements only take room within a pass, so a pod shape that fits nowhere stays so, and one that fits is
    checked again after each placement only."""

    def __init__(self, policy: KubePolicy, pods: list[QueuedPod], view: ClusterView):
        self.policy, self.view = policy, view
        self.left: dict[Signature, int] = {}
        """Pods of each shape (signature) not yet tried in the pass."""
        self.example: dict[Signature, PodInfo] = {}
        for queued in pods:
            signature = queued.pod.signature
            self.left[signature] = self.left.get(signature, 0) + 1
            self.example.setdefault(signature, queued.pod)
        self.known: dict[Signature, bool] = {}
        self.last_new = max((i for i, queued in enumerate(pods) if not queued.attempts), default=-1)
        """The last pod never tried: the facade holds time until the scheduler has reported every pod once."""
        self._tried = 0
        self._pods = pods

    def any_fits(self, index: int) -> bool:
        """Some pod from `index` on (not yet tried) fits a node now, or was never tried."""
        if index <= self.last_new:
            return True
        left, known = self.left, self.known
        for queued in self._pods[self._tried:index]:
            signature = queued.pod.signature
            left[signature] -= 1
            if not left[signature]:
                del left[signature]
        self._tried = index
        for signature in left:
            fits = known.get(signature)
            if fits is None:
                fits = known[signature] = self.policy.fits(self.example[signature], self.view)
            if fits:
                return True
        return False

    def placed(self) -> None:
        """A pod took room: shapes that fitted must be checked again."""
        self.known = {signature: fits for signature, fits in self.known.items() if not fits}


def _flag(value: bool | str) -> bool:
    return value not in (False, "false", "False", "0", 0)
