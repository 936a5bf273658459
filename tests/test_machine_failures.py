"""Machines that fail and come back (Batsim's external events): a hand-computed EASY case, the protocol's NOTIFY
messages to an external scheduler, events file errors, and a Hypothesis property: no policy ever starts a job on
an unavailable machine."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clustersim.cli import main
from clustersim.core.decisions import Decision
from clustersim.core.events import Event, MachinesAvailable, MachinesUnavailable, NoMoreExternalEvents
from clustersim.core.interface import DecisionProcess
from clustersim.core.outcome import JobOutcome
from clustersim.core.simulation import Simulation
from clustersim.core.state import ClusterView
from clustersim.exit_codes import EXIT_BAD_INPUT, EXIT_OK
from clustersim.intervals import IntervalSet
from clustersim.platform.events import AvailabilityChange
from clustersim.platform.model import Node, Platform
from clustersim.policies.registry import create_policy
from clustersim.workload.job import Job
from clustersim.workload.profiles import Delay
from clustersim.workload.stream import Workload
from conftest import csv_rows
from test_batsim_reference_easy import reference_easy
from test_properties import POLICIES, PROPERTY_SETTINGS

# Five hosts. A holds 0-1 until 100, B holds 2-3 until 50, host 4 is free. C (3 hosts) is the head from t=1: its
# reservation is at 50 on 2-4, so D (1 host for 60 s, submitted at 2) cannot backfill: it would hold host 4 past
# 50. At t=3 host 3 fails under B: B goes on (as in Batsim), but at 50 only host 2 comes back, so C's
# reservation moves to 100 on 0-2; host 4 is outside it and D backfills at once. Host 3 is back at 200.
WORKLOAD = {
    "nb_res": 5,
    "jobs": [
        {"id": "A", "subtime": 0, "res": 2, "profile": "d100", "walltime": 100},
        {"id": "B", "subtime": 0, "res": 2, "profile": "d50", "walltime": 50},
        {"id": "C", "subtime": 1, "res": 3, "profile": "d10", "walltime": 10},
        {"id": "D", "subtime": 2, "res": 1, "profile": "d60", "walltime": 60},
    ],
    "profiles": {f"d{n}": {"type": "delay", "delay": n} for n in (100, 50, 10, 60)},
}
EVENTS = [
    {"timestamp": 3, "type": "machine_unavailable", "resources": "3"},
    {"timestamp": 200, "type": "machine_available", "resources": "3"},
]
WITH_FAILURE = {"A": (0.0, 100.0, "0-1"), "B": (0.0, 50.0, "2-3"), "C": (100.0, 110.0, "0-2"), "D": (3.0, 63.0, "4")}
WITHOUT = {"A": (0.0, 100.0, "0-1"), "B": (0.0, 50.0, "2-3"), "C": (50.0, 60.0, "2-4"), "D": (60.0, 120.0, "2")}


def write_inputs(tmp_path: Path, events: list[dict[str, object]] | None = None) -> tuple[Path, Path]:
    workload = tmp_path / "workload.json"
    workload.write_text(json.dumps(WORKLOAD))
    path = tmp_path / "events.txt"
    path.write_text("".join(json.dumps(e) + "\n" for e in (EVENTS if events is None else events)))
    return workload, path


def schedule(jobs_csv: Path) -> dict[str, tuple[float, float, str]]:
    return {
        r["job_id"]: (float(r["starting_time"]), float(r["finish_time"]), r["allocated_resources"])
        for r in csv_rows(jobs_csv)
    }


def run(*args: str | Path) -> int:
    return main(["run", "--no-gantt", "-q", *map(str, args)])


def test_a_failure_under_a_running_job_moves_easys_reservation(tmp_path: Path) -> None:
    workload, events = write_inputs(tmp_path)
    assert run("-w", workload, "--policy", "easy", "-o", tmp_path / "failed", "--events", events) == EXIT_OK
    assert schedule(tmp_path / "failed" / "jobs.csv") == WITH_FAILURE
    metrics = csv_rows(tmp_path / "failed" / "schedule.csv")[0]
    assert float(metrics["time_unavailable"]) == 197.0, "host 3 was unavailable from 3 to 200"
    assert run("-w", workload, "--policy", "easy", "-o", tmp_path / "healthy") == EXIT_OK
    assert schedule(tmp_path / "healthy" / "jobs.csv") == WITHOUT
    healthy = csv_rows(tmp_path / "healthy" / "schedule.csv")[0]
    assert healthy["time_unavailable"] == "0.000000", "Batsim's column, 0 without events"


def test_external_scheduler_hears_the_events_as_batsim_sends_them(tmp_path: Path) -> None:
    """The reference external EASY learns of the failure through NOTIFY and schedules as the built-in EASY."""
    workload, events = write_inputs(tmp_path)
    with reference_easy() as endpoint:
        code = run("-w", workload, "--external", endpoint, "-o", tmp_path / "external", "--events", events)
    assert code == EXIT_OK
    assert schedule(tmp_path / "external" / "jobs.csv") == WITH_FAILURE


def test_notify_messages_carry_batsims_types_and_resources() -> None:
    from clustersim.protocols.batsim import messages as m

    assert m.notify_resources(3.0, "event_machine_unavailable", IntervalSet.parse("0-2 5")) == {
        "timestamp": 3.0, "type": "NOTIFY", "data": {"type": "event_machine_unavailable", "resources": "0-2 5"},
    }
    assert m.notify(200.0, "no_more_external_event_to_occur")["data"] == {"type": "no_more_external_event_to_occur"}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"timestamp": 1, "type": "machine_failure", "resources": "0"}', "unsupported event type 'machine_failure'"),
        ('{"timestamp": 1, "type": "machine_unavailable", "resources": "7"}', "beyond the platform's 5"),
        ('{"timestamp": -1, "type": "machine_unavailable", "resources": "0"}', "'timestamp' must be a number >= 0"),
        ('{"timestamp": 1, "type": "machine_unavailable", "resources": "a-b"}', "'resources'"),
        ("[1, 2]", "expected a JSON object"),
        ("{oops", "not a JSON object"),
    ],
)
def test_bad_events_are_reported_with_their_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, message: str
) -> None:
    workload, events = write_inputs(tmp_path, [])
    events.write_text('{"timestamp": 0, "type": "machine_available", "resources": "0"}\n\n' + line + "\n")
    assert run("-w", workload, "-o", tmp_path / "out", "--events", events) == EXIT_BAD_INPUT
    error = capsys.readouterr().err
    assert f"{events}, line 3:" in error and message in error, error


def test_events_must_be_in_time_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    workload, events = write_inputs(tmp_path, list(reversed(EVENTS)))
    assert run("-w", workload, "-o", tmp_path / "out", "--events", events) == EXIT_BAD_INPUT
    assert "line 2: timestamp 3 is before the previous event's (200)" in capsys.readouterr().err


# -- the property --------------------------------------------------------------------------------------------


_MACHINE_EVENTS = (MachinesUnavailable, MachinesAvailable, NoMoreExternalEvents)


class Watching:
    """Wraps a policy; records what it was told about machines, to check the core told it in order."""

    def __init__(self, policy: DecisionProcess):
        self.policy = policy
        self.told: list[Event] = []

    def begin(self, view: ClusterView) -> Iterable[Decision] | None:
        return self.policy.begin(view)

    def decide(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterable[Decision]:
        self.told += [e for e in events if isinstance(e, _MACHINE_EVENTS)]
        return self.policy.decide(now, events, view)

    def end(self, view: ClusterView) -> None:
        self.policy.end(view)


class Starts:
    def __init__(self) -> None:
        self.outcomes: list[JobOutcome] = []

    def record(self, outcome: JobOutcome) -> None:
        self.outcomes.append(outcome)

    def close(self) -> None:
        return None


FailureCase = tuple[int, list[Job], list[AvailabilityChange]]


@st.composite
def failure_cases(draw: st.DrawFn) -> FailureCase:
    nb_hosts = draw(st.integers(1, 8))
    jobs = []
    for index in range(draw(st.integers(1, 25))):
        runtime = draw(st.sampled_from([1.0, 5.0, 10.0, 30.0]))
        walltime = draw(st.sampled_from([None, runtime, runtime * 2, runtime / 2]))
        jobs.append(Job(str(index), float(draw(st.integers(0, 40))), draw(st.integers(1, nb_hosts)), Delay(runtime),
                        walltime))
    changes = []
    time = 0.0
    for _ in range(draw(st.integers(1, 10))):
        time += draw(st.sampled_from([0.0, 1.0, 2.5, 7.0]))
        lo = draw(st.integers(0, nb_hosts - 1))
        hi = draw(st.integers(lo, nb_hosts - 1))
        changes.append(AvailabilityChange(time, IntervalSet.range(lo, hi + 1), draw(st.booleans())))
    return nb_hosts, jobs, changes


@pytest.mark.parametrize("policy", POLICIES)
@PROPERTY_SETTINGS
@given(case=failure_cases())
def test_no_job_ever_starts_on_an_unavailable_machine(policy: str, case: FailureCase) -> None:
    nb_hosts, jobs, changes = case
    platform = Platform([Node(i, f"h{i}") for i in range(nb_hosts)])
    starts, process = Starts(), Watching(create_policy(policy))
    Simulation(platform, Workload.from_jobs(jobs), process, [starts], events=changes).run()
    for outcome in starts.outcomes:
        if outcome.start is None:
            continue
        down = IntervalSet()
        for change in changes:  # the machines' state once every event up to the start is applied
            if change.time <= outcome.start:
                down = down - change.resources if change.available else down | change.resources
        assert not (outcome.resources & down), (outcome.job.id, outcome.start, outcome.resources, down)
    assert len(process.told) == len(changes) + 1
    assert isinstance(process.told[-1], NoMoreExternalEvents)
