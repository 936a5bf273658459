"""The pieces of the Slurm model, on hand-computed values: cons_tres selection, fair-share, the backfill map."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clustersim.policies.slurm.backfill import (
    BackfillMemory,
    BackfillParameters,
    Candidate,
    NodeSpace,
    Releases,
    Running,
    backfill_cycle,
    will_run,
    will_run_fit,
)
from clustersim.policies.slurm.conf import parse_slurm_conf
from clustersim.policies.slurm.priority import BasicPriority, FairShare, JobFactors, MultifactorPriority
from clustersim.policies.slurm.select import select_cpus

ALL = 0b1111


# -- select/cons_tres -------------------------------------------------------------------------------------


def test_one_node_enough_takes_the_best_fit_node() -> None:
    assert select_cpus(2, ALL, [4, 3, 2, 4]) == {2: 2}
    assert select_cpus(3, ALL, [4, 3, 2, 4]) == {1: 3}


def test_a_job_spans_consecutive_nodes_in_index_order() -> None:
    assert select_cpus(6, ALL, [2, 2, 2, 2]) == {0: 2, 1: 2, 2: 2}


def test_the_tightest_sufficient_run_of_consecutive_nodes_is_preferred() -> None:
    # Runs: nodes 0-1 (2+2 CPUs) and nodes 3 (3 CPUs; node 2 is busy). 3 CPUs: run {3} is enough and tighter.
    assert select_cpus(3, ALL, [2, 2, 0, 3]) == {3: 3}
    # 5 CPUs: no run is enough; the largest (4) is used up, then the best of the rest completes it.
    assert select_cpus(5, ALL, [2, 2, 0, 3]) == {0: 2, 1: 2, 3: 1}


def test_nodes_outside_the_allowed_set_are_ignored() -> None:
    assert select_cpus(2, 0b1010, [4, 1, 4, 2]) == {3: 2}
    assert select_cpus(4, 0b1010, [4, 1, 4, 2]) is None


# -- priorities -------------------------------------------------------------------------------------------


def _factors(cpus: int, user: str = "u", eligible: float = 0.0) -> JobFactors:
    return JobFactors(cpus=cpus, min_nodes=1, eligible=eligible, user=user, account="acct", partition_factor=1.0)


def test_basic_priorities_decrease_in_submit_order_from_slurms_top() -> None:
    plugin = BasicPriority()
    assert [plugin.initial(_factors(1), 0) for _ in range(3)] == [4294901759, 4294901758, 4294901757]


def test_multifactor_sums_weighted_factors_and_truncates() -> None:
    conf = parse_slurm_conf(
        "AccountingStorageType=accounting_storage/slurmdbd\nPriorityType=priority/multifactor\n"
        "PriorityWeightAge=1000\nPriorityMaxAge=10\nPriorityWeightJobSize=100\nPriorityWeightPartition=10\n"
        "NodeName=n[1-4] CPUs=4\n"
    )
    plugin = MultifactorPriority(conf, cluster_cpus=16, node_count=4, qos_priorities={})
    # age 300 s of 600 -> 500; size (1/4 + 8/16) / 2 = 0.375 -> 37.5; partition 1.0 -> 10: 547.5 -> 547
    assert plugin.recalculate(_factors(8), now=300) == 547


# -- fair-share ---------------------------------------------------------------------------------------------


def test_usage_decays_by_half_over_the_half_life() -> None:
    fairshare = FairShare(half_life=3600)
    fairshare.charge("a", "acct", cpus=1, seconds=1)
    before = fairshare.usage("a", "acct")
    fairshare.decay(3600)
    assert fairshare.usage("a", "acct") / before == pytest.approx(0.5, abs=0.001)


def test_usage_is_charged_decayed_over_the_period_it_covers() -> None:
    fairshare = FairShare(half_life=3600)
    fairshare.charge("a", "acct", cpus=4, seconds=60)
    assert fairshare.usage("a", "acct") == pytest.approx(60 * (1 - 0.693 / 3600) ** 60 * 4)


def test_classic_fairshare_factor_is_two_to_minus_effective_usage_over_shares() -> None:
    fairshare = FairShare(half_life=None, fair_tree=False)
    fairshare.charge("a", "acct", cpus=1, seconds=300)
    fairshare.charge("b", "acct", cpus=1, seconds=100)
    fairshare.update_factors()
    # one account (effective usage 1); a: 0.75 + (1 - 0.75) / 2 = 0.875 over shares 0.5; b: 0.625 / 0.5
    assert fairshare.factor("a", "acct") == pytest.approx(2 ** -1.75)
    assert fairshare.factor("b", "acct") == pytest.approx(2 ** -1.25)


def test_fair_tree_ranks_users_by_level_fairshare() -> None:
    fairshare = FairShare(half_life=None)
    fairshare.charge("a", "acct", cpus=1, seconds=300)
    fairshare.charge("b", "acct", cpus=1, seconds=100)
    fairshare.register("c", "other")
    fairshare.update_factors()
    # Account 'other' has no usage: it comes first, so c ranks 3/3; then b (0.5 / 0.25) before a (0.5 / 0.75).
    assert [fairshare.factor(u, a) for u, a in (("c", "other"), ("b", "acct"), ("a", "acct"))] == [
        1.0, pytest.approx(2 / 3), pytest.approx(1 / 3)]


def test_fair_tree_ties_share_a_rank() -> None:
    fairshare = FairShare(half_life=None)
    fairshare.register("a", "acct")
    fairshare.register("b", "acct")
    fairshare.update_factors()
    assert fairshare.factor("a", "acct") == fairshare.factor("b", "acct") == 1.0


# -- the backfill map and the will-run test -----------------------------------------------------------------


def test_a_reservation_removes_whole_nodes_from_the_map_between_its_bounds() -> None:
    space = NodeSpace(0, 86400, ALL, resolution=60)
    space.reserve(120, 300, 0b0001)
    assert space.records == [[0, 120, ALL], [120, 300, 0b1110], [300, 86400, ALL]]
    # A job ending before 120 keeps every node; backfill.c still notes when more nodes free up (300).
    assert space.restrict(ALL, 0, 100) == (ALL, 300)
    assert space.restrict(ALL, 0, 200)[0] == 0b1110
    assert space.overlaps(0b0001, 240, 360) and not space.overlaps(0b0010, 240, 360)


def test_a_short_reservation_lasts_at_least_one_resolution_slot() -> None:
    space = NodeSpace(0, 86400, ALL, resolution=60)
    space.reserve(120, 120, 0b0100)
    assert space.records[1] == [120, 180, 0b1011]


def test_will_run_removes_running_jobs_in_doubling_windows_of_end_times() -> None:
    running = [
        Running("a", 100.0, {0: 4}, 0b0001),  # first window: ends within (100 rounded up to 120) + 30 = 150
        Running("b", 140.0, {1: 4}, 0b0010),
        Running("c", 400.0, {2: 4}, 0b0100),
    ]
    # 8 CPUs are free once a and b have gone: the planned start is b's end, not a's.
    assert will_run(8, ALL, [0, 0, 0, 0], running, now=10) == (140.0, {0: 4, 1: 4})
    assert will_run(12, 0b0111, [0, 0, 0, 0], running, now=10) == (400.0, {0: 4, 1: 4, 2: 4})
    assert will_run(16, ALL, [0, 0, 0, 0], running, now=10) is None  # node 3 never frees (it is not free now)


def test_will_run_starts_now_when_the_job_fits() -> None:
    assert will_run(2, ALL, [1, 0, 2, 0], [], now=5) == (5, {2: 2})


def test_a_job_past_its_limit_is_guessed_to_end_after_kill_wait() -> None:
    running = [Running("late", 50.0, {0: 4}, 0b0001)]
    start, _ = will_run(4, 0b0001, [0, 0, 0, 0], running, now=60) or (math.nan, {})
    assert start == 80.0


def test_a_job_past_its_limit_is_guessed_from_kill_wait_and_over_time_limit() -> None:
    running = [Running("late", 50.0, {0: 4}, 0b0001, 60.0)]

    def start(params: BackfillParameters) -> float:
        result = will_run(4, 0b0001, [0, 0, 0, 0], running, now=60, params=params)
        assert result is not None
        return result[0]

    assert start(BackfillParameters(kill_wait=90)) == 140.0
    assert start(BackfillParameters(over_time_limit=120)) == 200.0  # 50 + KillWait 30 + 2 minutes
    assert start(BackfillParameters(over_time_limit=None)) == 120.0  # UNLIMITED: its whole limit from now


@given(
    st.lists(st.tuples(st.integers(0, 4), st.booleans(), st.integers(1, 2), st.integers(1, 40)), max_size=10),
    st.integers(1, 20), st.integers(1, 31), st.sampled_from([59, 60, 62, 120, 124]),
)
@settings(max_examples=300, deadline=None)
def test_the_will_run_test_is_the_same_wherever_its_nodes_sit_in_the_bitmap(
    jobs: list[tuple[int, bool, int, int]], cpus: int, mask: int, offset: int
) -> None:
    """Five nodes moved up by `offset`, across the two words the will-run walk splits node sets in (nodes 0-61
    and the others; beyond 124 the second is a long): the same start, the same CPUs moved up too."""
    free = [4] * 6
    placed = []
    for i, (node, pair, take, end) in enumerate(jobs):
        nodes = [node, node + 1] if pair else [node]  # a job on two nodes may lie half outside the mask
        if all(free[n] >= take for n in nodes):
            for n in nodes:
                free[n] -= take
            placed.append((f"r{i}", end * 30.0 + i % 2 * 7, nodes, take))
    placed.sort(key=lambda job: job[1])

    def test(shift: int) -> tuple[float, dict[int, int]] | None:
        running = [Running(key, end, {n + shift: take for n in nodes}, sum(1 << n + shift for n in nodes), 60.0)
                   for key, end, nodes, take in placed]
        return will_run(cpus, mask << shift, [0] * shift + free, running, 0.0)

    found, moved = test(0), test(offset)
    assert moved == (None if found is None else (found[0], {n + offset: c for n, c in found[1].items()}))


@given(
    st.lists(st.tuples(st.integers(0, 5), st.integers(0, 2), st.integers(1, 3), st.integers(1, 40)), max_size=12),
    st.lists(st.tuples(st.integers(1, 24), st.integers(1, 63)), min_size=1, max_size=12),
    st.sampled_from([0, 60, 62]),
)
@settings(max_examples=300, deadline=None)
def test_will_run_results_sharing_their_walks_and_idle_states_choose_what_each_test_alone_chooses(
    jobs: list[tuple[int, int, int, int]], tests: list[tuple[int, int]], offset: int
) -> None:
    """The tests of a cycle share the walk of a node set and the idle CPUs as the running jobs end (`Releases`),
    each made only as far as a test needs: a sequence of tests through one `Releases` gives what each test gives
    on its own, and the CPUs chosen are select_cpus's on the free CPUs plus those of the jobs ended by then."""
    free = [4] * 6
    placed = []
    for i, (node, span, take, end) in enumerate(jobs):
        nodes = [n for n in range(node, node + span + 1) if n < 6]
        if all(free[n] >= take for n in nodes):
            for n in nodes:
                free[n] -= take
            placed.append(Running(f"r{i}", end * 30.0 + i % 3 * 7, {n + offset: take for n in nodes},
                                  sum(1 << n + offset for n in nodes), 60.0))
    running = sorted(placed, key=lambda job: job.end)
    idle = [0] * offset + free
    shared = Releases(idle, running, 0.0)
    for cpus, mask in tests:
        nodes = mask << offset
        alone = will_run(cpus, nodes, idle, running, 0.0)
        found = will_run_fit(cpus, nodes, idle, running, 0.0, releases=shared)
        assert (None if found is None else (found[0], found[1].allocation())) == alone
        if found is not None:
            ended = [job for job in running if job.end <= found[0]] if found[1].last is not None else []
            future = list(idle)
            for job in ended:
                for node, count in job.allocation.items():
                    future[node] += count
            assert found[1].allocation() == select_cpus(cpus, nodes, future)
            assert found[1].planned() == sum(1 << node for node in found[1].allocation())


