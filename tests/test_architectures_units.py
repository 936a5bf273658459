"""Building blocks of the architectures package, checked by hand: distributions, pickers, the cell, transactions."""

from __future__ import annotations

import random

import numpy as np
import pytest

from clustersim.architectures.cell import Cell, Placement
from clustersim.architectures.distributions import Clipped, Constant, Empirical, Exponential, Lognormal, Weibull
from clustersim.architectures.metrics import conflict_fraction, percentile
from clustersim.architectures.pickers import (
    MostLoaded,
    RandomizedFirstFit,
    RandomProbe,
    SpreadMargin,
    create_picker,
)
from clustersim.architectures.transactions import (
    AllOrNothing,
    CellVersion,
    Incremental,
    ResourceFit,
    SequenceNumbers,
    Transaction,
    commit,
)
from clustersim.errors import DecisionError, UnknownNameError

GIB = 2**30


def cell(*cpus: int, memory: int = 16 * GIB) -> Cell:
    """Machines with the given cpu capacities (millicores) and the same memory."""
    return Cell(np.array(cpus, np.int64), np.full(len(cpus), memory, np.int64))


def placement(pairs: dict[int, int], cpu: int = 1000, memory: int = GIB) -> Placement:
    return Placement(np.array(list(pairs), np.int64), np.array(list(pairs.values()), np.int64), cpu, memory)


def as_dict(p: Placement) -> dict[int, int]:
    return dict(zip(p.machines.tolist(), p.counts.tolist(), strict=True))


# -- distributions -----------------------------------------------------------------------------------------


def test_empirical_interpolates_between_sorted_samples() -> None:
    class Fixed(random.Random):
        def __init__(self, u: float):
            super().__init__(0)
            self.u = u

        def random(self) -> float:
            return self.u

    dist = Empirical([30, 10, 20])  # sorted: 10, 20, 30
    assert dist.sample(Fixed(0.0)) == 10
    assert dist.sample(Fixed(0.25)) == 15
    assert dist.sample(Fixed(0.75)) == 25
    assert dist.sample(Fixed(0.999999)) == pytest.approx(30, abs=1e-3)
    assert Empirical([7]).sample(Fixed(0.5)) == 7
    assert dist.maximum() == 30


def test_parametric_distributions_have_their_means() -> None:
    rng = random.Random(1)
    n = 20000
    assert sum(Exponential(5).sample(rng) for _ in range(n)) / n == pytest.approx(5, rel=0.05)
    assert sum(Weibull(1.0, 3).sample(rng) for _ in range(n)) / n == pytest.approx(3, rel=0.05)  # shape 1: exp
    assert sum(Lognormal(0, 0.5).sample(rng) for _ in range(n)) / n == pytest.approx(np.exp(0.125), rel=0.05)
    assert Clipped(Constant(9), 0, 4).sample(rng) == 4


def test_same_seed_same_samples() -> None:
    a, b = random.Random("x"), random.Random("x")
    assert [Exponential(2).sample(a) for _ in range(5)] == [Exponential(2).sample(b) for _ in range(5)]


# -- the cell ------------------------------------------------------------------------------------------------


def test_claim_and_release_update_free_resources_sequence_numbers_and_usage() -> None:
    c = cell(4000, 4000)
    c.claim("batch", placement({0: 3}), now=1.0)
    assert c.free_cpu.tolist() == [1000, 4000]
    assert c.seq.tolist() == [1, 0] and c.version == 1
    assert c.usage["batch"] == [3000, 3 * GIB]
    assert c.dominant_share("batch") == 3000 / 8000
    c.release("batch", placement({0: 3}), now=3.0)
    assert c.free_cpu.tolist() == [4000, 4000]
    assert c.seq.tolist() == [2, 0] and c.version == 2  # releases change the machine too
    assert c.mean_utilisation(4.0)[0] == pytest.approx(3000 * 2 / 4 / 8000)


def test_an_over_allocating_claim_is_refused_and_changes_nothing() -> None:
    c = cell(4000, 4000)
    with pytest.raises(DecisionError, match="more than the free resources"):
        c.claim("batch", placement({1: 1, 0: 5}), now=0.0)
    assert c.free_cpu.tolist() == [4000, 4000] and c.version == 0 and not c.usage


def test_lock_all_holds_every_free_resource_until_unlocked() -> None:
    c = cell(4000, 2000)
    c.claim("a", placement({0: 1}), now=0.0)
    lock = c.lock_all(now=0.0)
    assert lock is not None and lock.cpu.tolist() == [3000, 2000]
    assert c.free_cpu.tolist() == [0, 0] and c.locked_cpu == 5000
    c.unlock(lock, now=1.0)
    assert c.free_cpu.tolist() == [3000, 2000] and c.locked_cpu == 0


# -- pickers ----------------------------------------------------------------------------------------------


