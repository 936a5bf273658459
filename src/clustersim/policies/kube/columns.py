"""The `kube` policy's filters, scores and selection over all nodes at once, as numpy columns.

`KubePolicy.place` runs each plugin on each node: the specification, but thousands of Python calls per pod.
`NodeColumns` gives the same answer (same node, same message, same rotation, same random draws) in a few
array operations per pod. It keeps per node the allocatable and free amount of every resource pods have
asked for so far, whether it hosts pods and whether its unit is free; it re-reads only the nodes the shared
nodes report changed, and rebuilds the free-unit mask only when the free set is a new object. The static
filters (name, taints, affinity) run as plugins once per distinct pod spec; the others are array comparisons.

Most attempts repeat a signature tried a moment ago: each signature keeps why each node refuses it (`_Status`),
brought up to date from the few nodes changed since. A signature no node takes fails from it alone; one that
few nodes take is placed among those, in Python (numpy's fixed cost per call is higher than the work).

It covers the default filters and the NodeResourcesFit and BalancedAllocation scores (the latter on two
resources at most) with non-negative weights, on nodes whose ids are their positions and amounts below 2**53
(exact in int64 products and float64 fractions); `vectorizable` says when, and the policy falls back to the
plugins otherwise.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from clustersim.core.state import ClusterView, SharedView
from clustersim.policies.kube.filters import (
    DEFAULT_FILTERS,
    STATIC_FILTERS,
    TOO_MANY_PODS,
    UNSCHEDULABLE,
    insufficient,
    unavailable,
)
from clustersim.policies.kube.framework import FilterPlugin, NodeInfo, PodInfo, ScorePlugin, Signature
from clustersim.policies.kube.scores import BalancedAllocation, NodeResourcesFit

LIMIT = 2**53
"""Amounts below this are exact as float64 and their products by 100 fit int64."""
MAX_SPECS = 256
"""Static filter results kept (one int32 per node each), and failures."""
MAX_LOG = 1_000_000
"""Node changes logged before the log and the failures are dropped."""
MAX_CHANGES = 512
"""Beyond this many node changes since a signature was last tried, filtering every node again is as quick."""
FEW = 64
"""Up to this many nodes taking a signature are ordered (and scored, by the caller) one by one."""
RESCORED = 32
"""Up to this many node changes since a signature's scores were kept, those nodes are scored one by one."""
FEW_STALE = 8
"""Up to this many nodes changed since the arrays were last written, they are written one by one."""

Column = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]
Codes = npt.NDArray[np.int32]


def vectorizable(nodes: Sequence[NodeInfo], filters: Sequence[FilterPlugin],
                 scores: Sequence[tuple[ScorePlugin, int]]) -> bool:
    """Whether `NodeColumns` computes exactly what the plugins would."""
    plugins_ok = tuple(filters) == DEFAULT_FILTERS and all(
        weight >= 0 and (type(plugin) is NodeResourcesFit
                         or (type(plugin) is BalancedAllocation and len(plugin.resources) <= 2))
        for plugin, weight in scores
    )
    return plugins_ok and all(
        node.index == i and all(abs(amount) < LIMIT for amount in node.allocatable.values())
        for i, node in enumerate(nodes)
    )


