"""Strict first-come-first-served: the head of the queue starts when it fits; nothing overtakes it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from clustersim.core.decisions import Decision, StartJob
from clustersim.core.events import Event
from clustersim.core.state import ClusterView
from clustersim.policies.batch.parts import BACKFILLING, BatchPolicy, Hosts
from clustersim.policies.batch.queue_order import QueueOrder
from clustersim.policies.registry import register_policy


class NoBackfilling:
    """Jobs start in queue order until the first that does not fit; nothing overtakes it."""

    def schedule(
        self, now: float, events: Sequence[Event], view: ClusterView, order: QueueOrder, hosts: Hosts
    ) -> Iterator[Decision]:
        for job in order.heads(view.pending):
            free = view.free
            if job.nb_res > len(free):
                return
            yield StartJob(job.key, hosts(free, job.nb_res))


BACKFILLING.add("none", NoBackfilling)


@register_policy("fcfs")
class Fcfs(BatchPolicy):
    """Start queued jobs in queue order; stop at the first that does not fit."""

    def __init__(self, hosts: str = "lowest"):
        super().__init__("submit", "none", hosts)
