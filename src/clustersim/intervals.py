"""Sets of integer ids stored as sorted disjoint closed intervals, Batsim's `0-3 8` notation.

Resource sets in a cluster are mostly contiguous, so intervals keep both memory and the cost of set
operations proportional to fragmentation rather than to the number of resources.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator
from operator import itemgetter
from typing import Final, cast

from clustersim.errors import InputError

Interval = tuple[int, int]
_LO: Final = itemgetter(0)
_HI: Final = itemgetter(1)
_FEW: Final = 8
"""An operand with fewer intervals than the other's over this is applied interval by interval, by bisection."""


class IntervalSet:
    """An immutable set of non-negative integers, as sorted, disjoint, non-adjacent closed intervals."""

    __slots__ = ("_intervals", "_size")

    def __init__(self, intervals: Iterable[Interval] = (), trusted_size: int = -1):
        """`trusted_size` (internal, `_trusted`): the intervals are sorted, disjoint and non-adjacent already and
        hold that many ids."""
        if trusted_size >= 0:
            self._intervals: tuple[Interval, ...] = tuple(intervals)
            self._size = trusted_size
            return
        merged: list[Interval] = []
        for lo, hi in sorted(intervals):
            if lo > hi:
                continue
            if merged and lo <= merged[-1][1] + 1:
                if hi > merged[-1][1]:
                    merged[-1] = (merged[-1][0], hi)
            else:
                merged.append((lo, hi))
        self._intervals = tuple(merged)
        self._size = sum(hi - lo + 1 for lo, hi in merged)

    @classmethod
    def _trusted(cls, intervals: Iterable[Interval], size: int) -> IntervalSet:
        """Build from intervals already sorted, disjoint and non-adjacent (internal fast path; a constructor
        argument rather than `__new__`, which mypyc-compiled classes do not allow)."""
        return cls(intervals, size)

    @classmethod
    def from_mask(cls, mask: int) -> IntervalSet:
        """The ids of the bits set in `mask` (bit i: id i), run by run."""
        intervals: list[Interval] = []
        size = 0
        while mask:
            lo = (mask & -mask).bit_length() - 1
            shifted = mask >> lo
            width = (shifted ^ (shifted + 1)).bit_length() - 1  # the run of ones starting at bit lo
            intervals.append((lo, lo + width - 1))
            size += width
            mask ^= ((1 << width) - 1) << lo
        return cls._trusted(intervals, size)

    @property
    def mask(self) -> int:
        """The set as an integer bit mask (bit i: id i), for set algebra at C speed on many sets."""
        mask = 0
        for lo, hi in self._intervals:
            mask |= ((1 << (hi - lo + 1)) - 1) << lo
        return mask

    @classmethod
    def from_ids(cls, ids: Iterable[int]) -> IntervalSet:
        return cls((i, i) for i in ids)

    @classmethod
    def range(cls, start: int, stop: int) -> IntervalSet:
        """The ids start..stop-1, like Python's range."""
        return cls._trusted([(start, stop - 1)], stop - start) if stop > start else cls()

    @classmethod
    def parse(cls, text: str, source: str = "<interval set>") -> IntervalSet:
        """Parse Batsim's notation: space-separated ids or `lo-hi` ranges, e.g. `0-3 8 10-11`."""
        intervals: list[Interval] = []
        for token in text.split():
            lo_text, dash, hi_text = token.partition("-")
            try:
                lo = int(lo_text)
                hi = int(hi_text) if dash else lo
            except ValueError:
                raise InputError(source, f"'{token}' is not an id or an id range like '4-8'") from None
            if lo < 0 or hi < lo:
                raise InputError(source, f"'{token}' is not a valid range (need 0 <= lo <= hi)")
            intervals.append((lo, hi))
        return cls(intervals)

    @property
    def intervals(self) -> tuple[Interval, ...]:
        return self._intervals

    def __len__(self) -> int:
        return self._size

    def __bool__(self) -> bool:
        return self._size > 0

    def __iter__(self) -> Iterator[int]:
        for lo, hi in self._intervals:
            yield from range(lo, hi + 1)

    def __contains__(self, item: object) -> bool:
        if not isinstance(item, int):
            return False
        intervals = self._intervals
        i = bisect_right(intervals, item, key=_LO) - 1
        return i >= 0 and item <= intervals[i][1]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IntervalSet) and self._intervals == other._intervals

    def __hash__(self) -> int:
        return hash(self._intervals)

    def __repr__(self) -> str:
        return f"IntervalSet('{self}')"

    def __str__(self) -> str:
        intervals = self._intervals
        if len(intervals) == 1:
            lo, hi = intervals[0]
            return str(lo) if lo == hi else f"{lo}-{hi}"
        return " ".join([str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in intervals])

    def __or__(self, other: IntervalSet) -> IntervalSet:
        if not other._size:
            return self
        if not self._size:
            return other
        if len(other._intervals) == 1:
            lo, hi = other._intervals[0]  # (not `*`: compiled, a call with `*` is a Python-level call)
            return self._with(lo, hi)
        if len(self._intervals) == 1:
            lo, hi = self._intervals[0]
            return other._with(lo, hi)
        if len(other._intervals) * _FEW < len(self._intervals):
            return self._with_each(other)
        if len(self._intervals) * _FEW < len(other._intervals):
            return other._with_each(self)
        return _merged(self._intervals, other._intervals)

    def _with(self, lo: int, hi: int) -> IntervalSet:
        """The union with one interval, by bisection: the intervals it touches become one."""
        intervals = list(self._intervals)
        added = _join_into(intervals, lo, hi)
        return IntervalSet(intervals, self._size + added) if added else self

    def _without(self, lo: int, hi: int) -> IntervalSet:
        """The difference with one interval, by bisection: only the intervals it overlaps are cut."""
        intervals = list(self._intervals)
        added = _cut_into(intervals, lo, hi)
        return IntervalSet(intervals, self._size + added) if added else self

    def _with_each(self, other: IntervalSet) -> IntervalSet:
        """The union with a set of far fewer intervals: `_with` for each of them, on one list edited in place
        (a fragmented free set keeps its untouched intervals, with no merge of every one)."""
        intervals = list(self._intervals)
        size = self._size
        for lo, hi in other._intervals:
            size += _join_into(intervals, lo, hi)
        return IntervalSet(intervals, size)

    def _without_each(self, other: IntervalSet) -> IntervalSet:
        """The difference with a set of far fewer intervals: `_without` for each of them, on one list."""
        intervals = list(self._intervals)
        size = self._size
        for lo, hi in other._intervals:
            size += _cut_into(intervals, lo, hi)
        return IntervalSet(intervals, size)

    def __sub__(self, other: IntervalSet) -> IntervalSet:
        if not other._size or not self._size:
            return self
        if len(other._intervals) == 1:
            lo, hi = other._intervals[0]  # (not `*`: compiled, a call with `*` is a Python-level call)
            return self._without(lo, hi)
        if len(other._intervals) * _FEW < len(self._intervals):
            return self._without_each(other)
        return _cut_by(self._intervals, other._intervals, self._size)

    def __and__(self, other: IntervalSet) -> IntervalSet:
        """The intersection, by one merge of the two interval lists."""
        a, b = self._intervals, other._intervals
        if len(a) < len(b):
            a, b = b, a
        if len(b) == 1:
            # One interval: the intervals of `a` it overlaps, found by bisection, clipped to it.
            lo, hi = b[0]
            i = bisect_left(a, lo, key=_HI)
            j = bisect_right(a, hi, key=_LO)
            if i >= j:
                return _EMPTY
            clipped = list(a[i:j])
            if clipped[0][0] < lo:
                clipped[0] = (lo, clipped[0][1])
            if clipped[-1][1] > hi:
                clipped[-1] = (clipped[-1][0], hi)
            return IntervalSet(clipped, sum(y - x + 1 for x, y in clipped))
        if not b:
            return _EMPTY
        result: list[Interval] = []
        size = 0
        i = j = 0
        nb_a, nb_b = len(a), len(b)
        while i < nb_a and j < nb_b:
            a_lo, a_hi = a[i]
            b_lo, b_hi = b[j]
            lo = a_lo if a_lo > b_lo else b_lo
            hi = a_hi if a_hi < b_hi else b_hi
            if lo <= hi:
                result.append((lo, hi))
                size += hi - lo + 1
            if a_hi < b_hi:
                i += 1
            else:
                j += 1
        return IntervalSet(result, size)

    def issubset(self, other: IntervalSet) -> bool:
        if len(self._intervals) == 1:
            lo, hi = self._intervals[0]
            intervals = other._intervals
            i = bisect_right(intervals, lo, key=_LO) - 1
            return i >= 0 and hi <= intervals[i][1]
        return not (self - other)

    def lowest(self, count: int) -> IntervalSet:
        """The `count` smallest ids of the set (all of them if it has fewer)."""
        if count >= self._size:
            return self
        result: list[Interval] = []
        remaining = count
        for lo, hi in self._intervals:
            if remaining <= 0:
                break
            width = hi - lo + 1
            if width <= remaining:
                result.append((lo, hi))
                remaining -= width
            else:
                result.append((lo, lo + remaining - 1))
                remaining = 0
        return IntervalSet(result, count)

    def max(self) -> int:
        return self._intervals[-1][1]


