"""A metric against one axis of a campaign, with its 95% confidence interval, one series per other configuration.

Reads aggregated rows (the campaign summary): `<metric>_mean` and `<metric>_ci95` per combination of axes.
A numeric axis is drawn to scale as lines with confidence bands; any other axis (policy names...) as evenly
spaced categories, in the campaign's order, with error bars (a line between categories would suggest an order
that is not there). A point without an interval (a single run) has no band.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from clustersim.plots.figures import new_figure

MAX_SERIES = 10


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _label(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def draw_metric_vs_axis(
    ax: Axes,
    rows: Sequence[Mapping[str, object]],
    axis: str,
    metric: str,
    series_keys: Sequence[str] = (),
) -> int:
    """Draw `metric` against `axis`, one line (and band) per combination of `series_keys`; returns the lines."""
    values = list(dict.fromkeys(_label(row.get(axis)) for row in rows))
    numeric = all(_is_number(row.get(axis)) for row in rows)
    groups: dict[str, list[Mapping[str, object]]] = {}
    for row in rows:
        label = ", ".join(f"{k}={_label(row.get(k))}" for k in series_keys) or metric
        groups.setdefault(label, []).append(row)
    drawn = 0
    shown = list(groups.items())[:MAX_SERIES]
    for index, (label, members) in enumerate(shown):
        points = []
        for row in members:
            mean = row.get(f"{metric}_mean")
            if not _is_number(mean):
                continue
            x = float(row[axis]) if numeric else float(values.index(_label(row.get(axis))))  # type: ignore[arg-type]
            half = row.get(f"{metric}_ci95")
            points.append((x, float(mean), float(half) if _is_number(half) else np.nan))  # type: ignore[arg-type]
        if not points:
            continue
        points.sort()
        xs, ys, halves = (np.array(column) for column in zip(*points, strict=True))
        if numeric:
            line = ax.plot(xs, ys, marker="o", label=label)[0]
            if not np.all(np.isnan(halves)):
                ax.fill_between(xs, ys - halves, ys + halves, color=line.get_color(), alpha=0.2, linewidth=0)
        else:  # categories: side-by-side points with error bars, no line suggesting an order between them
            offset = (index - (len(shown) - 1) / 2) * min(0.1, 0.6 / len(shown))
            ax.errorbar(xs + offset, ys, yerr=np.nan_to_num(halves), fmt="o", capsize=3, label=label)
        drawn += 1
    if not numeric:
        ax.set_xticks(range(len(values)), values, rotation=30 if len(values) > 4 else 0)
    ax.set_xlabel(axis)
    ax.set_ylabel(metric.replace("_", " "))
    ax.grid(True, alpha=0.3)
    if series_keys and drawn > 1:
        ax.legend(fontsize="small")
    return drawn


def plot_metric_vs_axis(
    rows: Sequence[Mapping[str, object]], axis: str, metrics: Sequence[str], series_keys: Sequence[str] = ()
) -> Figure:
    """One panel per metric, side by side, each against `axis` with 95% confidence bands."""
    figure, panels = new_figure(1, len(metrics), width=4.2 * len(metrics), height=3.8)
    for ax, metric in zip(panels, metrics, strict=True):
        draw_metric_vs_axis(ax, rows, axis, metric, series_keys)
    return figure
