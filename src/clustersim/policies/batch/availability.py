"""A step function of free resources over future time, for policies that plan reservations.

`free[i]` units are free on `[times[i], times[i+1])`; the last step lasts forever.
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

    def _split(self, t: float) -> int:
        """Index of the step starting at t, creating it if needed (t must be >= the first time)."""
        i = bisect.bisect_right(self.times, t) - 1
        if self.times[i] == t:
            return i
        self.times.insert(i + 1, t)
        self.free.insert(i + 1, self.free[i])
        return i + 1

    def add(self, start: float, end: float, delta: int) -> None:
        """Change the free count by `delta` on [start, end)."""
        start = max(start, self.times[0])
        if end <= start:
            return
        i = self._split(start)
        j = self._split(end) if end != math.inf else len(self.times)
        for k in range(i, j):
            self.free[k] += delta

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
            j = i
            while j + 1 < n and times[j + 1] < end and free[j + 1] >= nb_res:
                j += 1
            if j + 1 >= n or times[j + 1] >= end:
                return start
            i = j + 1
        return math.inf
