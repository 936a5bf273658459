"""`TimeSlices` (policies/batch/timeslices.py) against a line-by-line model of batsched 1.4's `Schedule`
(src/schedule.cpp: a list of slices each holding its jobs and free hosts, merged when two neighbours hold the same
jobs).

`TimeSlices` keeps no job list per slice (it counts the jobs starting or ending at each boundary) and places a
job again without taking it out when its place does not change; random sequences of placements, removals,
compressions and moves of the present must give the model's slices and the model's places, walltimes of zero
(batsched holds the hosts over the whole slice the job is placed in, and over the slices later cut out of it) and
without walltime (until batsched's horizon) included.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from functools import reduce
from itertools import accumulate
from operator import and_

from hypothesis import example, given, settings
from hypothesis import strategies as st

from clustersim.intervals import IntervalSet
from clustersim.policies.batch import timeslices
from clustersim.policies.batch.timeslices import Placement, TimeSlices
from clustersim.policies.sorted_search import first_after, first_from

NB_HOSTS = 6
HORIZON = 1e19
"""batsched's last slice ends here."""


@dataclass
class Slice:
    begin: float
    end: float
    free: IntervalSet
    jobs: dict[str, IntervalSet] = field(default_factory=dict)


class ScheduleModel:
    """batsched's Schedule, as written in C++ (add_job_first_fit, remove_job_internal, update_first_slice)."""

    def __init__(self, now: float, nb_hosts: int = NB_HOSTS):
        self.slices = [Slice(now, HORIZON, IntervalSet.range(0, nb_hosts))]

    def update_first_slice(self, now: float) -> None:
        assert self.slices[0].begin <= now <= self.slices[0].end
        self.slices[0].begin = now

    def add(self, key: str, nb_res: int, walltime: float) -> Placement | None:
        """A job without walltime (infinite) lasts until the horizon from each slice tried, as batsched sets it."""
        slices = self.slices
        unlimited = walltime == math.inf
        for i, first in enumerate(slices):
            if len(first.free) < nb_res:
                continue
            if unlimited:
                walltime = HORIZON - first.begin
            available, total = first.free, first.end - first.begin
            k = i
            while total < walltime:
                k += 1
                if k == len(slices) or len(slices[k].free) < nb_res:
                    break
                available, total = available & slices[k].free, total + slices[k].end - slices[k].begin
                if len(available) < nb_res:
                    break
            if total >= walltime and len(available) >= nb_res:
                hosts = available.lowest(nb_res)
                self._split(k, first.begin + walltime)
                for s in slices[i:k + 1]:
                    s.free, s.jobs[key] = s.free - hosts, hosts
                return Placement(first.begin, hosts.mask, i == 0)
        return None

    def _split(self, k: int, date: float) -> None:
        s = self.slices[k]
        if s.begin < date < s.end:
            self.slices.insert(k + 1, Slice(date, s.end, s.free, dict(s.jobs)))
            s.end = date

    def remove(self, key: str) -> None:
        slices = self.slices
        i = next((i for i, s in enumerate(slices) if key in s.jobs), None)
        if i is None:
            return
        hosts = slices[i].jobs[key]
        while i < len(slices) and key in slices[i].jobs:
            del slices[i].jobs[key]
            slices[i].free = slices[i].free | hosts
            i = self._merge(i) + 1
        if i < len(slices):
            self._merge(i)

    def _merge(self, i: int) -> int:
        """Merge slice i into the one before when both hold the same jobs; returns the index of the result."""
        slices = self.slices
        if i > 0 and slices[i - 1].jobs.keys() == slices[i].jobs.keys():
            assert slices[i - 1].free == slices[i].free
            slices[i].begin = slices[i - 1].begin
            del slices[i - 1]
            return i - 1
        return i


def _same(plan: TimeSlices, model: ScheduleModel) -> None:
    assert plan.slices() == [(s.begin, s.free) for s in model.slices]
    assert plan.counts == [len(s.free) for s in model.slices]


_operations = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(1, NB_HOSTS), st.sampled_from([0.0, 1.0, 2.0, 3.0, 5.0, 8.0, math.inf])),
        st.tuples(st.just("remove"), st.integers(0, 30), st.just(0.0)),
        st.tuples(st.just("compress"), st.just(0), st.just(0.0)),
        st.tuples(st.just("advance"), st.just(0), st.sampled_from([0.0, 0.5, 1.0])),
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(_operations)
# A zero walltime placed in a first slice of zero length holds that slice's end; a slice cut out of a zero
# walltime's slice is held too.
@example([("add", 1, 0.0), ("add", 1, 1.0), ("advance", 0, 1.0), ("compress", 0, 0.0)])
@example([("add", 1, 0.0), ("add", 1, 1.0), ("remove", 0, 0.0)])
def test_time_slices_plan_as_batsched_schedule(operations: list[tuple[str, int, float]]) -> None:
    """Same slices (begins, free hosts) and same places after every operation; compression re-places every
    planned job in order, as conservative_bf does when a job ends."""
    plan, model = TimeSlices(0.0, IntervalSet.range(0, NB_HOSTS)), ScheduleModel(0.0)
    jobs: dict[str, tuple[int, float]] = {}
    now = 0.0
    for kind, size, value in operations:
        if kind == "add":
            key = f"j{len(jobs)}"
            jobs[key] = (size, value)
            assert plan.add(key, size, value) == model.add(key, size, value)
        elif kind == "remove" and jobs:
            key = list(jobs)[size % len(jobs)]
            plan.remove(key)
            model.remove(key)
        elif kind == "compress":
            for key, (nb_res, walltime) in jobs.items():
                model.remove(key)
                assert plan.replace(key, nb_res, walltime) == model.add(key, nb_res, walltime)
        elif kind == "advance":
            now = min(now + value, model.slices[0].end)
            plan.update_first_slice(now)
            model.update_first_slice(now)
        _same(plan, model)


