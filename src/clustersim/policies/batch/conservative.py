"""Conservative backfilling as batsched 1.4's `conservative_bf` does it (`src/algo/conservative_bf.cpp`).

Every queued job holds a place in a time-slice plan (`timeslices.TimeSlices`, batsched's `Schedule`), made by
first fit on the lowest hosts free over the slices it spans. At each decision the plan's present moves to now;
then:

- if no job ended, the jobs just submitted are placed, in queue order, after everything already planned;
- if a job ended (its place is freed), the plan is compressed: every queued job, in queue order, is taken out
  and placed again by first fit, so it may move earlier or onto other hosts (never later: its old place is
  still free when it is placed again).

A job placed in the first slice starts now, on its planned hosts. The queue order is batsched's FCFS: by the
instant the job was submitted, then by job id as a string (`w0!10` before `w0!9`), unless `order` says
otherwise (ties then in that same order).

Where batsched has no rule, clustersim decides: a job without a walltime (SWF requested time -1) is planned
until the end of time, as batsched's `Schedule` plans it (batsched's conservative_bf rejects it); a zero
walltime (with `rjms_delay` 0) is planned as the `Schedule` plans it, over the whole slice it is placed in; a job
the plan cannot hold now (a zero walltime on hosts all taken) waits for the next compression; machines that are
unavailable or asleep are left out of the plan, which is built again when they change.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

from clustersim.core.decisions import Decision, StartJob
from clustersim.core.events import Event, JobSubmitted
from clustersim.core.state import ClusterView
from clustersim.errors import InputError
from clustersim.intervals import IntervalSet
from clustersim.policies.batch.parts import BACKFILLING, BatchPolicy, Hosts, QueueOrder, requested_time
from clustersim.policies.batch.timeslices import TimeSlices
from clustersim.policies.registry import register_policy

RJMS_DELAY = 5.0
"""batsched's default `--rjms_delay`: it plans every job for its walltime plus 5 s (the time it allows the resource
manager to kill a job), so a job holds its hosts 5 s after its walltime in the plan."""


class ConservativeBackfilling:
    """batsched's conservative_bf on a plan kept between calls."""

    def __init__(self, rjms_delay: float = RJMS_DELAY) -> None:
        self.rjms_delay = rjms_delay
        """Seconds added to every walltime in the plan (batsched's `--rjms_delay`)."""
        self._plan: TimeSlices | None = None
        self._usable = IntervalSet()
        """The units the plan is made of: all but unavailable (and, with power states, sleeping) ones."""
        self._queue: list[str] = []
        """Queued jobs' keys in batsched's order."""
        self._running: dict[str, None] = {}
        """The jobs this policy started that were running at its last call."""
        self._released: dict[str, float] = {}
        """When each queued job was submitted (batsched's release date: the instant it was told)."""
        self._sizes: dict[str, tuple[int, float]] = {}
        """Each queued job's number of hosts and walltime in the plan (with `rjms_delay`), read once."""

    @property
    def starts(self) -> dict[str, float]:
        """The planned start of each queued job."""
        plan = self._plan
        return {} if plan is None else {key: plan.start(key) for key in self._queue if key in plan}

    def schedule(
        self, now: float, events: Sequence[Event], view: ClusterView, order: QueueOrder, hosts: Hosts
    ) -> Iterator[Decision]:
        plan, queue, released = self._plan, self._queue, self._released
        pending = view.pending
        submitted = [e.job for e in events if isinstance(e, JobSubmitted) and e.job.key in pending]
        for job in submitted:
            released[job.key] = now
        # Jobs that ended since the last call (the core asks only while jobs are queued, so not from the events).
        running = self._running
        compress = len(running) != len(view.running)
        if compress:
            for key in [k for k in running if k not in view.running]:
                del running[key]
                if plan is not None:
                    plan.remove(key)
        usable = self._usable_units(view)
        if plan is None or usable != self._usable:
            plan = self._rebuild(now, usable, view)
            compress = True
        plan.update_first_slice(now)
        if submitted:
            submitted.sort(key=lambda job: job.key)
            queue += [job.key for job in submitted]
        if len(queue) != len(pending) or order.key is not None:
            queue = self._sorted_queue(view, order)
        if compress:
            placing = list(queue)
        else:
            if order.key is not None:
                by = order.key
                submitted.sort(key=lambda job: (by(job), job.key))
            placing = [job.key for job in submitted]
        started: set[str] = set()
        sizes = self._sizes
        for key in placing:
            size = sizes.get(key)
            if size is None:
                job = pending[key]
                size = sizes[key] = job.nb_res, requested_time(job) + self.rjms_delay
            if plan.replan(key, size[0], size[1], hosts):
                started.add(key)
                self._running[key] = None
                yield StartJob(key, plan.hosts(key))
        if started:
            queue = [key for key in queue if key not in started]
            for key in started:
                del released[key]
                self._sizes.pop(key, None)
        self._queue = queue

    def _usable_units(self, view: ClusterView) -> IntervalSet:
        """The units the plan may use: every unit of an available machine, or with power states (nodes asleep or
        switching are not usable) the free units and those of running jobs."""
        if view.nodes is None:
            usable = view.platform.all_resources
        else:
            usable = IntervalSet([i for running in view.running.values() for i in running.resources.intervals])
            usable = usable | view.free
        unavailable = view.unavailable
        return usable - unavailable if unavailable else usable

    def _rebuild(self, now: float, usable: IntervalSet, view: ClusterView) -> TimeSlices:
        """A new plan on `usable` units holding the running jobs until their walltimes (then compressed)."""
        plan = TimeSlices(now, usable)
        for key, running in view.running.items():
            plan.place_running(key, running.resources & usable, running.expected_end)
        self._plan, self._usable = plan, usable
        return plan

    def _sorted_queue(self, view: ClusterView, order: QueueOrder) -> list[str]:
        """The pending jobs in batsched's order (or by `order`'s key first)."""
        released = self._released
        pending = view.pending
        for key in pending:
            released.setdefault(key, view.now)
        for key in [k for k in released if k not in pending]:
            del released[key]
            self._sizes.pop(key, None)
        if order.key is None:
            return sorted(pending, key=lambda k: (released[k], k))
        by = order.key
        return sorted(pending, key=lambda k: (by(pending[k]), released[k], k))


BACKFILLING.add("conservative", ConservativeBackfilling)


@register_policy("conservative")
class Conservative(BatchPolicy):
    """Conservative backfilling, as batsched's conservative_bf: every queued job holds a place in the plan."""

    def __init__(self, order: str = "submit", hosts: str = "lowest", rjms_delay: float | str = RJMS_DELAY):
        super().__init__(order, "conservative", hosts)
        try:
            delay = float(rjms_delay)
        except ValueError:
            delay = math.nan
        if not 0 <= delay < math.inf:
            raise InputError("policy option rjms_delay", f"'{rjms_delay}' is not a number of seconds >= 0")
        assert isinstance(self.backfilling, ConservativeBackfilling)
        self.backfilling.rjms_delay = delay
