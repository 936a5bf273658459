"""Metric against an axis with 95% confidence intervals, and figures saved as PNG and reproducible SVG."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.container import ErrorbarContainer

from clustersim.plots.figures import new_figure, save_figure
from clustersim.plots.metric_axis import draw_metric_vs_axis, plot_metric_vs_axis

ROWS = [
    {"policy": "fcfs", "load_scale": 0.8, "wait_mean": 10.0, "wait_ci95": 2.0},
    {"policy": "fcfs", "load_scale": 1.2, "wait_mean": 30.0, "wait_ci95": 4.0},
    {"policy": "fcfs", "load_scale": 1, "wait_mean": 20.0, "wait_ci95": None},
    {"policy": "easy", "load_scale": 0.8, "wait_mean": 5.0, "wait_ci95": 1.0},
    {"policy": "easy", "load_scale": 1.2, "wait_mean": 9.0, "wait_ci95": 1.0},
    {"policy": "easy", "load_scale": 1, "wait_mean": None, "wait_ci95": None},
]


def test_numeric_axis_draws_one_line_and_band_per_series_in_x_order() -> None:
    figure = plot_metric_vs_axis(ROWS, "load_scale", ["wait"], ["policy"])
    (ax,) = figure.axes
    assert ax.get_xlabel() == "load_scale" and ax.get_ylabel() == "wait"
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == ["policy=fcfs", "policy=easy"]
    assert np.asarray(lines[0].get_xdata()).tolist() == [0.8, 1.0, 1.2]
    assert np.asarray(lines[0].get_ydata()).tolist() == [10, 20, 30]
    assert np.asarray(lines[1].get_xdata()).tolist() == [0.8, 1.2]  # a missing mean (all runs failed) is skipped
    bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(bands) == 2
    heights = np.asarray(bands[1].get_paths()[0].vertices)[:, 1]
    assert (heights.min(), heights.max()) == (4.0, 10.0)


def test_categorical_axis_draws_error_bars_at_category_positions() -> None:
    rows = [{"policy": p, "load_scale": s, "wait_mean": m, "wait_ci95": 1.0}
            for p, s, m in [("fcfs", 1, 10.0), ("easy", 1, 5.0), ("fcfs", 2, 12.0), ("easy", 2, 6.0)]]
    _, (ax,) = new_figure()
    assert draw_metric_vs_axis(ax, rows, "policy", "wait", ["load_scale"]) == 2
    assert [t.get_text() for t in ax.get_xticklabels()] == ["fcfs", "easy"]
    containers = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(containers) == 2
    xs = np.asarray(containers[0].lines[0].get_xdata())
    assert xs[0] < 0.0 < 1.0 - 0.2 < xs[1] < 1.0  # dodged left of each category, series side by side
    legend = ax.get_legend()
    assert legend is not None and [t.get_text() for t in legend.get_texts()] == ["load_scale=1", "load_scale=2"]


def test_one_panel_per_metric() -> None:
    rows = [{"x": 1, "a_mean": 1.0, "b_mean": 2.0}, {"x": 2, "a_mean": 3.0, "b_mean": 4.0}]
    figure = plot_metric_vs_axis(rows, "x", ["a", "b"])
    assert [ax.get_ylabel() for ax in figure.axes] == ["a", "b"]
    assert [len(ax.get_lines()) for ax in figure.axes] == [1, 1]
    assert not any(isinstance(c, PolyCollection) for ax in figure.axes for c in ax.collections)


def test_figures_are_saved_as_png_and_reproducible_svg(tmp_path: Path) -> None:
    paths = save_figure(plot_metric_vs_axis(ROWS, "load_scale", ["wait"], ["policy"]), tmp_path / "a" / "wait")
    assert [p.name for p in paths] == ["wait.png", "wait.svg"]
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = paths[1].read_text()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    again = save_figure(plot_metric_vs_axis(ROWS, "load_scale", ["wait"], ["policy"]), tmp_path / "b" / "wait")
    assert again[1].read_bytes() == paths[1].read_bytes()
