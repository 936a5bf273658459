"""The parts batch policies are composed of: a queue order, a backfilling strategy, a host selection.

`fcfs` is (submit order, no backfilling, lowest ids), `sjf` (shortest first, none, lowest), `easy` (submit,
EASY, lowest), `conservative` (submit, conservative, lowest); `batch` takes any three by name:

    clustersim run --policy easy --policy-option order=largest-first
    clustersim run --policy batch --policy-option order=smallest-first --policy-option backfilling=conservative

Each part is a plugin in its own registry (`ORDERS`, `BACKFILLING`, `HOSTS`), so a new one is a few lines.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from typing import Protocol

from clustersim.core.decisions import Decision
from clustersim.core.events import Event
from clustersim.core.state import ClusterView
from clustersim.intervals import IntervalSet
from clustersim.plugins import Registry
from clustersim.policies.base import Policy
from clustersim.policies.batch.entry import ComposedCall
from clustersim.policies.batch.queue_order import QueueOrder as QueueOrder  # re-exported: a part of batch policies
from clustersim.policies.registry import register_policy
from clustersim.workload.job import Job

Hosts = Callable[[IntervalSet, int], IntervalSet]
"""A host selection: which `count` of the candidate units a job takes (there are always enough)."""



class Backfilling(Protocol):
    """How jobs may start out of queue order. One instance per run: it may keep state between calls."""

    def schedule(
        self, now: float, events: Sequence[Event], view: ClusterView, order: QueueOrder, hosts: Hosts
    ) -> Iterator[Decision]: ...


def requested_time(job: Job) -> float:
    """A job's walltime; unlimited when it has none."""
    return math.inf if job.walltime is None else job.walltime


ORDERS: Registry[QueueOrder] = Registry("queue order", group="clustersim.queue_orders")
ORDERS.add("submit", QueueOrder())
ORDERS.add("shortest-first", QueueOrder(requested_time))
ORDERS.add("largest-first", QueueOrder(lambda job: -job.nb_res))
ORDERS.add("smallest-first", QueueOrder(lambda job: job.nb_res))


def highest(candidates: IntervalSet, count: int) -> IntervalSet:
    """The `count` largest ids of `candidates`."""
    result: list[tuple[int, int]] = []
    for lo, hi in reversed(candidates.intervals):
        if count <= 0:
            break
        take = min(count, hi - lo + 1)
        result.append((hi - take + 1, hi))
        count -= take
    return IntervalSet(reversed(result))


HOSTS: Registry[Hosts] = Registry("host selection", group="clustersim.host_selections")
HOSTS.add("lowest", IntervalSet.lowest)
HOSTS.add("highest", highest)

BACKFILLING: Registry[Callable[[], Backfilling]] = Registry(
    "backfilling", group="clustersim.backfilling", builtins="clustersim.policies.builtin"
)
"""`none` (fcfs.py), `easy`, `conservative`: registered by the modules that define them."""


class BatchPolicy(Policy):
    """A batch policy composed of a queue order, a backfilling strategy and a host selection, by name."""

    def __init__(self, order: str = "submit", backfilling: str = "none", hosts: str = "lowest"):
        self.order = ORDERS.get(order)
        self.backfilling = BACKFILLING.get(backfilling)()
        self.hosts = HOSTS.get(hosts)
        if type(self).decide is Policy.decide and type(self).schedule is BatchPolicy.schedule:
            # The two Python frames of every call (`decide`, then `schedule` below) as one compiled call that
            # takes the same steps; a subclass overriding either keeps the methods.
            self.decide = ComposedCall(self).decide  # type: ignore[method-assign]

    def schedule(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        return self.backfilling.schedule(now, events, view, self.order, self.hosts)


@register_policy("batch")
class Batch(BatchPolicy):
    """Any queue order, backfilling and host selection, by name: `order`, `backfilling`, `hosts` options."""
