"""Reference schedulers doing what batsched 1.4's `filler`, `killer`, `rejecter` and `submitter` variants do, served
over the
Batsim protocol (a ZeroMQ REP socket in a thread), so the corpus cases made with them run through clustersim's
protocol path end to end.

Like batsched, each keeps its own view of the machines from the messages: the free machines, the allocations
it made, and a queue sorted as batsched's default order sorts it: by release date (the `now` of the message
that brought the job, not its submission time), then by job id as a string; a job asking for more machines
than the platform has is rejected at once.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import zmq

from clustersim.intervals import IntervalSet

Event = dict[str, Any]


class Batsched:
    """batsched's common part (ISchedulingAlgorithm and its main loop); `make_decisions` is the variant."""

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        self.options = options or {}
        self.nb_machines = 0
        self.available = IntervalSet()
        self.allocations: dict[str, IntervalSet] = {}
        self.queue: list[tuple[str, int]] = []
        self._released_at: dict[str, float] = {}
        self.released: list[tuple[str, int]] = []
        self.ended: list[str] = []
        self.decisions: list[Event] = []

    def answer(self, message: dict[str, Any]) -> dict[str, Any]:
        now = message["now"]
        self.released, self.ended = [], []
        self.decisions = []
        for event in message["events"]:
            kind, data = event["type"], event["data"]
            self.on_event(now, kind, data)
            if kind == "SIMULATION_BEGINS":
                self.nb_machines = data["nb_resources"]
                self.available = IntervalSet.range(0, self.nb_machines)
            elif kind == "JOB_SUBMITTED":
                self.released.append((data["job_id"], data["job"]["res"]))
            elif kind == "JOB_COMPLETED":
                self.ended.append(data["job_id"])
            elif kind == "JOB_KILLED":
                self.ended += [key for key in data["job_ids"] if key in self.allocations]
        for key in self.ended:
            allocation = self.allocations.pop(key, None)
            if allocation is not None:
                self.available = self.available | allocation
        for key, res in self.released:
            if res > self.nb_machines:
                self.add("REJECT_JOB", now, job_id=key)
            else:
                self.queue.append((key, res))
                self._released_at[key] = now
        self.queue.sort(key=lambda entry: (self._released_at[entry[0]], entry[0]))
        self.make_decisions(now)
        latest = max([now, *(e["timestamp"] for e in self.decisions)])
        return {"now": latest, "events": self.decisions}

    def on_event(self, now: float, kind: str, data: dict[str, Any]) -> None:
        """An event as it is read, before the message's decisions (batsched handles some at once: a machine's
        power state, a requested call); its decisions come first in the reply."""

    def add(self, kind: str, at: float, **data: Any) -> None:
        self.decisions.append({"timestamp": at, "type": kind, "data": data})

    def execute(self, key: str, allocation: IntervalSet, at: float) -> None:
        self.add("EXECUTE_JOB", at, job_id=key, alloc=str(allocation))
        self.allocations[key] = allocation
        self.available = self.available - allocation

    def make_decisions(self, now: float) -> None:
        raise NotImplementedError


class Filler(Batsched):
    """Every queued job that fits the free machines starts, in queue order, on the lowest ones (first fit)."""

    def make_decisions(self, now: float) -> None:
        for key, res in list(self.queue):
            if not self.available:
                break
            if res <= len(self.available):
                self.execute(key, self.available.lowest(res), now)
                self.queue.remove((key, res))


class Killer(Batsched):
    """One job per call, the head of the queue if it fits; it is killed `delay_before_kill` (10 s) later."""

    delay_before_kill = 10.0

    def make_decisions(self, now: float) -> None:
        if self.queue and self.queue[0][1] <= len(self.available):
            key, res = self.queue.pop(0)
            self.execute(key, self.available.lowest(res), now)
            self.add("KILL_JOB", now + self.delay_before_kill, job_ids=[key])


