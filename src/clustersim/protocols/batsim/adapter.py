"""An external scheduler as a clustersim decision process: the core's events go out as Batsim messages, the
scheduler's answers come back as decisions the core validates and applies.

Time follows Batsim's rules (protocol.rst, "Message Composition"):

- what happens at one instant goes to the scheduler in the core's rounds (clustersim.core.simulation.Delivery:
  Batsim's rounds by default), one message per round whose `now` is that instant;
- each decision takes effect at its own `timestamp`, which may lie between the request's `now` and the
  answer's `now`: a later one is held back and applied when the core reaches its time (the adapter asks the
  core for a call then, before that instant's other events), never earlier;
- the answer's `now` says when the scheduler is ready again: events that happen before then, and those of that
  instant itself (held-back decisions due then included), are held and sent together at that time, as Batsim
  does for a scheduler that spent simulated time deciding (its SCHED_READY comes after that instant's events).

The adapter keeps no copy of the cluster's state: it reads the core's view and remembers only what the protocol
itself needs (kills to acknowledge, calls to tell apart from its own wake-ups, registered profiles).
"""

from __future__ import annotations

import sys
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from clustersim.core.decisions import (
    CallMeLater,
    Decision,
    KillJob,
    RejectJob,
    SetJobMetadata,
    SetPState,
    StartJob,
    SubmitJob,
    SwitchOff,
    SwitchOn,
)
from clustersim.core.events import (
    Event,
    FinalState,
    JobCompleted,
    JobSubmitted,
    MachinesAvailable,
    MachinesUnavailable,
    NodesSwitched,
    NoMoreExternalEvents,
    NoMoreJobs,
    RequestedCall,
)
from clustersim.core.nodes import NodeState
from clustersim.core.state import ClusterView
from clustersim.errors import DecisionError, InputError
from clustersim.intervals import IntervalSet
from clustersim.protocols.batsim import messages as m
from clustersim.protocols.batsim.connection import Connection
from clustersim.protocols.batsim.errors import ProtocolError
from clustersim.protocols.batsim.options import DEFAULT_ENDPOINT, ProtocolOptions
from clustersim.workload.batsim_json import parse_batsim_workload
from clustersim.workload.profiles import Composed, DataStaging, Profile, StorageTransfer

NEEDS_ENERGY = "needs energy, which is off: run clustersim with --energy (Batsim's -E); Batsim refuses it too"
"""Why a power request fails on a run without energy (Batsim 4.2 aborts on both, with its own assertion)."""

_ABORT_TIMEOUT = 2.0
"""Seconds granted to a scheduler to acknowledge SIMULATION_ENDS when the run is being aborted."""

_CHANGEABLE_END_STATES = {
    state.value: state
    for state in (
        FinalState.COMPLETED_SUCCESSFULLY,
        FinalState.COMPLETED_FAILED,
        FinalState.COMPLETED_WALLTIME_REACHED,
        FinalState.COMPLETED_KILLED,
    )
}


_REGISTRATION_NOTIFICATIONS = {"registration_finished": False, "continue_registration": True}
"""The NOTIFY types a scheduler may send, and whether dynamic registration is open after each."""


@dataclass
class _KillRequest:
    """One KILL_JOB: acknowledged by one JOB_KILLED once all its jobs have ended."""

    keys: list[str]
    remaining: set[str] = field(default_factory=set)
    progress: dict[str, m.JsonObject] = field(default_factory=dict)


