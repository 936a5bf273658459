"""Batsim 4 protocol messages: building the events of either side and reading a peer's message defensively.

A message is `{"now": t, "events": [{"timestamp": t_i, "type": T, "data": {...}}]}` (docs/protocol.rst of
oar-team/batsim v4.2.0). Both sides of clustersim use this module: the simulator (`adapter.py`) and the
decision-process side (`host.py`), so that what one writes the other reads.

Everything read from a peer goes through `WireEvent`'s accessors, which fail with a `ProtocolError` naming the
message, the event and the field, because a peer is another program whose bugs must be explained, not crash us.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NoReturn

from clustersim.core.events import FinalState
from clustersim.errors import InputError
from clustersim.intervals import IntervalSet
from clustersim.platform.model import Platform, Unit
from clustersim.protocols.batsim.errors import ProtocolError
from clustersim.workload.batsim_writer import default_profile_name, job_entry, profile_entry
from clustersim.workload.job import Job
from clustersim.workload.profiles import Composed, Profile

JsonObject = dict[str, Any]



# -- writing -------------------------------------------------------------------------------------------------


_ENCODER = json.JSONEncoder(separators=(",", ":"))
_NUMBERS = (int, float)


def encode(now: float, events: Sequence[JsonObject]) -> bytes:
    """One message, compact JSON in UTF-8 (what goes on the socket)."""
    return _ENCODER.encode({"now": now, "events": events}).encode()


def event(timestamp: float, kind: str, data: JsonObject) -> JsonObject:
    return {"timestamp": timestamp, "type": kind, "data": data}


def profile_name(job: Job) -> str:
    """The job's profile name, or the name clustersim's converters give its profile when it has none."""
    return job.profile_name or default_profile_name(job.profile)


def job_description(job: Job) -> JsonObject:
    """The `job` object of JOB_SUBMITTED: the workload's job entry with its id made `workload!id`, as Batsim does."""
    return job_entry(job, job.key, profile_name(job))


def profile_description(profile: Profile) -> JsonObject:
    """A profile as a Batsim workload file writes it (parts of composed profiles get their default names)."""
    return profile_entry(profile, default_profile_name)


def compute_resources(platform: Platform) -> list[JsonObject]:
    """One Batsim compute resource per allocation unit: a host, or a core named `host/k` on core platforms."""
    if platform.unit is Unit.HOST:
        units = [(node.name, dict(node.properties)) for node in platform.nodes]
    else:
        units = [
            (f"{node.name}/{core}", {**node.properties, "node": node.name})
            for node in platform.nodes
            for core in range(node.cores)
        ]
    return [
        {"id": unit, "name": name, "state": "idle", "properties": properties, "zone_properties": {}}
        for unit, (name, properties) in enumerate(units)
    ]


def storage_hosts(platform: Platform) -> list[str]:
    """The storage hosts in Batsim's machine order: after the compute resources (ids from `nb_resources` on), by
    name, the order of SimGrid's host list that Batsim numbers them in."""
    return sorted(platform.storage_hosts)


def storage_resources(platform: Platform) -> list[JsonObject]:
    """SIMULATION_BEGINS's storage resources: their machine ids are what EXECUTE_JOB's `storage_mapping` names."""
    first = platform.nb_resources
    return [
        {"id": first + index, "name": name, "state": "idle", "properties": {"role": "storage"}, "zone_properties": {}}
        for index, name in enumerate(storage_hosts(platform))
    ]


def job_progress(job: Job, elapsed: float, speed: float) -> JsonObject:
    """JOB_KILLED's progress of one job: a fraction of its profile, with the running task of composed ones.

    Both `profile` (the protocol documentation's name) and `profile_name` (what Batsim 4.2 actually sends)
    are given, so that clients written against either read it.
    """
    return _task_progress(job.profile, profile_name(job), elapsed, job.nb_res, speed)


def _task_progress(profile: Profile, name: str, elapsed: float, nb_res: int, speed: float) -> JsonObject:
    if isinstance(profile, Composed):
        parts = profile.sequence
        for index in range(len(parts) * profile.repeat):
            part = parts[index % len(parts)]
            duration = part.runtime(nb_res, speed)
            if elapsed < duration or index == len(parts) * profile.repeat - 1:
                inner = _task_progress(part, default_profile_name(part), elapsed, nb_res, speed)
                return {"profile": name, "profile_name": name, "current_task_index": index % len(parts),
                        "current_task": inner}
            elapsed -= duration
    runtime = profile.runtime(nb_res, speed)
    progress = min(1.0, max(0.0, elapsed / runtime)) if runtime > 0 else 1.0
    return {"profile": name, "profile_name": name, "progress": progress}


