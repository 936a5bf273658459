"""Figures of an autoscaling time series: replicas against traffic, and latency over time (matplotlib, Agg).

The functions return the figure so tests can check what is drawn, not only that a file exists.
"""

from __future__ import annotations

import math
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


def vpa_figure(rows: Sequence[Row], title: str = "") -> Figure:
    """What the VPA did: cpu and memory requests of the replicas against its target and bounds; replicas and
    evictions."""
    figure, (cpu, memory, replicas) = plt.subplots(3, 1, sharex=True, figsize=(10, 8))
    times = [r.time for r in rows]
    for axis, resource, unit in ((cpu, "cpu", "m"), (memory, "memory", "mi")):
        lower = [getattr(r, f"{resource}_lower_{unit}") for r in rows]
        upper = [min(getattr(r, f"{resource}_upper_{unit}"), 3 * getattr(r, f"{resource}_target_{unit}"))
                 for r in rows]
        axis.fill_between(times, lower, upper, color="#1f77b4", alpha=0.15, step="post",
                          label="VPA bounds (upper cut at 3x target)")
        axis.step(times, [getattr(r, f"{resource}_target_{unit}") for r in rows], where="post", color="#1f77b4",
                  label="VPA target")
        axis.step(times, [getattr(r, f"{resource}_request_{unit}") for r in rows], where="post", color="black",
                  label="mean request of the replicas")
        axis.set_ylabel("millicores" if resource == "cpu" else "MiB")
        axis.legend(loc="upper right", fontsize="small")
    cpu.set_title(title or "Vertical Pod Autoscaler")
    replicas.step(times, [r.replicas for r in rows], where="post", color="#2ca02c", label="replicas")
    replicas.step(times, [r.replicas_pending for r in rows], where="post", color="#d62728",
                  label="pending")
    replicas.bar(times, [r.vpa_evictions for r in rows], width=(times[1] - times[0]) if len(times) > 1 else 1,
                 color="#ff7f0e", label="VPA evictions", align="edge")
    replicas.set_ylabel("pods")
    replicas.set_xlabel("time (s)")
    replicas.legend(loc="upper right", fontsize="small")
    figure.tight_layout()
    return figure


def comparison_figure(runs: Sequence[tuple[str, Sequence[Row]]], title: str = "") -> Figure:
    """Several scenarios on the same traffic: replicas, cpu request per replica and cpu utilisation."""
    figure, (replicas, request, utilisation) = plt.subplots(3, 1, sharex=True, figsize=(10, 8))
    for name, rows in runs:
        times = [r.time for r in rows]
        replicas.step(times, [r.replicas for r in rows], where="post", label=name)
        request.step(times, [r.cpu_request_m for r in rows], where="post", label=name)
        utilisation.plot(times, [r.utilisation for r in rows], label=name, linewidth=0.8)
    replicas.set_ylabel("replicas")
    request.set_ylabel("mean cpu request (m)")
    utilisation.set_ylabel("cpu used / requested (%)")
    utilisation.set_xlabel("time (s)")
    replicas.set_title(title or "scenarios compared")
    for axis in (replicas, request, utilisation):
        axis.legend(loc="upper right", fontsize="small")
    figure.tight_layout()
    return figure


def write_figures(rows: Sequence[Row], directory: Path, title: str = "") -> list[Path]:
    """replicas.png and latency.png in `directory`; vpa.png too when the scenario had a VPA."""
    written = []
    builds = [("replicas.png", replicas_figure), ("latency.png", latency_figure)]
    if rows and not math.isnan(rows[-1].memory_target_mi):
        builds.append(("vpa.png", vpa_figure))
    for name, build in builds:
        figure = build(rows, title)
        path = directory / name
        figure.savefig(path, dpi=110)
        plt.close(figure)
        written.append(path)
    return written
