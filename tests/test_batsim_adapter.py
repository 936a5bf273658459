"""The Batsim adapter's rules, checked against scripted schedulers (a REP socket served by a thread).

Each test plays a scheduler whose answers are written out, and asserts on the messages it received and on the
schedule the core produced: an instant's events in Batsim's rounds, decisions applied at their own timestamps, a busy
scheduler's events held until its `now`, kills and state changes acknowledged as Batsim does.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import pytest
import zmq

from clustersim.core.events import FinalState
from clustersim.core.simulation import Delivery
from clustersim.errors import DecisionError
from clustersim.intervals import IntervalSet
from clustersim.protocols.batsim.adapter import ExternalScheduler
from clustersim.protocols.batsim.errors import ProtocolError
from clustersim.protocols.batsim.options import ProtocolOptions
from clustersim.runner import simulate
from clustersim.workload.job import Job
from clustersim.workload.stream import Workload
from conftest import Collector, delay_job, hosts

Message = dict[str, Any]
Answer = Callable[[Message], "list[Message] | tuple[float, list[Message]]"]


class ScriptedScheduler:
    """A REP socket answered by `answer(message)` in a thread until SIMULATION_ENDS; keeps what it received."""

    def __init__(self, answer: Answer):
        self.answer = answer
        self.received: list[Message] = []
        self.error: BaseException | None = None
        self._context = zmq.Context()
        self._socket = self._context.socket(zmq.REP)
        self._socket.bind("tcp://127.0.0.1:*")
        self.endpoint = self._socket.getsockopt_string(zmq.LAST_ENDPOINT)
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        try:
            while True:
                if not self._socket.poll(10_000):
                    return
                message = json.loads(self._socket.recv())
                self.received.append(message)
                if any(e["type"] == "SIMULATION_ENDS" for e in message["events"]):
                    self._socket.send(json.dumps({"now": message["now"], "events": []}).encode())
                    return
                reply = self.answer(message)
                now, events = reply if isinstance(reply, tuple) else (message["now"], reply)
                self._socket.send(json.dumps({"now": now, "events": events}).encode())
        except BaseException as error:  # reported by join()
            self.error = error
        finally:
            self._socket.close(linger=1000)

    def join(self) -> None:
        self._thread.join(timeout=20)
        self._context.term()
        if self.error is not None:
            raise self.error

    def types(self) -> list[tuple[float, list[str]]]:
        """(now, event types) of every message received."""
        return [(msg["now"], [e["type"] for e in msg["events"]]) for msg in self.received]

    def events(self, kind: str) -> list[Message]:
        return [e for msg in self.received for e in msg["events"] if e["type"] == kind]


def ev(at: float, kind: str, **data: Any) -> Message:
    return {"timestamp": at, "type": kind, "data": data}


class Fcfs:
    """A minimal scheduler: jobs in submission order on the lowest free hosts, as soon as they fit."""

    def __init__(self, nb_hosts: int):
        self.free = IntervalSet.range(0, nb_hosts)
        self.queue: list[tuple[str, int]] = []

    def __call__(self, message: Message) -> list[Message]:
        for e in message["events"]:
            if e["type"] == "JOB_SUBMITTED":
                self.queue.append((e["data"]["job_id"], e["data"]["job"]["res"]))
            elif e["type"] == "JOB_COMPLETED":
                self.free = self.free | IntervalSet.parse(e["data"]["alloc"])
        out = []
        while self.queue and self.queue[0][1] <= len(self.free):
            key, res = self.queue.pop(0)
            alloc = self.free.lowest(res)
            self.free = self.free - alloc
            out.append(ev(message["now"], "EXECUTE_JOB", job_id=key, alloc=str(alloc)))
        return out


def run(
    jobs: list[Job], answer: Answer, nb_hosts: int = 4, delivery: Delivery = Delivery.BATSIM, **options: Any
) -> tuple[Collector, ScriptedScheduler, ExternalScheduler]:
    scheduler = ScriptedScheduler(answer)
    adapter = ExternalScheduler(scheduler.endpoint, ProtocolOptions(timeout=10, **options))
    collector = Collector()
    try:
        simulate(hosts(nb_hosts), Workload.from_jobs(jobs), adapter, extra_sinks=[collector], delivery=delivery)
    finally:
        scheduler.join()
    return collector, scheduler, adapter


def test_the_first_message_is_simulation_begins_alone_and_the_last_is_simulation_ends() -> None:
    _, scheduler, _ = run([delay_job(1, 5, 1, 10)], Fcfs(4))
    assert scheduler.types()[0] == (0, ["SIMULATION_BEGINS"])
    assert scheduler.types()[-1] == (15, ["SIMULATION_ENDS"])
    begins = scheduler.received[0]["events"][0]["data"]
    assert begins["nb_resources"] == 4 and [r["name"] for r in begins["compute_resources"]][:2] == ["host0", "host1"]


def test_events_of_one_instant_go_as_batsims_server_hears_them() -> None:
    # In Batsim's messages (docs/batsim-protocol.md): jobs 1 and 2 start at messages 4 and 5 of t=0, so end at
    # messages 4 and 5 of t=10; job 3's submission is posted at 2 (the submitter's drift, 3 - 1) and arrives at
    # 3, alone. The submitter's goodbye (4) and the start of job 3 (5) come before the ready signal, which arrives
    # after both ends (6, 7): the scheduler hears the goodbye and both ends in one message.
    jobs = [delay_job(2, 0, 1, 10, 20), delay_job(1, 0, 1, 10, 20), delay_job(3, 10, 1, 5, 20)]
    _, scheduler, _ = run(jobs, Fcfs(4))
    assert scheduler.types()[1:] == [
        (0, ["JOB_SUBMITTED", "JOB_SUBMITTED"]),
        (10, ["JOB_SUBMITTED"]),
        (10, ["NOTIFY", "JOB_COMPLETED", "JOB_COMPLETED"]),
        (15, ["JOB_COMPLETED"]),
        (15, ["SIMULATION_ENDS"]),
    ]
    completed = [e["data"]["job_id"] for e in scheduler.events("JOB_COMPLETED")]
    assert completed == ["w0!1", "w0!2", "w0!3"], "ends in the order the jobs started"


def test_instant_delivery_sends_one_message_per_instant_ends_before_submissions() -> None:
    jobs = [delay_job(2, 0, 1, 10, 20), delay_job(1, 0, 1, 10, 20), delay_job(3, 10, 1, 5, 20)]
    _, scheduler, _ = run(jobs, Fcfs(4), delivery=Delivery.INSTANT)
    assert scheduler.types()[1:] == [
        (0, ["JOB_SUBMITTED", "JOB_SUBMITTED"]),
        (10, ["JOB_COMPLETED", "JOB_COMPLETED", "JOB_SUBMITTED", "NOTIFY"]),
        (15, ["JOB_COMPLETED"]),
        (15, ["SIMULATION_ENDS"]),
    ]
    assert [e["data"]["job_id"] for e in scheduler.events("JOB_SUBMITTED")] == ["w0!1", "w0!2", "w0!3"]
    assert scheduler.events("NOTIFY")[0]["data"] == {"type": "no_more_static_job_to_submit"}


def test_a_decision_takes_effect_at_its_own_timestamp() -> None:
    def answer(message: Message) -> list[Message] | tuple[float, list[Message]]:
        if message["events"][0]["type"] == "JOB_SUBMITTED":
            return 4.0, [ev(3.0, "EXECUTE_JOB", job_id="w0!1", alloc="2")]
        return []

    collector, scheduler, _ = run([delay_job(1, 0, 1, 10)], answer)
    assert collector.schedule() == {"1": (3.0, 13.0, "2")}
    assert not scheduler.events("REQUESTED_CALL"), "the adapter's own wake-ups are not forwarded"


def test_a_kill_timestamped_later_applies_before_that_instants_events_so_a_job_ending_then_is_killed() -> None:
    def answer(message: Message) -> list[Message] | tuple[float, list[Message]]:
        if message["now"] == 0 and message["events"][0]["type"] == "JOB_SUBMITTED":
            return [ev(0, "EXECUTE_JOB", job_id="w0!1", alloc="0")]
        if message["now"] == 5:  # job 2 submitted: run it, and kill job 1 at t=10, when it would end anyway
            return 10.0, [ev(5, "EXECUTE_JOB", job_id="w0!2", alloc="1"), ev(10, "KILL_JOB", job_ids=["w0!1"])]
        return []

    jobs = [delay_job(1, 0, 1, 10, 20), delay_job(2, 5, 1, 1, 20)]
    collector, scheduler, _ = run(jobs, answer)
    assert collector.outcomes["1"].state is FinalState.COMPLETED_KILLED
    assert collector.outcomes["1"].finish == 10
    assert [e["data"]["job_state"] for e in scheduler.events("JOB_COMPLETED")] == [
        "COMPLETED_SUCCESSFULLY", "COMPLETED_KILLED"
    ]
    assert [e["data"]["job_ids"] for e in scheduler.events("JOB_KILLED")] == [["w0!1"]]


@pytest.mark.parametrize("delivery", [Delivery.BATSIM, Delivery.INSTANT])
def test_what_a_held_back_kill_causes_goes_with_the_events_held_meanwhile(delivery: Delivery) -> None:
    # batsched's killer (ties_053_killer): busy until 10, it kills job 1 at 10. Batsim's request-reply actor sends
    # the KILL_JOB at 10, then its ready signal: job 2's submission (t=1) and job 1's end go in one message.
    def answer(message: Message) -> list[Message] | tuple[float, list[Message]]:
        if message["now"] == 0 and message["events"][0]["type"] == "JOB_SUBMITTED":
            return 10.0, [ev(0, "EXECUTE_JOB", job_id="w0!1", alloc="0"), ev(10, "KILL_JOB", job_ids=["w0!1"])]
        return []

    collector, scheduler, _ = run([delay_job(1, 0, 1, 30, 40), delay_job(2, 1, 1, 1, 20)], answer, delivery=delivery)
    assert collector.outcomes["1"].state is FinalState.COMPLETED_KILLED
    assert scheduler.types()[2] == (10.0, ["JOB_SUBMITTED", "NOTIFY", "JOB_COMPLETED", "JOB_KILLED"])


def test_events_while_the_scheduler_is_busy_are_sent_at_its_now_with_their_own_timestamps() -> None:
    def answer(message: Message) -> list[Message] | tuple[float, list[Message]]:
        submitted = [e["data"]["job_id"] for e in message["events"] if e["type"] == "JOB_SUBMITTED"]
        if submitted == ["w0!1"]:
            return 5.0, [ev(0.0, "EXECUTE_JOB", job_id="w0!1", alloc="0")]
        if submitted == ["w0!2"]:
            return [ev(message["now"], "EXECUTE_JOB", job_id="w0!2", alloc="1")]
        return []

    collector, scheduler, _ = run([delay_job(1, 0, 1, 10), delay_job(2, 2, 1, 10)], answer)
    held = scheduler.received[2]
    assert held["now"] == 5.0
    assert [(e["timestamp"], e["type"]) for e in held["events"]] == [(2.0, "JOB_SUBMITTED"), (2.0, "NOTIFY")]
    assert collector.schedule() == {"1": (0.0, 10.0, "0"), "2": (5.0, 15.0, "1")}


def test_requested_calls_come_back_at_their_time_even_when_asked_in_the_first_answer() -> None:
    def answer(message: Message) -> list[Message]:
        if message["events"][0]["type"] == "SIMULATION_BEGINS":
            return [ev(0, "CALL_ME_LATER", timestamp=7), ev(0, "CALL_ME_LATER", timestamp=7)]
        return Fcfs(4)(message)

    _, scheduler, _ = run([delay_job(1, 20, 1, 1)], answer)
    assert scheduler.types()[1] == (7, ["REQUESTED_CALL", "REQUESTED_CALL"])


def test_a_kill_is_acknowledged_by_job_completed_and_job_killed_with_progress() -> None:
    def answer(message: Message) -> list[Message]:
        kinds = [e["type"] for e in message["events"]]
        if "JOB_SUBMITTED" in kinds:
            return [ev(0, "EXECUTE_JOB", job_id="w0!1", alloc="0-1"), ev(0, "CALL_ME_LATER", timestamp=25)]
        if kinds == ["REQUESTED_CALL"]:
            return [ev(25, "KILL_JOB", job_ids=["w0!1"])]
        return []

    collector, scheduler, _ = run([delay_job(1, 0, 2, 100)], answer)
    assert scheduler.types()[4] == (25, ["JOB_COMPLETED", "JOB_KILLED"])
    completed, killed = scheduler.received[4]["events"]
    assert completed["data"] == {"job_id": "w0!1", "job_state": "COMPLETED_KILLED", "return_code": -1, "alloc": "0-1"}
    assert killed["data"]["job_ids"] == ["w0!1"]
    assert killed["data"]["job_progress"]["w0!1"]["progress"] == pytest.approx(0.25)
    assert collector.outcomes["1"].state is FinalState.COMPLETED_KILLED and collector.outcomes["1"].finish == 25


def test_change_job_state_rejects_a_pending_job_and_ends_a_running_one_silently() -> None:
    def answer(message: Message) -> list[Message]:
        kinds = [e["type"] for e in message["events"]]
        if "JOB_SUBMITTED" in kinds:
            return [
                ev(0, "EXECUTE_JOB", job_id="w0!1", alloc="0"),
                ev(0, "CHANGE_JOB_STATE", job_id="w0!2", job_state="REJECTED"),
                ev(0, "CALL_ME_LATER", timestamp=5),
            ]
        if kinds == ["REQUESTED_CALL"]:
            return [ev(5, "CHANGE_JOB_STATE", job_id="w0!1", job_state="COMPLETED_SUCCESSFULLY")]
        return []

    collector, scheduler, _ = run([delay_job(1, 0, 1, 100), delay_job(2, 0, 1, 100)], answer)
    assert collector.outcomes["1"].state is FinalState.COMPLETED_SUCCESSFULLY and collector.outcomes["1"].finish == 5
    assert collector.outcomes["2"].state is FinalState.REJECTED
    assert not scheduler.events("JOB_COMPLETED"), "Batsim acknowledges no CHANGE_JOB_STATE"


def test_change_job_state_to_running_is_refused_naming_the_event() -> None:
    def answer(message: Message) -> list[Message]:
        if message["events"][0]["type"] == "JOB_SUBMITTED":
            return [ev(0, "CHANGE_JOB_STATE", job_id="w0!1", job_state="RUNNING")]
        return []

    with pytest.raises(ProtocolError, match=r"reply #2 .*CHANGE_JOB_STATE.*cannot change job 'w0!1' \(pending\)"):
        run([delay_job(1, 0, 1, 10)], answer)


@pytest.mark.parametrize("acknowledged", [False, True])
def test_dynamic_jobs_are_registered_run_and_acknowledged_on_request(acknowledged: bool) -> None:
    def answer(message: Message) -> list[Message]:
        kinds = [e["type"] for e in message["events"]]
        if kinds == ["SIMULATION_BEGINS"]:
            return [ev(0, "CALL_ME_LATER", timestamp=3)]
        if kinds == ["REQUESTED_CALL"]:
            return [
                ev(3, "REGISTER_PROFILE", workload_name="dyn", profile_name="p", profile={"type": "delay", "delay": 4}),
                ev(3, "REGISTER_JOB", job_id="dyn!a", job={"id": "dyn!a", "res": 2, "walltime": 10, "profile": "p"}),
                ev(3, "SET_JOB_METADATA", job_id="dyn!a", metadata="made at 3"),
                ev(3, "EXECUTE_JOB", job_id="dyn!a", alloc="2-3"),
                ev(3, "NOTIFY", type="registration_finished"),
            ]
        return []

    collector, scheduler, _ = run(
        [delay_job(1, 10, 1, 1)], answer, dynamic_jobs=True, acknowledge_dynamic_jobs=acknowledged
    )
    dynamic = collector.outcomes["a"]
    assert (dynamic.job.key, dynamic.start, dynamic.finish, str(dynamic.resources)) == ("dyn!a", 3, 7, "2-3")
    assert dynamic.metadata == "made at 3"
    acks = [e["data"]["job_id"] for e in scheduler.events("JOB_SUBMITTED") if e["data"]["job_id"] == "dyn!a"]
    assert acks == (["dyn!a"] if acknowledged else [])


def test_dynamic_jobs_are_refused_unless_enabled() -> None:
    def answer(message: Message) -> list[Message]:
        return [ev(0, "REGISTER_PROFILE", workload_name="d", profile_name="p", profile={"type": "delay", "delay": 1})]

    with pytest.raises(ProtocolError, match="--enable-dynamic-jobs"):
        run([delay_job(1, 0, 1, 1)], answer)


def test_profiles_are_forwarded_on_request() -> None:
    _, scheduler, _ = run([delay_job(1, 0, 1, 10)], Fcfs(4), forward_profiles=True)
    submitted = scheduler.events("JOB_SUBMITTED")[0]["data"]
    assert submitted["profile"] == {"type": "delay", "delay": 10}
    assert scheduler.received[0]["events"][0]["data"]["config"]["profiles-forwarded-on-submission"] is True


def test_a_refused_decision_names_the_message_it_came_from_and_the_scheduler_is_told_the_end() -> None:
    def answer(message: Message) -> list[Message]:
        if message["events"][0]["type"] == "JOB_SUBMITTED":
            return [ev(0, "EXECUTE_JOB", job_id="w0!1", alloc="0-2")]  # the job asks for 1 host
        return []

    scheduler = ScriptedScheduler(answer)
    adapter = ExternalScheduler(scheduler.endpoint, ProtocolOptions(timeout=10))
    with pytest.raises(DecisionError) as refused:
        simulate(hosts(4), Workload.from_jobs([delay_job(1, 0, 1, 10)]), adapter)
    scheduler.join()
    explained = str(adapter.explain(refused.value))
    assert "requests 1 resources, got 3" in explained
    assert 'reply #2 (to the message with now=0), event 0 {"timestamp":0,"type":"EXECUTE_JOB"' in explained
    assert scheduler.types()[-1][1][-1] == "SIMULATION_ENDS", "an aborted run still lets the scheduler exit"


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        (ev(0, "DANCE"), "unknown or unsupported event type 'DANCE'"),
        (ev(0, "EXECUTE_JOB", job_id="w0!1", alloc="0", additional_io_job={}),
         "'additional_io_job' is not supported"),
        (ev(0, "NOTIFY", type="party"), "unknown NOTIFY type 'party'"),
        (ev(0, "QUERY", requests={"air_temperature_all": {}}), "unknown QUERY 'air_temperature_all'"),
        (ev(0, "SET_RESOURCE_STATE", resources="3-9", state="1"), "resources 4-9 do not exist"),
        (ev(0, "SET_RESOURCE_STATE", resources="0", state="off"), "must be a power state number"),
        (ev(0, "SET_RESOURCE_STATE", resources="0-1", state="1"), "a power state change needs energy, which is off"),
        (ev(0, "QUERY", requests={"consumed_energy": {}}), "the consumed_energy QUERY needs energy, which is off"),
    ],
)
def test_unsupported_or_malformed_events_are_protocol_errors(event: Message, expected: str) -> None:
    def answer(message: Message) -> list[Message]:
        return [event] if message["events"][0]["type"] == "JOB_SUBMITTED" else []

    with pytest.raises(ProtocolError, match="reply #2") as error:
        run([delay_job(1, 0, 1, 10)], answer)
    assert expected in str(error.value)
