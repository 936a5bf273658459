"""The three core hooks the Batsim protocol needs, checked on the core alone (no socket).

- `begin` may return decisions, applied at t=0 (a scheduler's answer to SIMULATION_BEGINS);
- `SubmitJob` submits a job now, while the simulation runs (REGISTER_JOB);
- `KillJob` may end a running job in another final state (CHANGE_JOB_STATE).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import pytest

from clustersim.core.decisions import CallMeLater, Decision, KillJob, StartJob, SubmitJob
from clustersim.core.events import Event, FinalState, JobSubmitted, RequestedCall
from clustersim.core.state import ClusterView
from clustersim.errors import DecisionError
from clustersim.intervals import IntervalSet
from clustersim.runner import simulate
from clustersim.workload.job import Job
from clustersim.workload.stream import Workload
from conftest import Collector, delay_job, hosts


class Scripted:
    """A decision process that logs what it is told and answers from a script keyed by time."""

    def __init__(self, at_begin: Iterable[Decision] = (), script: dict[float, list[Decision]] | None = None):
        self.at_begin = list(at_begin)
        self.script = script or {}
        self.log: list[tuple[float, list[str]]] = []

    def begin(self, view: ClusterView) -> list[Decision]:
        return self.at_begin

    def decide(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        self.log.append((now, [_name(e) for e in events]))
        yield from self.script.pop(now, [])

    def end(self, view: ClusterView) -> None:
        pass


def _name(event: Event) -> str:
    if isinstance(event, JobSubmitted):
        return f"submitted {event.job.key}"
    if isinstance(event, RequestedCall):
        return f"call {event.time:g}"
    return type(event).__name__


def test_decisions_returned_by_begin_are_applied_at_time_zero() -> None:
    process = Scripted(at_begin=[CallMeLater(5.0)])
    simulate(hosts(1), Workload.from_jobs([]), process)
    assert process.log == [(5.0, ["call 5"])]


def test_a_submitted_job_is_pending_at_once_and_announced_at_the_same_instant() -> None:
    dynamic = Job("d1", 3.0, 1, delay_job(0, 0, 1, 4).profile, 10.0, "dyn")
    process = Scripted(
        at_begin=[CallMeLater(3.0)],
        script={3.0: [SubmitJob(dynamic), StartJob("dyn!d1", IntervalSet.parse("0"))]},
    )
    collector = Collector()
    result = simulate(hosts(1), Workload.from_jobs([]), process, extra_sinks=[collector])
    assert process.log == [(3.0, ["call 3"]), (3.0, ["submitted dyn!d1"]), (7.0, ["JobCompleted"])]
    assert collector.schedule() == {"d1": (3.0, 7.0, "0")}
    assert result.summary.nb_submitted == 1


@pytest.mark.parametrize(
    ("submit_time", "key", "expected"),
    [(4.0, "d1", "its submit time must be t=3"), (3.0, "1", "job 'w0!1' is already pending or running")],
)
def test_a_submission_at_another_time_or_of_an_existing_job_is_refused(
    submit_time: float, key: str, expected: str
) -> None:
    job = Job(key, submit_time, 1, delay_job(0, 0, 1, 4).profile, 10.0)
    process = Scripted(script={3.0: [SubmitJob(job)]})
    with pytest.raises(DecisionError, match=expected):
        simulate(hosts(1), Workload.from_jobs([delay_job(1, 3, 1, 5)]), process)


def test_a_running_job_can_be_ended_in_another_final_state() -> None:
    process = Scripted(
        at_begin=[CallMeLater(2.0)],
        script={0: [StartJob("w0!1", IntervalSet.parse("0"))], 2.0: [KillJob("w0!1", FinalState.COMPLETED_FAILED)]},
    )
    collector = Collector()
    simulate(hosts(1), Workload.from_jobs([delay_job(1, 0, 1, 50)]), process, extra_sinks=[collector])
    outcome = collector.outcomes["1"]
    assert (outcome.state, outcome.finish) == (FinalState.COMPLETED_FAILED, 2.0)


def test_a_running_job_cannot_end_rejected() -> None:
    process = Scripted(
        script={0: [StartJob("w0!1", IntervalSet.parse("0")), KillJob("w0!1", FinalState.REJECTED)]},
    )
    with pytest.raises(DecisionError, match="cannot end REJECTED"):
        simulate(hosts(1), Workload.from_jobs([delay_job(1, 0, 1, 50)]), process)