_busy_operations = st.lists(
    st.one_of(
        st.tuples(st.just("submit"), st.integers(1, 12), st.sampled_from([1.0, 2.0, 3.0, 4.0, 7.0, 10.0, math.inf])),
        st.tuples(st.just("submit"), st.integers(1, 6), st.sampled_from([1.0, 2.0, 5.0, 9.0])),
        st.tuples(st.just("end"), st.integers(0, 60), st.just(0.0)),
        st.tuples(st.just("advance"), st.just(0), st.sampled_from([0.0, 0.5, 1.0, 2.0])),
    ),
    min_size=10,
    max_size=80,
)


@settings(max_examples=300, deadline=None)
@given(_busy_operations)
def test_skipping_jobs_that_cannot_move_gives_the_full_compression(operations: list[tuple[str, int, float]]) -> None:
    """A compression that skips the jobs no freed region can move (`TimeSlices.prune`, the log of freed regions)
    leaves the same plan and the same places as placing every job again by the full search, as conservative_bf
    uses it: jobs submitted are placed at the end, a job that ends (even early) is taken out and every waiting
    job is placed again in order; jobs placed in the first slice start and are no longer placed again; time
    passes between. Both give batsched's Schedule's places (the model), on plans whose jobs span many slices.
    The runs refresh freed regions on the current plan after moves (a few thousand times over the examples),
    among them regions filled again by moved jobs, which then move no job."""
    hosts = IntervalSet.range(0, 12)
    pruned, full, model = TimeSlices(0.0, hosts), TimeSlices(0.0, hosts), ScheduleModel(0.0, 12)
    full.prune = False
    pruned.prune_from = 0  # skip in plans of any size (the default skips only in plans of over 64 slices)
    waiting: dict[str, tuple[int, float]] = {}
    running: list[str] = []
    now, count = 0.0, 0
    for kind, size, value in operations:
        placing: list[str] = []
        if kind == "submit":
            key = f"j{count}"
            count += 1
            waiting[key] = (size, value)
            placing = [key]
        elif kind == "end" and running:
            key = running.pop(size % len(running))
            assert pruned.remove(key) == full.remove(key)
            model.remove(key)
            placing = list(waiting)
        elif kind == "advance":
            now = min(now + value, pruned.begins[1] if len(pruned.begins) > 1 else now + value)
            pruned.update_first_slice(now)
            full.update_first_slice(now)
            model.update_first_slice(now)
        for key in placing:
            nb_res, walltime = waiting[key]
            placed = pruned.replace(key, nb_res, walltime)
            assert placed == full.replace(key, nb_res, walltime)
            model.remove(key)
            assert placed == model.add(key, nb_res, walltime)
            if placed is not None and placed.now:
                del waiting[key]
                running.append(key)
        assert pruned.slices() == full.slices()
        assert pruned.counts == full.counts
        _same(full, model)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([0.0, 1.0, 2.0, 2.0, 3.5, 7.0, math.inf]), max_size=12), st.floats(-1.0, 8.0),
       st.integers(0, 12), st.integers(0, 12))
def test_compiled_searches_are_bisect(values: list[float], t: float, lo: int, hi: int) -> None:
    """The loops the compiled plan searches its slices' beginnings and counts with give what `bisect` and `max`
    give (the pure path calls those)."""
    begins = sorted(values)
    lo, hi = min(lo, len(begins)), min(hi, len(begins))
    assert first_after(begins, t, lo, hi) == bisect.bisect_right(begins, t, lo, max(lo, hi))
    assert first_from(begins, t, lo, hi) == bisect.bisect_left(begins, t, lo, max(lo, hi))
    counts = [int(v) if v < math.inf else 9 for v in values]
    for nb_res in range(1, 10):
        assert timeslices._reaches(counts, lo, hi, nb_res) == (lo < hi and max(counts[lo:hi]) >= nb_res)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 255), min_size=1, max_size=10), st.integers(0, 10), st.integers(0, 10),
       st.integers(0, 255), st.integers(1, 8))
def test_compiled_span_check_is_the_accumulated_one(
    free: list[int], own_from: int, own_to: int, own_hosts: int, nb_res: int
) -> None:
    """The compiled first fit's span check (`_narrowed`) finds the slice where the intersections from the span's
    end get too few hosts, as the pure path's accumulated intersections do, and the whole span's intersection."""
    own_from, own_to = min(own_from, own_to), max(own_from, own_to)
    for i in range(len(free)):
        k = len(free)
        span = [f | own_hosts if own_from <= s < own_to else f for s, f in enumerate(free)][i:k]
        ands = list(accumulate(reversed(span), and_))
        fitting = sum(1 for a in ands if a.bit_count() >= nb_res)
        s, along = timeslices._narrowed(free, i, k, own_from, own_to, own_hosts, nb_res)
        assert s == k - 1 - fitting
        if fitting == k - i:
            assert along == reduce(and_, span)