_EMPTY: Final = IntervalSet()


def _merged(a: tuple[Interval, ...], b: tuple[Interval, ...]) -> IntervalSet:
    """The union of two non-empty interval lists by one merge, in order of their lower ends.

    An interval that joins no other is kept as the object it is: compiled, reading an interval unboxes it and
    building one allocates a tuple and its two ints, which on a fragmented free set was most of the union's cost
    (each interval is read through `a` and `b`, typed, and kept through `a_kept` and `b_kept`, untyped)."""
    a_kept = cast("tuple[object, ...]", a)
    b_kept = cast("tuple[object, ...]", b)
    merged: list[object] = []
    size = 0
    nb_a, nb_b = len(a), len(b)
    i = j = 0
    run: object | None  # the current run as the operands' interval object, while it is one
    if a[0][0] <= b[0][0]:
        run_lo, run_hi = a[0]
        run, i = a_kept[0], 1
    else:
        run_lo, run_hi = b[0]
        run, j = b_kept[0], 1
    while i < nb_a or j < nb_b:
        if j >= nb_b or (i < nb_a and a[i][0] <= b[j][0]):
            lo, hi = a[i]
            interval = a_kept[i]
            i += 1
        else:
            lo, hi = b[j]
            interval = b_kept[j]
            j += 1
        if lo <= run_hi + 1:
            if hi > run_hi:
                run_hi = hi
                run = None
        else:
            merged.append((run_lo, run_hi) if run is None else run)
            size += run_hi - run_lo + 1
            run_lo, run_hi, run = lo, hi, interval
    merged.append((run_lo, run_hi) if run is None else run)
    size += run_hi - run_lo + 1
    return IntervalSet(cast("list[Interval]", merged), size)


