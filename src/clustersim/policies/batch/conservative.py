"""Conservative backfilling: every queued job holds a reservation; no job may delay any earlier one.

Reservations are made in queue order on a profile of free-unit counts built from the running jobs' walltimes
and the reservations already held. A job starts when its reservation starts (on the lowest free ids). When a
job ends, reservations are compressed: re-placed at their earliest start, in order of their previous start,
which never makes any of them later. Instantaneous jobs get no reservation (see `_place`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

from clustersim.core.decisions import CallMeLater, Decision, StartJob
from clustersim.core.events import Event, JobCompleted, MachinesAvailable, MachinesUnavailable
from clustersim.core.state import ClusterView
from clustersim.policies.batch.availability import AvailabilityProfile
from clustersim.policies.batch.parts import BACKFILLING, BatchPolicy, Hosts, QueueOrder, requested_time
from clustersim.policies.registry import register_policy
from clustersim.workload.job import Job

_REPLAN = (JobCompleted, MachinesUnavailable, MachinesAvailable)
"""Events after which every reservation is placed again."""


class ConservativeBackfilling:
    """Conservative backfilling with compression whenever a job ends."""

    def __init__(self) -> None:
        self.starts: dict[str, float] = {}
        """Reserved start time of each pending job, by key."""
        self._wake_up = math.inf

    def schedule(
        self, now: float, events: Sequence[Event], view: ClusterView, order: QueueOrder, hosts: Hosts
    ) -> Iterator[Decision]:
        starts = self.starts
        for key in [k for k in starts if k not in view.pending]:
            del starts[key]  # rejected or started
        unavailable = view.unavailable  # never free in the plan: the machines may come back, no one knows when
        profile = AvailabilityProfile(now, view.platform.nb_resources - len(unavailable))
        for running in view.running.values():
            profile.add(now, running.expected_end, -len(running.resources - unavailable))
        queue = order.jobs(view.pending)
        reserved = [job for job in queue if job.key in starts]
        if any(isinstance(e, _REPLAN) for e in events):
            # Compression: re-place every reservation in order of its previous start (ties: queue order).
            # Each job's previous slot stays feasible (jobs placed before it only moved earlier, jobs after it
            # are not placed yet), so no reservation ever moves later, unless machines became unavailable.
            reserved.sort(key=lambda job: starts[job.key])
            for job in reserved:
                self._place(profile, job)
        else:
            for job in reserved:
                _hold(profile, max(starts[job.key], now), job)
        for job in queue:
            if job.key not in starts:
                self._place(profile, job)
        for job in queue:
            # Unreserved (instantaneous) jobs start whenever their units are free. A reserved job they keep
            # waiting is re-planned, at this same instant, when they end.
            if starts.get(job.key, now) <= now and job.nb_res <= len(view.free):
                yield StartJob(job.key, hosts(view.free, job.nb_res))
        next_start = min(starts.values(), default=math.inf)
        if now < next_start < math.inf and next_start != self._wake_up:
            self._wake_up = next_start
            yield CallMeLater(next_start)

    def _place(self, profile: AvailabilityProfile, job: Job) -> None:
        """Reserve the job's earliest slot, unless the job is instantaneous.

        A job whose walltime vanishes next to now or its start time (0, or so small that t + walltime == t)
        would hold an empty interval: it ends the instant it starts, so it delays nobody and gets no
        reservation; it starts whenever its units are free.
        """
        duration = requested_time(job)
        start = profile.earliest(job.nb_res, duration)
        now = profile.times[0]
        if now + duration == now or (start != math.inf and start + duration == start):
            self.starts.pop(job.key, None)
            return
        self.starts[job.key] = start
        _hold(profile, start, job)


def _hold(profile: AvailabilityProfile, start: float, job: Job) -> None:
    """Take a job's units on its reserved interval."""
    profile.add(start, start + requested_time(job), -job.nb_res)


BACKFILLING.add("conservative", ConservativeBackfilling)


@register_policy("conservative")
class Conservative(BatchPolicy):
    """Conservative backfilling: every queued job holds a reservation (submit order unless `order` says)."""

    def __init__(self, order: str = "submit", hosts: str = "lowest"):
        super().__init__(order, "conservative", hosts)
