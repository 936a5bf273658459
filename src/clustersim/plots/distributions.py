"""Distributions of per-job waiting time and bounded slowdown across runs, as empirical CDFs.

One line per series (a run, or runs pooled, such as every seed of one configuration). A series of more than
`MAX_POINTS` jobs is drawn at that many quantiles, which keeps its minimum and maximum, so a figure of a
million-job trace stays small.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from clustersim.plots.figures import new_figure
from clustersim.plots.job_rows import FloatArray, JobRows, read_job_rows

MAX_POINTS = 2000
METRICS = {
    "waiting_time": ("waiting time (s)", JobRows.waiting_times),
    "bounded_slowdown": ("bounded slowdown", JobRows.bounded_slowdowns),
}


def ecdf(values: FloatArray, max_points: int = MAX_POINTS) -> tuple[FloatArray, FloatArray]:
    """Sorted values and their cumulative fractions, thinned to `max_points` quantiles."""
    ordered = np.sort(values)
    n = len(ordered)
    if n == 0:
        return ordered, ordered
    fractions = np.arange(1, n + 1, dtype=np.float64) / n
    if n > max_points:
        keep = np.unique(np.linspace(0, n - 1, max_points).round().astype(np.int64))
        return ordered[keep], fractions[keep]
    return ordered, fractions


def draw_cdf(ax: Axes, samples: Mapping[str, FloatArray], xlabel: str, *, log: bool = False) -> None:
    """One step line per series on `ax`; empty series are left out."""
    for label, values in samples.items():
        if len(values) == 0:
            continue
        x, y = ecdf(values)
        ax.step(x, y, where="post", label=label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("fraction of jobs")
    ax.set_ylim(0, 1.02)
    if log:
        ax.set_xscale("log")
    ax.grid(True, alpha=0.3)
    if 1 < len(samples) <= 12:
        ax.legend(fontsize="small")


def pooled(paths: Sequence[Path | str] | Sequence[JobRows], metric: str) -> FloatArray:
    """The values of `metric` (waiting_time or bounded_slowdown) of every job that ran, over several runs."""
    _, extract = METRICS[metric]
    arrays = [extract(p if isinstance(p, JobRows) else read_job_rows(p)) for p in paths]
    return np.concatenate(arrays) if arrays else np.zeros(0)


def plot_distributions(series: Mapping[str, Sequence[Path | str] | Sequence[JobRows]]) -> Figure:
    """Waiting-time and bounded-slowdown CDFs side by side; each series pools the jobs.csv files it names."""
    figure, (left, right) = new_figure(1, 2, width=10, height=4)
    jobs = {
        label: [p if isinstance(p, JobRows) else read_job_rows(p) for p in paths] for label, paths in series.items()
    }
    draw_cdf(left, {label: pooled(rows, "waiting_time") for label, rows in jobs.items()}, METRICS["waiting_time"][0])
    draw_cdf(
        right,
        {label: pooled(rows, "bounded_slowdown") for label, rows in jobs.items()},
        METRICS["bounded_slowdown"][0],
        log=True,
    )
    return figure
