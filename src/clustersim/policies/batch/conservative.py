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
from clustersim.intervals import IntervalSet
from clustersim.policies.batch.availability import AvailabilityProfile
from clustersim.policies.batch.parts import BACKFILLING, BatchPolicy, Hosts, QueueOrder, requested_time
from clustersim.policies.registry import register_policy
from clustersim.workload.job import Job

_REPLAN = (JobCompleted, MachinesUnavailable, MachinesAvailable)
"""Events after which every reservation is placed again."""


class ConservativeBackfilling:
    """Conservative backfilling with compression whenever a job ends.

    The plan (the profile of running jobs and held reservations) is kept between calls and updated at each
    start, end and new reservation, rather than built again from every running and queued job: the same
    profile as a rebuild on every instant from now on, so the same decisions (tests/test_availability.py).
    """

    def __init__(self) -> None:
        self.starts: dict[str, float] = {}
        """Reserved start time of each pending job, by key."""
        self._wake_up = math.inf
        self._running = AvailabilityProfile(-math.inf, 0)
        """The running jobs only: what compression re-places reservations on."""
        self._ends: dict[str, tuple[float, int]] = {}
        """Expected end and units (outside unavailable machines) of each running job in `_running`."""
        self._unavailable: IntervalSet | None = None
        self._plan = AvailabilityProfile(-math.inf, 0)
        """`_running` with every reservation held."""
        self._held: dict[str, tuple[float, float, int]] = {}
        """The interval (start, end) and units each reserved job holds in `_plan`."""

    def schedule(
        self, now: float, events: Sequence[Event], view: ClusterView, order: QueueOrder, hosts: Hosts
    ) -> Iterator[Decision]:
        starts, held, plan = self.starts, self._held, self._plan
        pending = view.pending
        for key in [k for k in starts if k not in pending]:
            del starts[key]  # rejected or started
        started = self._follow_running(now, view)
        queue = order.jobs(pending)
        reserved = [job for job in queue if job.key in starts]
        if any(isinstance(e, _REPLAN) for e in events):
            # Compression: re-place every reservation in order of its previous start (ties: queue order).
            # Each job's previous slot stays feasible (jobs placed before it only moved earlier, jobs after it
            # are not placed yet), so no reservation ever moves later, unless machines became unavailable.
            self._plan = plan = self._running.copy()
            held.clear()
            reserved.sort(key=lambda job: starts[job.key])
            for job in reserved:
                self._place(plan, job)
        elif started is None:
            self._plan = plan = self._running.copy()
            held.clear()
            for job in reserved:
                self._hold(plan, max(starts[job.key], now), job)
        else:
            # Nothing ended: the plan moves to now, gives back the units held by jobs that started or left
            # and takes the started jobs' running intervals; a reservation already due is held from now.
            plan.advance(now)
            for key in [k for k in held if k not in starts]:
                start, end, nb_res = held.pop(key)
                plan.add(start, end, nb_res)
            for end, units in started:
                plan.add(now, end, -units)
            for job in reserved:
                start, end, nb_res = held[job.key]
                if start < now:
                    plan.add(start, end, nb_res)
                    self._hold(plan, now, job)
        for job in queue:
            if job.key not in starts:
                self._place(plan, job)
        for job in queue:
            # Unreserved (instantaneous) jobs start whenever their units are free. A reserved job they keep
            # waiting is re-planned, at this same instant, when they end.
            if starts.get(job.key, now) <= now and job.nb_res <= len(view.free):
                yield StartJob(job.key, hosts(view.free, job.nb_res))
        next_start = min(starts.values(), default=math.inf)
        if now < next_start < math.inf and next_start != self._wake_up:
            self._wake_up = next_start
            yield CallMeLater(next_start)

    def _follow_running(self, now: float, view: ClusterView) -> list[tuple[float, int]] | None:
        """Bring the running jobs' profile to now. Returns the expected end and units of each job started
        since the last call, or None when a job ended or the profile was built again (machines changed)."""
        unavailable = view.unavailable  # never free in the plan: the machines may come back, no one knows when
        running, ends, profile = view.running, self._ends, self._running
        changed = unavailable != self._unavailable
        if changed:
            self._unavailable = unavailable
            self._running = profile = AvailabilityProfile(now, view.platform.nb_resources - len(unavailable))
            ends.clear()
        else:
            profile.advance(now)
        new_keys = [k for k in running if k not in ends]
        ended = [k for k in ends if k not in running] if len(ends) + len(new_keys) != len(running) else []
        for key in ended:
            end, units = ends.pop(key)
            profile.add(now, end, units)
        started: list[tuple[float, int]] = []
        for key in new_keys:
            job = running[key]
            units = len(job.resources - unavailable)
            ends[key] = (job.expected_end, units)
            profile.add(now, job.expected_end, -units)
            started.append((job.expected_end, units))
        return None if changed or ended else started

    def _place(self, plan: AvailabilityProfile, job: Job) -> None:
        """Reserve the job's earliest slot, unless the job is instantaneous.

        A job whose walltime vanishes next to now or its start time (0, or so small that t + walltime == t)
        would hold an empty interval: it ends the instant it starts, so it delays nobody and gets no
        reservation; it starts whenever its units are free.
        """
        duration = requested_time(job)
        start = plan.earliest(job.nb_res, duration)
        now = plan.times[0]
        if now + duration == now or (start != math.inf and start + duration == start):
            self.starts.pop(job.key, None)
            return
        self.starts[job.key] = start
        self._hold(plan, start, job)

    def _hold(self, plan: AvailabilityProfile, start: float, job: Job) -> None:
        """Take a job's units on its reserved interval."""
        end = start + requested_time(job)
        self._held[job.key] = (start, end, job.nb_res)
        plan.add(start, end, -job.nb_res)



BACKFILLING.add("conservative", ConservativeBackfilling)


@register_policy("conservative")
class Conservative(BatchPolicy):
    """Conservative backfilling: every queued job holds a reservation (submit order unless `order` says)."""

    def __init__(self, order: str = "submit", hosts: str = "lowest"):
        super().__init__(order, "conservative", hosts)
