"""Figures of an autoscaling time series: replicas against traffic, and latency over time (matplotlib, Agg).

The functions return the figure so tests can check what is drawn, not only that a file exists.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from clustersim.autoscaling.timeseries import Row

STATES = (
    ("replicas_ready", "ready", "#2ca02c"),
    ("replicas_unready", "running, not ready", "#bcbd22"),
    ("replicas_starting", "starting", "#ff7f0e"),
    ("replicas_pending", "pending (unscheduled)", "#d62728"),
    ("replicas_terminating", "terminating", "#7f7f7f"),
)


def replicas_figure(rows: Sequence[Row], title: str = "") -> Figure:
    """Top: requests/s arriving, completed and failed; bottom: replicas by state (stacked) and desired."""
    figure, (traffic, replicas) = plt.subplots(2, 1, sharex=True, figsize=(10, 6.5))
    times = [r.time for r in rows]
    traffic.plot(times, [r.arrived_per_s for r in rows], label="arriving", color="#1f77b4")
    traffic.plot(times, [r.completed_per_s for r in rows], label="completed", color="#2ca02c", linewidth=0.8)
    traffic.plot(times, [r.failed_per_s for r in rows], label="failed", color="#d62728", linewidth=0.8)
    traffic.set_ylabel("requests/s")
    traffic.legend(loc="upper left", fontsize="small")
    traffic.set_title(title or "replicas vs traffic")
    replicas.stackplot(
        times, *[[float(getattr(r, column)) for r in rows] for column, _, _ in STATES],
        labels=[label for _, label, _ in STATES], colors=[color for _, _, color in STATES], step="post",
    )
    replicas.step(times, [r.desired_replicas for r in rows], where="post", color="black", label="desired")
    replicas.set_ylabel("replicas")
    replicas.set_xlabel("time (s)")
    replicas.legend(loc="upper left", fontsize="small")
    figure.tight_layout()
    return figure


def latency_figure(rows: Sequence[Row], title: str = "") -> Figure:
    """Latency percentiles of completed requests per interval, and CPU utilisation."""
    figure, (latency, utilisation) = plt.subplots(2, 1, sharex=True, figsize=(10, 6))
    times = [r.time for r in rows]
    for column, label in (("latency_p50", "p50"), ("latency_p95", "p95"), ("latency_p99", "p99")):
        latency.plot(times, [getattr(r, column) for r in rows], label=label)
    latency.set_ylabel("latency (s)")
    latency.set_yscale("log")
    latency.legend(loc="upper left", fontsize="small")
    latency.set_title(title or "latency over time")
    utilisation.plot(times, [r.utilisation for r in rows], label="utilisation (true)", color="#9467bd")
    utilisation.plot(times, [r.hpa_metric for r in rows], label="HPA metric (lagged)", color="#8c564b",
                     linestyle="--")
    utilisation.set_ylabel("% of cpu request / metric")
    utilisation.set_xlabel("time (s)")
    utilisation.legend(loc="upper left", fontsize="small")
    figure.tight_layout()
    return figure


def write_figures(rows: Sequence[Row], directory: Path, title: str = "") -> list[Path]:
    """replicas.png and latency.png in `directory`."""
    written = []
    for name, build in (("replicas.png", replicas_figure), ("latency.png", latency_figure)):
        figure = build(rows, title)
        path = directory / name
        figure.savefig(path, dpi=110)
        plt.close(figure)
        written.append(path)
    return written
