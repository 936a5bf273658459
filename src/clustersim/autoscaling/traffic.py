"""Request traffic sources, registered by name: poisson, uniform, step, ramp, sinusoidal, replay.

A source is a rate over time plus a way to draw arrival times from a seeded generator passed in (never a global
one). The per-request model consumes `arrivals`; the aggregate (fluid) model consumes `expected`, the mean number
of arrivals in a window, so both modes see the same traffic on average. Time-varying Poisson sources draw by
thinning (Lewis and Shedler): candidates at the peak rate, each kept with probability rate(t) / peak.
"""

from __future__ import annotations

import bisect
import csv
import math
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import NamedTuple

import numpy as np

from clustersim.errors import InputError, UnknownNameError
from clustersim.plugins import Registry

_BLOCK = 8192
"""Random draws are made in blocks: one numpy call per block is far cheaper than one per request."""


class TrafficSource:
    """A rate of requests over time (requests/s); Poisson arrivals unless a subclass says otherwise."""

    name = "traffic"

    def rate(self, t: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def peak(self) -> float:
        """An upper bound of the rate, for thinning."""
        raise NotImplementedError

    def rate_at(self, t: float) -> float:
        return float(self.rate(np.array([t]))[0])

    def expected(self, start: float, end: float) -> float:
        """Mean number of arrivals in [start, end): the integral of the rate (midpoint rule, 16 points)."""
        if end <= start:
            return 0.0
        points = start + (np.arange(16) + 0.5) * (end - start) / 16
        return float(self.rate(points).mean()) * (end - start)

    def arrivals(self, rng: np.random.Generator, end: float) -> Iterator[float]:
        """Arrival times in [0, end), increasing."""
        peak = self.peak()
        if peak <= 0:
            return
        t = 0.0
        while True:
            times = t + np.cumsum(rng.exponential(1.0 / peak, _BLOCK))
            keep = rng.random(_BLOCK) * peak < self.rate(times)
            t = float(times[-1])
            chosen = times[keep & (times < end)]
            yield from chosen.tolist()
            if t >= end:
                return


class Poisson(TrafficSource):
    """Poisson arrivals at a constant rate."""

    name = "poisson"

    def __init__(self, rate: float):
        self.level = rate

    def rate(self, t: np.ndarray) -> np.ndarray:
        return np.full_like(t, self.level, dtype=float)

    def peak(self) -> float:
        return self.level

    def expected(self, start: float, end: float) -> float:
        return max(0.0, end - start) * self.level


class Uniform(Poisson):
    """A constant rate with inter-arrival times uniform on [0, 2/rate]: smoother than Poisson (cv 0.58)."""

    name = "uniform"

    def arrivals(self, rng: np.random.Generator, end: float) -> Iterator[float]:
        if self.level <= 0:
            return
        t = 0.0
        while t < end:
            times = t + np.cumsum(rng.uniform(0.0, 2.0 / self.level, _BLOCK))
            t = float(times[-1])
            yield from times[times < end].tolist()


class Step(TrafficSource):
    """Poisson at `before` requests/s until `at`, then at `after`: the classic step in traffic."""

    name = "step"

    def __init__(self, before: float, after: float, at: float):
        self.before, self.after, self.at = before, after, at

    def rate(self, t: np.ndarray) -> np.ndarray:
        return np.where(t < self.at, self.before, self.after).astype(float)

    def peak(self) -> float:
        return max(self.before, self.after)

    def expected(self, start: float, end: float) -> float:
        cut = min(max(self.at, start), end)
        return (cut - start) * self.before + (end - cut) * self.after


class Ramp(TrafficSource):
    """Poisson whose rate rises linearly from `base` to `peak` over `rise` s from `start`, stays there `hold` s,
    then falls back to `base` over `fall` s (default: `rise`)."""

    name = "ramp"

    def __init__(
        self, base: float, peak: float, start: float, rise: float, fall: float | None = None, hold: float = 0.0
    ):
        self.base, self.top, self.start, self.rise, self.hold = base, peak, start, rise, hold
        self.fall = rise if fall is None else fall

    def rate(self, t: np.ndarray) -> np.ndarray:
        up = np.clip((t - self.start) / max(self.rise, 1e-12), 0.0, 1.0)
        down = np.clip((t - self.start - self.rise - self.hold) / max(self.fall, 1e-12), 0.0, 1.0)
        return self.base + (self.top - self.base) * (up - down)

    def peak(self) -> float:
        return max(self.base, self.top)


class Sinusoidal(TrafficSource):
    """Poisson at `mean + amplitude * sin(2 pi (t / period) + phase)` (never below 0)."""

    name = "sinusoidal"

    def __init__(self, mean: float, amplitude: float, period: float, phase: float = 0.0):
        self.mean, self.amplitude, self.period, self.phase = mean, amplitude, period, phase

    def rate(self, t: np.ndarray) -> np.ndarray:
        wave = self.mean + self.amplitude * np.sin(2 * math.pi * t / self.period + self.phase)
        return np.maximum(wave, 0.0)

    def peak(self) -> float:
        return self.mean + abs(self.amplitude)


class ReplayRates(TrafficSource):
    """Poisson at a recorded per-second rate: value i is the rate during second [i, i+1) (0 after the trace)."""

    name = "replay-rates"

    def __init__(self, rates: list[float]):
        self.rates = np.asarray(rates, dtype=float)
        self._cumulative = np.concatenate([[0.0], np.cumsum(self.rates)])

    def rate(self, t: np.ndarray) -> np.ndarray:
        index = np.floor(t).astype(int)
        inside = (index >= 0) & (index < len(self.rates))
        return np.where(inside, self.rates[np.clip(index, 0, len(self.rates) - 1)], 0.0)

    def peak(self) -> float:
        return float(self.rates.max()) if len(self.rates) else 0.0

    def _integral(self, t: float) -> float:
        t = min(max(t, 0.0), float(len(self.rates)))
        whole = int(t)
        partial = (t - whole) * self.rates[whole] if whole < len(self.rates) else 0.0
        return float(self._cumulative[whole] + partial)

    def expected(self, start: float, end: float) -> float:
        return self._integral(end) - self._integral(start)


class ReplayTimestamps(TrafficSource):
    """Requests at exactly the recorded times (the generator is not used)."""

    name = "replay-timestamps"

    def __init__(self, times: list[float]):
        self.times = sorted(times)

    def rate(self, t: np.ndarray) -> np.ndarray:
        """Arrivals per second within the surrounding second (for plots and the fluid mode)."""
        return np.array([self.expected(math.floor(x), math.floor(x) + 1.0) for x in t.tolist()])

    def peak(self) -> float:
        return 0.0

    def expected(self, start: float, end: float) -> float:
        return float(bisect.bisect_left(self.times, end) - bisect.bisect_left(self.times, start))

    def arrivals(self, rng: np.random.Generator, end: float) -> Iterator[float]:
        return iter([t for t in self.times if 0 <= t < end])


def read_replay(path: Path, source: str) -> TrafficSource:
    """A replay CSV: a `time` column (timestamps) or a `rate` column (requests/s, one row per second).

    A file without a header is one number per line, read as timestamps.
    """
    try:
        with path.open(newline="") as handle:
            rows = [row for row in csv.reader(handle) if row and not row[0].startswith("#")]
    except OSError as error:
        raise InputError(source, f"cannot read the trace '{path}': {error}") from None
    if not rows:
        raise InputError(str(path), "the trace is empty")
    header = [cell.strip().lower() for cell in rows[0]]
    column, body = (0, rows)
    kind = "time"
    if "time" in header or "timestamp" in header or "rate" in header:
        kind = "rate" if "rate" in header else "time"
        column = header.index(kind if kind in header else "timestamp")
        body = rows[1:]
    values: list[float] = []
    for number, row in enumerate(body, start=2 if body is not rows else 1):
        try:
            value = float(row[column])
        except (ValueError, IndexError):
            raise InputError(str(path), f"expected a number in column '{kind}'", line=number) from None
        if not math.isfinite(value) or value < 0:
            raise InputError(str(path), f"expected a finite number >= 0, got {row[column]!r}", line=number)
        values.append(value)
    return ReplayRates(values) if kind == "rate" else ReplayTimestamps(values)


Factory = Callable[[Mapping[str, float]], TrafficSource]


class TrafficPattern(NamedTuple):
    """A numeric source: the option names it requires and accepts, and how to build it from them."""

    required: tuple[str, ...]
    optional: tuple[str, ...]
    factory: Factory


TRAFFIC: Registry[TrafficPattern] = Registry("traffic pattern", group="clustersim.traffic")
"""Numeric sources by name. `replay` takes a file and is built apart (`read_replay`)."""
TRAFFIC.add("poisson", TrafficPattern(("rate",), (), lambda o: Poisson(o["rate"])))
TRAFFIC.add("uniform", TrafficPattern(("rate",), (), lambda o: Uniform(o["rate"])))
TRAFFIC.add("step", TrafficPattern(("before", "after", "at"), (), lambda o: Step(o["before"], o["after"], o["at"])))
TRAFFIC.add("ramp", TrafficPattern(
    ("base", "peak", "start", "rise"), ("fall", "hold"),
    lambda o: Ramp(o["base"], o["peak"], o["start"], o["rise"], o.get("fall"), o.get("hold", 0.0)),
))
TRAFFIC.add("sinusoidal", TrafficPattern(
    ("mean", "amplitude", "period"), ("phase",),
    lambda o: Sinusoidal(o["mean"], o["amplitude"], o["period"], o.get("phase", 0.0)),
))


def traffic_names() -> list[str]:
    return sorted([*TRAFFIC.names(), "replay"])


def create_traffic(name: str, options: Mapping[str, float]) -> TrafficSource:
    """A numeric source by name; an unknown name fails listing the valid ones."""
    if name not in TRAFFIC:
        raise UnknownNameError("traffic pattern", name, traffic_names())
    return TRAFFIC.get(name).factory(options)
