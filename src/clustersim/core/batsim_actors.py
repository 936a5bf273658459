"""Batsim 4.2's own actors in SimGrid, so that its control messages take the time SimGrid gives them.

With the simgrid platform model and Batsim's delivery, the core does what Batsim's server does (server.cpp,
docs/batsim-protocol.md): every event reaches it as a blocking 1-byte SimGrid communication from the actor
that made it, over the platform's route from that actor's host to the master host, and it takes one message
at a time. It calls the decision process when the previous reply is over (the ready signal arrived) and its
mailbox is empty as SimGrid's maestro sees it (`ServerMailbox`). The actors that talk to it:

- the job submitter (job_submitter.cpp), on the master: says hello, then for each submission instant sleeps
  until that instant measured from its previous wake-up (so the time its sends take accumulates as drift) and
  sends the instant's jobs in one message; then says goodbye (the end of the static workload);
- the request-reply actor (network.cpp), on the master: sends a reply's decisions one message each, then the
  ready signal. A job starts when its EXECUTE_JOB message reaches the server: that is its starting time;
- a job's executor (jobs_execution.cpp), on the job's first host: runs the profile within the walltime,
  then sends JOB_COMPLETED; the job's finish time is its executor's, the decision process hears it later;
- a waiter (CALL_ME_LATER), on the master: sleeps until the requested time (at least 10 µs, as Batsim) and
  sends the call;
- a switching actor (pstate.cpp), one per machine of a SET_RESOURCE_STATE that switches machines off or on, on
  that machine's host: it lasts the transition from when the request reaches the server, moves its machine to
  its new state (machine_states.csv's row then), and sends SWITCHED_ON/OFF. The server tells the decision
  process once every machine of the request is done (one RESOURCE_STATE_CHANGED).

With energy, the energy files' rows are written at SimGrid's clock when they happen: two rows at the very same
clock value get Batsim's NA mean power.

The decision process still sees its decisions applied as it yields them (a policy decides on the state its
earlier decisions made, and on the decision instant as its jobs' start, as batsched does); other decisions
than starts take effect at the reply, their consequences (a kill's end, a registered job, a waiter) reach the
server with their decision's message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from clustersim.core.decisions import Decision, StartJob, SwitchOff, SwitchOn
from clustersim.core.engine import EventClass
from clustersim.core.events import Event, FinalState, JobSubmitted, NoMoreJobs, RequestedCall
from clustersim.core.power_switching import Switching
from clustersim.core.state import RunningJob
from clustersim.errors import ClusterSimError, InputError
from clustersim.intervals import IntervalSet
from clustersim.workload.job import Job
from clustersim.workload.profiles import needs_speed

if TYPE_CHECKING:
    from clustersim.core.simgrid_execution import EnergyPlugin, SimgridExecution
    from clustersim.core.simulation import Simulation, _Execution
    from clustersim.core.step_execution import StepEnergyPlugin, StepExecution

MAILBOX = "batsim-server"
SHORTEST_WAIT = 1e-5
"""Batsim's waiter sleeps at least this long (jobs_execution.cpp: shorter sleeps may not move SimGrid's clock)."""

Message = tuple[Any, ...]
SWITCHES = (SwitchOff, SwitchOn)
"""Decisions applied when their message reaches the server, as Batsim's server moves the machines into their
transition then (the energy files' rows at that instant follow the messages before it)."""


class ServerMailbox:
    """Batsim's server mailbox, with its `mailbox_empty` (ipp.cpp) as SimGrid 3.32 answers it.

    SimGrid's `put` is `put_async` then `wait`, and `put_async` returns once SimGrid's maestro has posted the message,
    at the end of the scheduling round in which the sender called it. A message is counted from then until the
    server receives it, so the server, checking when it wakes, does not see a message put in that same round, and
    sees one put in an earlier solver step even at the same clock value: a step can be shorter than the clock's
    resolution (at t=42 of the corpus's `ties_030_conservative_bf`, a sleep ends 2.4e-16 s before a message, below
    half the clock's 7.1e-15 s unit: docs/batsim-protocol.md, "Exact ties decided by SimGrid's solver steps")."""

    def __init__(self, simgrid: Any, name: str):
        self._mailbox: Any = simgrid.Mailbox.by_name(name)
        self.unreceived = 0
        """Messages posted and not yet received."""

    def post(self, message: Message) -> Any:
        """A 1-byte send from the calling actor's host, posted; the caller waits for the returned communication."""
        comm = self._mailbox.put_async(message, 1)
        self.unreceived += 1
        return comm

    def get(self) -> Message:
        message: Message = self._mailbox.get()
        self.unreceived -= 1
        return message

    def empty(self) -> bool:
        return not self.unreceived


class _Moment:
    """When a machine_states.csv row is written among the rows of its instant (`MachineStatesTrace`'s `Timed`)."""

    __slots__ = ("born", "offset")

    def __init__(self, offset: int):
        self.offset = offset
        self.born = 0


def protocol_time(time: float) -> float:
    """A time as Batsim's messages carry it, rounded to the microsecond: in the corpus's `ties_029_fcfs`, SimGrid's
    560.0000005039984 reaches the scheduler as 560.000001 and 595.0000004959985 as 595.0."""
    return round(time, 6)


class BatsimActors:
    """Runs one simulation as Batsim's server and its actors, in the simgrid model's engine or the step model's."""

    def __init__(self, simulation: Simulation, model: SimgridExecution | StepExecution):
        self.sim = simulation
        self.model = model
        self._mailbox = ServerMailbox(model.simgrid, MAILBOX)
        self._helpers: dict[int, Any] = {}
        """The submitter, request-reply actors and waiters still running (killed when the run stops early)."""
        self._senders = 0
        """How many of them have not yet sent their last message (an actor may still be running after it)."""
        self._launched: set[str] = set()
        """Jobs whose executor runs and will send JOB_COMPLETED."""
        self._serial = 0
        self._switching: dict[int, int] = {}
        """id of a switch request -> its machines whose switching actor has not yet sent SWITCHED_ON/OFF."""
        self._rows = 0
        """machine_states.csv rows written so far: they keep the order in which the actors write them."""
        self._job_start: dict[IntervalSet, int] = {}
        """A running job's allocation -> its machines' energy in SimGrid's plugin at its start (`long double`)."""
        self._awake_pstate: dict[int, int] = {}
        """Node -> the SimGrid power state its host computed in before it switched off."""
        self._plugin: EnergyPlugin | StepEnergyPlugin | None = None
        """SimGrid's energy plugin (the step model's emulates it), when the energy files' rows read it as Batsim's do
        (then a job's executor writes its start rows in its first turn, as Batsim's)."""
        if simulation.meter is not None and model.energy_plugin is not None:
            self._plugin = model.energy_plugin
            simulation.meter.reader = model.energy_plugin.reading
            simulation.meter.total = model.energy_plugin.total
            simulation.meter.job_energy = self._job_energy
            simulation.meter.set_power_states = self._set_power_states
            model.on_launched = self._job_launched

    def serve(self) -> None:
        """The server's loop, in the core's actor on the master host, until no actor can send anything."""
        sim, model = self.sim, self.model
        model.on_end = self._job_ended
        sim._lookahead = next(sim._jobs, None)
        if sim.meter is not None:
            sim.meter.moment = 0  # rows at one clock value are at one moment (`EnergyMeter._entry`)
        try:
            self._spawn(self._submitter)
            self._spawn(self._request_reply, self._decide(sim.process.begin(sim.view) or ()))
            self._loop()
        finally:
            for actor in list(self._helpers.values()):
                actor.kill()
            self._helpers.clear()
        sim._queue.now = self._clock()

    # -- the server ------------------------------------------------------------------------------------

    def _loop(self) -> None:
        sim = self.sim
        ready, told = False, list[Event]()
        while True:
            if self._mailbox.empty() and not self._senders and not self._launched:
                return  # nobody left to send a message
            message = self._mailbox.get()
            self.model.check_interrupt()
            now = self._now()
            kind = message[0]
            if kind == "submit":
                told.extend(event for event in sim._submit_instant(message[1]) if type(event) is not NoMoreJobs)
            elif kind == "bye":
                told.append(NoMoreJobs())
            elif kind == "completed":
                told.append(message[1])
            elif kind == "ended":
                self._ended(message[1], message[2], message[3], told)
            elif kind == "decision":
                self._arrived(message[1], message[2], now, told)
            elif kind == "call":
                told.append(RequestedCall(message[1]))  # the call asked for that time: it comes now
            elif kind == "ready":
                ready = True
            elif kind == "switched":
                self._switched(message[1], told)
            elif kind == "disorder":
                job, previous = message[1], message[2]
                raise InputError(sim.workload.source, f"job '{job.key}' is submitted at t={job.submit_time!r}, "
                                 f"before the previous job (t={previous!r}): workloads must be in submit order")
            if ready and told and self._mailbox.empty():
                sent = sim._queue.now = protocol_time(now)  # the `now` of Batsim's message: what the scheduler knows
                self._spawn(self._request_reply, self._decide(sim._call(told)), sent)
                ready, told = False, []

    def _ended(self, key: str, end: float, walltime_reached: bool, told: list[Event]) -> None:
        """A job's executor says it ended at `end`: the job's outcome is recorded, the decision process told."""
        if key not in self._launched:  # killed meanwhile: its end was told with the kill
            return
        told.append(self._end(key, end, walltime_reached))

    def _end(self, key: str, end: float, walltime_reached: bool) -> Event:
        """A launched job ends at `end`: its machines are freed and its outcome recorded."""
        self._launched.discard(key)
        execution = self.sim._executions[key]
        execution.end = end
        if walltime_reached:
            execution.state = FinalState.COMPLETED_WALLTIME_REACHED
        return self.sim._end(execution)

    def _arrived(self, key: str | None, consequences: list[Message], now: float, told: list[Event]) -> None:
        """A decision's message reaches the server: a start launches its job's executor now (its starting
        time); what the decision made happen (a kill's end, a registration, a waiter) happens now."""
        sim, model = self.sim, self.model
        if key is not None and model.is_prepared(key):
            execution = sim._executions[key]
            running = execution.running
            execution.running = RunningJob(running.job, now, running.resources, running.storage_mapping)
            if sim.state.nodes is not None and self._plugin is None:  # its machines compute from now (the row)
                sim.state.nodes.occupy(running.resources, now)
                if sim.meter is not None:
                    sim.meter.job_started(now, running.resources, needs_speed(running.job.profile))
            model.launch(key)
            self._launched.add(key)
            self._row(True, running.resources, now)
        for consequence in consequences:
            if consequence[0] == "apply":  # a switch request: Batsim's server starts it now
                meter = sim.meter if self._plugin is not None else None
                if meter is not None:  # its machine_states.csv row once every switching actor is created
                    meter.hold_states = True
                sim._apply(consequence[1])
                sim._power.started.clear()  # (its actors are timed here, not by the core's count)
                self._arrived(None, [self._consequence(*entry) for entry in sim._queue.take_all()], now, told)
                if meter is not None:
                    meter.hold_states = False
                    if meter.held:
                        meter.held = False
                        meter.states_changed(now)
            elif consequence[0] == "end":
                execution = consequence[1]
                key = execution.running.job.key
                if key in self._launched:
                    self._launched.discard(key)
                    self._row(False, execution.running.resources, now)
                told.append(sim._end(execution))
            elif consequence[0] == "registered":
                told.append(JobSubmitted(consequence[1]))
            elif consequence[0] == "switch":
                switching: Switching = consequence[1]
                self._switching[id(switching)] = len(switching.nodes)
                for node in switching.nodes:
                    self._spawn_on(self.model.host_of(node), self._switcher, switching, node, consequence[2])
            else:
                self._spawn(self._waiter, consequence[1])

    def _switched(self, switching: Switching, told: list[Event]) -> None:
        """A machine's switching actor says it is done; the last of its request tells the decision process."""
        left = self._switching[id(switching)] - 1
        if left:
            self._switching[id(switching)] = left
            return
        del self._switching[id(switching)]
        switching.finished = True
        told.append(self.sim._power.switched(switching))

    def _decide(self, decisions: Iterable[Decision]) -> list[Message]:
        """Apply a reply's decisions as the decision process yields them; the messages they become, in order."""
        sim = self.sim
        messages: list[Message] = []
        for decision in decisions:
            if type(decision) in SWITCHES:
                messages.append(("decision", None, [("apply", decision)]))
                continue
            sim._apply(decision)
            key = decision.job_key if type(decision) is StartJob else None
            messages.append(("decision", key, [self._consequence(*entry) for entry in sim._queue.take_all()]))
        return messages

    def _consequence(self, time: float, kind: EventClass, payload: object) -> Message:
        """What a decision queued in the core, as it happens when the decision reaches the server."""
        if kind is EventClass.JOB_END:
            execution: _Execution = payload  # type: ignore[assignment]
            return ("end", execution)
        if kind is EventClass.JOB_SUBMIT and isinstance(payload, Job):
            return ("registered", payload)
        if kind in (EventClass.CALL, EventClass.DUE, EventClass.LAST_CALL):
            return ("wait", time)
        if kind is EventClass.NODE_SWITCHED and isinstance(payload, Switching):
            return ("switch", payload, time - self.sim._queue.now)
        raise ClusterSimError(f"Batsim's actors cannot deliver a {kind.name} event")

    # -- the actors that send to the server -----------------------------------------------------------

    def _clock(self) -> float:
        return float(self.model.engine.clock)

    def _now(self) -> float:
        """The core's time moves to SimGrid's clock (the energy meter integrates up to it)."""
        sim = self.sim
        now = self._clock()
        sim._queue.now = sim.state.now = now
        if sim.meter is not None:
            sim.meter.advance(now)
        return now

    def _put(self, message: Message, last: bool = False) -> None:
        """A blocking 1-byte send to the server, from the calling actor's host (`last`: the actor's last one)."""
        comm = self._mailbox.post(message)
        self._senders -= last  # once posted: the server waits for it
        comm.wait()

    def _spawn(self, body: Callable[..., None], *args: Any) -> None:
        """Start one of Batsim's actors on the master host; it is forgotten when its body returns."""
        self._spawn_on(self.model.master, body, *args)

    def _spawn_on(self, host: Any, body: Callable[..., None], *args: Any) -> None:
        """Start one of Batsim's actors on `host`; it is forgotten when its body returns."""
        self._serial += 1
        self._senders += 1
        serial = self._serial

        def run() -> None:
            body(*args)
            self._helpers.pop(serial, None)

        self._helpers[serial] = self.model.simgrid.Actor.create(body.__name__.strip("_"), host, run)

    def _submitter(self) -> None:
        sim = self.sim
        sleep_for = self.model.simgrid.this_actor.sleep_for
        self._put(("hello",))
        current = self._clock()
        while sim._lookahead is not None:
            time = sim._lookahead.submit_time
            if time > current:
                sleep_for(time - current)
                current = self._clock()
            self._put(("submit", sim._take_instant(time)))
            if sim._lookahead is not None and sim._lookahead.submit_time < time:
                self._put(("disorder", sim._lookahead, time), last=True)  # the server stops the run: input error
                return
        self._put(("bye",), last=True)

    def _request_reply(self, messages: list[Message], timestamp: float = 0.0) -> None:
        """Sends a reply's decisions, then the ready signal, each at its `timestamp` at the earliest (protocol.cpp,
        `send_message_at_time`): the `now` of the message they answer, later than SimGrid's clock when that was
        rounded up to the microsecond (from t=560 in `ties_029_fcfs`)."""
        wait = timestamp - self._clock()
        if wait > 0:
            self.model.simgrid.this_actor.sleep_for(wait)
        for message in messages:
            self._put(message)
        self._put(("ready",), last=True)

    def _waiter(self, time: float) -> None:
        wait = time - self._clock()
        if wait > 0:
            self.model.simgrid.this_actor.sleep_for(max(wait, SHORTEST_WAIT))
        self._put(("call", time), last=True)

    def _switcher(self, switching: Switching, node: int, seconds: float) -> None:
        """Batsim's switching actor of one machine: the transition, then the machine in its new state, then
        SWITCHED_ON/OFF to the server. As Batsim's (pstate.cpp), it computes 1 flop in the transition's virtual
        power state when the platform file declares one, and leaves its host in its sleep power state or back in
        the one it computed in."""
        sim = self.sim
        sleep = sim.platform.nodes[node].power.sleep  # type: ignore[union-attr]  # (checked by the switch)
        assert sleep is not None
        virtual = (sleep.switch_on if switching.on else sleep.switch_off).pstate
        if virtual is None:
            self.model.simgrid.this_actor.sleep_for(seconds)
        else:
            host = self.model.host_of(node)
            if not switching.on:
                self._awake_pstate[node] = host.pstate
            host.pstate = virtual
            self.model.simgrid.this_actor.execute(1.0)
            if switching.on:  # the power state asked for, else the one it computed in (Batsim: the one asked for)
                awake = self._awake_pstate.pop(node, 0)
                asked = sim._power.waking_into(node)
                host.pstate = asked if asked is not None else awake
            else:
                host.pstate = sleep.pstate
        self._now()
        self.sim._power.finish(Switching((node,), switching.on))
        self._put(("switched", switching), last=True)

    def _job_energy(self, resources: IntervalSet) -> float:
        """A job's energy when it ends, as Batsim's executor computes it: its machines' energy now minus at its start
        (`long double`s), -1 when its start was not read."""
        from clustersim.core.simgrid_execution import _double, _extended

        start = self._job_start.pop(resources, None)
        if start is None:
            return -1.0
        return _double(_extended(self._machines_energy(resources) - start))

    def _machines_energy(self, resources: IntervalSet) -> int:
        """The energy of an allocation's machines, read from SimGrid's energy plugin as Batsim reads it."""
        assert self._plugin is not None
        platform = self.sim.platform
        return self._plugin.machines(sorted({platform.node_of(unit).id for unit in resources}))

    def _set_power_states(self, nodes: Iterable[int], pstate: int) -> None:
        """Nodes' hosts take a computation power state (DVFS) in SimGrid, where the energy plugin sees it."""
        for node in nodes:
            self.model.host_of(node).pstate = pstate

    def _job_launched(self, key: str) -> None:
        """A job's executor, in its first turn, with energy: as Batsim's (jobs_execution.cpp), it reads the energy
        (SimGrid's simcalls), writes the start's consumed_energy.csv row, then moves its machines to computing and
        writes their machine_states.csv row."""
        sim = self.sim
        execution = sim._executions.get(key)
        meter = sim.meter
        if execution is None or meter is None or meter.reader is None:
            return
        running = execution.running
        now = self._now()
        self._job_start[running.resources] = self._machines_energy(running.resources)  # (Batsim: before the rows)
        meter.reading = meter.reader(now)
        if sim.state.nodes is not None:
            sim.state.nodes.occupy(running.resources, now)
        meter.job_started(now, running.resources, needs_speed(running.job.profile))

    def _job_ended(self, key: str, end: float, walltime_reached: bool) -> None:
        """Called in a job's executor when its profile is over: it sends JOB_COMPLETED from the job's host.

        With energy, the executor frees its machines first, with their rows in the energy files, as Batsim's does
        (jobs_execution.cpp): before the messages the server receives meanwhile."""
        if self.sim.meter is not None and key in self._launched:
            self._now()
            self._put(("completed", self._end(key, end, walltime_reached)))
            return
        if key in self._launched:
            self._row(False, self.sim._executions[key].running.resources, end)
        self._put(("ended", key, end, walltime_reached))

    def _row(self, start: bool, resources: IntervalSet, now: float) -> None:
        """A job's row in machine_states.csv (without energy), written when Batsim's actor writes it: by the
        executor when its job ends (jobs_execution.cpp), by the server when the job starts or is killed."""
        trace = self.sim.machine_states
        if trace is None:
            return
        self._rows += 1
        if start:
            trace.started(now, resources, _Moment(self._rows))
        else:
            trace.ended(now, resources, _Moment(self._rows))
