"""The event loop's clock: a heap of the times that have events, each time's events in insertion order.

Rule for events at equal times: lower event class first (decisions held back until this instant, then job
ends, then nodes done switching on or off, then submissions, then machines becoming unavailable or available,
then requested calls), then insertion order. The simulation pops every event of an instant at once; how it
delivers them to the decision process (in one call, or in Batsim's rounds) is the simulation's `Delivery` rule.

(The order is that of a heap of `(time, event class, sequence, payload)`; the queue keeps one heap entry per
instant instead of one per event, and sorts an instant's events by class when it is popped: the heap's
comparisons are of two floats, not of two tuples, and most instants hold one event, popped as it was pushed.)
"""

from __future__ import annotations

from enum import IntEnum
from heapq import heappop
from typing import Generic, TypeVar, cast

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

    __slots__ = ("_instants", "_size", "_times", "now")

    def __init__(self) -> None:
        self._times: list[float] = []
        """A heap of the times that have events, each once."""
        self._instants: dict[float, list[tuple[EventClass, T]]] = {}
        """Each time's events, in insertion order."""
        self._size = 0
        self.now = 0.0

    def push(self, time: float, kind: EventClass, payload: T) -> None:
        if time < self.now:
            raise TimeTravelError(f"cannot schedule {kind.name} at t={time!r}: the clock is at t={self.now!r}")
        events = self._instants.get(time)
        if events is None:
            self._instants[time] = [(kind, payload)]
            _push(self._times, time)
        else:
            events.append((kind, payload))
        self._size += 1

    def __len__(self) -> int:
        return self._size

    def next_time(self) -> float | None:
        return self._times[0] if self._times else None

    def pop_instant(self) -> list[tuple[EventClass, T]]:
        """Advance the clock to the next event time and return all its events, in the documented order."""
        time = heappop(self._times)
        self.now = time
        batch = self._instants.pop(time)
        self._size -= len(batch)
        if len(batch) > 1:
            batch.sort(key=_event_class)  # stable: events of one class stay in insertion order
        return batch

    def take_all(self) -> list[tuple[float, EventClass, T]]:
        """Remove every event, in the documented order, without moving the clock (for a caller that times them
        itself)."""
        times, instants = sorted(self._times), self._instants
        self._times, self._instants, self._size = [], {}, 0
        taken: list[tuple[float, EventClass, T]] = []
        for time in times:
            batch = instants[time]
            batch.sort(key=_event_class)
            taken.extend([(time, kind, payload) for kind, payload in batch])
        return taken


def _event_class(event: tuple[EventClass, object]) -> EventClass:
    return event[0]


def _push(heap: list[float], time: float) -> None:
    """`heapq.heappush` of a time that is not in the heap yet.

    (The heap's own loop: compiled, it compares the times as doubles, where `heapq` compares them as objects
    through Python's comparison protocol. The times are distinct, so any heap pops them in the same order. Each
    time is moved as the object it is, read through an untyped view of the list: a typed store would box it
    again. A pop is left to `heapq.heappop`: its sift takes one comparison per level, and the same loop here,
    reading two children per level, counted more instructions.)"""
    items = cast("list[object]", heap)
    heap.append(time)
    moved = items[-1]
    i = len(heap) - 1
    while i > 0:
        parent = (i - 1) >> 1
        if time < heap[parent]:
            items[i] = items[parent]
            i = parent
        else:
            break
    items[i] = moved

