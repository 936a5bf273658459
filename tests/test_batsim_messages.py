"""Batsim protocol messages: what clustersim writes has Batsim 4's fields; what it reads is checked, and every
violation of the protocol is reported naming the message, the event and the field."""

from __future__ import annotations

import json

import pytest

from clustersim.core.events import FinalState
from clustersim.intervals import IntervalSet
from clustersim.platform.model import Node, Platform, Unit
from clustersim.protocols.batsim import messages as m
from clustersim.protocols.batsim.errors import ProtocolError
from clustersim.protocols.batsim.options import ProtocolOptions
from clustersim.workload.job import Job
from clustersim.workload.profiles import Composed, Delay, ParallelHomogeneous


def _reply(events: list[object], now: float = 10.0) -> bytes:
    return json.dumps({"now": now, "events": events}).encode()


def test_simulation_begins_carries_what_batsim_4_sends() -> None:
    platform = Platform([Node(0, "a", properties={"role": "compute"}), Node(1, "b")])
    begins = m.simulation_begins(0.0, platform, ProtocolOptions().config(), {"w0": "/w.json"}, {"w0": {}})
    data = begins["data"]
    assert begins["type"] == "SIMULATION_BEGINS" and begins["timestamp"] == 0.0
    assert (data["nb_resources"], data["nb_compute_resources"], data["nb_storage_resources"]) == (2, 2, 0)
    assert data["allow_compute_sharing"] is False and data["allow_storage_sharing"] is False
    assert data["compute_resources"][0] == {
        "id": 0, "name": "a", "state": "idle", "properties": {"role": "compute"}, "zone_properties": {}
    }
    assert data["storage_resources"] == [] and data["workloads"] == {"w0": "/w.json"} and data["profiles"] == {"w0": {}}
    for key in ("profiles-forwarded-on-submission", "dynamic-jobs-enabled", "dynamic-jobs-acknowledged",
                "forward-unknown-events", "redis-enabled"):
        assert key in data["config"]


def test_core_platforms_offer_one_resource_per_core() -> None:
    platform = Platform([Node(0, "n0", cores=2), Node(1, "n1", cores=2)], unit=Unit.CORE)
    names = [r["name"] for r in m.compute_resources(platform)]
    assert names == ["n0/0", "n0/1", "n1/0", "n1/1"]


def test_job_submitted_describes_the_job_with_its_workload_id_and_forwards_the_profile_on_request() -> None:
    job = Job("7", 12.0, 4, Delay(100.0), 300.0, "w0", "delay100", user="alice", extra={"color": "red"})
    plain = m.job_submitted(12.0, job, forward_profile=False)["data"]
    assert plain == {"job_id": "w0!7", "job": {
        "id": "w0!7", "subtime": 12, "res": 4, "profile": "delay100", "walltime": 300, "user": "alice",
        "color": "red",
    }}
    forwarded = m.job_submitted(12.0, job, forward_profile=True)["data"]
    assert forwarded["profile"] == {"type": "delay", "delay": 100}


def test_jobs_without_walltime_say_minus_one() -> None:
    job = Job("1", 0.0, 1, Delay(1.5), None)
    assert m.job_description(job)["walltime"] == -1
    assert m.job_description(job)["profile"] == "delay1.5"


def test_job_completed_has_state_return_code_and_allocation() -> None:
    data = m.job_completed(5.0, "w0!1", FinalState.COMPLETED_WALLTIME_REACHED, IntervalSet.parse("0-3 8"))["data"]
    assert data == {"job_id": "w0!1", "job_state": "COMPLETED_WALLTIME_REACHED", "return_code": -1, "alloc": "0-3 8"}


def test_progress_of_a_killed_composed_job_names_the_running_task() -> None:
    job = Job("1", 0.0, 1, Composed((Delay(10.0), ParallelHomogeneous(20.0)), repeat=2), None, profile_name="seq")
    progress = m.job_progress(job, 15.0, speed=2.0)  # second task (10 s at speed 2), half done
    assert progress["profile"] == "seq" and progress["current_task_index"] == 1
    assert progress["current_task"]["progress"] == pytest.approx(0.5)


def test_a_valid_reply_is_decoded_in_order() -> None:
    now, events = m.decode(_reply([
        {"timestamp": 10, "type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": "0-1 4"}},
    ]), "reply #1", not_before=10.0)
    assert now == 10.0
    assert events[0].type == "EXECUTE_JOB" and events[0].resources("alloc") == IntervalSet.parse("0-1 4")


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (b"{not json", "reply #1 is not valid JSON"),
        (b"[1, 2]", "must be a JSON object with 'now' and 'events'"),
        (b'{"events": []}', "the message has no 'now'"),
        (b'{"now": "soon", "events": []}', "'now' must be a number"),
        (b'{"now": 1}', "the message has no 'events'"),
        (
            _reply([{"type": "NOTIFY", "data": {}}]),
            "event 0 {\"type\":\"NOTIFY\",\"data\":{}}: the event has no 'timestamp'",
        ),
        (_reply([{"timestamp": 10, "type": 3, "data": {}}]), "'type' must be a string"),
        (_reply([{"timestamp": 10, "type": "NOTIFY", "data": []}]), "'data' must be a JSON object"),
        (_reply([{"timestamp": 11, "type": "NOTIFY", "data": {}}]), "timestamp 11.0 is after the message's now=10.0"),
        (_reply([{"timestamp": 5, "type": "NOTIFY", "data": {}}]), "a decision cannot change the past"),
        (
            _reply([{"timestamp": 10, "type": "A", "data": {}}, {"timestamp": 9.5, "type": "B", "data": {}}]),
            "events must be in order",
        ),
    ],
)
def test_protocol_violations_name_the_message_and_the_event(payload: bytes, expected: str) -> None:
    with pytest.raises(ProtocolError, match="reply #1") as error:
        m.decode(payload, "reply #1", not_before=9.0 if b"9.5" in payload else 10.0)
    assert expected in str(error.value)


@pytest.mark.parametrize(
    ("data", "accessor", "expected"),
    [
        ({}, "string", "EXECUTE_JOB needs a 'job_id' field in 'data'"),
        ({"job_id": 7}, "string", "'job_id' must be a string, got 7"),
        ({"job_id": "2-1"}, "resources", "is not an interval set"),
        ({"job_id": ""}, "resources", "'job_id' is empty"),
        ({"job_id": ["a", 1]}, "strings", "must be a list of strings"),
    ],
)
def test_field_errors_say_which_field_is_wrong(data: dict[str, object], accessor: str, expected: str) -> None:
    _, events = m.decode(_reply([{"timestamp": 10, "type": "EXECUTE_JOB", "data": data}]), "reply #4")
    with pytest.raises(ProtocolError, match="reply #4, event 0") as error:
        getattr(events[0], accessor)("job_id")
    assert expected in str(error.value)


def test_messages_are_compact_json() -> None:
    assert m.encode(3.0, [m.requested_call(3.0)]) == (
        b'{"now":3.0,"events":[{"timestamp":3.0,"type":"REQUESTED_CALL","data":{}}]}'
    )
