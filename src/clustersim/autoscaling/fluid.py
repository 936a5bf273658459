"""The aggregate (fluid) serving model, for rates where one entity per request would be too slow.

Requests are a continuous quantity. Each time step (1 s by default, and at every control event) brings the mean
number of arrivals of the traffic source, split evenly over the Ready replicas (every router is even in the fluid
limit). The number in flight `N` of a replica follows the pointwise stationary fluid flow approximation of an
M/M/1 processor-sharing queue (Wang, Nelson and Liu, 1996): `dN/dt = lambda - mu N / (1 + N)`, whose steady state
is the exact `N = rho / (1 - rho)`, and which grows at `lambda - mu` under overload. It is integrated by implicit
Euler (a quadratic per step), which is stable for any step. The busy fraction is `N / (1 + N)` (= rho in steady
state), and a request arriving now stays `S (1 + N)` on average, S its service time alone (the M/G/1-PS mean).
Latency percentiles assume a request's latency is its work scaled by `1 + N`; timeouts fail the fraction of
completions whose latency exceeds the timeout, and cap `N` at what the timeout lets accumulate.
"""

from __future__ import annotations

import math

import numpy as np

from clustersim.autoscaling.serving import Work
from clustersim.autoscaling.stats import NO_LATENCY, IntervalCounts, Percentiles
from clustersim.autoscaling.traffic import TrafficSource


class _Replica:
    __slots__ = ("accepting", "busy", "mu", "n", "routed", "service")

    def __init__(self, capacity: int, work: Work):
        self.service = work.mean / (capacity / 1000.0)
        self.mu = 1.0 / self.service
        self.n = 0.0
        self.busy = 0.0
        self.routed = 0.0
        self.accepting = True


class FluidModel:
    """Arrivals and processing as flows; the same interface as the per-request model."""

    def __init__(self, source: TrafficSource, work: Work, end: float, timeout: float = math.inf, step: float = 1.0):
        self.now = 0.0
        self._source = source
        self._work = work
        self._end = end
        self._timeout = timeout
        self._step = step
        self._replicas: dict[str, _Replica] = {}
        self._buffer: list[tuple[float, float]] = []
        self._counts = IntervalCounts()
        self._weights: list[float] = []
        self._means: list[float] = []

    def advance(self, until: float) -> None:
        while self.now < until:
            grid = (math.floor(self.now / self._step + 1e-9) + 1) * self._step
            end = min(grid, until)
            self._flow(self.now, end - self.now)
            self.now = end
        self.now = max(self.now, until)

    def _flow(self, t: float, dt: float) -> None:
        counts = self._counts
        arrived = self._source.expected(t, min(t + dt, self._end)) if t < self._end else 0.0
        counts.arrived += arrived
        accepting = [r for r in self._replicas.values() if r.accepting]
        timeout = self._timeout
        if not accepting:
            if arrived > 0:
                self._buffer.append((t + dt / 2, arrived))
            while self._buffer and self._buffer[0][0] + timeout <= t + dt:
                counts.failed += self._buffer.pop(0)[1]
            share = 0.0
        else:
            for since, amount in self._buffer:  # the waiting requests go first, their wait added to latency
                self._record(amount, t - since + self._work.mean)
                arrived += amount
            self._buffer.clear()
            share = arrived / len(accepting)
        for replica in self._replicas.values():
            incoming = share if replica.accepting else 0.0
            a = replica.n + incoming
            b = 1.0 - a + replica.mu * dt
            n1 = (-b + math.sqrt(b * b + 4.0 * a)) / 2.0
            if timeout != math.inf:
                cap = incoming / dt * timeout + 1.0
                if n1 > cap:
                    counts.failed += n1 - cap
                    n1 = cap
            done = replica.mu * dt * n1 / (1.0 + n1)
            replica.busy += dt * n1 / (1.0 + n1)
            replica.routed += incoming
            mean = replica.service * (1.0 + 0.5 * (replica.n + n1))
            late = self._late(mean)
            counts.failed += done * late
            self._record(done * (1.0 - late), mean)
            counts.completed += done * (1.0 - late)
            replica.n = n1

    def _late(self, mean: float) -> float:
        """The fraction of requests of mean latency `mean` that exceed the timeout."""
        if self._timeout == math.inf:
            return 0.0
        if self._work.distribution == "deterministic":
            return 1.0 if mean > self._timeout else 0.0
        return math.exp(-self._timeout / mean)

    def _record(self, weight: float, mean: float) -> None:
        if weight > 1e-12:
            self._weights.append(weight)
            self._means.append(mean)

    # -- replicas -----------------------------------------------------------------------------------------

    def add_server(self, key: str, capacity: int) -> None:
        self._replicas[key] = _Replica(capacity, self._work)

    def stop_routing(self, key: str) -> None:
        replica = self._replicas.get(key)
        if replica is not None:
            replica.accepting = False

    def remove_server(self, key: str) -> None:
        replica = self._replicas.pop(key, None)
        if replica is not None:
            self._counts.failed += replica.n

    # -- readings -----------------------------------------------------------------------------------------

    def busy_seconds(self, key: str) -> float:
        replica = self._replicas.get(key)
        return replica.busy if replica is not None else 0.0

    def routed(self, key: str) -> float:
        replica = self._replicas.get(key)
        return replica.routed if replica is not None else 0.0

    def in_flight(self) -> float:
        return sum(r.n for r in self._replicas.values())

    def buffered(self) -> float:
        return sum(amount for _, amount in self._buffer)

    def take_interval(self) -> tuple[IntervalCounts, Percentiles]:
        counts, self._counts = self._counts, IntervalCounts()
        weights, means = np.asarray(self._weights), np.asarray(self._means)
        self._weights, self._means = [], []
        if not len(weights) or weights.sum() <= 0:
            return counts, NO_LATENCY
        mean = float((weights * means).sum() / weights.sum())
        p50, p95, p99 = (self._quantile(weights, means, p) for p in (0.5, 0.95, 0.99))
        return counts, Percentiles(mean, p50, p95, p99)

    def _quantile(self, weights: np.ndarray, means: np.ndarray, p: float) -> float:
        """The p-quantile of the mixture of latencies: work quantiles scaled by `1 + N`, weighted by completions."""
        scale = means / self._work.mean
        if self._work.distribution == "deterministic":
            order = np.argsort(means)
            cumulative = np.cumsum(weights[order]) / weights.sum()
            return float(means[order][min(int(np.searchsorted(cumulative, p)), len(order) - 1)])
        rates = 1.0 / (scale * self._work.mean)
        low, high = 0.0, float(means.max()) * 10.0
        total = weights.sum()
        for _ in range(60):
            middle = (low + high) / 2
            below = float((weights * -np.expm1(-rates * middle)).sum() / total)
            low, high = (middle, high) if below < p else (low, middle)
        return (low + high) / 2
