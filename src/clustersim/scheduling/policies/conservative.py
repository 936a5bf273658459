"""Conservative backfilling: every queued job holds a reservation; no job may delay any earlier one.

Reservations are made in queue order on a profile of free-unit counts built from the running jobs' walltimes
and the reservations already held. A job starts when its reservation starts (on the lowest free ids). When a
job ends, reservations are compressed: each job, in queue order, is moved to its earliest
possible start given all the others, which never makes any of them later.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

from clustersim.scheduling.availability import AvailabilityProfile
from clustersim.scheduling.decisions import CallMeLater, Decision, StartJob
from clustersim.scheduling.events import Event, JobCompleted, JobSubmitted
from clustersim.scheduling.policy import Policy
from clustersim.scheduling.registry import POLICIES
from clustersim.state import ClusterView
from clustersim.workload.job import Job


def _duration(job: Job) -> float:
    return math.inf if job.walltime is None else job.walltime


@POLICIES.register("conservative")
class Conservative(Policy):
    """Conservative backfilling with compression whenever a job ends."""

    def __init__(self) -> None:
        self._starts: dict[str, float] = {}
        """Reserved start time of each pending job, by key."""
        self._wake_up = math.inf

    def schedule(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        starts = self._starts
        for key in [k for k in starts if k not in view.pending]:
            del starts[key]  # rejected or started
        profile = AvailabilityProfile(now, view.platform.nb_resources)
        for running in view.running.values():
            profile.add(now, running.expected_end, -len(running.resources))
        reserved = [job for job in view.pending.values() if job.key in starts]
        for job in reserved:
            _hold(profile, starts[job.key], job, -1)
        if any(isinstance(e, JobCompleted) for e in events):
            for job in reserved:
                _hold(profile, starts[job.key], job, +1)
                starts[job.key] = profile.earliest(job.nb_res, _duration(job))
                _hold(profile, starts[job.key], job, -1)
        for event in events:
            if isinstance(event, JobSubmitted) and event.job.key in view.pending:
                job = event.job
                starts[job.key] = profile.earliest(job.nb_res, _duration(job))
                _hold(profile, starts[job.key], job, -1)
        for job in [j for j in view.pending.values() if starts[j.key] <= now]:
            yield StartJob(job.key, view.free.lowest(job.nb_res))
        next_start = min((starts[k] for k in view.pending), default=math.inf)
        if now < next_start < math.inf and next_start != self._wake_up:
            self._wake_up = next_start
            yield CallMeLater(next_start)


def _hold(profile: AvailabilityProfile, start: float, job: Job, sign: int) -> None:
    """Take (sign -1) or give back (sign +1) a job's reserved units on its reserved interval."""
    profile.add(start, start + _duration(job), sign * job.nb_res)
