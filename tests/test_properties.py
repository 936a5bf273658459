"""Properties every schedule must have, checked on random small platforms and workloads with Hypothesis.

Each case is a platform of 1..16 nodes (sometimes of heterogeneous speeds, sometimes allocating cores) and a
workload of 1..40 jobs whose submit times often collide, whose sizes sometimes exceed the platform (they must
be rejected) and whose walltimes are sometimes shorter than their run time (they must be killed at it).
Every built-in policy runs each case; the assertions are made on the job outcomes the core emits and on what
the decision process was told. Examples are derandomized so the suite is deterministic; set
CLUSTERSIM_HYPOTHESIS_EXAMPLES (and CLUSTERSIM_HYPOTHESIS_RANDOM=1) to search harder.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from clustersim.core.decisions import Decision
from clustersim.core.events import Event, FinalState, JobCompleted, JobSubmitted, NoMoreJobs, RequestedCall
from clustersim.core.interface import DecisionProcess
from clustersim.core.outcome import JobOutcome
from clustersim.core.simulation import Delivery, RunSummary, Simulation
from clustersim.core.state import ClusterView
from clustersim.intervals import IntervalSet
from clustersim.platform.model import Node, Platform, Unit
from clustersim.policies.base import Policy
from clustersim.policies.batch.conservative import Conservative
from clustersim.policies.batch.easy import Easy, EasyBackfilling, _Held, reserve
from clustersim.policies.batch.parts import QueueOrder
from clustersim.policies.registry import create_policy
from clustersim.runner import simulate
from clustersim.workload.job import Job, id_order
from clustersim.workload.profiles import Delay, ParallelHomogeneous, Profile
from clustersim.workload.stream import Workload

POLICIES = ["fcfs", "easy", "conservative", "sjf"]

PROPERTY_SETTINGS = settings(
    max_examples=int(os.environ.get("CLUSTERSIM_HYPOTHESIS_EXAMPLES", "60")),
    derandomize=os.environ.get("CLUSTERSIM_HYPOTHESIS_RANDOM", "") != "1",
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# -- cases ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """A platform and the jobs of a workload (kept as a tuple so the case can be run several times)."""

    platform: Platform
    jobs: tuple[Job, ...]

    def workload(self) -> Workload:
        return Workload.from_jobs(self.jobs)

    @property
    def nb_resources(self) -> int:
        return self.platform.nb_resources


SPEEDS = (0.5, 1.0, 2.0, 3.0, 4.0)


@st.composite
def platforms(draw: st.DrawFn) -> Platform:
    nb_nodes = draw(st.integers(1, 16))
    heterogeneous = draw(st.booleans())
    by_core = draw(st.integers(0, 3)) == 0
    nodes = [
        Node(
            i,
            f"h{i}",
            cores=draw(st.integers(1, 3)) if by_core else 1,
            speed=draw(st.sampled_from(SPEEDS)) if heterogeneous else 1.0,
        )
        for i in range(nb_nodes)
    ]
    return Platform(nodes, Unit.CORE if by_core else Unit.HOST)


submit_times = st.one_of(
    st.integers(0, 12).map(float),  # small integers: many jobs submitted at the same instant
    st.integers(0, 48).map(lambda q: q / 4),  # quarters: exact fractions that can collide with integers
    st.floats(0, 12, allow_nan=False, allow_infinity=False),
)
durations = st.one_of(
    st.integers(0, 50).map(float),
    st.floats(0, 50, allow_nan=False, allow_infinity=False),
)
walltimes = st.one_of(st.none(), st.integers(0, 60).map(float), st.floats(0, 60, allow_nan=False))


@st.composite
def profiles(draw: st.DrawFn) -> Profile:
    amount = draw(durations)
    if draw(st.booleans()):
        return Delay(amount)
    return ParallelHomogeneous(amount)


@st.composite
def cases(draw: st.DrawFn) -> Case:
    platform = draw(platforms())
    nb_jobs = draw(st.integers(1, 40))
    capacity = platform.nb_resources
    jobs = tuple(
        Job(
            str(i),
            draw(submit_times),
            draw(st.integers(1, capacity + 2)),
            draw(profiles()),
            draw(walltimes),
        )
        for i in range(nb_jobs)
    )
    return Case(platform, jobs)


def hosts(nb: int, speeds: Sequence[float] = ()) -> Platform:
    return Platform([Node(i, f"h{i}", speed=speeds[i] if speeds else 1.0) for i in range(nb)])


# Smallest cases of conservative-backfilling bugs these properties found (see the regressions at the end).
# A zero-walltime reservation held nothing in the availability profile, so two jobs reserved "now" were both
# started on the same units (DecisionError; fixed since).
ZERO_WALLTIME_SHARES_UNITS = Case(
    hosts(1), (Job("0", 0.0, 1, Delay(0.0), 0.0), Job("1", 0.0, 1, Delay(0.0), None))
)
# Job 2 (unbounded walltime) is queued after the zero-walltime jobs 0 and 1. When 0 ends, compression re-places
# 2 at t=0 first, then 1 finds the unit held forever (a reservation at t=inf), and 2 overtakes it: 1 waits for 2
# to end at t=50 (forever, had 2 no end). FCFS and EASY start all three at t=0.
ZERO_WALLTIME_OVERTAKEN = Case(
    hosts(1),
    (Job("0", 0.0, 1, Delay(0.0), 0.0), Job("1", 0.0, 1, Delay(0.0), 0.0), Job("2", 0.0, 1, Delay(50.0), None)),
)

# With rjms_delay=0 a walltime of 0 plans a job of zero length. At t=2 job 3 (walltime 0, both hosts) was placed in
# the plan's first slice, of zero length since job 5 was reserved from t=2, without holding that slice's end; job
# 5, placed again, took that end away and was put in the first slice: it started on a host job 3 had just got
# (DecisionError). Jobs 0, 1, 2 and 5 have no walltime, 4 has 1 s.
RJMS_ZERO_DOUBLE_BOOKED = Case(
    hosts(2),
    (
        Job("0", 0.0, 1, Delay(0.0)),
        Job("1", 0.0, 1, Delay(0.0)),
        Job("2", 0.0, 1, Delay(2.0)),
        Job("3", 0.0, 2, Delay(0.0), 0.0),
        Job("4", 1.0, 1, Delay(1.0), 1.0),
        Job("5", 1.0, 1, Delay(0.0)),
    ),
)


# -- running ---------------------------------------------------------------------------------------------------


@dataclass
class Call:
    now: float
    view_now: float
    events: tuple[Event, ...]


class Recording:
    """A decision process that forwards to a policy and records when it was asked and what it was told."""

    def __init__(self, inner: DecisionProcess):
        self.inner = inner
        self.calls: list[Call] = []

    def begin(self, view: ClusterView) -> None:
        self.inner.begin(view)

    def decide(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        self.calls.append(Call(now, view.now, tuple(events)))
        yield from self.inner.decide(now, events, view)

    def end(self, view: ClusterView) -> None:
        self.inner.end(view)


@dataclass
class Collect:
    """An outcome sink that keeps every outcome, in the order the core emits them."""

    outcomes: list[JobOutcome] = field(default_factory=list)
    closed: int = 0

    def record(self, outcome: JobOutcome) -> None:
        self.outcomes.append(outcome)

    def close(self) -> None:
        self.closed += 1


@dataclass
class Run:
    case: Case
    summary: RunSummary
    outcomes: list[JobOutcome]
    calls: list[Call]

    def by_key(self) -> dict[str, JobOutcome]:
        return {o.job.key: o for o in self.outcomes}


def run(case: Case, policy: Policy | str) -> Run:
    process = Recording(create_policy(policy) if isinstance(policy, str) else policy)
    sink = Collect()
    summary = Simulation(case.platform, case.workload(), process, [sink]).run()
    assert sink.closed == 1, "sinks are closed exactly once"
    return Run(case, summary, sink.outcomes, process.calls)


# -- the rules every schedule obeys ---------------------------------------------------------------------------


def check_each_job_ends_once(r: Run) -> None:
    keys = [o.job.key for o in r.outcomes]
    assert len(keys) == len(set(keys)), f"a job ended twice: {sorted(k for k in keys if keys.count(k) > 1)}"
    assert sorted(keys) == sorted(j.key for j in r.case.jobs), "every submitted job has exactly one outcome"
    assert r.summary.nb_submitted == len(r.case.jobs)
    assert r.summary.unfinished == []


def check_oversized_jobs_rejected_and_only_them(r: Run) -> None:
    capacity = r.case.nb_resources
    for o in r.outcomes:
        if o.job.nb_res > capacity:
            assert o.state is FinalState.REJECTED, f"{o.job.key} asks {o.job.nb_res} > {capacity} units"
            assert (o.start, o.finish, len(o.resources)) == (None, None, 0)
        else:
            assert o.state is not FinalState.REJECTED, f"{o.job.key} fits the platform but was rejected"


def check_allocation_has_exactly_nb_res_valid_units(r: Run) -> None:
    capacity = r.case.nb_resources
    for o in r.outcomes:
        if o.ran:
            assert len(o.resources) == o.job.nb_res, f"{o.job.key} got {o.resources}"
            assert o.resources and min(o.resources) >= 0 and o.resources.max() < capacity


def check_times_follow_profile_and_walltime(r: Run) -> None:
    platform = r.case.platform
    for o in r.outcomes:
        if not o.ran:
            continue
        job = o.job
        assert o.start is not None and o.finish is not None
        assert o.start >= job.submit_time, f"{job.key} started at {o.start} before its submission"
        runtime = job.profile.runtime(job.nb_res, platform.min_speed(o.resources))
        # Batsim: a delay job whose delay reaches its walltime is killed at it; other profiles must exceed it.
        walltime = math.inf if job.walltime is None else job.walltime
        killed = runtime >= walltime if isinstance(job.profile, Delay) else runtime > walltime
        if killed:
            assert job.walltime is not None
            assert o.finish == o.start + job.walltime, f"{job.key} must be killed at its walltime"
            assert o.state is FinalState.COMPLETED_WALLTIME_REACHED
        else:
            assert o.finish == o.start + runtime, f"{job.key} must run for its profile runtime {runtime}"
            assert o.state is FinalState.COMPLETED_SUCCESSFULLY


def occupancy(outcomes: Sequence[JobOutcome]) -> list[tuple[float, float, JobOutcome]]:
    """[start, finish) of every job that held units for a positive time."""
    spans = []
    for o in outcomes:
        if o.start is not None and o.finish is not None and o.finish > o.start:
            spans.append((o.start, o.finish, o))
    return spans


def check_no_unit_used_by_two_jobs_at_once(r: Run) -> None:
    per_unit: dict[int, list[tuple[float, float, str]]] = defaultdict(list)
    for start, finish, o in occupancy(r.outcomes):
        for unit in o.resources:
            per_unit[unit].append((start, finish, o.job.key))
    for unit, spans in per_unit.items():
        spans.sort()
        for (_, end_a, a), (start_b, _, b) in pairwise(spans):
            assert start_b >= end_a, f"unit {unit} held by {a} until {end_a} and by {b} from {start_b}"


def check_allocated_units_never_exceed_platform(r: Run) -> None:
    steps: list[tuple[float, int]] = []
    for start, finish, o in occupancy(r.outcomes):
        steps.append((start, len(o.resources)))
        steps.append((finish, -len(o.resources)))
    steps.sort()  # at equal times, releases (negative) come before acquisitions
    in_use = 0
    for time, delta in steps:
        in_use += delta
        assert in_use <= r.case.nb_resources, f"{in_use} units in use at t={time}"


def check_time_never_goes_back(r: Run) -> None:
    assert r.calls, "the decision process is asked at least once (every case has a job)"
    nows = [c.now for c in r.calls]
    assert nows == sorted(nows), f"decide() called at decreasing times: {nows}"
    finish = {o.job.key: o.finish for o in r.outcomes}
    for c in r.calls:
        assert c.events, "the decision process is only asked when something happened"
        assert c.view_now == c.now, "the view shows the time of the call"
        for e in c.events:
            if isinstance(e, RequestedCall):
                assert e.time == c.now, f"a wake-up for t={e.time} delivered at t={c.now}"
            elif isinstance(e, JobSubmitted):
                assert e.job.submit_time == c.now, f"{e.job.key} submitted at {e.job.submit_time}, told at {c.now}"
            elif isinstance(e, JobCompleted):
                assert finish[e.job.key] == c.now, f"{e.job.key} finished at {finish[e.job.key]}, told at {c.now}"
    no_more = [i for i, c in enumerate(r.calls) for e in c.events if isinstance(e, NoMoreJobs)]
    assert len(no_more) == 1, "NoMoreJobs is said exactly once"
    submitted_after = [e for c in r.calls[no_more[0] + 1 :] for e in c.events if isinstance(e, JobSubmitted)]
    assert submitted_after == [], "no job is submitted after NoMoreJobs"


def check_outcomes_emitted_as_time_advances(r: Run) -> None:
    finishes = [o.finish for o in r.outcomes if o.finish is not None]
    assert finishes == sorted(finishes), "outcomes are streamed in the order jobs end"


GENERIC_RULES = [
    check_each_job_ends_once,
    check_oversized_jobs_rejected_and_only_them,
    check_allocation_has_exactly_nb_res_valid_units,
    check_times_follow_profile_and_walltime,
    check_no_unit_used_by_two_jobs_at_once,
    check_allocated_units_never_exceed_platform,
    check_time_never_goes_back,
    check_outcomes_emitted_as_time_advances,
]


@pytest.mark.parametrize("policy", POLICIES)
@PROPERTY_SETTINGS
@given(case=cases())
@example(case=ZERO_WALLTIME_SHARES_UNITS)
@example(case=ZERO_WALLTIME_OVERTAKEN)
def test_every_policy_produces_a_valid_schedule(policy: str, case: Case) -> None:
    """Allocation, life-cycle and time rules that hold for any decision process the core accepts."""
    r = run(case, policy)
    for rule in GENERIC_RULES:
        rule(r)


# -- policy-specific rules ------------------------------------------------------------------------------------


def queue_order(job: Job) -> tuple[float, tuple[int, int | str]]:
    return (job.submit_time, id_order(job.id))


@PROPERTY_SETTINGS
@given(case=cases())
def test_fcfs_starts_jobs_in_queue_order(case: Case) -> None:
    r = run(case, "fcfs")
    ran = sorted((o for o in r.outcomes if o.start is not None), key=lambda o: queue_order(o.job))
    starts = [o.start for o in ran if o.start is not None]
    assert starts == sorted(starts), [(o.job.id, o.start) for o in ran]


class ObservedEasy(Easy):
    """EASY, recording the head's reservation (computed with `reserve`) at every call it is the blocked head."""

    def __init__(self) -> None:
        super().__init__()
        self.reservations: dict[str, list[tuple[float, float]]] = defaultdict(list)
        """(time of the call, reserved start) of each job, each time it was the head and did not fit."""

    def schedule(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        inner = super().schedule(now, events, view)
        observed = False
        while True:
            # The first time the first pending job does not fit, the head phase is over and no job was backfilled:
            # this is the state the policy computes its reservation on.
            if not observed:
                observed = self._observe_head(now, view)
            decision = next(inner, None)
            if decision is None:
                return
            yield decision

    def _observe_head(self, now: float, view: ClusterView) -> bool:
        head = next(iter(view.pending.values()), None)
        if head is None:
            return True
        if head.nb_res <= len(view.free):
            return False
        self.reservations[head.key].append((now, reserve(head.nb_res, view).start))
        return True


@PROPERTY_SETTINGS
@given(case=cases())
def test_easy_never_delays_the_head_reservation(case: Case) -> None:
    policy = ObservedEasy()
    r = run(case, policy)
    outcomes = r.by_key()
    assert policy.reservations or all(o.start in (None, o.job.submit_time) for o in r.outcomes)
    for key, history in policy.reservations.items():
        reserved = [start for _, start in history]
        assert reserved == sorted(reserved, reverse=True), f"{key}'s reservation moved later: {history}"
        start = outcomes[key].start
        assert start is not None
        assert start <= reserved[0], f"{key} started at {start}, after its first reservation {history[0]}"


class WalkedEasy(Easy):
    """EASY in submit order, but walking the queue job by job: a queue order by a constant key is submit order,
    and a keyed order is not indexed by shape (policies/batch/shapes.py)."""

    def __init__(self) -> None:
        super().__init__()
        self.order = QueueOrder(lambda job: 0.0)


@PROPERTY_SETTINGS
@given(case=cases(), delivery=st.sampled_from(Delivery))
def test_easy_by_shape_decides_as_the_walk_over_the_queue(case: Case, delivery: Delivery) -> None:
    """The shape index is a faster scan, not another policy: both give the same decisions at the same calls."""
    schedules = []
    for policy in (Easy(), WalkedEasy()):
        sink = Collect()
        Simulation(case.platform, case.workload(), policy, [sink], delivery=delivery).run()
        schedules.append([(o.job.key, o.state, o.start, o.finish, o.resources) for o in sink.outcomes])
    assert schedules[0] == schedules[1]


class CheckedKeep(EasyBackfilling):
    """EASY's backfilling, checking each reservation it keeps after job ends against one computed again."""

    def __init__(self) -> None:
        super().__init__()
        self.kept = 0

    def _same_start(self, nb_res: int, view: ClusterView, start: float) -> bool:
        same = super()._same_start(nb_res, view, start)
        if same:
            held = self._reservation
            assert held is not None
            again = reserve(nb_res, view, IntervalSet.lowest, self._by_end)
            assert (again.start, again.resources.max()) == (held.start, held.cutoff)
            assert held.resources in (None, again.resources)
            self.kept += 1
        return same


def _lowest(free: IntervalSet, count: int) -> IntervalSet:
    return free.lowest(count)


class CheckedEasy(Easy):
    """EASY whose kept reservations are checked (`CheckedKeep`)."""

    def __init__(self) -> None:
        super().__init__()
        self.backfilling = CheckedKeep()


class RecomputingEasy(Easy):
    """EASY that computes its reservation again after every job end: the same lowest ids, by another function,
    which turns the keeping off."""

    def __init__(self) -> None:
        super().__init__()
        self.hosts = _lowest


@PROPERTY_SETTINGS
@given(case=cases(), delivery=st.sampled_from(Delivery))
def test_easy_keeps_a_reservation_after_job_ends_only_when_it_is_the_same(case: Case, delivery: Delivery) -> None:
    """A reservation kept because its start did not move is the one `reserve` gives, and the schedules are those
    of EASY computing it again after every job end."""
    schedules = []
    for policy in (CheckedEasy(), RecomputingEasy()):
        sink = Collect()
        Simulation(case.platform, case.workload(), policy, [sink], delivery=delivery).run()
        schedules.append([(o.job.key, o.state, o.start, o.finish, o.resources) for o in sink.outcomes])
    assert schedules[0] == schedules[1]


class CheckedCutoff(EasyBackfilling):
    """EASY's backfilling, checking each reservation it computes by its highest id alone (`reserved_cutoff`)
    against `reserve`'s whole set, from a full sort of the running jobs."""

    def __init__(self) -> None:
        super().__init__()
        self.cut = 0

    def _reserve(self, head: Job, view: ClusterView, hosts: Callable[[IntervalSet, int], IntervalSet],
                 cut: bool) -> _Held:
        held = super()._reserve(head, view, hosts, cut)
        whole = reserve(head.nb_res, view, hosts)
        assert (held.start, held.cutoff) == (whole.start, whole.resources.max() if whole.resources else -1)
        assert held.resources in (None, whole.resources)
        self.cut += held.resources is None
        return held


@PROPERTY_SETTINGS
@given(case=cases(), delivery=st.sampled_from(Delivery))
def test_easy_reservation_by_its_highest_id_is_the_one_reserve_gives(case: Case, delivery: Delivery) -> None:
    """The reservation a scan by shape computes (its start and highest id, no set) is `reserve`'s."""
    policy = Easy()
    policy.backfilling = CheckedCutoff()
    Simulation(case.platform, case.workload(), policy, [Collect()], delivery=delivery).run()


def test_easy_reservation_by_its_highest_id_is_checked() -> None:
    """The property above sees reservations computed by their highest id (a head waiting on several ends)."""
    jobs = (
        Job("0", 0.0, 2, Delay(5.0), 10.0),
        Job("1", 0.0, 2, Delay(20.0), 20.0),
        Job("2", 0.0, 5, Delay(5.0), 5.0),
        Job("3", 6.0, 2, Delay(5.0), 100.0),
    )
    policy = Easy()
    policy.backfilling = checked = CheckedCutoff()
    run(Case(hosts(5), jobs), policy)
    assert checked.cut >= 1


def test_easy_keeps_its_reservation_when_a_job_ends_early_before_it() -> None:
    """Head `2` needs all 5 units: its reservation is t=20, when `1` ends. `0` ends at t=5, before its walltime
    (10 <= 20): the start stays t=20, so the reservation is kept without being computed again. `3` (one unit, so
    the reservation is computed at t=0: a queue of jobs that need more units than are free needs none) cannot
    backfill: it would end after t=20 and no free unit lies outside the reservation."""
    jobs = (
        Job("0", 0.0, 2, Delay(5.0), 10.0),
        Job("1", 0.0, 2, Delay(20.0), 20.0),
        Job("2", 0.0, 5, Delay(5.0), 5.0),
        Job("3", 0.0, 1, Delay(5.0), 100.0),
    )
    policy = CheckedEasy()
    r = run(Case(hosts(5), jobs), policy)
    assert {o.job.id: (o.start, str(o.resources)) for o in r.outcomes} == {
        "0": (0.0, "0-1"),
        "1": (0.0, "2-3"),
        "2": (20.0, "0-4"),
        "3": (25.0, "0"),
    }
    assert isinstance(policy.backfilling, CheckedKeep)
    assert policy.backfilling.kept >= 1


class FullScanBackfilling(EasyBackfilling):
    """EASY's backfilling that scans the queue's shapes at every call: it forgets each settled scan, and counts
    the scans by shape, of which the policy keeping them (`CountedSkips`) makes fewer."""

    def __init__(self, keep_settled: bool = False) -> None:
        super().__init__()
        self.keep_settled = keep_settled
        self.scans = 0

    def schedule(self, now: float, events: Sequence[Event], view: ClusterView, order: QueueOrder,
                 hosts: Callable[[IntervalSet, int], IntervalSet]) -> Iterator[Decision]:
        if not self.keep_settled:
            self._settled = None
        return super().schedule(now, events, view, order, hosts)

    def _backfill_by_shape(self, now: float, view: ClusterView, held: _Held,
                           hosts: Callable[[IntervalSet, int], IntervalSet]) -> Iterator[Decision]:
        self.scans += 1
        return super()._backfill_by_shape(now, view, held, hosts)


class ScannedEasy(Easy):
    """EASY with `FullScanBackfilling`, keeping its settled scans or not."""

    def __init__(self, keep_settled: bool) -> None:
        super().__init__()
        self.backfilling = self.scanned = FullScanBackfilling(keep_settled)


@PROPERTY_SETTINGS
@given(case=cases(), delivery=st.sampled_from(Delivery))
def test_easy_skips_a_settled_scan_only_when_it_would_start_nothing(case: Case, delivery: Delivery) -> None:
    """EASY looks only at the jobs queued since a scan that started nothing when nothing else changed: the
    decisions are those of a scan of every shape at every call."""
    schedules, scans = [], []
    for keep in (True, False):
        policy = ScannedEasy(keep)
        sink = Collect()
        Simulation(case.platform, case.workload(), policy, [sink], delivery=delivery).run()
        schedules.append([(o.job.key, o.state, o.start, o.finish, o.resources) for o in sink.outcomes])
        scans.append(policy.scanned.scans)
    assert schedules[0] == schedules[1]
    assert scans[0] <= scans[1]


def test_easy_skips_the_scan_when_only_jobs_that_cannot_backfill_arrive() -> None:
    """`0` holds 3 of 4 units until t=10 and head `1` needs all 4: its reservation is t=10, on 0-3. `2` (t=1)
    and `3` (t=2) would run past t=10, so nothing backfills: after the scan at t=1, the call at t=2 looks at
    `3` alone. `4` (t=3) ends by t=10 on the free unit: it backfills, as a full scan finds; its end at t=8
    frees a unit, so that call scans again."""
    jobs = (
        Job("0", 0.0, 3, Delay(10.0), 10.0),
        Job("1", 0.0, 4, Delay(5.0), 5.0),
        Job("2", 1.0, 1, Delay(20.0), 20.0),
        Job("3", 2.0, 1, Delay(20.0), 20.0),
        Job("4", 3.0, 1, Delay(5.0), 5.0),
    )
    starts = []
    for keep in (True, False):
        policy = ScannedEasy(keep)
        r = run(Case(hosts(4), jobs), policy)
        starts.append({o.job.id: (o.start, str(o.resources)) for o in r.outcomes})
        # t=1, (2,) 3 and 8: kept, the call at t=2 is skipped; at t=0 no queued job fits the free unit: no scan
        assert policy.scanned.scans == (3 if keep else 4)
    assert starts[0] == starts[1]
    assert starts[0] == {
        "0": (0.0, "0-2"), "1": (10.0, "0-3"), "2": (15.0, "0"), "3": (15.0, "1"), "4": (3.0, "3"),
    }


class ObservedConservative(Conservative):
    """Conservative backfilling, recording every reservation it holds after each call."""

    def __init__(self, rjms_delay: str = "5") -> None:
        super().__init__(rjms_delay=rjms_delay)
        self.reservations: dict[str, list[tuple[float, float]]] = defaultdict(list)

    def schedule(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        yield from super().schedule(now, events, view)
        for key, start in self.backfilling.starts.items():
            history = self.reservations[key]
            if not history or history[-1][1] != start:
                history.append((now, start))


@PROPERTY_SETTINGS
@given(case=cases())
@example(case=ZERO_WALLTIME_SHARES_UNITS)
@example(case=ZERO_WALLTIME_OVERTAKEN)
def test_conservative_never_starts_a_job_after_its_first_reservation(case: Case) -> None:
    """Reservations only ever move earlier, and a job starts no later than the first one it was given.

    A job that holds no reservation after any call either started in the call that placed it, or found no room
    in the plan (its units held forever by a job without walltime, or a zero walltime on units all taken at that
    instant: batsched's plan has no place for it either) and started at a later compression.
    """
    check_reservations_kept(case, ObservedConservative())


def check_reservations_kept(case: Case, policy: ObservedConservative) -> None:
    r = run(case, policy)
    for o in r.outcomes:
        if o.start is None:
            continue
        history = policy.reservations[o.job.key]
        if not history:
            continue
        reserved = [start for _, start in history]
        assert reserved == sorted(reserved, reverse=True), f"{o.job.key}'s reservation moved later: {history}"
        assert o.start <= reserved[0], f"{o.job.key} started at {o.start}, after its first reservation {history}"


@st.composite
def unlimited_cases(draw: st.DrawFn) -> Case:
    """Workloads mostly without walltime, some of walltime 0, on 1..8 hosts; jobs mostly end before their
    walltime, so the plan keeps places that are freed early."""
    nb_hosts = draw(st.integers(1, 8))
    jobs = []
    for i in range(draw(st.integers(1, 60))):
        walltime = draw(st.sampled_from([None, None, None, 0.0, 1.0, 10.0, 100.0]))
        limit = 20 if walltime is None else int(walltime) + (5 if draw(st.integers(0, 9)) == 0 else 0)
        run_time = float(draw(st.integers(0, limit)))
        jobs.append(Job(str(i), float(draw(st.integers(0, 40))), draw(st.integers(1, nb_hosts)), Delay(run_time),
                        walltime))
    return Case(hosts(nb_hosts), tuple(jobs))


@PROPERTY_SETTINGS
@given(case=unlimited_cases(), rjms_delay=st.sampled_from(["0", "5"]))
@example(case=RJMS_ZERO_DOUBLE_BOOKED, rjms_delay="0")
def test_conservative_plans_zero_and_unlimited_walltimes(case: Case, rjms_delay: str) -> None:
    """Walltimes 0 (zero-length places with `rjms_delay=0`) and none (places to the end of time): no decision is
    refused and no job starts after its first reservation."""
    check_reservations_kept(case, ObservedConservative(rjms_delay))


@pytest.mark.parametrize("policy", POLICIES)
@settings(PROPERTY_SETTINGS, max_examples=max(1, PROPERTY_SETTINGS.max_examples // 4))
@given(case=cases())
def test_same_inputs_give_byte_identical_outputs(policy: str, case: Case) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        outputs = []
        for attempt in ("a", "b"):
            out = Path(tmp) / attempt
            simulate(case.platform, case.workload(), create_policy(policy), out)
            outputs.append(((out / "jobs.csv").read_bytes(), (out / "schedule.csv").read_bytes()))
        assert outputs[0] == outputs[1]
        jobs_csv = outputs[0][0].decode().splitlines()
        assert len(jobs_csv) == 1 + len(case.jobs), "jobs.csv has a header and one row per job"


# -- regressions: the smallest counter-examples, kept as plain examples ---------------------------------------


def test_conservative_zero_walltime_job_does_not_share_its_units() -> None:
    """A job with walltime 0 still holds its units at the instant it starts; no other job may get them."""
    r = run(ZERO_WALLTIME_SHARES_UNITS, "conservative")
    check_each_job_ends_once(r)
    assert [(o.job.id, o.start, str(o.resources)) for o in r.outcomes] == [("0", 0.0, "0"), ("1", 0.0, "0")]


def test_conservative_zero_walltime_job_is_not_overtaken_by_a_later_job() -> None:
    """Jobs 0 and 1 (walltime 0) come before job 2 (unbounded) and are instantaneous: all three start at t=0."""
    r = run(ZERO_WALLTIME_OVERTAKEN, "conservative")
    assert [(o.job.id, o.start, o.finish) for o in r.outcomes] == [
        ("0", 0.0, 0.0),
        ("1", 0.0, 0.0),
        ("2", 0.0, 50.0),
    ]


def test_conservative_zero_length_job_keeps_its_hosts_in_a_zero_length_first_slice() -> None:
    """Hand-computed, rjms_delay=0. t=0: 0 and 1 (no walltime) start on hosts 0 and 1; they end at once, 2 (no
    walltime) starts on host 0, which it holds forever in the plan, so 3 (both hosts) has no place. t=1: 4
    (walltime 1) starts on host 1; 5 (no walltime) is reserved at t=2 on host 1. t=2: 2 and 4 end; the plan's
    first slice is [2, 2) (5's reservation begins at 2); 3 is placed there and starts on both hosts; 5 keeps its
    reservation on the rest of time, then starts at the next call when 3 has ended, on host 0."""
    policy = ObservedConservative("0")
    r = run(RJMS_ZERO_DOUBLE_BOOKED, policy)
    check_each_job_ends_once(r)
    assert [(o.job.id, o.start, o.finish, str(o.resources)) for o in r.outcomes] == [
        ("0", 0.0, 0.0, "0"),
        ("1", 0.0, 0.0, "1"),
        ("2", 0.0, 2.0, "0"),
        ("4", 1.0, 2.0, "1"),
        ("3", 2.0, 2.0, "0-1"),
        ("5", 2.0, 2.0, "0"),
    ]
    assert policy.reservations["w0!5"] == [(1.0, 2.0)]


def test_easy_reservation_is_respected_on_a_hand_made_case() -> None:
    """Head `2` (3 units) waits for `0` (walltime 10); `3` may backfill only outside the reserved units."""
    jobs = (
        Job("0", 0.0, 2, Delay(10.0), 10.0),
        Job("1", 0.0, 1, Delay(20.0), 20.0),
        Job("2", 1.0, 3, Delay(5.0), 5.0),
        Job("3", 2.0, 1, Delay(30.0), 30.0),
        Job("4", 2.0, 1, Delay(4.0), 4.0),
    )
    policy = ObservedEasy()
    r = run(Case(hosts(4), jobs), policy)
    starts = {o.job.id: (o.start, str(o.resources)) for o in r.outcomes}
    assert policy.reservations["w0!2"][0] == (1.0, 10.0)
    # The reservation is 0-1 and 3 at t=10. `3` (walltime 30) would delay it and no free unit lies outside it;
    # `4` ends by t=6 <= 10, so it is backfilled on unit 3.
    assert starts == {
        "0": (0.0, "0-1"),
        "1": (0.0, "2"),
        "2": (10.0, "0-1 3"),
        "3": (15.0, "0"),
        "4": (2.0, "3"),
    }


def test_heterogeneous_speeds_use_the_slowest_allocated_unit() -> None:
    platform = hosts(3, speeds=[4.0, 2.0, 1.0])
    jobs = (Job("0", 0.0, 2, ParallelHomogeneous(8.0), None), Job("1", 0.0, 1, ParallelHomogeneous(8.0), None))
    r = run(Case(platform, jobs), "fcfs")
    assert {o.job.id: (o.start, o.finish, str(o.resources)) for o in r.outcomes} == {
        "0": (0.0, 4.0, "0-1"),
        "1": (0.0, 8.0, "2"),
    }
    assert math.isclose(r.summary.end_time, 8.0)
