"""Batsim 4.2's rules that the corpus pins down, on hand-computed cases: how an instant's events reach the
decision process (Delivery), the string order of simultaneous submissions, a `parallel` profile's per-host
speeds, the stretch of a job that ran for no time, rejected rows, and Batsim's command line.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from clustersim.cli import main
from clustersim.core.decisions import CallMeLater, Decision, StartJob, SwitchOff
from clustersim.core.events import Event, FinalState, JobCompleted, JobSubmitted, NodesSwitched, RequestedCall
from clustersim.core.outcome import JobOutcome
from clustersim.core.simulation import Delivery
from clustersim.core.state import ClusterView
from clustersim.intervals import IntervalSet
from clustersim.platform.model import Node, Platform
from clustersim.platform.power_model import PowerModel, SleepState, Transition
from clustersim.policies.registry import create_policy
from clustersim.records.jobs_csv import job_line
from clustersim.runner import simulate
from clustersim.workload.job import Job
from clustersim.workload.profiles import Parallel, ParallelHomogeneous, runtime_on
from clustersim.workload.stream import Workload
from conftest import Collector, delay_job, hosts

CORPUS_PLATFORM = Path(__file__).resolve().parents[1].parent / "shared" / "reference" / "batsim" / "ties"


def run(jobs: list[Job], delivery: Delivery, nb_hosts: int = 2) -> Collector:
    collector = Collector()
    simulate(hosts(nb_hosts), Workload.from_jobs(jobs), create_policy("fcfs"), extra_sinks=[collector],
             delivery=delivery)
    return collector


# X takes host 0 until 5, A host 1 until 10; B takes host 0 from 5 to 10; D (submitted at 6) waits. At t=10 A and
# B end. In Batsim's rounds A's end comes alone first (A started first): D starts on A's host 1. Delivered at
# once, both hosts are free and D gets the lowest, 0.
ENDS_AT_ONE_INSTANT = [
    delay_job(1, 0, 1, 5, 100), delay_job(2, 0, 1, 10, 100), delay_job(3, 5, 1, 5, 100), delay_job(4, 6, 1, 1, 100),
]


def test_batsim_rounds_deliver_each_job_end_alone_in_start_order() -> None:
    schedule = run(ENDS_AT_ONE_INSTANT, Delivery.BATSIM).schedule()
    assert schedule["4"] == (10, 11, "1")


class _Recording:
    """fcfs, remembering which job ends each call of an instant told it about."""

    def __init__(self) -> None:
        self.policy = create_policy("fcfs")
        self.calls: list[tuple[float, list[str]]] = []

    def begin(self, view: ClusterView) -> None:
        self.policy.begin(view)

    def decide(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        self.calls.append((now, [e.job.id for e in events if isinstance(e, JobCompleted)]))
        return self.policy.decide(now, events, view)

    def end(self, view: ClusterView) -> None:
        self.policy.end(view)


def ends_told_at(jobs: list[Job], nb_hosts: int, instant: float) -> list[list[str]]:
    process = _Recording()
    simulate(hosts(nb_hosts), Workload.from_jobs(jobs), process, delivery=Delivery.BATSIM)
    return [ends for now, ends in process.calls if now == instant and ends]


# Time counted in Batsim's inter-actor messages (docs/batsim-protocol.md). At t=0 the server hears the
# submitter's hello (message 1) and the scheduler's ready (2), then the submissions (3): the first decision
# reaches it at 4, the second at 5, the third at 6, and each job ends that many messages after its end instant.
# The submitter's next submissions come 3 - 1 = 2 messages after their instant (its drift). Job 9, submitted
# last, keeps the submitter's goodbye (a message before the decisions') out of t=3.


def test_batsim_delivery_gives_two_ends_one_call_when_the_second_was_posted_before_the_first_arrived() -> None:
    # Jobs 1, 2 start at t=0 (messages 4, 5). At t=3 the submissions arrive at message 3 and jobs 4, 5 start at
    # messages 4, 5. At t=10 job 2 (message 5, started first) arrives at 6; job 5's end, posted at 5, waits in the
    # mailbox, so the server takes it before calling: both ends in one call.
    jobs = [delay_job(1, 0, 1, 100), delay_job(2, 0, 1, 10), delay_job(4, 3, 1, 100), delay_job(5, 3, 1, 7),
            delay_job(9, 50, 1, 1)]
    assert ends_told_at(jobs, 4, 10) == [["2", "5"]]


def test_batsim_delivery_can_tell_a_later_started_jobs_end_first() -> None:
    # Jobs 1, 2, 3 start at t=0 (messages 4, 5, 6); job 4 at t=3 (message 4). At t=10 job 4's end (posted at 4)
    # arrives at 5, before job 3's is posted (6): job 4's end is told first, alone.
    jobs = [delay_job(1, 0, 1, 100), delay_job(2, 0, 1, 100), delay_job(3, 0, 1, 10), delay_job(4, 3, 1, 7),
            delay_job(9, 50, 1, 1)]
    assert ends_told_at(jobs, 4, 10) == [["4"], ["3"]]


class _CallerAt:
    """fcfs that asks, at t=0, to be called at `at` (and `now_too`: also at 0, the current instant); it records
    what each call of the decision process was told, by instant."""

    def __init__(self, at: float, now_too: bool = False) -> None:
        self.policy = create_policy("fcfs")
        self.at, self.now_too = at, now_too
        self.calls: list[tuple[float, list[str]]] = []

    def begin(self, view: ClusterView) -> Sequence[Decision]:
        self.policy.begin(view)
        return [CallMeLater(self.at)]

    def decide(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        self.calls.append((now, [type(event).__name__ for event in events]))
        if self.now_too and now == 0 and not any(isinstance(event, RequestedCall) for event in events):
            yield CallMeLater(0)
        yield from self.policy.decide(now, events, view)

    def end(self, view: ClusterView) -> None:
        self.policy.end(view)


def test_batsim_delivers_a_call_asked_earlier_first_and_alone_a_call_for_now_last() -> None:
    # Job 1 runs from 0 to 10, job 2 is submitted at 10. Batsim's waiter for the call asked at 0 wakes at exactly
    # t=10, the instant's first message (job 1's end comes at its start's message, later): the call comes first,
    # alone. A call asked for the current instant (t=0) comes after the instant's other events.
    caller = _CallerAt(10, now_too=True)
    simulate(hosts(1), Workload.from_jobs([delay_job(1, 0, 1, 10, 100), delay_job(2, 10, 1, 1, 100)]), caller,
             delivery=Delivery.BATSIM)
    assert [events for now, events in caller.calls if now == 10] == [
        ["RequestedCall"], ["JobSubmitted"], ["NoMoreJobs"], ["JobCompleted"]]
    assert [events for now, events in caller.calls if now == 0] == [["JobSubmitted"], ["RequestedCall"]]
    caller = _CallerAt(10)
    simulate(hosts(1), Workload.from_jobs([delay_job(1, 0, 1, 10, 100), delay_job(2, 10, 1, 1, 100)]), caller,
             delivery=Delivery.INSTANT)
    assert [events for now, events in caller.calls if now == 10] == [
        ["JobCompleted", "JobSubmitted", "NoMoreJobs", "RequestedCall"]]


class _Switcher:
    """At the first submission, switches nodes 1 and 2 off (one decision each), then starts the job on node 0;
    records what each call was told, by instant."""

    def __init__(self) -> None:
        self.calls: list[tuple[float, list[str]]] = []

    def begin(self, view: ClusterView) -> None:
        return None

    def decide(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        self.calls.append((now, [f"end {e.job.id}" if isinstance(e, JobCompleted) else
                                 f"switched {e.nodes}" if isinstance(e, NodesSwitched) else type(e).__name__
                                 for e in events]))
        for event in events:
            if isinstance(event, JobSubmitted):
                yield SwitchOff((1,))
                yield SwitchOff((2,))
                yield StartJob(event.job.key, IntervalSet.from_ids([0]))

    def end(self, view: ClusterView) -> None:
        return None


def test_batsim_delivery_counts_a_machine_done_switching_as_a_message_of_its_own() -> None:
    # At t=0 the submissions reach the server at message 3 (after the submitter's hello and the scheduler's
    # ready); the switch of node 1 reaches it at 4, of node 2 at 5, the start of job 1 (a 5 s delay) at 6: each
    # actor posts its end that many messages after t=5. Node 1's message (posted at 4) reaches the server at 5,
    # when node 2's actor posts: the end of a computation, seen waiting, received at 6, when job 1's executor
    # posts: the end of a sleep, not seen. So the server calls with both switches, then with the job end, as
    # Batsim at t=1020 of energy_016 and t=603 of energy_018 (the rounds gave the three in one call).
    power = PowerModel(100.0, 200.0, (SleepState(10.0, Transition(5.0, 250.0), Transition(10.0, 1000.0)),))
    platform = Platform([Node(i, f"host{i}", power=power) for i in range(3)])
    switcher = _Switcher()
    simulate(platform, Workload.from_jobs([delay_job(1, 0, 1, 5, 100)]), switcher, energy=True,
             delivery=Delivery.BATSIM)
    assert [events for now, events in switcher.calls if now == 5] == [["switched (1,)", "switched (2,)"],
                                                                      ["end 1"]]


def test_instant_delivery_applies_every_end_before_the_one_decision() -> None:
    schedule = run(ENDS_AT_ONE_INSTANT, Delivery.INSTANT).schedule()
    assert schedule["4"] == (10, 11, "0")


def test_batsim_submits_an_instants_jobs_in_the_string_order_of_their_ids() -> None:
    jobs = [delay_job(10, 0, 1, 5, 100), delay_job(2, 0, 1, 5, 100), delay_job(1, 0, 1, 5, 100)]
    starts = {key: start for key, (start, _, _) in run(jobs, Delivery.BATSIM, 1).schedule().items()}
    assert starts == {"1": 0, "10": 5, "2": 10}  # "w0!1" < "w0!10" < "w0!2"
    starts = {key: start for key, (start, _, _) in run(jobs, Delivery.INSTANT, 1).schedule().items()}
    assert starts == {"1": 0, "2": 5, "10": 10}  # numeric ids in numeric order


def test_a_delay_reaching_its_walltime_is_killed_at_it() -> None:
    collector = run([delay_job(1, 0, 1, 10, 10), delay_job(2, 0, 1, 10, 10.5)], Delivery.BATSIM)
    assert collector.outcomes["1"].state is FinalState.COMPLETED_WALLTIME_REACHED
    assert collector.outcomes["2"].state is FinalState.COMPLETED_SUCCESSFULLY


def test_a_parallel_profile_runs_each_amount_at_its_own_hosts_speed() -> None:
    profile = Parallel((4e9, 4e9, 1e9))
    assert runtime_on(profile, [1e9, 2e9, 0.5e9]) == 4.0  # max(4, 2, 2): not max amount / slowest = 8
    assert runtime_on(ParallelHomogeneous(4e9), [1e9, 2e9]) == 4.0  # the slowest host's pace
    platform = Platform([Node(0, "slow", speed=1e9), Node(1, "fast", speed=2e9), Node(2, "slower", speed=0.5e9)])
    collector = Collector()
    job = Job("1", 0, 3, profile, None, profile_name="par")
    simulate(platform, Workload.from_jobs([job]), create_policy("fcfs"), extra_sinks=[collector])
    assert collector.schedule()["1"] == (0, 4.0, "0-2")


def test_a_job_that_ran_for_no_time_has_batsims_stretch() -> None:
    job = delay_job(1, 0, 1, 0, 100)
    line = job_line(JobOutcome(job, FinalState.COMPLETED_KILLED, 3.0, 3.0, IntervalSet.parse("0")))
    assert float(line.split(",")[13]) == 3.0 / 1e-5  # Batsim divides by a run time of 1e-5 s, never by 0


def test_rejected_jobs_leave_batsims_empty_fields() -> None:
    line = job_line(JobOutcome(delay_job(1, 0, 9, 1), FinalState.REJECTED, None, None, IntervalSet()))
    assert line.endswith(",0,REJECTED,,,,,,,,,\n")


@pytest.mark.parametrize(("flags", "named"), [
    (["--forward-unknown-events"], "--forward-unknown-events"),
    (["-W", "flow.dax"], "-W/--workflow"),
    (["--mmax", "4"], "--mmax"),
    (["-r", "host1:storage"], "-r/--add-role-to-hosts"),
    (["--sg-cfg", "network/model:CM02"], "--sg-cfg"),
    (["-m", "head"], "-m/--master-host 'head'"),
])
def test_batsim_flags_clustersim_does_not_honour_are_refused_by_name(
    flags: list[str], named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "-o", str(tmp_path), "-q", "--no-gantt", *flags]) == 2
    error = capsys.readouterr().err
    assert f"Batsim's {named} is not supported by clustersim" in error


def test_batsim_flags_clustersim_honours_are_accepted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = CORPUS_PLATFORM / "ties_000_easy_bf"
    code = main(["run", "-p", str(case / "platform.xml"), "-w", str(case / "workload.json"), "-e", str(tmp_path / "o"),
                 "-v", "quiet", "--no-gantt", "--enable-profile-reuse", "--disable-schedule-tracing",
                 "-m", "master_host", "--host-order", "name"])
    assert code == 0
    assert "jobs (" not in capsys.readouterr().err, "-v quiet prints no summary"
    assert (tmp_path / "o_jobs.csv").exists()


def test_energy_flag_is_batsims_dash_capital_e(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "-E", "-o", str(tmp_path), "-q", "--no-gantt"])  # the example platform has no power model
    assert code == 2
    assert "power" in capsys.readouterr().err
