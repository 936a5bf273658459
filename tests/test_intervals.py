"""IntervalSet agrees with Python's sets, including its bisection paths for one-interval operands."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from clustersim.intervals import IntervalSet
from clustersim.policies.batch.easy import _SHIFT, _above, _lowest_of, _nth_highest, _nth_lowest

ids = st.sets(st.integers(0, 20), max_size=15)
one_interval = st.tuples(st.integers(0, 20), st.integers(0, 4)).map(lambda t: set(range(t[0], t[0] + t[1] + 1)))


def canonical(s: IntervalSet) -> bool:
    """Sorted, disjoint, non-adjacent intervals, and the size they add up to."""
    intervals = s.intervals
    ordered = all(hi + 1 < lo for (_, hi), (lo, _) in pairwise(intervals))
    return ordered and all(lo <= hi for lo, hi in intervals) and len(s) == sum(hi - lo + 1 for lo, hi in intervals)


@settings(max_examples=300)
@given(ids, ids | one_interval)
def test_set_operations_match_python_sets(a: set[int], b: set[int]) -> None:
    x, y = IntervalSet.from_ids(a), IntervalSet.from_ids(b)
    for result, expected in ((x | y, a | b), (y | x, a | b), (x - y, a - b), (y - x, b - a), (x & y, a & b),
                             (y & x, a & b), (IntervalSet.from_mask(x.mask), a)):
        assert set(result) == expected
        assert canonical(result)
    assert x.mask == sum(1 << i for i in a)
    assert x.issubset(y) == (a <= b)
    assert y.issubset(x) == (b <= a)
    assert all((i in x) == (i in a) for i in range(-1, 27))


fragmented = st.sets(st.integers(0, 400), min_size=40, max_size=200)
few = st.lists(st.tuples(st.integers(0, 400), st.integers(0, 6)), max_size=6).map(
    lambda runs: {i for lo, width in runs for i in range(lo, lo + width + 1)}
)


@settings(max_examples=100)
@given(fragmented, few)
def test_operations_with_a_few_intervals_match_python_sets(a: set[int], b: set[int]) -> None:
    """A fragmented set and one of a few intervals: union and difference go interval by interval."""
    x, y = IntervalSet.from_ids(a), IntervalSet.from_ids(b)
    for result, expected in ((x | y, a | b), (y | x, a | b), (x - y, a - b), (y - x, b - a)):
        assert set(result) == expected
        assert canonical(result)


pieces = st.lists(st.tuples(st.integers(0, 300), st.integers(0, 12)).map(lambda t: (t[0], t[0] + t[1])), max_size=40)


@settings(max_examples=100)
@given(pieces, st.integers(1, 400))
def test_easy_lowest_of_a_union_matches_the_merged_set(intervals: list[tuple[int, int]], count: int) -> None:
    """EASY's reservation takes the lowest ids of the free and freed units without merging them all first."""
    expected = IntervalSet(intervals).lowest(count)
    result = _lowest_of([lo << _SHIFT | hi for lo, hi in intervals], count)
    assert result == expected
    assert canonical(result)


@settings(max_examples=200)
@given(pieces, pieces, st.integers(0, 400))
def test_easy_nth_lowest_of_two_lists_is_the_highest_of_the_lowest(
    first: list[tuple[int, int]], second: list[tuple[int, int]], count: int
) -> None:
    """EASY's reservation by its highest id: the `count`-th lowest id of the union of two sorted lists (free
    units, and the units of jobs ending by then, which may overlap), merged as it goes."""
    lowest = IntervalSet([*first, *second]).lowest(count)
    expected = lowest.max() if lowest and count else -1
    assert _nth_lowest(tuple(sorted(first)), sorted(lo << _SHIFT | hi for lo, hi in second), count) == expected


@settings(max_examples=200)
@given(st.sets(st.integers(0, 300), max_size=60), st.data())
def test_easy_nth_highest_of_two_disjoint_lists_is_the_nth_lowest(ids: set[int], data: st.DataObject) -> None:
    """EASY's reservation by its highest id, from the top when the units are disjoint (no pods): leaving out all
    but `count` ids from the top gives the `count`-th lowest (the highest of the union if it holds fewer)."""
    runs: list[tuple[int, int]] = []
    for i in sorted(ids):  # split into runs at random, adjacent ones included: free units next to a job's
        if runs and runs[-1][1] == i - 1 and data.draw(st.booleans()):
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    sides = data.draw(st.lists(st.booleans(), min_size=len(runs), max_size=len(runs)))
    first = tuple(run for run, side in zip(runs, sides, strict=True) if side)
    second = [lo << _SHIFT | hi for (lo, hi), side in zip(runs, sides, strict=True) if not side]
    count = data.draw(st.integers(1, 70))
    assert _nth_highest(first, second, max(len(ids) - count, 0)) == _nth_lowest(first, second, count)


@settings(max_examples=300)
@given(pieces, st.integers(-1, 320))
def test_easy_ids_above_the_reservation_are_the_difference_with_the_ids_up_to_it(
    intervals: list[tuple[int, int]], cutoff: int
) -> None:
    """EASY's scan gives away the free ids above its reservation's highest: a cut by bisection, the difference."""
    free = IntervalSet(intervals)
    result = _above(free, cutoff)
    assert result == free - IntervalSet.range(0, cutoff + 1)
    assert len(result) == len(list(result))
    assert canonical(result)
