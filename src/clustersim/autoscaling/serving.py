"""The interface both serving models implement (per-request and aggregate), and the work a request brings.

The controller drives a serving model forward in time (`advance`) and tells it which replicas accept traffic;
it reads back busy time (for CPU metrics), routed requests (for requests_per_second) and per-interval counts.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from clustersim.autoscaling.stats import IntervalCounts, Percentiles

DISTRIBUTIONS = ("exponential", "deterministic")


@dataclass(frozen=True, slots=True)
class Work:
    """CPU-seconds each request needs (a replica of capacity 1000m serves it alone in that many seconds)."""

    mean: float
    distribution: str = "exponential"

    def draws(self, rng: np.random.Generator) -> Iterator[float]:
        """An endless stream of request sizes, drawn in blocks."""
        if self.distribution == "deterministic":
            while True:
                yield self.mean
        while True:
            yield from rng.exponential(self.mean, 8192).tolist()

    def quantile(self, p: float) -> float:
        """The p-quantile of one request's work."""
        if self.distribution == "deterministic":
            return self.mean
        return -math.log1p(-p) * self.mean


class ServingModel(Protocol):
    """Requests arriving, routed to Ready replicas, processed, completed or failed."""

    now: float

    def advance(self, until: float) -> None:
        """Process everything that happens up to `until` (inclusive) and set the clock there."""

    def add_server(self, key: str, capacity: int) -> None:
        """A replica became Ready: it takes requests from now (and the buffered ones)."""

    def stop_routing(self, key: str) -> None:
        """A replica is terminating: no new requests, those in flight carry on."""

    def remove_server(self, key: str) -> None:
        """A replica is gone: its requests in flight fail."""

    def busy_seconds(self, key: str) -> float:
        """Seconds the replica has been busy (at least one request in flight) so far."""
        ...

    def routed(self, key: str) -> float:
        """Requests routed to the replica so far."""
        ...

    def in_flight(self) -> float:
        """Requests being processed on some replica."""
        ...

    def buffered(self) -> float:
        """Requests waiting for a Ready replica."""
        ...

    def take_interval(self) -> tuple[IntervalCounts, Percentiles]:
        """Counts and latency percentiles since the last call."""
        ...
