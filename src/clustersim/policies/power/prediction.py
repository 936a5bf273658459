"""Predicting how many jobs will arrive within a horizon, from the interarrival times seen so far.

Used by the exponential and gamma power-off policies (as in the energy extension of Google's Omega
simulator): keep enough capacity on for the arrivals expected before a sleeping node could be back.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field


@dataclass
class ArrivalHistory:
    """The last `window` interarrival times and job sizes."""

    window: int = 100
    interarrivals: deque[float] = field(default_factory=deque)
    sizes: deque[int] = field(default_factory=deque)
    last_arrival: float | None = None

    def add(self, time: float, size: int) -> None:
        if self.last_arrival is not None:
            self.interarrivals.append(time - self.last_arrival)
            if len(self.interarrivals) > self.window:
                self.interarrivals.popleft()
        self.sizes.append(size)
        if len(self.sizes) > self.window:
            self.sizes.popleft()
        self.last_arrival = time

    def mean_size(self) -> float:
        return sum(self.sizes) / len(self.sizes) if self.sizes else 0.0

    def moments(self) -> tuple[float, float] | None:
        """Mean and variance of the interarrival times, when at least two were seen."""
        n = len(self.interarrivals)
        if n < 2:
            return None
        mean = sum(self.interarrivals) / n
        variance = sum((x - mean) ** 2 for x in self.interarrivals) / (n - 1)
        return mean, variance


def poisson_quantile(rate: float, quantile: float) -> int:
    """The smallest n with P(N <= n) >= quantile for N ~ Poisson(rate)."""
    if rate <= 0:
        return 0
    term = math.exp(-rate) if rate < 700 else 0.0
    if term == 0.0:  # normal approximation for huge rates
        return max(0, math.ceil(rate + _normal_quantile(quantile) * math.sqrt(rate)))
    total, n = term, 0
    while total < quantile and n < 100_000:
        n += 1
        term *= rate / n
        total += term
    return n


def _normal_quantile(p: float) -> float:
    """Acklam's rational approximation of the standard normal quantile (relative error < 1.2e-9)."""
    a = (-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.3577518672690, -30.66479806614716,
         2.506628277459239)
    b = (-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572)
    c = (-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968,
         2.938163982698783)
    d = (0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416)
    if p < 0.02425:
        q = math.sqrt(-2 * math.log(p))
        return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / (
            (((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
    if p > 1 - 0.02425:
        return -_normal_quantile(1 - p)
    q = p - 0.5
    r = q * q
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q / (
        ((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)


def gamma_cdf(x: float, shape: float, scale: float) -> float:
    """P(X <= x) for X ~ Gamma(shape, scale): the regularized lower incomplete gamma function."""
    if x <= 0:
        return 0.0
    z = x / scale
    if z < shape + 1:  # series
        term = total = 1.0 / shape
        a = shape
        for _ in range(10_000):
            a += 1
            term *= z / a
            total += term
            if term < total * 1e-15:
                break
        return min(1.0, total * math.exp(-z + shape * math.log(z) - math.lgamma(shape)))
    # continued fraction for the upper tail (Lentz)
    tiny = 1e-300
    b = z + 1 - shape
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - shape)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-15:
            break
    return max(0.0, 1.0 - math.exp(-z + shape * math.log(z) - math.lgamma(shape)) * h)


def gamma_arrivals_quantile(horizon: float, shape: float, scale: float, quantile: float, limit: int = 10_000) -> int:
    """The number of arrivals within `horizon` not exceeded with probability `quantile`, for a renewal process
    of Gamma(shape, scale) interarrivals: the largest n with P(n arrivals by the horizon) >= 1 - quantile,
    where the time of the n-th arrival is Gamma(n * shape, scale).
    """
    n = 0
    while n < limit and gamma_cdf(horizon, (n + 1) * shape, scale) >= 1 - quantile:
        n += 1
    return n
