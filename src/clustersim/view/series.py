"""Time series the viewer derives from a run's jobs: step functions, binned when they have too many steps.

A step function is given by change instants and increments (+units at a start, -units at a finish); its value
over time is the running sum. Long runs (HPC2N: 400,000 changes) are shown as the time-weighted mean over
`MAX_POINTS` equal bins, which is what a screen-wide chart can show anyway; the Gantt chart holds the detail.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]

MAX_POINTS = 4000
"""Above this many changes a series is binned (time-weighted mean per bin)."""


def step_series(times: FloatArray, deltas: FloatArray, end: float) -> tuple[FloatArray, FloatArray]:
    """The value after each change instant (changes at the same instant merged), then binned if too long.

    Returns (x, y) for a step line drawn with mode 'after': y[i] holds from x[i] until x[i+1]; the last point is
    at `end`, so the line covers the run.
    """
    order = np.argsort(times, kind="stable")
    t = times[order]
    level = np.cumsum(deltas[order])
    last = np.r_[t[1:] != t[:-1], True] if t.size else np.zeros(0, bool)
    x, y = t[last], level[last]
    if x.size == 0:
        return np.array([0.0, end]), np.zeros(2)
    x = np.r_[x, max(end, x[-1])]
    y = np.r_[y, y[-1]]
    if x.size <= MAX_POINTS:
        return x, y
    return binned_mean(x, y, MAX_POINTS)


def binned_mean(x: FloatArray, y: FloatArray, nb_bins: int) -> tuple[FloatArray, FloatArray]:
    """Time-weighted mean of the step function (x, y) over `nb_bins` equal bins: exact, from its integral."""
    edges = np.linspace(x[0], x[-1], nb_bins + 1)
    integral = np.r_[0.0, np.cumsum(y[:-1] * np.diff(x))]
    # the integral at each edge: the integral at the step before it plus the level since that step
    step = np.clip(np.searchsorted(x, edges, side="right") - 1, 0, x.size - 1)
    at_edges = integral[step] + y[step] * (edges - x[step])
    width = edges[1] - edges[0]
    means = np.diff(at_edges) / width if width > 0 else y[:nb_bins]
    return edges, np.r_[means, means[-1]]


def occupancy_image(start: FloatArray, finish: FloatArray, lo: NDArray[np.int64], hi: NDArray[np.int64],
                    nb_rows: int, t0: float, t1: float, nb_bins: int) -> NDArray[np.float32]:
    """Share of each (unit, time bin) cell covered by rectangles [start, finish) x [lo, hi], exactly.

    Built from difference arrays: a rectangle adds 1 to the whole bins it covers and its fractions to the two
    bins where it starts and ends, over its rows, so the cost is linear in rectangles plus the image size.
    """
    width = (t1 - t0) / nb_bins if t1 > t0 else 1.0
    a = np.clip((start - t0) / width, 0, nb_bins)
    b = np.clip((finish - t0) / width, 0, nb_bins)
    first, last = np.floor(a).astype(np.int64), np.floor(b).astype(np.int64)
    full = np.zeros((nb_rows + 1, nb_bins + 1))
    part = np.zeros((nb_rows + 1, nb_bins + 1))
    same = first == last
    # rectangles inside one bin: their length
    _add_rows(part, lo[same], hi[same], first[same], (b - a)[same])
    other = ~same
    f, la, lo2, hi2 = first[other], last[other], lo[other], hi[other]
    _add_rows(part, lo2, hi2, f, (f + 1 - a[other]))
    _add_rows(part, lo2, hi2, la, (b[other] - la))
    # whole bins f+1 .. la-1: +1 from f+1, -1 from la (a difference along time too)
    _add_rows(full, lo2, hi2, f + 1, np.ones(f.size))
    _add_rows(full, lo2, hi2, la, -np.ones(f.size))
    image = np.cumsum(np.cumsum(full, axis=0), axis=1) + np.cumsum(part, axis=0)
    return image[:nb_rows, :nb_bins].astype(np.float32)


def _add_rows(grid: FloatArray, lo: NDArray[np.int64], hi: NDArray[np.int64], column: NDArray[np.int64],
              value: FloatArray) -> None:
    """Add `value` to rows lo..hi of `column`, as a difference along rows (+ at lo, - after hi)."""
    np.add.at(grid, (lo, column), value)
    np.add.at(grid, (hi + 1, column), -value)
