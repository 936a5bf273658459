"""Waiting-time and bounded-slowdown CDFs: one line per series, the right data, thinned but with its extremes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from clustersim.plots.distributions import MAX_POINTS, ecdf, plot_distributions, pooled

HEADER = "job_id,submission_time,starting_time,finish_time,requested_number_of_resources\n"


def write_jobs(path: Path, waits: list[float], runtime: float = 20.0) -> Path:
    lines = [f"{i},0,{w},{w + runtime},1\n" for i, w in enumerate(waits)]
    path.write_text(HEADER + "".join(lines))
    return path


def test_ecdf_is_sorted_values_and_cumulative_fractions() -> None:
    x, y = ecdf(np.array([3.0, 1.0, 2.0, 2.0]))
    assert x.tolist() == [1, 2, 2, 3]
    assert y.tolist() == [0.25, 0.5, 0.75, 1.0]


def test_ecdf_thins_large_samples_and_keeps_the_extremes() -> None:
    values = np.random.default_rng(0).exponential(size=50_000)
    x, y = ecdf(values)
    assert len(x) <= MAX_POINTS
    assert x[0] == values.min() and x[-1] == values.max() and y[-1] == 1.0
    assert np.all(np.diff(x) >= 0)


def test_series_pool_the_jobs_of_several_runs(tmp_path: Path) -> None:
    a = write_jobs(tmp_path / "a.csv", [0, 10])
    b = write_jobs(tmp_path / "b.csv", [30])
    assert sorted(pooled([a, b], "waiting_time").tolist()) == [0, 10, 30]
    assert sorted(pooled([a, b], "bounded_slowdown").tolist()) == [1.0, 1.5, 2.5]


def test_distribution_figure_has_one_line_per_series_on_both_panels(tmp_path: Path) -> None:
    series = {
        "policy=fcfs": [write_jobs(tmp_path / "f1.csv", [0, 100, 200]), write_jobs(tmp_path / "f2.csv", [50])],
        "policy=easy": [write_jobs(tmp_path / "e.csv", [0, 5, 10])],
    }
    figure = plot_distributions(series)
    waiting, slowdown = figure.axes
    assert waiting.get_xlabel() == "waiting time (s)" and slowdown.get_xlabel() == "bounded slowdown"
    assert waiting.get_ylabel() == slowdown.get_ylabel() == "fraction of jobs"
    assert [line.get_label() for line in waiting.get_lines()] == ["policy=fcfs", "policy=easy"]
    assert len(slowdown.get_lines()) == 2
    fcfs = waiting.get_lines()[0]
    assert np.asarray(fcfs.get_xdata()).tolist() == [0, 50, 100, 200]
    assert np.asarray(fcfs.get_ydata()).tolist() == [0.25, 0.5, 0.75, 1.0]
    assert slowdown.get_xscale() == "log"
    legend = waiting.get_legend()
    assert legend is not None and [t.get_text() for t in legend.get_texts()] == ["policy=fcfs", "policy=easy"]


def test_a_series_with_no_job_that_ran_is_left_out(tmp_path: Path) -> None:
    empty = tmp_path / "empty.csv"
    empty.write_text(HEADER + "1,0,-1,-1,4\n")
    figure = plot_distributions({"ok": [write_jobs(tmp_path / "ok.csv", [1])], "none": [empty]})
    assert [line.get_label() for line in figure.axes[0].get_lines()] == ["ok"]


@pytest.mark.parametrize("metric", ["waiting_time", "bounded_slowdown"])
def test_pooled_nothing_is_empty(metric: str) -> None:
    assert len(pooled([], metric)) == 0