class NodeColumns:
    """Per-node columns of one policy's nodes, kept in sync with the view they are used with."""

    def __init__(self, nodes: Sequence[NodeInfo], score_resources: Sequence[str]):
        self.nodes = nodes
        self._units = np.array([node.unit for node in nodes], dtype=np.int64)
        self._score_resources = score_resources
        self._allocatable: dict[str, Column] = {}
        self._free: dict[str, Column] = {}
        self._amounts: dict[str, list[int]] = {}
        """`_free` as lists: reading one node's amount from a list is several times quicker."""
        self._hosts = np.zeros(len(nodes), dtype=np.bool_)
        self._hosting: list[bool] = [False] * len(nodes)
        """`_hosts` as a list."""
        self._unit_free = np.zeros(len(nodes), dtype=np.bool_)
        self._available: list[bool] = [False] * len(nodes)
        """Hosts pods, or its unit is free (not held by an exclusive job, not off)."""
        self._ready = np.zeros(len(nodes), dtype=np.bool_)
        """Available with room for one more pod: what no pod's spec changes."""
        self._stale: list[int] = []
        """Nodes whose pods changed since the arrays (`_free`, `_hosts`, `_ready`) were last brought up to date
        from the lists (`_flush`): a saturated cluster changes a node or two per pod start and end, and mostly
        reads the lists only (`_update`), so the arrays are written when next read, in one assignment each."""
        self._intervals: tuple[tuple[int, int], ...] | None = None
        self._shared: SharedView | None = None
        self._changed: set[int] = set()
        self._static: dict[tuple[object, ...], Codes | None] = {}
        self._messages = [""]
        """Failure reasons by code (0: the node fits)."""
        self._codes: dict[str, int] = {}
        self._unschedulable = self._code(UNSCHEDULABLE)
        self._log: list[int] = []
        """Every node whose free amounts or availability changed, in order, repeated at each change."""
        self._statuses: dict[Signature, _Status] = {}
        """Why each node refuses each signature tried, brought up to date from `_log` when it is tried again."""

    def filter(self, pod: PodInfo, view: ClusterView, start: int,
               wanted: int) -> tuple[list[int] | npt.NDArray[np.intp], int, str] | None:
        """`KubePolicy.place`'s filtering: up to `wanted` feasible nodes in visiting order from `start` (a list
        when at most `FEW` nodes fit, else an array), how many nodes were visited and, when none fits,
        kube-scheduler's message (None: amounts too large to be exact here)."""
        if self._changed or view.shared is not self._shared or view.free.intervals is not self._intervals:
            self._sync(view)
        status = self._statuses.get(pod.signature)
        if status is None or status.seen != len(self._log):
            status = self._status(pod)
            if status is None:
                return None
        total = len(self.nodes)
        fitting = status.fitting
        if not fitting:
            if not status.message:
                status.message = unavailable(total, self._reasons(status.counts))
            return [], total, status.message
        if len(fitting) <= FEW:
            if status.peak > 4 * FEW:  # a set keeps the table of its largest size, and iterating scans it all
                fitting = status.fitting = set(fitting)
                status.peak = len(fitting)
            offsets = sorted([(node - start) % total for node in fitting])  # in visiting order from `start`
            if len(offsets) < wanted:
                return [(offset + start) % total for offset in offsets], total, ""
            del offsets[wanted:]
            return [(offset + start) % total for offset in offsets], offsets[-1] + 1, ""
        self._flush()
        static = self._static_codes(pod)
        fits = self._ready if static is None else self._ready & (static == 0)
        for resource, amount in pod.request.items():
            fits = fits & (self._column(resource) >= amount)
        feasible = fits.nonzero()[0]
        split = int(feasible.searchsorted(start))
        if split:
            feasible = np.concatenate((feasible[split:], feasible[:split]))
        if len(feasible) < wanted:
            return feasible, total, ""
        feasible = feasible[:wanted]
        return feasible, (int(feasible[-1]) - start) % total + 1, ""

    def select(self, pod: PodInfo, feasible: npt.NDArray[np.intp], scores: Sequence[tuple[ScorePlugin, int]],
               rng: random.Random | None, score: Callable[[int], int]) -> int:
        """`KubePolicy._select` of the nodes `filter` just gave for the pod: the one with the best weighted score
        (ties: lowest index, or the policy's reservoir sampling, replayed with the same random draws).

        The signature keeps every node's score, re-read with `score` (the plugins' score of the node at an
        index) for the nodes changed since, or computed again over every node when they are more than a few."""
        status = self._statuses[pod.signature]
        log = self._log
        if status.scores is None or len(log) - status.scored > RESCORED:
            self._flush()
            request = pod.scoring_request
            allocatable = {r: self._allocatable[r] for r in self._score_resources}
            free = {r: self._free[r] for r in self._score_resources}
            every = np.zeros(len(self.nodes), dtype=np.int64)
            for plugin, weight in scores:
                if weight:
                    assert isinstance(plugin, NodeResourcesFit | BalancedAllocation)
                    every += plugin.score_columns(request, allocatable, free) * weight
            status.scores = every
        else:
            every = status.scores
            for node in set(log[status.scored:]):
                every[node] = score(node)
        status.scored = len(log)
        total = every[feasible]
        if rng is None:
            return int(feasible[total == total.max()].min())
        before = np.empty_like(total)  # the best score before each node, in visiting order
        before[0] = -1
        np.maximum.accumulate(total[:-1], out=before[1:])
        best = ties = 0
        new = total > before
        for position in (total >= before).nonzero()[0].tolist():
            if new[position]:
                best, ties = position, 1
            else:
                ties += 1
                if rng.randrange(ties) == 0:
                    best = position
        return int(feasible[best])

    def _sync(self, view: ClusterView) -> None:
        """Re-read the nodes whose pods changed, and the free-unit mask if the free set changed."""
        shared = view.shared
        if shared is not self._shared:  # first use, or another cluster: read everything
            self._shared, self._changed = shared, shared.subscribe()
            self._allocatable.clear()
            self._free.clear()
            self._amounts.clear()
            self._hosting = [shared.pods(node.index) > 0 for node in self.nodes]
            self._hosts = np.array(self._hosting, dtype=np.bool_)
            self._unit_free = np.zeros(len(self.nodes), dtype=np.bool_)
            self._available = list(self._hosting)
            self._stale.clear()
            for resource in ("pods", *self._score_resources):
                self._column(resource)
            self._intervals = None
            self._log.clear()
            self._statuses.clear()
        elif self._changed:
            changed = self._changed
            lists = [(resource, self._amounts[resource]) for resource in self._free]
            hosting, unit_free, available = self._hosting, self._unit_free, self._available
            for node in changed:
                free = shared.free(node)
                for resource, amounts in lists:
                    amounts[node] = free.get(resource, 0)
                hosting[node] = host = shared.pods(node) > 0
                available[node] = host or bool(unit_free[node])
            self._log += changed
            self._stale += changed
            changed.clear()  # (not pop(): a set emptied by pops keeps its size, and pop() scans it)
            if len(self._stale) > len(self.nodes):  # (memory stays flat while the arrays are not read)
                self._flush()
            if len(self._log) > MAX_LOG:  # (every status kept is older than that)
                self._log.clear()
                self._statuses.clear()
        intervals = view.free.intervals
        if intervals is not self._intervals:
            self._flush()
            self._intervals = intervals
            unit_free = _members(intervals, self._units)
            moved = (unit_free != self._unit_free).nonzero()[0].tolist()
            self._log += moved
            self._unit_free = unit_free
            usable = self._hosts | unit_free
            for node in moved:
                self._available[node] = bool(usable[node])
            self._ready = usable & (self._free["pods"] >= 1)

    def _flush(self) -> None:
        """Write into the arrays what the lists say of the nodes changed since the last time (`_stale`)."""
        stale = self._stale
        if not stale:
            return
        pods = self._amounts["pods"]
        hosting, available = self._hosting, self._available
        if len(stale) <= FEW_STALE:  # one by one: quicker than building an index array
            columns = [(column, self._amounts[resource]) for resource, column in self._free.items()]
            hosts, ready = self._hosts, self._ready
            for node in stale:
                for column, amounts in columns:
                    column[node] = amounts[node]
                hosts[node] = hosting[node]
                ready[node] = available[node] and pods[node] >= 1
        else:
            nodes = sorted(set(stale))
            index = np.array(nodes, dtype=np.intp)
            for resource, column in self._free.items():
                amounts = self._amounts[resource]
                column[index] = [amounts[node] for node in nodes]
            self._hosts[index] = [hosting[node] for node in nodes]
            self._ready[index] = [available[node] and pods[node] >= 1 for node in nodes]
        stale.clear()

    def _column(self, resource: str) -> Column:
        """The free amounts of a resource, read from the shared nodes the first time a pod asks for it."""
        column = self._free.get(resource)
        if column is None:
            assert self._shared is not None
            self._allocatable[resource] = np.array([n.allocatable.get(resource, 0) for n in self.nodes], np.int64)
            amounts = self._amounts[resource] = [self._shared.free(n.index).get(resource, 0) for n in self.nodes]
            column = self._free[resource] = np.array(amounts, np.int64)
        return column

    def _code(self, reason: str) -> int:
        code = self._codes.get(reason)
        if code is None:
            code = self._codes[reason] = len(self._messages)
            self._messages.append(reason)
        return code

    def _static_codes(self, pod: PodInfo) -> Codes | None:
        """The first static filter each node fails (0: none; None: no node fails any), per pod spec."""
        key = pod.signature.key[1:]  # (node name, selector, affinity terms, tolerations)
        if key in self._static:
            return self._static[key]
        if len(self._static) >= MAX_SPECS:
            self._static.clear()
        plugins = [plugin for plugin in STATIC_FILTERS if plugin.applies(pod)]
        codes = np.zeros(len(self.nodes), dtype=np.int32)
        for node in self.nodes:
            for plugin in plugins:
                why = plugin.filter(pod, node)
                if why is not None:
                    codes[node.index] = self._code(why)
                    break
        result = self._static[key] = codes if codes.any() else None
        return result

    def _status(self, pod: PodInfo) -> _Status | None:
        """Why each node refuses the pod's signature now: kept since it was last tried and brought up to date from
        the nodes changed since, or computed over every node (None: amounts too large to be exact here)."""
        signature = pod.signature
        status = self._statuses.get(signature)
        log = self._log
        if status is not None:
            if len(log) - status.seen <= MAX_CHANGES:
                if len(log) > status.seen:
                    self._update(status)
                return status
            del self._statuses[signature]
        request = pod.request
        if any(abs(amount) >= LIMIT for amount in request.values()):
            return None
        self._flush()
        static = self._static_codes(pod)
        codes = self._refusals(pod, static)
        fitting = set((codes == 0).nonzero()[0].tolist())
        checks = [(self._amounts["pods"], 1, self._code(TOO_MANY_PODS))]
        for resource, amount in request.items():
            self._column(resource)
            checks.append((self._amounts[resource], amount, self._code(insufficient(resource))))
        status = self._statuses[signature] = _Status(
            len(log), codes.tolist(), _count(codes), fitting, len(fitting), None if static is None else static.tolist(),
            checks)
        if len(self._statuses) > MAX_SPECS:
            self._statuses.pop(next(iter(self._statuses)))
        return status

    def _update(self, status: _Status) -> None:
        """Re-read, for one signature, the nodes changed since it was last tried (one by one: they are few)."""
        log, available, static, checks = self._log, self._available, status.static, status.checks
        codes, counts, fitting = status.codes, status.counts, status.fitting
        for node in set(log[status.seen:]):
            if not available[node]:
                code = self._unschedulable
            elif static is not None and static[node]:
                code = static[node]
            else:
                code = 0
                for amounts, least, why in checks:
                    if amounts[node] < least:
                        code = why
                        break
            old = codes[node]
            if code != old:
                codes[node] = code
                counts[old] -= 1
                counts[code] = counts.get(code, 0) + 1
                if not code:
                    fitting.add(node)
                    status.peak = max(status.peak, len(fitting))
                elif not old:
                    fitting.discard(node)
                status.message = ""
        status.seen = len(log)

    def _refusals(self, pod: PodInfo, static: Codes | None) -> Codes:
        """Why each node refuses the pod (0: it fits): the code of its first failing filter, in the plugins' order
        (kube-scheduler counts each node once, for that filter)."""
        codes = np.zeros(len(self.nodes), dtype=np.int32)
        for resource, amount in reversed(list(pod.request.items())):
            codes[self._column(resource) < amount] = self._code(insufficient(resource))
        codes[self._free["pods"] < 1] = self._code(TOO_MANY_PODS)
        if static is not None:
            codes = np.where(static != 0, static, codes)
        codes[~(self._hosts | self._unit_free)] = self._unschedulable
        return codes

    def _reasons(self, counts: dict[int, int]) -> dict[str, int]:
        messages = self._messages
        return {messages[code]: count for code, count in counts.items() if count}


