"""Strict first-come-first-served: the head of the queue starts when it fits; nothing overtakes it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from clustersim.core.decisions import Decision, StartJob
from clustersim.core.events import Event
from clustersim.core.state import ClusterView
from clustersim.policies.base import Policy
from clustersim.policies.registry import POLICIES


@POLICIES.register("fcfs")
class Fcfs(Policy):
    """Start queued jobs in queue order on the lowest free ids; stop at the first that does not fit."""

    def schedule(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        pending = view.pending
        while pending:
            head = next(iter(pending.values()))
            free = view.free
            if head.nb_res > len(free):
                return
            yield StartJob(head.key, free.lowest(head.nb_res))
