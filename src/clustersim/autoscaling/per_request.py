"""The per-request serving model: every request is an entity, every replica shares its capacity among them.

Processor sharing uses virtual time: a replica's `v` is the service each of its requests has received; it grows
at `rate / n` CPU-seconds per second with `n` requests in flight, so a request of work `w` arriving at virtual
time `v0` is done when `v` reaches `v0 + w`. Only the earliest finish tag of each replica is an event; a change of
`n` reschedules it (older events are dropped by a version number). Timeouts need no event per request: with one
timeout for all, deadlines come in arrival order, so the oldest live request is the next one to time out.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Iterator

import numpy as np

from clustersim.autoscaling.routers import Router
from clustersim.autoscaling.serving import Work
from clustersim.autoscaling.stats import IntervalCounts, Percentiles, percentiles
from clustersim.autoscaling.traffic import TrafficSource


class _Request:
    __slots__ = ("arrival", "done", "server", "work")

    def __init__(self, arrival: float, work: float):
        self.arrival = arrival
        self.work = work
        self.done = False
        self.server: _Server | None = None


class _Server:
    """One Ready (or terminating) replica, as the serving model sees it."""

    __slots__ = ("busy", "busy_since", "heap", "key", "n", "rate", "routed", "t", "v", "version")

    def __init__(self, key: str, capacity: int, now: float):
        self.key = key
        self.rate = capacity / 1000.0
        self.n = 0
        self.v = 0.0
        self.t = now
        self.heap: list[tuple[float, int, _Request]] = []
        self.version = 0
        self.busy = 0.0
        self.busy_since = now
        self.routed = 0

    def catch_up(self, now: float) -> None:
        """Bring the virtual time to `now`."""
        if self.n:
            self.v += (now - self.t) * self.rate / self.n
        self.t = now


class PerRequestModel:
    """Requests from a traffic source, routed by a router, served under processor sharing, with a timeout."""

    def __init__(
        self, source: TrafficSource, work: Work, router: Router, rng: np.random.Generator,
        end: float, timeout: float = math.inf,
    ):
        self.now = 0.0
        self._arrivals: Iterator[float] = source.arrivals(rng, end)
        self._works = work.draws(rng)
        self._router = router
        self._timeout = timeout
        self._next_arrival = next(self._arrivals, math.inf)
        self._events: list[tuple[float, int, _Server, int]] = []
        self._seq = 0
        self._servers: dict[str, _Server] = {}
        self._accepting: list[_Server] = []
        self._buffer: deque[_Request] = deque()
        self._live: deque[_Request] = deque()
        self._counts = IntervalCounts()
        self._in_flight = 0

    # -- the event loop ---------------------------------------------------------------------------------

    def advance(self, until: float) -> None:
        events = self._events
        live = self._live
        timeout = self._timeout
        counts = self._counts
        while True:
            t_arrival = self._next_arrival
            while events and events[0][3] != events[0][2].version:
                heapq.heappop(events)
            t_done = events[0][0] if events else math.inf
            while live and live[0].done:
                live.popleft()
            t_timeout = live[0].arrival + timeout if live else math.inf
            if t_done <= t_arrival and t_done <= t_timeout:
                if t_done > until:
                    break
                _, _, server, _ = heapq.heappop(events)
                self._complete(server, t_done)
            elif t_timeout <= t_arrival:
                if t_timeout > until:
                    break
                self._time_out(live.popleft(), t_timeout)
            else:
                if t_arrival > until:
                    break
                counts.arrived += 1
                request = _Request(t_arrival, next(self._works))
                if timeout != math.inf:
                    live.append(request)
                if self._accepting:
                    self._assign(self._router.pick(self._accepting), request, t_arrival)
                else:
                    self._buffer.append(request)
                self._next_arrival = next(self._arrivals, math.inf)
        self.now = max(self.now, until)

    def _assign(self, server: _Server, request: _Request, now: float) -> None:
        server.catch_up(now)
        self._seq += 1
        heapq.heappush(server.heap, (server.v + request.work, self._seq, request))
        if not server.n:
            server.busy_since = now
        server.n += 1
        server.routed += 1
        self._in_flight += 1
        request.server = server
        self._reschedule(server, now)

    def _reschedule(self, server: _Server, now: float) -> None:
        server.version += 1
        heap = server.heap
        while heap and heap[0][2].done:
            heapq.heappop(heap)
        if heap:
            self._seq += 1
            when = now + max(0.0, heap[0][0] - server.v) * server.n / server.rate
            heapq.heappush(self._events, (when, self._seq, server, server.version))

    def _complete(self, server: _Server, now: float) -> None:
        server.catch_up(now)
        heap = server.heap
        limit = server.v + 1e-9 * (1.0 + server.v)
        latencies = self._counts.latencies
        while heap and heap[0][0] <= limit:
            _, _, request = heapq.heappop(heap)
            if request.done:
                continue
            request.done = True
            server.n -= 1
            self._in_flight -= 1
            self._counts.completed += 1
            latencies.append(now - request.arrival)
        if not server.n:
            server.busy += now - server.busy_since
        self._reschedule(server, now)

    def _time_out(self, request: _Request, now: float) -> None:
        request.done = True
        self._counts.failed += 1
        server = request.server
        if server is None:
            self._buffer.popleft()  # the oldest live request is the oldest buffered one
            return
        self._leave(server, now)

    def _leave(self, server: _Server, now: float) -> None:
        server.catch_up(now)
        server.n -= 1
        self._in_flight -= 1
        if not server.n:
            server.busy += now - server.busy_since
        self._reschedule(server, now)

    # -- replicas -----------------------------------------------------------------------------------------

    def add_server(self, key: str, capacity: int) -> None:
        server = _Server(key, capacity, self.now)
        self._servers[key] = server
        self._accepting.append(server)
        buffer = self._buffer
        while buffer:
            request = buffer.popleft()
            self._assign(self._router.pick(self._accepting), request, self.now)

    def stop_routing(self, key: str) -> None:
        server = self._servers.get(key)
        if server is not None and server in self._accepting:
            self._accepting.remove(server)

    def remove_server(self, key: str) -> None:
        self.stop_routing(key)
        server = self._servers.pop(key, None)
        if server is None:
            return
        server.catch_up(self.now)
        for _, _, request in server.heap:
            if not request.done:
                request.done = True
                self._counts.failed += 1
                self._in_flight -= 1
        if server.n:
            server.busy += self.now - server.busy_since
        server.n = 0
        server.heap.clear()
        server.version += 1

    # -- readings -----------------------------------------------------------------------------------------

    def busy_seconds(self, key: str) -> float:
        server = self._servers.get(key)
        if server is None:
            return 0.0
        return server.busy + (self.now - server.busy_since if server.n else 0.0)

    def routed(self, key: str) -> float:
        server = self._servers.get(key)
        return float(server.routed) if server is not None else 0.0

    def in_flight(self) -> float:
        return float(self._in_flight)

    def buffered(self) -> float:
        return float(len(self._buffer))

    def take_interval(self) -> tuple[IntervalCounts, Percentiles]:
        counts, self._counts = self._counts, IntervalCounts()
        return counts, percentiles(counts.latencies)