# Events from the simulator to the decision process.


def simulation_begins(
    now: float,
    platform: Platform,
    config: JsonObject,
    workloads: Mapping[str, str],
    profiles: Mapping[str, Mapping[str, JsonObject]],
) -> JsonObject:
    resources = compute_resources(platform)
    storage = storage_resources(platform)
    return event(now, "SIMULATION_BEGINS", {
        "nb_resources": len(resources) + len(storage),
        "nb_compute_resources": len(resources),
        "nb_storage_resources": len(storage),
        "allow_compute_sharing": False,
        "allow_storage_sharing": False,
        "config": config,
        "compute_resources": resources,
        "storage_resources": storage,
        "workloads": dict(workloads),
        "profiles": {name: dict(table) for name, table in profiles.items()},
    })


def job_submitted(now: float, job: Job, forward_profile: bool) -> JsonObject:
    data: JsonObject = {"job_id": job.key, "job": job_description(job)}
    if forward_profile:
        data["profile"] = profile_description(job.profile)
    return event(now, "JOB_SUBMITTED", data)


def job_completed(now: float, key: str, state: FinalState, resources: IntervalSet) -> JsonObject:
    return event(now, "JOB_COMPLETED", {
        "job_id": key,
        "job_state": state.value,
        "return_code": 0 if state is FinalState.COMPLETED_SUCCESSFULLY else -1,
        "alloc": str(resources),
    })


def job_killed(now: float, keys: Sequence[str], progress: Mapping[str, JsonObject]) -> JsonObject:
    return event(now, "JOB_KILLED", {"job_ids": list(keys), "job_progress": dict(progress)})


def requested_call(now: float) -> JsonObject:
    return event(now, "REQUESTED_CALL", {})


def notify(now: float, kind: str) -> JsonObject:
    return event(now, "NOTIFY", {"type": kind})


def notify_resources(now: float, kind: str, resources: IntervalSet) -> JsonObject:
    """Batsim's NOTIFY of machines becoming unavailable or available (`event_machine_unavailable`...)."""
    return event(now, "NOTIFY", {"type": kind, "resources": str(resources)})


def resource_state_changed(now: float, resources: IntervalSet, state: str) -> JsonObject:
    return event(now, "RESOURCE_STATE_CHANGED", {"resources": str(resources), "state": state})


def answer(now: float, data: JsonObject) -> JsonObject:
    return event(now, "ANSWER", data)


def simulation_ends(now: float) -> JsonObject:
    return event(now, "SIMULATION_ENDS", {})


# Events from the decision process to the simulator.


def execute_job(now: float, key: str, resources: IntervalSet) -> JsonObject:
    return event(now, "EXECUTE_JOB", {"job_id": key, "alloc": str(resources)})


def reject_job(now: float, key: str) -> JsonObject:
    return event(now, "REJECT_JOB", {"job_id": key})


def kill_job(now: float, keys: Iterable[str]) -> JsonObject:
    return event(now, "KILL_JOB", {"job_ids": list(keys)})


def call_me_later(now: float, time: float) -> JsonObject:
    return event(now, "CALL_ME_LATER", {"timestamp": time})


def set_job_metadata(now: float, key: str, metadata: str) -> JsonObject:
    return event(now, "SET_JOB_METADATA", {"job_id": key, "metadata": metadata})


# -- reading -------------------------------------------------------------------------------------------------


class WireEvent:
    """One event of a peer's message, with accessors that explain what is wrong and where."""

    __slots__ = ("data", "index", "message", "raw", "timestamp", "type")

    def __init__(self, message: str, index: int, raw: JsonObject, timestamp: float, kind: str, data: JsonObject):
        self.message = message
        self.index = index
        self.raw = raw
        self.timestamp = timestamp
        self.type = kind
        self.data = data

    def where(self) -> str:
        """`reply #3 (now=12), event 0 EXECUTE_JOB {...}`: enough to find the culprit in the peer's code."""
        text = json.dumps(self.raw, separators=(",", ":"), default=str)
        if len(text) > 200:
            text = text[:197] + "..."
        return f"{self.message}, event {self.index} {text}"

    def fail(self, reason: str) -> NoReturn:
        raise ProtocolError(f"{self.where()}: {reason}")

    def field(self, key: str) -> Any:
        try:
            return self.data[key]
        except KeyError:
            self.fail(f"{self.type} needs a '{key}' field in 'data'")

    def string(self, key: str) -> str:
        value = self.field(key)
        if not isinstance(value, str):
            self.fail(f"'{key}' must be a string, got {_describe(value)}")
        return value

    def number(self, key: str) -> float:
        return _number(self.field(key), lambda reason: self.fail(f"'{key}' {reason}"))

    def mapping(self, key: str) -> JsonObject:
        value = self.field(key)
        if not isinstance(value, dict):
            self.fail(f"'{key}' must be a JSON object, got {_describe(value)}")
        return value

    def strings(self, key: str) -> list[str]:
        value = self.field(key)
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            self.fail(f"'{key}' must be a list of strings, got {_describe(value)}")
        return value

    def resources(self, key: str) -> IntervalSet:
        """An interval set such as `"1 2 4-8"`; never empty (Batsim refuses empty allocations too)."""
        text = self.string(key)
        try:
            resources = IntervalSet.parse(text, key)
        except InputError as error:
            self.fail(f"'{key}' is not an interval set like \"1 2 4-8\": {error.reason}")
        if not resources:
            self.fail(f"'{key}' is empty")
        return resources


