"""Utilisation and queue length over time, computed from a jobs.csv.

Both are step functions that change only when a job is submitted, starts or finishes: busy resources rise by a
job's size at its start and fall at its finish; the queue grows at a submission and shrinks at the start.
Jobs never started (rejected) are left out: jobs.csv does not say when they left the queue.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from clustersim.plots.figures import new_figure
from clustersim.plots.job_rows import FloatArray, JobRows, read_job_rows


@dataclass(frozen=True)
class UsageSeries:
    """Step functions: from `times[i]` until the next time, `busy[i]` resources are used, `queued[i]` jobs wait."""

    times: FloatArray
    busy: FloatArray
    queued: FloatArray


def usage_series(jobs: JobRows) -> UsageSeries:
    """The busy-resources and queue-length step functions of a schedule."""
    ran = jobs.ran
    submit, start, finish, size = jobs.submit[ran], jobs.start[ran], jobs.finish[ran], jobs.nb_res[ran]
    times = np.concatenate([submit, start, finish])
    busy_delta = np.concatenate([np.zeros_like(submit), size, -size])
    queue_delta = np.concatenate([np.ones_like(submit), -np.ones_like(start), np.zeros_like(finish)])
    order = np.argsort(times, kind="stable")
    times = times[order]
    busy = np.cumsum(busy_delta[order])
    queued = np.cumsum(queue_delta[order])
    # Keep the state after the last change at each instant: several jobs may start or end at the same time.
    last = np.append(times[1:] != times[:-1], True) if len(times) else np.zeros(0, dtype=bool)
    return UsageSeries(times[last], busy[last], queued[last])


def plot_usage(
    jobs_csv: Path | str | JobRows, *, nb_resources: int | None = None, title: str | None = None
) -> Figure:
    """Two stacked plots sharing the time axis: utilisation (or busy resources) and queue length."""
    jobs = jobs_csv if isinstance(jobs_csv, JobRows) else read_job_rows(jobs_csv)
    series = usage_series(jobs)
    figure, (top, bottom) = new_figure(2, 1, height=4.8)
    if nb_resources:
        top.step(series.times, series.busy / nb_resources, where="post", label="utilisation")
        top.set_ylabel(f"utilisation (of {nb_resources})")
        top.set_ylim(0, 1.05)
    else:
        top.step(series.times, series.busy, where="post", label="busy resources")
        top.set_ylabel("busy resources")
    bottom.step(series.times, series.queued, where="post", color="tab:orange", label="queue length")
    bottom.set_ylabel("waiting jobs")
    bottom.set_xlabel("time (s)")
    bottom.sharex(top)
    for ax in (top, bottom):
        ax.grid(True, alpha=0.3)
    if title:
        figure.suptitle(title)
    return figure
