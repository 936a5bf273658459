"""The backfill map found by bisection answers as backfill.c's record-by-record walk does.

`WalkedNodeSpace` is the map as the straightforward model kept it (a list of [begin, end, nodes] records walked
from the first at every question, merged whole after every reservation, as `node_space_map_t` is): the fast
`NodeSpace` must give the same nodes, the same `later_start`, the same overlaps, the same records after every
reservation, and record the same dependence on now, on random sequences of reservations and questions.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clustersim.policies.slurm.backfill import NodeSpace, Validity


class WalkedNodeSpace:
    """The reference: every question walks the records from the first."""

    def __init__(self, begin: float, end: float, nodes: int, resolution: float):
        self.records: list[list[float]] = [[begin, end, nodes]]
        self.resolution = resolution

    def restrict(self, nodes: int, start: float, end: float, validity: Validity, limit: float) -> tuple[int, float]:
        records = self.records
        avail, later = nodes, 0.0
        for j, (begin, stop, free) in enumerate(records):
            if stop <= start:
                validity.at_least(stop)
                continue
            validity.below(stop)
            if later == 0 and j + 1 < len(records) and nodes & int(records[j + 1][2]) & ~(avail & int(free)):
                later = stop
            if begin <= end:
                validity.at_least(begin - limit)
                avail &= int(free)
            else:
                validity.below(begin - limit)
                break
        return avail, later

    def overlaps(self, nodes: int, start: float, end: float) -> bool:
        return any(stop > start and begin < end and nodes & ~int(free) for begin, stop, free in self.records)

    def reserve(self, start: float, end: float, nodes: int) -> bool:
        records = self.records
        start = max(start, records[0][0])
        end = max(end, start + self.resolution)
        reached = end >= records[-1][1]
        index = None
        for j, record in enumerate(records):
            if record[1] > start:
                if record[0] < start:
                    records.insert(j + 1, [start, record[1], record[2]])
                    record[1] = start
                    index = j + 1
                else:
                    index = j
                break
            if record[1] == start:
                index = j + 1
                break
        while index is not None and index < len(records):
            record = records[index]
            if end < record[1]:
                records.insert(index + 1, [end, record[1], record[2]])
                record[1] = end
            record[2] = int(record[2]) & ~nodes
            if end == record[1]:
                break
            index += 1
        merged = [records[0]]
        for record in records[1:]:
            if record[2] == merged[-1][2]:
                merged[-1][1] = record[1]
            else:
                merged.append(record)
        self.records = merged
        return reached


NODES = 5
SLOT = st.integers(min_value=-2, max_value=26)
ACTION = st.tuples(
    st.sampled_from(["reserve", "restrict", "overlaps"]), SLOT, st.integers(min_value=-1, max_value=12),
    st.integers(min_value=0, max_value=2**NODES - 1), st.integers(min_value=0, max_value=5), st.booleans(),
)


LAYOUTS = [(0, 1, 2, 3, 4), (0, 61, 62, 63, 123), (5, 61, 62, 124, 190)]
"""Where the NODES nodes sit in the bitmap: side by side; across the map's two words (nodes 0-61 and 62-123);
beyond 124 nodes, where the second word is a long integer."""


def spread(mask: int, layout: tuple[int, ...]) -> int:
    return sum(1 << bit for i, bit in enumerate(layout) if mask >> i & 1)


@pytest.mark.parametrize("layout", LAYOUTS)
@given(st.integers(min_value=0, max_value=3), st.sampled_from([1.0, 60.0]), st.lists(ACTION, max_size=25))
@settings(max_examples=500, deadline=None)
def test_the_bisected_map_answers_as_the_walked_map(
    layout: tuple[int, ...], first: int, resolution: float, actions: list[tuple[str, int, int, int, int, bool]]
) -> None:
    begin = first * resolution
    everything = spread(2**NODES - 1, layout)
    fast = NodeSpace(begin, begin + 20 * resolution, everything, resolution)
    walked = WalkedNodeSpace(begin, begin + 20 * resolution, everything, resolution)
    for kind, slot, length, mask, limit, half in actions:
        nodes = spread(mask, layout)
        start = slot * resolution * (0.5 if half else 1.0)  # off the slots too: `now` is any second
        end = start + length * resolution
        if kind == "reserve":
            assert fast.reserve(start, end, nodes) == walked.reserve(start, end, nodes)
            assert fast.records == walked.records
        elif kind == "restrict":
            fast_validity, walked_validity = Validity(start), Validity(start)
            assert (fast.restrict(nodes, start, end, fast_validity, limit * resolution)
                    == walked.restrict(nodes, start, end, walked_validity, limit * resolution))
            assert (fast_validity.lo, fast_validity.hi) == (walked_validity.lo, walked_validity.hi)
        else:
            assert fast.overlaps(nodes, start, end) == walked.overlaps(nodes, start, end)
    assert all(math.isfinite(bound) for bound in fast.bounds)