def decode(payload: bytes, label: str, not_before: float | None = None) -> tuple[float, list[WireEvent]]:
    """Check a peer's message against the protocol's constraints and return `now` and its events.

    Constraints (protocol.rst, "Constraints"): `now` and `events` present; each event an object with a numeric
    `timestamp`, a string `type` and an object `data`; timestamps ascending and not after `now`. With
    `not_before` (the `now` of our request), an event may not be timestamped before it either: a decision
    cannot change the past.
    """
    try:
        document = json.loads(payload.decode())
    except (ValueError, UnicodeDecodeError) as error:
        raise ProtocolError(f"{label} is not valid JSON ({error}): {_preview(payload)}") from None
    if not isinstance(document, dict):
        raise ProtocolError(f"{label} must be a JSON object with 'now' and 'events', got {_describe(document)}")

    def fail(reason: str) -> NoReturn:
        raise ProtocolError(f"{label}: {reason}: {_preview(payload)}")

    if "now" not in document:
        fail("the message has no 'now'")
    now = _number(document["now"], lambda reason: fail(f"'now' {reason}"))
    raw_events = document.get("events")
    if not isinstance(raw_events, list):
        fail("'events' must be a list" if "events" in document else "the message has no 'events'")
    events: list[WireEvent] = []
    previous = -math.inf
    floor = -math.inf if not_before is None else not_before
    for index, raw in enumerate(raw_events):
        # The common case, checked inline (it is on every message's path); anything unusual takes `_event`.
        if type(raw) is dict:
            timestamp = raw.get("timestamp")
            kind = raw.get("type")
            data = raw.get("data")
            if (
                type(timestamp) in _NUMBERS and type(kind) is str and type(data) is dict
                and previous <= timestamp <= now and timestamp >= floor  # type: ignore[operator]
            ):
                previous = float(timestamp)  # type: ignore[arg-type]
                events.append(WireEvent(label, index, raw, previous, kind, data))
                continue
        events.append(_event(label, index, raw, now, previous, not_before))
        previous = events[-1].timestamp
    return now, events


def _event(
    label: str, index: int, raw: object, now: float, previous: float, not_before: float | None
) -> WireEvent:
    if not isinstance(raw, dict):
        raise ProtocolError(f"{label}, event {index}: must be a JSON object, got {_describe(raw)}")
    partial = WireEvent(label, index, raw, math.nan, str(raw.get("type", "?")), {})
    for key in ("timestamp", "type", "data"):
        if key not in raw:
            partial.fail(f"the event has no '{key}'")
    timestamp = _number(raw["timestamp"], lambda reason: partial.fail(f"'timestamp' {reason}"))
    kind = raw["type"]
    if not isinstance(kind, str):
        partial.fail(f"'type' must be a string, got {_describe(kind)}")
    data = raw["data"]
    if not isinstance(data, dict):
        partial.fail(f"'data' must be a JSON object, got {_describe(data)}")
    if timestamp > now:
        partial.fail(f"timestamp {timestamp!r} is after the message's now={now!r}")
    if timestamp < previous:
        partial.fail(f"timestamp {timestamp!r} is before the previous event's ({previous!r}): events must be in order")
    if not_before is not None and timestamp < not_before:
        partial.fail(
            f"timestamp {timestamp!r} is before the now={not_before!r} of the request it answers: "
            "a decision cannot change the past"
        )
    return WireEvent(label, index, raw, timestamp, kind, data)


def _number(value: object, fail: Callable[[str], NoReturn]) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        fail(f"must be a number, got {_describe(value)}")
    number = float(value)
    if not math.isfinite(number):
        fail(f"must be finite, got {value!r}")
    return number


def _describe(value: object) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _preview(payload: bytes) -> str:
    text = payload[:160].decode("utf-8", errors="replace")
    return repr(text + ("..." if len(payload) > 160 else ""))
