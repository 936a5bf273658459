"""What the serving models report per output interval: arrivals, completions, failures and latencies."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True, slots=True)
class Percentiles:
    mean: float
    p50: float
    p95: float
    p99: float


NO_LATENCY = Percentiles(float("nan"), float("nan"), float("nan"), float("nan"))


@dataclass(slots=True)
class IntervalCounts:
    """Counts since the last report; `latency` is filled when the interval is closed."""

    arrived: float = 0.0
    completed: float = 0.0
    failed: float = 0.0
    latencies: list[float] = field(default_factory=list)


def percentiles(latencies: list[float]) -> Percentiles:
    """Mean and p50/p95/p99 of the latencies of requests completed in an interval (NaN when none)."""
    if not latencies:
        return NO_LATENCY
    values = np.asarray(latencies)
    p50, p95, p99 = np.percentile(values, [50, 95, 99]).tolist()
    return Percentiles(float(values.mean()), p50, p95, p99)
