"""Largest job first with EASY backfilling: a policy written outside clustersim, with its public API only.

Run it from the directory that holds this file (or with that directory on PYTHONPATH):

    clustersim run --policy largest_first:LargestFirst -w workload.json -o out/

The queue is ordered by size, largest first (ties keep submission order). Jobs start from the head while they
fit. The first that does not fit gets a reservation: the earliest time enough units are free by the running
jobs' walltimes (the shadow time), leaving `extra` units spare then. A later job may start now if it fits now
and either ends (by its walltime) before the shadow time or uses no more than the spare units.

Jobs that can never fit need no code here: `create_policy` rejects them before this process sees them.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

from clustersim import ClusterView, Decision, Event, Job, StartJob


class LargestFirst:
    """A decision process: the core calls `begin`, then `decide` at every instant something happened, then `end`."""

    def begin(self, view: ClusterView) -> None:
        """Nothing to set up."""

    def end(self, view: ClusterView) -> None:
        """Nothing to release."""

    def decide(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        # A generator: the core applies each decision as it is yielded, so `view.free` shrinks as jobs start.
        queue = sorted(view.pending.values(), key=lambda job: -job.nb_res)
        while queue and queue[0].nb_res <= len(view.free):
            job = queue.pop(0)
            yield StartJob(job.key, view.free.lowest(job.nb_res))
        if not queue:
            return
        shadow, extra = _reservation(queue[0], view)
        for job in queue[1:]:
            if job.nb_res > len(view.free):
                continue
            ends = now + (math.inf if job.walltime is None else job.walltime)
            if ends <= shadow or job.nb_res <= extra:
                if ends > shadow:
                    extra -= job.nb_res
                yield StartJob(job.key, view.free.lowest(job.nb_res))


def _reservation(head: Job, view: ClusterView) -> tuple[float, int]:
    """When `head` can start by the running jobs' walltimes, and how many units are spare then."""
    available = len(view.free)
    for running in sorted(view.running.values(), key=lambda r: r.expected_end):
        available += len(running.resources)
        if available >= head.nb_res:
            return running.expected_end, available - head.nb_res
    return math.inf, 0
