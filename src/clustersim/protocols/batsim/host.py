"""A built-in policy hosted behind a Batsim-protocol REP socket: a complete external decision process.

This is the other side of the protocol, and an example of how to write a scheduler for clustersim (or Batsim)
in any language: bind a ZeroMQ REP socket, then for each message received answer exactly one message, whose
events are the decisions. Like any external scheduler, the host knows only what the messages told it: it
rebuilds from them the `ClusterState` a built-in policy reads (platform from SIMULATION_BEGINS, queue from
JOB_SUBMITTED, running jobs from its own EXECUTE_JOB decisions, freed resources from JOB_COMPLETED), and
updates it as each decision is made, exactly as the core does in process. Jobs' run times are unknown to it, as
to a real scheduler: only their walltimes are.

    python -m clustersim.protocols.batsim.host --policy fcfs -s tcp://*:28000
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Sequence

import zmq

from clustersim.core.decisions import CallMeLater, Decision, KillJob, RejectJob, SetJobMetadata, StartJob
from clustersim.core.events import (
    Event,
    FinalState,
    JobCompleted,
    JobSubmitted,
    MachinesAvailable,
    MachinesUnavailable,
    NoMoreExternalEvents,
    NoMoreJobs,
    RequestedCall,
)
from clustersim.core.interface import DecisionProcess
from clustersim.core.state import ClusterState, ClusterView, RunningJob
from clustersim.errors import ClusterSimError
from clustersim.intervals import IntervalSet
from clustersim.platform.model import Node, Platform
from clustersim.protocols.batsim import messages as m
from clustersim.protocols.batsim.errors import ProtocolError
from clustersim.workload.job import Job
from clustersim.workload.profiles import Delay

LISTEN_ENDPOINT = "tcp://*:28000"
"""Where Batsim schedulers listen by default (pybatsim's `-s` default too)."""

_FINAL_LINGER_MS = 2000
"""How long closing the socket may take to deliver the acknowledgement of SIMULATION_ENDS."""

_UNKNOWN_RUNTIME = Delay(0.0)
"""The profile of every job the host knows: a scheduler is told walltimes, not run times."""


class PolicyHost:
    """Answers the simulator's messages with the decisions of a built-in policy."""

    def __init__(self, policy: DecisionProcess):
        self.policy = policy
        self.finished = False
        self.nb_messages = 0
        self._state: ClusterState | None = None
        self._view: ClusterView | None = None
        self._readers: dict[str, Callable[[m.WireEvent], Event | None]] = {
            "SIMULATION_BEGINS": self._simulation_begins,
            "SIMULATION_ENDS": self._simulation_ends,
            "JOB_SUBMITTED": self._job_submitted,
            "JOB_COMPLETED": self._job_completed,
            "JOB_KILLED": _ignore,
            "REQUESTED_CALL": self._requested_call,
            "NOTIFY": self._notify,
            "RESOURCE_STATE_CHANGED": _ignore,
            "QUERY": _ignore,
            "ANSWER": _ignore,
        }
        self._writers: dict[type, Callable[[Decision, float], m.JsonObject]] = {
            StartJob: self._execute_job,  # type: ignore[dict-item]
            RejectJob: self._reject_job,  # type: ignore[dict-item]
            KillJob: self._kill_job,  # type: ignore[dict-item]
            CallMeLater: self._call_me_later,  # type: ignore[dict-item]
            SetJobMetadata: self._set_job_metadata,  # type: ignore[dict-item]
        }

    def answer(self, request: bytes) -> bytes:
        """The reply to one message: the policy's decisions about the events it carries, at its `now`."""
        self.nb_messages += 1
        now, wire_events = m.decode(request, f"message #{self.nb_messages} from the simulator")
        events: list[Event] = []
        decisions: list[m.JsonObject] = []
        for wire_event in wire_events:
            reader = self._readers.get(wire_event.type)
            if reader is None:
                wire_event.fail(f"unknown event type '{wire_event.type}'")
            event = reader(wire_event)
            if event is not None:
                events.append(event)
            elif wire_event.type == "SIMULATION_BEGINS":
                decisions += self._write(self.policy.begin(self._cluster_view()) or (), now)
        if events:
            self._cluster().now = now
            decisions += self._write(self.policy.decide(now, events, self._cluster_view()), now)
        return m.encode(now, decisions)

    def _write(self, decisions: Iterable[Decision], now: float) -> list[m.JsonObject]:
        """Encode each decision, updating the local state first so the policy sees it, as in the core."""
        writers = self._writers
        out = []
        for decision in decisions:
            writer = writers.get(type(decision))
            if writer is None:
                raise ProtocolError(f"the host cannot send {type(decision).__name__} decisions")
            out.append(writer(decision, now))
        return out

    def _cluster(self) -> ClusterState:
        """The state rebuilt from the messages so far."""
        if self._state is None:
            raise ProtocolError("the simulator must send SIMULATION_BEGINS first")
        return self._state

    def _cluster_view(self) -> ClusterView:
        if self._view is None:
            raise ProtocolError("the simulator must send SIMULATION_BEGINS first")
        return self._view

    # -- what the simulator says ------------------------------------------------------------------------------

    def _simulation_begins(self, event: m.WireEvent) -> None:
        resources = event.field("compute_resources")
        if not isinstance(resources, list) or not resources:
            event.fail("'compute_resources' must be a non-empty list")
        nodes = []
        for index, resource in enumerate(resources):
            if not isinstance(resource, dict) or resource.get("id") != index:
                event.fail(f"compute resource {index} must be an object with id {index} (ids 0..n-1 in order)")
            nodes.append(Node(index, str(resource.get("name", f"host{index}"))))
        self._state = ClusterState(Platform(nodes, name="batsim"))
        self._view = ClusterView(self._state)

    def _simulation_ends(self, event: m.WireEvent) -> None:
        self.finished = True
        if self._view is not None:
            self.policy.end(self._view)

    def _job_submitted(self, event: m.WireEvent) -> Event:
        state = self._cluster()
        description = event.mapping("job")
        key = description.get("id")
        if not isinstance(key, str) or "!" not in key:
            event.fail(f"the job's 'id' must be 'workload!id', got {key!r}")
        workload, _, job_id = key.partition("!")
        submit = description.get("subtime", event.timestamp)
        res = description.get("res")
        walltime = description.get("walltime", -1)
        if type(res) is not int or not isinstance(submit, int | float) or not isinstance(walltime, int | float):
            event.fail("the job needs an integer 'res' and numeric 'subtime' and 'walltime'")
        job = Job(
            job_id, float(submit), res, _UNKNOWN_RUNTIME, None if walltime < 0 else float(walltime), workload,
            str(description.get("profile", "")),
        )
        state.pending[job.key] = job
        return JobSubmitted(job)

    def _job_completed(self, event: m.WireEvent) -> Event:
        state = self._cluster()
        key = event.string("job_id")
        running = state.running.pop(key, None)
        if running is None:
            event.fail(f"job '{key}' is not running")
        state.release(running.resources)
        try:
            final = FinalState(event.string("job_state"))
        except ValueError:
            event.fail(f"unknown job_state {event.data['job_state']!r}")
        return JobCompleted(running.job, final, running.resources)

    def _requested_call(self, event: m.WireEvent) -> Event:
        return RequestedCall(event.timestamp)

    def _notify(self, event: m.WireEvent) -> Event | None:
        """The end of the workload or of the external events, and machines becoming (un)available."""
        kind = event.string("type")
        if kind == "no_more_static_job_to_submit":
            return NoMoreJobs()
        if kind == "no_more_external_event_to_occur":
            return NoMoreExternalEvents()
        if kind in ("event_machine_unavailable", "event_machine_available"):
            resources = IntervalSet.parse(event.string("resources"), "NOTIFY resources")
            if kind == "event_machine_unavailable":
                self._cluster().make_unavailable(resources)
                return MachinesUnavailable(resources)
            self._cluster().make_available(resources)
            return MachinesAvailable(resources)
        return None

    # -- what the policy decides ------------------------------------------------------------------------------

    def _execute_job(self, decision: StartJob, now: float) -> m.JsonObject:
        state = self._cluster()
        job = state.pending.pop(decision.job_key)
        state.free = state.free - decision.resources
        state.running[job.key] = RunningJob(job, now, decision.resources)
        return m.execute_job(now, job.key, decision.resources)

    def _reject_job(self, decision: RejectJob, now: float) -> m.JsonObject:
        self._cluster().pending.pop(decision.job_key, None)
        return m.reject_job(now, decision.job_key)

    def _kill_job(self, decision: KillJob, now: float) -> m.JsonObject:
        return m.kill_job(now, [decision.job_key])

    def _call_me_later(self, decision: CallMeLater, now: float) -> m.JsonObject:
        return m.call_me_later(now, decision.time)

    def _set_job_metadata(self, decision: SetJobMetadata, now: float) -> m.JsonObject:
        return m.set_job_metadata(now, decision.job_key, decision.metadata)


def _ignore(event: m.WireEvent) -> None:
    """Events a built-in policy has no use for."""


def serve(host: PolicyHost, endpoint: str = LISTEN_ENDPOINT, *, announce: bool = True) -> None:
    """Bind a REP socket at `endpoint` and answer messages until SIMULATION_ENDS.

    With a port of `*` (e.g. `tcp://127.0.0.1:*`) the system picks a free one; `announce` prints the actual
    endpoint on stderr, so that whoever started the host can connect to it.
    """
    context = zmq.Context()
    socket = context.socket(zmq.REP)
    try:
        socket.bind(endpoint)
        if announce:
            print(f"listening on {socket.getsockopt_string(zmq.LAST_ENDPOINT)}", file=sys.stderr, flush=True)
        while not host.finished:
            socket.send(host.answer(socket.recv()))
    finally:
        socket.close(linger=_FINAL_LINGER_MS)
        context.term()


def main(argv: Sequence[str] | None = None, *, policy: str | None = None) -> int:
    """`python -m clustersim.protocols.batsim.host --policy NAME [-s ENDPOINT]`."""
    from clustersim.policies.registry import create_policy

    parser = argparse.ArgumentParser(
        prog=f"python -m clustersim.protocols.batsim.{'host' if policy is None else policy}",
        description="Run a clustersim built-in policy as an external Batsim-protocol scheduler.",
    )
    parser.add_argument("-s", "--socket", default=LISTEN_ENDPOINT, help=f"endpoint to bind (default {LISTEN_ENDPOINT})")
    if policy is None:
        parser.add_argument("--policy", default="easy", help="built-in policy name (see `clustersim policies`)")
    args = parser.parse_args(argv)
    try:
        serve(PolicyHost(create_policy(policy or args.policy)), args.socket)
    except ClusterSimError as error:
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 2
    except zmq.ZMQError as error:
        print(f"{parser.prog}: error: cannot serve on {args.socket}: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