class Rejecter(Batsched):
    """Rejects every job."""

    def answer(self, message: dict[str, Any]) -> dict[str, Any]:
        self.decisions = [
            {"timestamp": message["now"], "type": "REJECT_JOB", "data": {"job_id": e["data"]["job_id"]}}
            for e in message["events"] if e["type"] == "JOB_SUBMITTED"
        ]
        return {"now": message["now"], "events": self.decisions}

    def make_decisions(self, now: float) -> None:
        """Everything is in `answer`."""


class Submitter(Batsched):
    """Starts the head of the queue if it fits; when the queue is empty and a machine is free, registers a dynamic
    delay job (1 s, or 1 + 10 s per earlier one with `increase_jobs_duration`; walltime 5 s more) and runs it on
    the lowest free machine 10 s later, until `nb_jobs_to_submit` are registered; then says registration_finished.
    With `set_job_metadata`, every job gets "just some metadata for job <id>" when it arrives."""

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        super().__init__(options)
        self.nb_submitted = 0
        self.profiles_sent: set[str] = set()
        self.finished_sent = False

    def make_decisions(self, now: float) -> None:
        metadata = bool(self.options.get("set_job_metadata", False))
        if metadata:
            for key, _ in self.released:
                self.add("SET_JOB_METADATA", now, job_id=key, metadata=f"just some metadata for job {key}")
        if self.queue and self.queue[0][1] <= len(self.available):
            key, res = self.queue.pop(0)
            self.execute(key, self.available.lowest(res), now)
        date = now
        if not self.queue and self.available and self.nb_submitted < int(self.options.get("nb_jobs_to_submit", 1)):
            delay = 1 + (10 * self.nb_submitted if self.options.get("increase_jobs_duration") else 0)
            profile = f"delay_{delay:f}"
            key = f"dynamic!{self.nb_submitted}"
            if profile not in self.profiles_sent or self.options.get("send_profile_if_already_sent"):
                self.add("REGISTER_PROFILE", date, workload_name="dynamic", profile_name=profile,
                         profile={"type": "delay", "delay": delay})
            self.add("REGISTER_JOB", date, job_id=key, job={
                "id": str(self.nb_submitted), "subtime": date, "walltime": delay + 5, "res": 1, "profile": profile,
            })
            if metadata:
                self.add("SET_JOB_METADATA", date, job_id=key, metadata=f"just some metadata for job {key}")
            self.profiles_sent.add(profile)
            date += 10  # batsched runs it 10 s after registering it (no acknowledgement of dynamic jobs)
            self.execute(key, self.available.lowest(1), date)
            self.nb_submitted += 1
        if self.nb_submitted >= int(self.options.get("nb_jobs_to_submit", 1)) and not self.finished_sent:
            self.add("NOTIFY", date, type="registration_finished")
            self.finished_sent = True


VARIANTS: dict[str, type[Batsched]] = {"filler": Filler, "killer": Killer, "rejecter": Rejecter, "submitter": Submitter}


@contextmanager
def serving(variant: str, options: dict[str, Any] | None = None) -> Iterator[str]:
    """A batsched-like `variant` (with its variant options) listening on a free local port; yields its endpoint."""
    scheduler = VARIANTS[variant](options)
    context = zmq.Context()
    socket = context.socket(zmq.REP)
    socket.bind("tcp://127.0.0.1:*")
    endpoint = socket.getsockopt_string(zmq.LAST_ENDPOINT)
    errors: list[BaseException] = []

    def serve() -> None:
        try:
            while socket.poll(20_000):
                message = json.loads(socket.recv())
                if any(e["type"] == "SIMULATION_ENDS" for e in message["events"]):
                    socket.send(json.dumps({"now": message["now"], "events": []}).encode())
                    return
                socket.send(json.dumps(scheduler.answer(message)).encode())
        except BaseException as error:  # reported when the context exits
            errors.append(error)
        finally:
            socket.close(linger=1000)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield endpoint
    finally:
        thread.join(timeout=30)
        context.term()
    if errors:
        raise errors[0]