class ExternalScheduler:
    """A DecisionProcess that delegates every decision to a program speaking the Batsim 4 protocol.

    `workloads` maps workload names to their files, as SIMULATION_BEGINS announces them. The connection is
    opened by `begin` and closed by `end`, which also sends SIMULATION_ENDS.
    """

    decides_from_messages = True
    """The program knows only what the messages tell it (the core's `Simulation` then lets Batsim's actors act
    before the decisions apply, as Batsim's server does)."""

    def __init__(
        self,
        endpoint: str = DEFAULT_ENDPOINT,
        options: ProtocolOptions | None = None,
        workloads: Mapping[str, str] | None = None,
    ):
        self.endpoint = endpoint
        self.options = options or ProtocolOptions()
        self.workloads = dict(workloads or {"w0": ""})
        self.connection: Connection | None = None
        self._view: ClusterView | None = None
        self._nb_requests = 0
        self._held: list[m.JsonObject] = []
        self._busy_until = 0.0
        self._flush_at: float | None = None
        self._later: deque[m.WireEvent] = deque()
        self._wakeups: Counter[float] = Counter()
        self._calls: Counter[float] = Counter()
        self._killing: dict[str, _KillRequest] = {}
        self._recently_completed: set[str] = set()
        self._state_changed: set[str] = set()
        self._registering = self.options.dynamic_jobs
        self._dynamic_workloads: set[str] = set()
        self._registered_profiles: dict[tuple[str, str], m.JsonObject] = {}
        self._seen_profiles: dict[tuple[str, str], Profile] = {}
        self._unacknowledged: set[str] = set()
        self._no_more_jobs_sent = False
        self._origin: m.WireEvent | None = None
        self._outgoing: dict[type, Callable[[Event, float], None]] = {
            JobSubmitted: self._job_submitted,  # type: ignore[dict-item]
            JobCompleted: self._job_completed,  # type: ignore[dict-item]
            RequestedCall: self._requested_call,  # type: ignore[dict-item]
            NoMoreJobs: self._no_more_jobs,  # type: ignore[dict-item]
            NodesSwitched: self._nodes_switched,  # type: ignore[dict-item]
            MachinesUnavailable: self._machines_unavailable,  # type: ignore[dict-item]
            MachinesAvailable: self._machines_available,  # type: ignore[dict-item]
            NoMoreExternalEvents: self._no_more_external_events,  # type: ignore[dict-item]
        }
        self._requested_states: dict[int, str] = {}
        """Node -> the power state a SET_RESOURCE_STATE asked for, until its transition is over."""
        self._incoming: dict[str, Callable[[m.WireEvent, float], Iterable[Decision]]] = {
            "EXECUTE_JOB": self._execute_job,
            "REJECT_JOB": self._reject_job,
            "KILL_JOB": self._kill_job,
            "CALL_ME_LATER": self._call_me_later,
            "SET_JOB_METADATA": self._set_job_metadata,
            "CHANGE_JOB_STATE": self._change_job_state,
            "SET_RESOURCE_STATE": self._set_resource_state,
            "REGISTER_PROFILE": self._register_profile,
            "REGISTER_JOB": self._register_job,
            "NOTIFY": self._notify,
            "QUERY": self._query,
            "ANSWER": self._answer,
        }

    # -- the decision process interface -----------------------------------------------------------------------

    def begin(self, view: ClusterView) -> Iterator[Decision]:
        """Connect, send SIMULATION_BEGINS at t=0 and return what the first answer decides."""
        self._view = view
        self.connection = Connection(self.endpoint, self.options.timeout)
        self._held.append(m.simulation_begins(
            0.0, view.platform, self.options.config(), self.workloads, {name: {} for name in self.workloads}
        ))
        return self.decide(0.0, (), view)

    def decide(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        """Hold the instant's events, apply held-back decisions now due, and talk to the scheduler if it is ready.

        A generator, like built-in policies: the core applies each decision as it is yielded, so the view (read
        by the handlers) is current, and a refusal stops the exchange at the offending decision.
        """
        outgoing = self._outgoing
        for event in events:
            outgoing.get(type(event), self._unexpected)(event, now)
        later, applied = self._later, False
        while later and later[0].timestamp <= now:
            applied = True
            yield from self._handle(later.popleft(), now)
        if applied and self._held and now >= self._busy_until and now != self._flush_at:
            # Batsim's request-reply actor sends held-back decisions at their time and only then its ready signal,
            # so what they cause now (a kill's JOB_COMPLETED) goes out with the held events: one more wake-up
            self._flush_at = now
            yield self._wake_up(now, last=True)
            return
        while self._held:
            if now < self._busy_until or now == self._flush_at:
                return  # the scheduler is not ready yet: its wake-up, last of that instant, sends
            yield from self._exchange(now)

    def end(self, view: ClusterView) -> None:
        """Say SIMULATION_ENDS and wait for the acknowledgement, then close the socket.

        The core calls `end` from a `finally`: when the run is failing (an exception is on its way), the
        scheduler is still told, briefly, so that it can exit, and a silent scheduler is not an error then.
        """
        connection = self.connection
        if connection is None:
            return
        failing = sys.exc_info()[1] is not None
        now = max(view.now, self._busy_until)  # Batsim ends once the scheduler is ready again
        try:
            if not connection.awaiting:
                if not self._no_more_jobs_sent:
                    self._held.append(m.notify(now, "no_more_static_job_to_submit"))
                self._held.append(m.simulation_ends(now))
                if failing:
                    connection.timeout = min(connection.timeout or _ABORT_TIMEOUT, _ABORT_TIMEOUT)
                self._send(now)
        except ProtocolError:
            if not failing:
                raise
        finally:
            connection.close()

    # -- annotations for errors ---------------------------------------------------------------------------------

    def explain(self, error: DecisionError) -> DecisionError:
        """The same refusal, naming the scheduler's message the refused decision came from."""
        if self._origin is None:
            return error
        return DecisionError(error.decision, f"{error.reason}; it came from {self._origin.where()}")

    # -- the exchange -------------------------------------------------------------------------------------------

    def _send(self, now: float) -> tuple[float, list[m.WireEvent]]:
        assert self.connection is not None, "begin() opens the connection"
        self._nb_requests += 1
        label = f"reply #{self._nb_requests} (to the message with now={now!r})"
        request = m.encode(now, self._held)
        self._held = []
        self._recently_completed.clear()
        answer = self.connection.exchange(request, f"message #{self._nb_requests} (now={now!r})")
        return m.decode(answer, label, not_before=now)

    def _exchange(self, now: float) -> Iterator[Decision]:
        """Send the held events, apply the answer's decisions due now and hold back the later ones."""
        reply_now, events = self._send(now)
        self._busy_until = max(reply_now, now)
        self._flush_at = None
        if reply_now > now:  # Batsim: ready again at reply_now, after that instant's other events
            self._flush_at = reply_now
            yield self._wake_up(reply_now, last=True)
        for event in events:
            if event.timestamp == now:
                yield from self._handle(event, now)
            else:
                if not self._later or self._later[-1].timestamp != event.timestamp:
                    yield self._wake_up(event.timestamp, first=True)
                self._later.append(event)

    def _handle(self, event: m.WireEvent, now: float) -> Iterator[Decision]:
        handler = self._incoming.get(event.type)
        if handler is None:
            event.fail(f"unknown or unsupported event type '{event.type}'; supported: {', '.join(self._incoming)}")
        for decision in handler(event, now):
            self._origin = event
            yield decision

    def _wake_up(self, time: float, first: bool = False, last: bool = False) -> CallMeLater:
        """A call the adapter asks for itself; the REQUESTED_CALL it causes is not the scheduler's business.

        `first` for decisions held back until `time`: Batsim applies them when `time` comes, before that
        instant's other events (a job ending at `time` is then killed, not completed); `last` for the instant at
        which the scheduler is ready again, after that instant's other events."""
        self._wakeups[time] += 1
        return CallMeLater(time, first, last)

    def _current_view(self) -> ClusterView:
        assert self._view is not None, "begin() sets the view"
        return self._view

    # -- events to the scheduler --------------------------------------------------------------------------------

    def _unexpected(self, event: Event, now: float) -> None:
        """A core event the protocol mapping does not cover (the adapter never asks for node switches)."""
        raise ProtocolError(f"the Batsim adapter cannot forward {type(event).__name__} events to the scheduler")

    def _job_submitted(self, event: JobSubmitted, now: float) -> None:
        job = event.job
        if self._unacknowledged and job.key in self._unacknowledged:
            self._unacknowledged.discard(job.key)
            if not self.options.acknowledge_dynamic_jobs:
                return
        if self.options.dynamic_jobs:
            self._seen_profiles.setdefault((job.workload, m.profile_name(job)), job.profile)
        self._held.append(m.job_submitted(now, job, self.options.forward_profiles))

    def _job_completed(self, event: JobCompleted, now: float) -> None:
        key = event.job.key
        self._recently_completed.add(key)
        if key in self._state_changed:
            self._state_changed.discard(key)  # CHANGE_JOB_STATE ended it: Batsim sends no JOB_COMPLETED then
            return
        self._held.append(m.job_completed(now, key, event.state, event.resources))
        request = self._killing.pop(key, None)
        if request is not None:
            request.remaining.discard(key)
            if not request.remaining:
                self._held.append(m.job_killed(now, request.keys, request.progress))

    def _requested_call(self, event: RequestedCall, now: float) -> None:
        time = event.time
        if self._calls[time] > 0:
            self._calls[time] -= 1
            if not self._calls[time]:
                del self._calls[time]
            self._held.append(m.requested_call(now))
        else:
            self._wakeups[time] -= 1
            if not self._wakeups[time]:
                del self._wakeups[time]
                if time == self._flush_at:  # the last wake-up of the instant: the scheduler is ready
                    self._flush_at = None

    def _no_more_jobs(self, event: NoMoreJobs, now: float) -> None:
        self._no_more_jobs_sent = True
        self._held.append(m.notify(now, "no_more_static_job_to_submit"))

    def _machines_unavailable(self, event: MachinesUnavailable, now: float) -> None:
        self._held.append(m.notify_resources(now, "event_machine_unavailable", event.resources))

    def _machines_available(self, event: MachinesAvailable, now: float) -> None:
        self._held.append(m.notify_resources(now, "event_machine_available", event.resources))

    def _no_more_external_events(self, event: NoMoreExternalEvents, now: float) -> None:
        self._held.append(m.notify(now, "no_more_external_event_to_occur"))

    # -- decisions from the scheduler ---------------------------------------------------------------------------

    def _execute_job(self, event: m.WireEvent, now: float) -> Iterable[Decision]:
        if "additional_io_job" in event.data:
            event.fail("'additional_io_job' is not supported: clustersim cannot merge an I/O job into a job")
        key = event.string("job_id")
        mapping = self._storage_mapping(event, key) if "storage_mapping" in event.data else None
        return (StartJob(key, event.resources("alloc"), mapping),)

    def _storage_mapping(self, event: m.WireEvent, key: str) -> dict[str, str]:
        """EXECUTE_JOB's `storage_mapping` as Batsim 4.2 reads it: each storage label of the job's I/O profiles
        to a storage machine id (SIMULATION_BEGINS's `storage_resources`), returned as storage host names. Batsim
        requires a non-empty object of integers, and each label the job's profile uses must be in it."""
        platform = self._current_view().platform
        hosts = m.storage_hosts(platform)
        first = platform.nb_resources
        ids = f"{first}-{first + len(hosts) - 1}" if hosts else "none"
        given = event.mapping("storage_mapping")
        if not given:
            event.fail("'storage_mapping' must be a non-empty object (label to storage machine id), as in Batsim")
        mapping: dict[str, str] = {}
        for label, machine in given.items():
            where = f"'storage_mapping' maps the label '{label}' to"
            if type(machine) is not int:
                event.fail(f"{where} {machine!r}: expected a storage machine id (an integer)")
            if first <= machine < first + len(hosts):
                mapping[label] = hosts[machine - first]
            elif 0 <= machine < first:
                event.fail(f"{where} machine {machine}, a compute machine, not a storage machine "
                           f"(storage machine ids: {ids})")
            else:
                event.fail(f"{where} machine {machine}, which does not exist (storage machine ids: {ids})")
        job = self._current_view().pending.get(key)
        missing = [label for label in storage_labels(job.profile) if label not in mapping] if job else []
        if missing:
            event.fail(f"'storage_mapping' has no label '{missing[0]}', which job '{key}' uses "
                       f"(labels given: {', '.join(sorted(mapping))})")
        return mapping

    def _reject_job(self, event: m.WireEvent, now: float) -> Iterable[Decision]:
        return (RejectJob(event.string("job_id")),)

    def _kill_job(self, event: m.WireEvent, now: float) -> Iterable[Decision]:
        """KILL_JOB: kill the running ones; jobs that ended meanwhile are acknowledged without progress."""
        keys = event.strings("job_ids")
        request = _KillRequest(keys)
        running = self._current_view().running
        platform = self._current_view().platform
        decisions: list[Decision] = []
        for key in dict.fromkeys(keys):
            if key in self._killing:
                continue  # already being killed: Batsim ignores a second request
            job = running.get(key)
            if job is not None:
                speed = platform.min_speed(job.resources)
                request.progress[key] = m.job_progress(job.job, now - job.start, speed)
                request.remaining.add(key)
                self._killing[key] = request
                decisions.append(KillJob(key))
            elif key not in self._recently_completed:
                decisions.append(KillJob(key))  # the core refuses it, naming the job
        if not request.remaining and not decisions:
            self._held.append(m.job_killed(now, keys, {}))
        return decisions

    def _call_me_later(self, event: m.WireEvent, now: float) -> Iterable[Decision]:
        time = event.number("timestamp")
        self._calls[time] += 1
        return (CallMeLater(time),)

    def _set_job_metadata(self, event: m.WireEvent, now: float) -> Iterable[Decision]:
        return (SetJobMetadata(event.string("job_id"), event.string("metadata")),)

    def _change_job_state(self, event: m.WireEvent, now: float) -> Iterable[Decision]:
        """Batsim's transitions a simulator can honour: pending to REJECTED, running to a completed state."""
        key = event.string("job_id")
        target = event.string("job_state")
        view = self._current_view()
        if key in view.pending and target == FinalState.REJECTED.value:
            return (RejectJob(key),)
        state = _CHANGEABLE_END_STATES.get(target)
        if key in view.running and state is not None:
            self._state_changed.add(key)
            return (KillJob(key, state),)
        where = "pending" if key in view.pending else "running" if key in view.running else "unknown or ended"
        event.fail(
            f"cannot change job '{key}' ({where}) to {target}: only a pending job can become REJECTED and only a "
            f"running job can become one of {', '.join(_CHANGEABLE_END_STATES)}"
        )

    def _set_resource_state(self, event: m.WireEvent, now: float) -> Iterable[Decision]:
        """Switch machines into a sleep power state, back to computing, or to another computation power state.

        A sleep state (from the host's `sleep_pstates`; "1" for nodes of a cluster file) switches idle nodes
        off and any other state switches sleeping nodes on, into that computation state; the change is
        acknowledged (RESOURCE_STATE_CHANGED) when the transition is over. Nodes that are on and asked for a
        computation power state of their host (DVFS) change speed and power at once, acknowledged at once, as in
        Batsim. Without energy (`--energy`, Batsim's -E) the request is refused, as Batsim refuses it.
        """
        resources = event.resources("resources")
        state = event.string("state")
        if not (state.isascii() and state.strip().lstrip("-").isdigit()):
            event.fail(f"'state' must be a power state number such as \"1\", got {state!r}")
        view = self._current_view()
        nb_resources = view.platform.nb_resources
        if resources.max() >= nb_resources:
            event.fail(f"resources {resources - view.platform.all_resources} do not exist "
                       f"(the platform has 0-{nb_resources - 1})")
        nodes = view.nodes
        if nodes is None:
            event.fail(f"a power state change {NEEDS_ENERGY}")
        targets = sorted({view.platform.node_of(r).id for r in resources})
        for node in targets:
            if not view.platform.units_of(node).issubset(resources):
                event.fail(f"resources must cover whole machines: node {node} has units {view.platform.units_of(node)}")
        sleep = [n for n in targets if state.strip() in _sleep_pstates(view, n)]
        wake = [n for n in targets if n not in sleep]
        to_switch_off = [n for n in sleep if nodes.state(n) is not NodeState.SLEEPING]
        to_switch_on = [n for n in wake if nodes.state(n) in (NodeState.SLEEPING, NodeState.SWITCHING_OFF)]
        settled = [n for n in targets if n not in to_switch_off and n not in to_switch_on]
        if settled:
            units = IntervalSet([(u, u) for n in settled for u in view.platform.units_of(n)])
            self._held.append(m.resource_state_changed(now, units, state))
        for node in to_switch_off + to_switch_on:
            self._requested_states[node] = state
        decisions: list[Decision] = []
        on = (NodeState.IDLE, NodeState.COMPUTING)
        dvfs = [n for n in wake if nodes.state(n) in on and _computation_states(view, n)]
        if dvfs:
            decisions.append(SetPState(tuple(dvfs), int(state)))
        if to_switch_off:
            decisions.append(SwitchOff(tuple(to_switch_off)))
        if to_switch_on:  # into the computation state asked for, when the hosts declare theirs
            named = all(_computation_states(view, n) for n in to_switch_on)
            decisions.append(SwitchOn(tuple(to_switch_on), int(state) if named else None))
        return decisions

    def _nodes_switched(self, event: NodesSwitched, now: float) -> None:
        """A transition the scheduler asked for is over: RESOURCE_STATE_CHANGED, one per requested state."""
        view = self._current_view()
        by_state: dict[str, list[int]] = {}
        for node in event.nodes:
            state = self._requested_states.pop(node, None)
            if state is not None:
                by_state.setdefault(state, []).append(node)
        for state, switched in by_state.items():
            units = IntervalSet([(u, u) for n in switched for u in view.platform.units_of(n)])
            self._held.append(m.resource_state_changed(now, units, state))

    def _check_registration(self, event: m.WireEvent) -> None:
        if not self.options.dynamic_jobs:
            event.fail("dynamic jobs are disabled: run clustersim with --enable-dynamic-jobs")
        if not self._registering:
            event.fail("the scheduler sent registration_finished: no job or profile can be registered any more")

    def _register_profile(self, event: m.WireEvent, now: float) -> Iterable[Decision]:
        self._check_registration(event)
        workload = event.string("workload_name")
        name = event.string("profile_name")
        profile = event.mapping("profile")
        if (workload, name) in self._registered_profiles:
            event.fail(f"profile '{name}' of workload '{workload}' is already registered")
        self._registered_profiles[(workload, name)] = profile
        self._dynamic_workloads.add(workload)
        return ()

    def _register_job(self, event: m.WireEvent, now: float) -> Iterable[Decision]:
        """A job the scheduler creates, submitted now; its profile must be registered or already used."""
        self._check_registration(event)
        key = event.string("job_id")
        workload, bang, _ = key.partition("!")
        if not bang or not workload:
            event.fail(f"'job_id' must be 'workload!id', got {key!r}")
        if workload not in self._dynamic_workloads and workload not in self.workloads:
            event.fail(f"unknown workload '{workload}': register a profile in it first (REGISTER_PROFILE)")
        description = dict(event.mapping("job"))
        description["id"] = key
        description["subtime"] = now
        profile_name = description.get("profile")
        if not isinstance(profile_name, str):
            event.fail("the job needs a 'profile' name")
        profiles = {name: raw for (owner, name), raw in self._registered_profiles.items() if owner == workload}
        if profile_name not in profiles:
            known = self._seen_profiles.get((workload, profile_name))
            if known is None:
                event.fail(f"profile '{profile_name}' is not registered in workload '{workload}'")
            profiles[profile_name] = m.profile_description(known)
        try:
            parsed = parse_batsim_workload(
                {"jobs": [description], "profiles": profiles}, source="REGISTER_JOB", name=workload
            )
            job = next(parsed.jobs)
        except InputError as error:
            event.fail(f"invalid job: {error}")
        view = self._current_view()
        if job.key in view.pending or job.key in view.running or job.key in self._unacknowledged:
            event.fail(f"job '{job.key}' already exists")
        self._unacknowledged.add(job.key)
        return (SubmitJob(job),)

    def _notify(self, event: m.WireEvent, now: float) -> Iterable[Decision]:
        kind = event.string("type")
        registering = _REGISTRATION_NOTIFICATIONS.get(kind)
        if registering is None:
            event.fail(f"unknown NOTIFY type '{kind}'; a scheduler may send {', '.join(_REGISTRATION_NOTIFICATIONS)}")
        self._registering = registering and self.options.dynamic_jobs
        return ()

    def _query(self, event: m.WireEvent, now: float) -> Iterable[Decision]:
        """Only `consumed_energy` exists: joules since t=0; refused without energy, as Batsim refuses it."""
        requests = event.mapping("requests")
        if not requests:
            event.fail("'requests' is empty")
        for name in requests:
            if name != "consumed_energy":
                event.fail(f"unknown QUERY '{name}'; clustersim answers consumed_energy")
            energy = self._current_view().consumed_energy
            if energy is None:
                event.fail(f"the consumed_energy QUERY {NEEDS_ENERGY}")
            self._held.append(m.answer(now, {"consumed_energy": energy}))
        return ()

    def _answer(self, event: m.WireEvent, now: float) -> Iterable[Decision]:
        """clustersim never queries the scheduler; Batsim ignores `estimate_waiting_time` answers, so do we."""
        for name in event.data:
            if name != "estimate_waiting_time":
                event.fail(f"unknown ANSWER '{name}'")
        return ()

    @property
    def nb_messages(self) -> int:
        """Messages exchanged so far (each request with its answer counts once)."""
        return self.connection.nb_exchanges if self.connection is not None else 0


def _computation_states(view: ClusterView, node: int) -> bool:
    """Whether a node's host declares its computation power states (a Batsim XML host with wattage_per_state)."""
    power = view.platform.nodes[node].power
    return power is not None and bool(power.computation_states)


def _sleep_pstates(view: ClusterView, node: int) -> set[str]:
    """The power state numbers that put a node to sleep: Batsim's `sleep_pstates` (sleep:off:on triples)."""
    text = view.platform.nodes[node].properties.get("sleep_pstates")
    if not text:
        return {"1"}
    return {part.split(":")[0].strip() for part in text.split(",")}


def storage_labels(profile: Profile) -> list[str]:
    """The storage labels a profile's I/O tasks name, composed profiles included, in order."""
    if isinstance(profile, Composed):
        return [label for part in profile.sequence for label in storage_labels(part)]
    if isinstance(profile, StorageTransfer):
        return [profile.storage]
    if isinstance(profile, DataStaging):
        return [profile.source, profile.target]
    return []