def test_randomized_first_fit_places_only_where_tasks_fit() -> None:
    c = cell(4000, 500, 2000, 0)  # room for 4, 0, 2, 0 tasks of 1 core
    for seed in range(20):
        p = RandomizedFirstFit().place(c, 1000, GIB, 3, random.Random(seed))
        got = as_dict(p)
        assert p.tasks == 3 and set(got) <= {0, 2} and got.get(2, 0) <= 2
    everything = RandomizedFirstFit().place(c, 1000, GIB, 10, random.Random(0))
    assert as_dict(everything) == {0: 4, 2: 2}  # fewer places than tasks: fills every machine with room


def test_randomized_first_fit_is_uniform_among_machines_with_room() -> None:
    c = cell(*([1000] * 4), 0)
    rng = random.Random(3)
    hits = [0] * 5
    for _ in range(4000):
        for m in RandomizedFirstFit().place(c, 1000, GIB, 1, rng).machines.tolist():
            hits[m] += 1
    assert hits[4] == 0 and all(900 < h < 1100 for h in hits[:4])


def test_most_loaded_fills_the_fullest_machine_first() -> None:
    c = cell(4000, 4000, 4000)
    c.claim("x", placement({1: 3}), now=0)  # machine 1: 75% used
    c.claim("x", placement({0: 2}), now=0)  # machine 0: 50% used
    p = MostLoaded().place(c, 1000, GIB, 4, random.Random(0))
    assert as_dict(p) == {1: 1, 0: 2, 2: 1}


def test_spread_margin_keeps_a_safety_margin_and_spreads_among_the_most_loaded() -> None:
    c = cell(4000, 4000, 4000, 4000)
    c.claim("x", placement({0: 3}), now=0)  # 1 core left: taking it would break a 25% margin
    c.claim("x", placement({1: 2}), now=0)
    picker = SpreadMargin(spread=0.5, margin=0.25)  # bucket: 2 of the 4 machines
    for seed in range(10):
        got = as_dict(picker.place(c, 1000, GIB, 1, random.Random(seed)))
        assert set(got) <= {1, 2}  # machine 1 (most loaded with margin), then the next in load order
    assert 0 not in as_dict(picker.place(c, 1000, GIB, 8, random.Random(0)))


def test_random_probe_can_miss_machines_with_room() -> None:
    c = cell(*([0] * 99), 4000)
    assert RandomProbe(tries=1).place(c, 1000, GIB, 4, random.Random(0)).tasks < 4
    assert RandomProbe(tries=10_000).place(c, 1000, GIB, 4, random.Random(0)).tasks == 4


def test_pickers_by_name() -> None:
    assert isinstance(create_picker("spread-margin", margin=0.2), SpreadMargin)
    with pytest.raises(UnknownNameError, match="valid: most-loaded, random, randomized-first-fit, spread-margin"):
        create_picker("best-fit")


# -- transactions ------------------------------------------------------------------------------------------


def test_fine_grained_conflicts_only_when_resources_are_gone() -> None:
    c = cell(4000)
    txn = Transaction.on(c, "b", placement({0: 2}))
    c.claim("a", placement({0: 2}), now=0)  # someone else took 2 of the 4 cores
    assert ResourceFit().acceptable(c, txn).tolist() == [2]
    assert SequenceNumbers().acceptable(c, txn).tolist() == [0]  # coarse: the machine changed
    assert CellVersion().acceptable(c, txn).tolist() == [0]


def test_coarse_grained_ignores_changes_to_other_machines_but_cell_version_does_not() -> None:
    c = cell(4000, 4000)
    txn = Transaction.on(c, "b", placement({0: 1}))
    c.claim("a", placement({1: 1}), now=0)
    assert SequenceNumbers().acceptable(c, txn).tolist() == [1]
    assert CellVersion().acceptable(c, txn).tolist() == [0]


def _commit_after_interference(mode: Incremental | AllOrNothing) -> tuple[dict[int, int], int, list[int]]:
    """b decided 3 tasks on machine 0 and 1 on machine 1; meanwhile a took 2 of machine 0's 4 cores."""
    c = cell(4000, 4000)
    txn = Transaction.on(c, "b", placement({0: 3, 1: 1}))
    c.claim("a", placement({0: 2}), now=0)
    result = commit(c, txn, ResourceFit(), mode, now=1.0)
    return as_dict(result.committed), result.conflicted_tasks, c.free_cpu.tolist()


def test_incremental_transactions_commit_every_claim_that_fits() -> None:
    assert _commit_after_interference(Incremental()) == ({0: 2, 1: 1}, 1, [0, 3000])


def test_all_or_nothing_transactions_commit_nothing_when_one_claim_conflicts() -> None:
    assert _commit_after_interference(AllOrNothing()) == ({}, 4, [2000, 4000])


# -- metrics -----------------------------------------------------------------------------------------------


def test_percentile_and_conflict_fraction() -> None:
    assert percentile([], 90) is None
    assert percentile([5.0], 90) == 5.0
    assert percentile([float(v) for v in range(1, 11)], 90) == pytest.approx(9.1)
    assert conflict_fraction(3, 2) == 1.5 and conflict_fraction(0, 0) == 0.0
