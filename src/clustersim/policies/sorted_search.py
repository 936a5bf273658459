"""Binary searches over sorted lists of floats, as plain loops.

Compiled (pyproject.toml `[tool.clustersim] compiled`), a loop compares the native floats themselves, where a call
to the C `bisect` boxes its arguments and compares objects at every step: the time-slice plan of conservative
backfilling and the Slurm backfill map search their bounds with these.
"""

from __future__ import annotations


def first_after(values: list[float], x: float, lo: int, hi: int) -> int:
    """`bisect.bisect_right(values, x, lo, hi)`: the first index in lo..hi whose value is after `x`."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if x < values[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


def first_from(values: list[float], x: float, lo: int, hi: int) -> int:
    """`bisect.bisect_left(values, x, lo, hi)`: the first index in lo..hi whose value is `x` or after."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if values[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo
