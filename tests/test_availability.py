"""The availability profile kept across decisions equals the one built from scratch at every instant.

Conservative backfilling updates its profile at each start and end (`advance`, then `add` with the units
taken or given back) instead of rebuilding it from the running jobs and reservations. A random sequence of
starts and ends, at non-decreasing instants, must leave a profile with the same free count at every future
time, and the same `earliest` answer for any request, as a profile built from the intervals still held.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from clustersim.policies.batch.availability import AvailabilityProfile

CAPACITY = 8

_times = st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0, 5.0, 8.0, 13.0, math.inf])
_step = st.tuples(
    st.sampled_from(["start", "end", "advance"]),
    st.floats(min_value=0, max_value=6, allow_nan=False),
    _times,
    st.integers(min_value=1, max_value=CAPACITY),
    st.integers(min_value=0, max_value=1_000),
)


def _free_at(profile: AvailabilityProfile, t: float) -> int:
    i = max(k for k, start in enumerate(profile.times) if start <= t)
    return profile.free[i]


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.lists(_step, max_size=40), st.lists(st.tuples(st.integers(1, CAPACITY + 1), _times), max_size=6))
def test_incremental_profile_equals_rebuilt(steps: list[tuple[str, float, float, int, int]],
                                            requests: list[tuple[int, float]]) -> None:
    now = 0.0
    kept = AvailabilityProfile(now, CAPACITY)
    held: list[tuple[float, float, int]] = []  # intervals (start, end, units) taken, as from-scratch input
    for action, gap, length, units, pick in steps:
        if action == "advance":
            now += gap
            kept.advance(now)
        elif action == "start":
            start = now + gap  # a running job (gap 0) or a reservation in the future
            held.append((start, start + length, units))
            kept.add(start, start + length, -units)
        elif held:
            start, end, units = held.pop(pick % len(held))  # a job ends or a reservation is released
            kept.add(start, end, units)
    rebuilt = AvailabilityProfile(now, CAPACITY)
    for start, end, units in held:
        rebuilt.add(start, end, -units)
    assert kept.times[0] == now
    for t in sorted(set(kept.times) | set(rebuilt.times)):
        assert _free_at(kept, t) == _free_at(rebuilt, t), t
    for nb_res, duration in requests:
        assert kept.earliest(nb_res, duration) == rebuilt.earliest(nb_res, duration)


def test_advance_keeps_the_step_containing_now() -> None:
    profile = AvailabilityProfile(0.0, 4)
    profile.add(1.0, 3.0, -2)
    profile.advance(2.0)
    assert (profile.times, profile.free) == ([2.0, 3.0], [2, 4])
    copy = profile.copy()
    copy.add(2.0, 5.0, -2)
    assert (profile.times, profile.free) == ([2.0, 3.0], [2, 4])
    assert copy.earliest(3, 1.0) == 5.0