@dataclass(slots=True)
class _Status:
    """Why each node refuses a signature (`_refusals`; 0: it fits), as of the `seen` first entries of the change
    log."""

    seen: int
    codes: list[int]
    counts: dict[int, int]
    """Nodes by refusal code."""
    fitting: set[int]
    """The nodes of code 0."""
    peak: int
    static: list[int] | None
    checks: list[tuple[list[int], int, int]]
    """The free amounts the pod needs, in the filters' order: (amounts by node, least amount, code if below)."""
    message: str = ""
    """kube-scheduler's message when no node fits, once made ("": not made since the counts last changed)."""
    scores: Column | None = None
    """Every node's weighted score, as of the `scored` first entries of the change log (`select`)."""
    scored: int = 0


def _count(codes: Codes) -> dict[int, int]:
    counts = np.bincount(codes)
    return {int(code): int(counts[code]) for code in counts.nonzero()[0].tolist()}


def _members(intervals: tuple[tuple[int, int], ...], ids: npt.NDArray[np.int64]) -> Mask:
    """Which ids are in a set of sorted disjoint intervals."""
    if not intervals:
        return np.zeros(len(ids), dtype=np.bool_)
    bounds = np.array(intervals, dtype=np.int64)
    k = bounds[:, 0].searchsorted(ids, side="right") - 1
    inside: Mask = (k >= 0) & (ids <= bounds[np.maximum(k, 0), 1])
    return inside
