"""Shortest job first by requested time (walltime), without backfilling."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

from clustersim.core.decisions import Decision, StartJob
from clustersim.core.events import Event
from clustersim.core.state import ClusterView
from clustersim.policies.base import Policy
from clustersim.policies.registry import POLICIES
from clustersim.workload.job import Job


def _requested_time(job: Job) -> float:
    return math.inf if job.walltime is None else job.walltime


@POLICIES.register("sjf")
class Sjf(Policy):
    """Queue ordered by requested time (ties keep queue order); stop at the first job that does not fit."""

    def schedule(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        for job in sorted(view.pending.values(), key=_requested_time):
            free = view.free
            if job.nb_res > len(free):
                return
            yield StartJob(job.key, free.lowest(job.nb_res))