@st.composite
def _cycle_inputs(draw: st.DrawFn) -> tuple[list[Candidate], list[int], list[Running]]:
    """Busy nodes, a whole-cluster job first (it reserves), then small jobs that may fit the idle CPUs."""
    cpus = [4, 4, 4, 4]
    running = []
    for i in range(draw(st.integers(2, 10))):
        node = draw(st.integers(0, 3))
        take = draw(st.integers(1, 2))
        if cpus[node] >= take:
            cpus[node] -= take
            end = float(draw(st.integers(1, 40)) * 30 + draw(st.sampled_from([0, 7])))
            running.append(Running(f"r{i}", end, {node: take}, 1 << node, 60.0))
    queue = [Candidate("big", 16, ALL, 600.0)] + [
        Candidate(f"q{i}", draw(st.integers(1, 6)), draw(st.sampled_from([ALL, 0b0011, 0b1100])),
                  60.0 * draw(st.integers(1, 30)))
        for i in range(draw(st.integers(1, 8)))
    ]
    return queue, cpus, running


@given(
    _cycle_inputs(), st.integers(0, 1200), st.integers(1, 90), st.sampled_from([300.0, 600.0, 1800.0]),
    st.sampled_from([60.0, 45.0, 30.0]), st.sampled_from([0.0, None, 60.0]), st.sampled_from([0.0, 0.25, 17.0]),
)
@settings(max_examples=400, deadline=None)
def test_a_cycle_reused_from_memory_starts_what_a_fresh_cycle_starts(
    inputs: tuple[list[Candidate], list[int], list[Running]], first: int, later: int, window: float,
    resolution: float, over_time: float | None, epoch: float,
) -> None:
    """An idle cycle is reused for a later now within its validity interval: it must start what a cycle run
    from scratch at that now starts (nothing)."""
    queue, free, running = inputs
    params = BackfillParameters(window=window, resolution=resolution, over_time_limit=over_time)

    def cycle(now: float, memory: BackfillMemory | None) -> list[tuple[str, dict[int, int]]]:
        return [(job.key, dict(a)) for job, a in
                backfill_cycle(now, queue, list(free), list(running), ALL, params, epoch, memory)]

    memory = BackfillMemory()
    if cycle(float(first), memory):
        return  # a start changes the state: the memory is cleared
    assert cycle(float(first + later), memory) == cycle(float(first + later), None)
