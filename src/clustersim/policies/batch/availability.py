"""A step function of free resources over future time, for policies that plan reservations.

`free[i]` units are free on `[times[i], times[i+1])`; the last step lasts forever. A profile can be kept
across decisions: `advance` forgets the past and `add` with a positive delta gives units back, so a policy
updates it at each start and end instead of building it again.
"""

from __future__ import annotations

import bisect
import math


class AvailabilityProfile:
    """Free-resource counts over time, starting at `now` with `capacity` units."""

    __slots__ = ("free", "times")

    def __init__(self, now: float, capacity: int):
        self.times: list[float] = [now]
        self.free: list[int] = [capacity]

    def copy(self) -> AvailabilityProfile:
        profile = AvailabilityProfile(self.times[0], 0)
        profile.times = self.times.copy()
        profile.free = self.free.copy()
        return profile

    def advance(self, now: float) -> None:
        """Start the profile at `now` (>= its first time): the steps before it are forgotten."""
        times = self.times
        i = bisect.bisect_right(times, now) - 1
        if i:
            del times[:i]
            del self.free[:i]
        times[0] = now

    def _split(self, t: float) -> int:
        """Index of the step starting at t, creating it if needed (t must be >= the first time)."""
        times = self.times
        i = bisect.bisect_right(times, t) - 1
        if times[i] == t:
            return i
        times.insert(i + 1, t)
        self.free.insert(i + 1, self.free[i])
        return i + 1

    def add(self, start: float, end: float, delta: int) -> None:
        """Change the free count by `delta` on [start, end) (the part before the first time is ignored)."""
        if start < self.times[0]:
            start = self.times[0]
        if end <= start:
            return
        i = self._split(start)
        j = self._split(end) if end != math.inf else len(self.times)
        free = self.free
        free[i:j] = [f + delta for f in free[i:j]]
        # Merge steps the change made equal to their predecessor, so the profile does not grow with every
        # job that ends before its walltime.
        if j < len(free) and free[j] == free[j - 1]:
            del free[j], self.times[j]
        if i and free[i] == free[i - 1]:
            del free[i], self.times[i]

    def earliest(self, nb_res: int, duration: float) -> float:
        """The earliest start >= the first time at which `nb_res` units stay free for `duration`."""
        times, free = self.times, self.free
        n = len(times)
        i = 0
        while i < n:
            if free[i] < nb_res:
                i += 1
                continue
            start = times[i]
            end = start + duration
            j = i + 1
            while j < n and times[j] < end and free[j] >= nb_res:
                j += 1
            if j >= n or times[j] >= end:
                return start
            i = j + 1
        return math.inf
