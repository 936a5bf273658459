"""Strict first-come-first-served: the head of the queue starts when it fits; nothing overtakes it."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence

from clustersim.core.decisions import Decision, RejectJob, StartJob
from clustersim.core.events import Event, JobSubmitted
from clustersim.core.state import ClusterView
from clustersim.policies.batch.parts import BACKFILLING, BatchPolicy, Hosts
from clustersim.policies.batch.queue_order import QueueOrder
from clustersim.policies.registry import register_policy


class NoBackfilling:
    """Jobs start in queue order until the first that does not fit; nothing overtakes it."""

    def schedule(
        self, now: float, events: Sequence[Event], view: ClusterView, order: QueueOrder, hosts: Hosts
    ) -> Iterator[Decision]:
        if order.key is not None:
            for job in order.heads(view.pending):
                free = view.free
                if job.nb_res > len(free):
                    return
                yield StartJob(job.key, hosts(free, job.nb_res))
            return
        head = view.head()  # submit order: the live head of the queue (`order.heads`, without its generator)
        while head is not None:
            free = view.free
            if head.nb_res > len(free):
                return
            yield StartJob(head.key, hosts(free, head.nb_res))
            head = view.head()


BACKFILLING.add("none", NoBackfilling)


@register_policy("fcfs")
class Fcfs(BatchPolicy):
    """Start queued jobs in queue order; stop at the first that does not fit."""

    def __init__(self, hosts: str = "lowest"):
        super().__init__("submit", "none", hosts)

    def _reject_then_schedule(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        """Reject a job larger than the platform where batsched's fcfs does: it answers the new jobs one by one in
        submission order, so the rejection comes after the starts of the jobs submitted before it (Batsim then
        receives the starts in that order, which sets when they begin)."""
        capacity = view.platform.nb_resources
        too_large: deque[RejectJob] = deque()
        for event in events:
            if isinstance(event, JobSubmitted) and not 0 < event.job.nb_res <= capacity:
                if event.job.nb_res > 0:
                    too_large.append(RejectJob(event.job.key))
                else:
                    yield RejectJob(event.job.key)  # asks for nothing: no place in batsched's order
        while True:
            # The starts stop at the first job that does not fit: the next job to reject, or a job that waits
            # (then no start follows and the remaining rejections come in order).
            yield from self.schedule(now, events, view)
            if not too_large:
                return
            yield too_large.popleft()
