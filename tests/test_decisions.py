"""The core refuses invalid decisions with a DecisionError naming the decision, leaving state and outputs valid.

Scenario, on 4 hosts: jobs 1 (1 host, 1 s) and 2 (2 hosts, 10 s) are started at t=0 on units 0 and 1-2; job 1
ends at t=1; job 3 (2 hosts) is submitted at t=5, when the bad decision is made. So at the time of the error,
job 1 is finished, job 2 is running on 1-2, job 3 is pending and units 0 and 3 are free.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import cast

import pytest

from clustersim.core.decisions import CallMeLater, Decision, KillJob, RejectJob, SetJobMetadata, StartJob
from clustersim.core.events import Event
from clustersim.core.state import ClusterView
from clustersim.errors import DecisionError
from clustersim.intervals import IntervalSet
from clustersim.platform.model import Node, Platform
from clustersim.records.jobs_csv import COLUMNS
from clustersim.runner import simulate
from clustersim.workload.job import Job
from clustersim.workload.profiles import Delay
from clustersim.workload.stream import Workload
from conftest import csv_rows


class Scripted:
    """A decision process that makes the decisions listed for each instant, the first time it is called then."""

    def __init__(self, script: dict[float, list[object]]):
        self.script = dict(script)
        self.view: ClusterView | None = None
        self.ended = False

    def begin(self, view: ClusterView) -> None:
        self.view = view

    def decide(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        # Some scripts hold non-decisions on purpose: the core must refuse them.
        yield from cast("list[Decision]", self.script.pop(now, []))

    def end(self, view: ClusterView) -> None:
        self.ended = True


def platform() -> Platform:
    return Platform([Node(i, f"h{i}") for i in range(4)])


def workload() -> Workload:
    return Workload.from_jobs([
        Job("1", 0.0, 1, Delay(1.0), None, profile_name="one"),
        Job("2", 0.0, 2, Delay(10.0), 20.0, profile_name="ten"),
        Job("3", 5.0, 2, Delay(1.0), None, profile_name="one"),
    ])


GOOD_START = [StartJob("w0!1", IntervalSet.parse("0")), StartJob("w0!2", IntervalSet.parse("1-2"))]


def run_until_refused(bad: object, tmp_path: Path) -> tuple[DecisionError, Scripted]:
    process = Scripted({0.0: list(GOOD_START), 5.0: [bad]})
    with pytest.raises(DecisionError) as caught:
        simulate(platform(), workload(), process, tmp_path)
    return caught.value, process


def assert_outputs_hold_jobs_ended_before_the_error(out: Path) -> None:
    text = (out / "jobs.csv").read_text(encoding="utf-8")
    assert text.endswith("\n"), "the last row is complete"
    rows = list(csv.reader(text.splitlines()))
    assert tuple(rows[0]) == COLUMNS
    assert all(len(row) == len(COLUMNS) for row in rows)
    jobs = [dict(zip(COLUMNS, row, strict=True)) for row in rows[1:]]
    assert [(j["job_id"], j["final_state"], j["starting_time"], j["finish_time"], j["allocated_resources"])
            for j in jobs] == [("1", "COMPLETED_SUCCESSFULLY", "0", "1", "0")]
    schedule = csv_rows(out / "schedule.csv")
    assert len(schedule) == 1
    assert schedule[0]["nb_jobs"] == "1"
    assert schedule[0]["makespan"] == "1.000000"


def assert_state_untouched(process: Scripted) -> None:
    """The live view shows the state as it was before the refused decision."""
    view = process.view
    assert view is not None
    assert list(view.pending) == ["w0!3"]
    assert list(view.running) == ["w0!2"]
    assert str(view.running["w0!2"].resources) == "1-2"
    assert str(view.free) == "0 3"
    assert process.ended, "the decision process is told the simulation ended"


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        pytest.param(StartJob("w0!99", IntervalSet.parse("0")), r"job 'w0!99' is not pending", id="unknown-job"),
        pytest.param(StartJob("w0!1", IntervalSet.parse("0")), r"job 'w0!1' is not pending", id="finished-job"),
        pytest.param(StartJob("w0!2", IntervalSet.parse("0 3")), r"job 'w0!2' is already running",
                     id="running-job-started-twice"),
        pytest.param(StartJob("w0!3", IntervalSet.parse("1 3")), r"resources 1 are not free", id="busy-unit"),
        pytest.param(StartJob("w0!3", IntervalSet.parse("2-3")), r"resources 2 are not free",
                     id="partly-busy-units"),
        pytest.param(StartJob("w0!3", IntervalSet.parse("0-1 3")), r"job 'w0!3' requests 2 resources, got 3",
                     id="too-many-units"),
        pytest.param(StartJob("w0!3", IntervalSet()), r"job 'w0!3' requests 2 resources, got 0",
                     id="no-units"),
        pytest.param(CallMeLater(4.0), r"t=4\.0 is in the past \(now is t=5\.0\)", id="call-in-the-past"),
        pytest.param(KillJob("w0!1"), r"job 'w0!1' is not running", id="kill-finished-job"),
        pytest.param(KillJob("w0!3"), r"job 'w0!3' is not running", id="kill-pending-job"),
        pytest.param(RejectJob("w0!2"), r"job 'w0!2' is already running", id="reject-running-job"),
        pytest.param(RejectJob("w0!1"), r"job 'w0!1' is not pending", id="reject-finished-job"),
        pytest.param(SetJobMetadata("w0!1", "x"), r"job 'w0!1' is neither pending nor running",
                     id="metadata-of-finished-job"),
        pytest.param("start everything", r"not a decision; expected one of", id="not-a-decision"),
    ],
)
def test_invalid_decision_is_refused_naming_it_and_outputs_stay_valid(
    bad: object, reason: str, tmp_path: Path
) -> None:
    error, process = run_until_refused(bad, tmp_path)
    assert error.decision is bad
    assert re.search(reason, error.reason), error.reason
    assert str(error).startswith(f"refused decision {bad!r}: ")
    assert_state_untouched(process)
    assert_outputs_hold_jobs_ended_before_the_error(tmp_path)


def test_a_refused_decision_stops_the_run_before_later_decisions_apply(tmp_path: Path) -> None:
    process = Scripted({0.0: [*GOOD_START, KillJob("w0!3"), StartJob("w0!3", IntervalSet.parse("3"))]})
    with pytest.raises(DecisionError, match=r"KillJob\(job_key='w0!3'"):
        simulate(platform(), workload(), process, tmp_path)
    view = process.view
    assert view is not None
    assert sorted(view.running) == ["w0!1", "w0!2"], "decisions before the refused one were applied"
    assert str(view.free) == "3"
    rows = list(csv.reader((tmp_path / "jobs.csv").read_text(encoding="utf-8").splitlines()))
    assert rows == [list(COLUMNS)], "no job ended before the error: header only"
    assert (tmp_path / "schedule.csv").exists()


def test_valid_script_runs_to_completion(tmp_path: Path) -> None:
    """The scenario itself is valid: with a good decision at t=5 every job completes."""
    process = Scripted({0.0: list(GOOD_START), 5.0: [StartJob("w0!3", IntervalSet.parse("0 3"))]})
    result = simulate(platform(), workload(), process, tmp_path)
    assert result.summary.unfinished == []
    assert result.summary.end_time == 10.0
    rows = csv_rows(tmp_path / "jobs.csv")
    assert [(r["job_id"], r["starting_time"], r["finish_time"], r["allocated_resources"]) for r in rows] == [
        ("1", "0", "1", "0"),
        ("3", "5", "6", "0 3"),
        ("2", "0", "10", "1-2"),
    ]
