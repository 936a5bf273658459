"""Figures of runs and sweeps (matplotlib, Agg backend, PNG without a timestamp so files are reproducible)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from clustersim.architectures.metrics import SchedulerMetrics
from clustersim.architectures.simulation import UtilisationSample
from clustersim.architectures.sweep import SweepRow

PNG_METADATA = {"Software": None}


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(plt: Any, fig: Any, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata=PNG_METADATA)
    plt.close(fig)


def plot_utilisation(samples: Sequence[UtilisationSample], path: Path, title: str) -> None:
    """Cpu and memory in use over time (and held by offers, for Mesos)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.2))
    hours = [s.time / 3600 for s in samples]
    ax.plot(hours, [s.cpu for s in samples], label="cpu in use")
    ax.plot(hours, [s.memory for s in samples], label="memory in use")
    if any(s.cpu_locked for s in samples):
        ax.plot(hours, [s.cpu_locked for s in samples], label="cpu held by offers", linestyle=":")
    ax.set_xlabel("simulated time (h)")
    ax.set_ylabel("fraction of the cell")
    ax.set_ylim(0, 1.05)
    ax.set_title(f"Utilisation, {title}", fontsize=9)
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(alpha=0.3)
    _save(plt, fig, path)


def plot_busyness(metrics: Sequence[SchedulerMetrics], path: Path, title: str) -> None:
    """Each decision path's busyness, stacked: useful, wasted on conflicts, no fit."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5, 3.2))
    names = [m.scheduler for m in metrics]
    bottom = [0.0] * len(metrics)
    for label, values in (
        ("useful", [m.busyness_useful for m in metrics]),
        ("wasted (conflicts)", [m.busyness_wasted for m in metrics]),
        ("no fit", [m.busyness_no_fit for m in metrics]),
        ("unfinished at end", [m.busyness_unfinished for m in metrics]),
    ):
        if any(v > 0 for v in values):
            ax.bar(names, values, bottom=bottom, label=label)
            bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    ax.set_ylabel("busyness (fraction of time deciding)")
    highest = max(bottom, default=0.0)
    ax.set_ylim(0, 1.05 if highest > 0.75 else max(0.01, highest * 1.35))
    ax.set_title(f"Scheduler busyness, {title}", fontsize=9)
    ax.legend(fontsize=8)
    _save(plt, fig, path)


def _cell_conflicts(rows: Sequence[SweepRow], variant: str) -> tuple[list[float], list[float]]:
    """Conflicted per committed transaction over all of a variant's decision paths, by t_job."""
    paths: dict[tuple[float, str], tuple[int, int]] = {}
    for r in rows:
        if r.variant == variant:
            paths[(r.t_job, r.scheduler)] = (r.transactions_failed, r.transactions_committed)
    xs = sorted({t for t, _ in paths})
    points = []
    for x in xs:
        failed = sum(f for (t, _), (f, _c) in paths.items() if t == x)
        committed = sum(c for (t, _), (_f, c) in paths.items() if t == x)
        if failed and committed:
            points.append((x, failed / committed))
    return [x for x, _ in points], [y for _, y in points]


def plot_sweep(rows: Sequence[SweepRow], path: Path, swept: str) -> None:
    """Three panels against the swept scheduler's t_job: busyness, waits, and Omega conflict fractions.

    The t_job range where the swept scheduler is saturated under baseline Omega (busyness >= 95%) is shaded:
    there its queue grows without bound and the other metrics describe a backlog, not a steady state.
    """
    plt = _pyplot()
    fig, (busy_ax, wait_ax, conflict_ax) = plt.subplots(1, 3, figsize=(13, 3.9))
    variants = list(dict.fromkeys(r.variant for r in rows))
    monolithic = [v for v in variants if v.startswith("monolithic")]
    omega = [v for v in variants if v.startswith("omega")]
    baseline = omega[:1]
    job_types = list(dict.fromkeys(r.job_type for r in rows))

    def series(variant: str, job_type: str | None, value: Callable[[SweepRow], float | None]
               ) -> tuple[list[float], list[float]]:
        seen: dict[float, float] = {}
        for r in rows:
            if r.variant == variant and (job_type is None or r.job_type == job_type):
                y = value(r)
                if y is not None and r.t_job not in seen:
                    seen[r.t_job] = y
        return list(seen), list(seen.values())

    for variant in monolithic:
        busy_ax.plot(*series(variant, None, lambda r: r.busyness), "k-o", label="monolithic (one decision path)")
    for variant in baseline:
        for job_type in job_types:
            style = "b-s" if job_type == swept else "g--^"
            busy_ax.plot(*series(variant, job_type, lambda r: r.busyness), style, label=f"Omega {job_type}")
    busy_ax.set_title("scheduler busyness")
    busy_ax.set_ylabel("fraction of time deciding")
    busy_ax.set_ylim(0, 1.05)

    for variant, color in [(v, "k") for v in monolithic] + [(v, "b") for v in baseline]:
        name = "monolithic" if variant in monolithic else "Omega"
        for job_type in job_types:
            style = f"{color}:x" if job_type == swept else f"{color}-o"
            wait_ax.plot(*series(variant, job_type, lambda r: r.waits.first_mean), style,
                         label=f"{name} {job_type}")
    wait_ax.set_yscale("log")
    wait_ax.set_title("mean wait until a job's first task starts")
    wait_ax.set_ylabel("seconds")

    for variant in omega:
        xs, ys = _cell_conflicts(rows, variant)
        conflict_ax.plot(xs, ys, "-o", label=variant.removeprefix("omega/"))
    conflict_ax.set_yscale("log")
    conflict_ax.set_title("Omega conflict fraction (all schedulers)")
    conflict_ax.set_ylabel("conflicted per committed transaction")

    saturated = [x for x, y in zip(*series(baseline[0], swept, lambda r: r.busyness), strict=True) if y >= 0.95] \
        if baseline else []
    for ax in (busy_ax, wait_ax, conflict_ax):
        ax.set_xscale("log")
        ax.set_xlabel(f"t_job of the {swept} scheduler (s)")
        ax.grid(alpha=0.3, which="both")
        if saturated:
            ax.axvspan(min(saturated), max(r.t_job for r in rows), color="0.9", zorder=0,
                       label=f"{swept} saturated (Omega)" if ax is busy_ax else None)
        ax.legend(fontsize=7)
    _save(plt, fig, path)
