"""Utilisation and queue length over time, from a jobs.csv of a schedule small enough to check by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from clustersim.errors import InputError
from clustersim.platform.model import Node, Platform
from clustersim.plots.job_rows import read_job_rows
from clustersim.plots.usage import plot_usage, usage_series
from clustersim.policies.registry import create_policy
from clustersim.runner import simulate
from clustersim.workload.job import Job
from clustersim.workload.profiles import Delay
from clustersim.workload.stream import Workload


@pytest.fixture
def jobs_csv(tmp_path: Path) -> Path:
    """FCFS on 2 hosts: job 1 (2 hosts) 0-10, job 2 (1 host) waits 0-10 then runs 10-15, job 3 (2 hosts,
    submitted at 2) runs 15-19; job 4 asks for 3 hosts and is rejected."""
    jobs = [
        Job("1", 0, 2, Delay(10), 10), Job("2", 0, 1, Delay(5), 5),
        Job("3", 2, 2, Delay(4), 4), Job("4", 3, 3, Delay(1), 1),
    ]
    platform = Platform([Node(i, f"host{i}") for i in range(2)])
    simulate(platform, Workload.from_jobs(jobs), create_policy("fcfs"), tmp_path)
    return tmp_path / "jobs.csv"


def test_usage_series_steps_at_submissions_starts_and_ends(jobs_csv: Path) -> None:
    series = usage_series(read_job_rows(jobs_csv))
    assert series.times.tolist() == [0, 2, 10, 15, 19]
    assert series.busy.tolist() == [2, 2, 1, 2, 0]
    assert series.queued.tolist() == [1, 2, 1, 0, 0]


def test_job_rows_mark_rejected_jobs_and_compute_per_job_metrics(jobs_csv: Path) -> None:
    rows = read_job_rows(jobs_csv)
    assert rows.ran.tolist() == [False, True, True, True]
    assert sorted(rows.waiting_times().tolist()) == [0, 10, 13]
    assert sorted(rows.bounded_slowdowns().tolist()) == pytest.approx([1.0, 1.5, 1.7])


def test_usage_plot_draws_utilisation_and_queue_over_the_schedule(jobs_csv: Path) -> None:
    figure = plot_usage(jobs_csv, nb_resources=2, title="tiny")
    top, bottom = figure.axes
    assert top.get_ylabel() == "utilisation (of 2)"
    assert bottom.get_ylabel() == "waiting jobs" and bottom.get_xlabel() == "time (s)"
    assert figure.get_suptitle() == "tiny"
    assert len(top.get_lines()) == 1 and len(bottom.get_lines()) == 1
    utilisation, queue = top.get_lines()[0], bottom.get_lines()[0]
    assert np.asarray(utilisation.get_xdata()).tolist() == [0, 2, 10, 15, 19]
    assert np.asarray(utilisation.get_ydata()).tolist() == [1.0, 1.0, 0.5, 1.0, 0.0]
    assert max(np.asarray(queue.get_ydata())) == 2
    assert utilisation.get_drawstyle() == "steps-post"


def test_usage_plot_without_platform_size_shows_busy_resources(jobs_csv: Path) -> None:
    top = plot_usage(jobs_csv).axes[0]
    assert top.get_ylabel() == "busy resources"
    assert max(np.asarray(top.get_lines()[0].get_ydata())) == 2


def test_an_empty_schedule_plots_empty_series(tmp_path: Path) -> None:
    path = tmp_path / "jobs.csv"
    path.write_text("job_id,submission_time,starting_time,finish_time,requested_number_of_resources\n")
    series = usage_series(read_job_rows(path))
    assert len(series.times) == 0
    assert len(plot_usage(path).axes) == 2


def test_a_file_that_is_not_a_jobs_csv_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "schedule.csv"
    path.write_text("makespan,nb_jobs\n1,2\n")
    with pytest.raises(InputError, match=r"not a jobs\.csv: missing column"):
        read_job_rows(path)
    bad = tmp_path / "bad.csv"
    bad.write_text("submission_time,starting_time,finish_time,requested_number_of_resources\n1,x,2,1\n")
    with pytest.raises(InputError, match="line 2"):
        read_job_rows(bad)