def _cut_by(intervals: tuple[Interval, ...], cuts: tuple[Interval, ...], size: int) -> IntervalSet:
    """`intervals` (holding `size` ids) less `cuts`, by one merge; an interval no cut touches is kept as the object
    it is (see `_merged`)."""
    kept = cast("tuple[object, ...]", intervals)
    result: list[object] = []
    nb_cuts = len(cuts)
    j = 0
    for index in range(len(intervals)):
        lo, hi = intervals[index]
        while j < nb_cuts and cuts[j][1] < lo:
            j += 1
        start = lo
        k = j
        while k < nb_cuts:
            cut_lo, cut_hi = cuts[k]
            if cut_lo > hi:
                break
            if cut_lo > start:
                result.append((start, cut_lo - 1))
            overlap_lo = start if start > cut_lo else cut_lo
            overlap_hi = hi if hi < cut_hi else cut_hi
            size -= overlap_hi - overlap_lo + 1
            start = cut_hi + 1
            if start > hi:
                break
            k += 1
        if start == lo:  # no cut touched it
            result.append(kept[index])
        elif start <= hi:
            result.append((start, hi))
    return IntervalSet(cast("list[Interval]", result), size)


def _ending_from(intervals: list[Interval], value: int, start: int) -> int:
    """The index of the first of sorted `intervals`, from `start` on, that ends at or after `value`.

    (A loop rather than `bisect` with a `key`: compiled, each step of `bisect` calls the key function through
    Python's call protocol, and the loop reads the interval's end natively; it was most of a start's and an
    end's set arithmetic.)"""
    end = len(intervals)
    while start < end:
        middle = (start + end) >> 1
        if intervals[middle][1] < value:
            start = middle + 1
        else:
            end = middle
    return start


def _starting_after(intervals: list[Interval], value: int, start: int) -> int:
    """The index of the first of sorted `intervals`, from `start` on, that starts after `value`."""
    end = len(intervals)
    while start < end:
        middle = (start + end) >> 1
        if intervals[middle][0] <= value:
            start = middle + 1
        else:
            end = middle
    return start


def _join_into(intervals: list[Interval], lo: int, hi: int) -> int:
    """Join [lo, hi] into sorted `intervals` in place: the intervals it touches become one. Returns the ids this
    adds (0: `intervals` is unchanged)."""
    i = _ending_from(intervals, lo - 1, 0)  # the first that ends at or after lo - 1
    j = _starting_after(intervals, hi + 1, i)  # the first that starts after hi + 1
    if i == j:
        intervals.insert(i, (lo, hi))
        return hi - lo + 1
    first = intervals[i][0]
    last = intervals[j - 1][1]
    if first < lo:
        lo = first
    if last > hi:
        hi = last
    added = hi - lo + 1
    for k in range(i, j):  # (a loop, not `sum` over a generator: compiled, a generator is an object per call)
        first, last = intervals[k]
        added -= last - first + 1
    if added:
        intervals[i] = (lo, hi)
        if j > i + 1:
            del intervals[i + 1 : j]
    return added


def _cut_into(intervals: list[Interval], lo: int, hi: int) -> int:
    """Cut [lo, hi] out of sorted `intervals` in place: only the intervals it overlaps change. Returns the ids this
    adds (zero or fewer; 0: `intervals` is unchanged)."""
    i = _ending_from(intervals, lo, 0)  # the first that ends at or after lo
    j = _starting_after(intervals, hi, i)  # the first that starts after hi
    if i == j:
        return 0
    first = intervals[i][0]
    last = intervals[j - 1][1]
    added = 0
    for k in range(i, j):
        low, high = intervals[k]
        added -= high - low + 1
    if first < lo:
        added += lo - first
        if last > hi and j == i + 1:  # [lo, hi] falls inside one interval: it splits in two
            added += last - hi
            intervals[i] = (first, lo - 1)
            intervals.insert(i + 1, (hi + 1, last))
            return added
        intervals[i] = (first, lo - 1)
        i += 1
    if last > hi:
        added += last - hi
        j -= 1
        intervals[j] = (hi + 1, last)
    if j > i:
        del intervals[i:j]
    return added
