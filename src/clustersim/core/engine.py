"""The event loop's clock: a heap of `(time, event class, sequence, payload)`.

Rule for events at equal times: lower event class first (decisions held back until this instant, then job
ends, then nodes done switching on or off, then submissions, then machines becoming unavailable or available,
then requested calls), then insertion order. The simulation pops every event of an instant at once; how it
delivers them to the decision process (in one call, or in Batsim's rounds) is the simulation's `Delivery` rule.
"""

from __future__ import annotations

import heapq
from enum import IntEnum
from itertools import count
from typing import Generic, TypeVar

from clustersim.errors import ClusterSimError

T = TypeVar("T")


class EventClass(IntEnum):
    """Order of application of events that happen at the same instant."""

    DUE = 0
    """A call asked with `CallMeLater(first=True)`: decisions timestamped for this instant apply before its events."""
    JOB_END = 1
    NODE_SWITCHED = 2
    JOB_SUBMIT = 3
    MACHINES = 4
    CALL = 5
    """A call asked at an earlier instant: Batsim's waiter wakes at the instant's first message."""
    LAST_CALL = 6
    """A call for the instant it was asked at (Batsim's waiter does not sleep then), or asked with
    `CallMeLater(last=True)` (the decision process is busy until then): after the instant's other events."""


class TimeTravelError(ClusterSimError):
    """Something asked for an event before the current simulated time."""


class EventQueue(Generic[T]):
    """A deterministic priority queue of timed events; time only moves forward."""

    __slots__ = ("_heap", "_seq", "now")

    def __init__(self) -> None:
        self._heap: list[tuple[float, EventClass, int, T]] = []
        self._seq = count()
        self.now = 0.0

    def push(self, time: float, kind: EventClass, payload: T) -> None:
        if time < self.now:
            raise TimeTravelError(f"cannot schedule {kind.name} at t={time!r}: the clock is at t={self.now!r}")
        heapq.heappush(self._heap, (time, kind, next(self._seq), payload))

    def __len__(self) -> int:
        return len(self._heap)

    def next_time(self) -> float | None:
        return self._heap[0][0] if self._heap else None

    def pop_instant(self) -> list[tuple[EventClass, T]]:
        """Advance the clock to the next event time and return all its events, in the documented order."""
        heap = self._heap
        time, kind, _, payload = heapq.heappop(heap)
        self.now = time
        batch: list[tuple[EventClass, T]] = [(kind, payload)]
        while heap and heap[0][0] == time:
            _, kind, _, payload = heapq.heappop(heap)
            batch.append((kind, payload))
        return batch

    def take_all(self) -> list[tuple[float, EventClass, T]]:
        """Remove every event, in the documented order, without moving the clock (for a caller that times them
        itself)."""
        heap, self._heap = self._heap, []
        return [(time, kind, payload) for time, kind, _, payload in sorted(heap)]
