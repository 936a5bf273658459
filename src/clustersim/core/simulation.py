"""The simulation core: applies events and validated decisions to the cluster state, in simulated time.

It owns the clock and the cluster's truth. The workload is pulled lazily (one job of look-ahead), job outcomes
are pushed to sinks as jobs end, so memory follows the jobs alive in the simulation.

How the events of one instant reach the decision process is the `Delivery` rule:

- `Delivery.BATSIM` is Batsim 4.2's (`clustersim run`'s default, for Batsim and SWF inputs alike): an instant is
  delivered in several calls, and the decision process decides after each, seeing the state the earlier
  calls' decisions made. Instants of job ends, submissions, requested calls and nodes done switching go as
  Batsim's server hears them, with time counted in inter-actor messages (`_deliver_messages`,
  docs/batsim-protocol.md): each job ends at the message its start reached the server, each node ends its
  switch at the message its decision reached it (one message per node), a call asked earlier at message 0; the
  server takes one message at a time and calls the decision process once it is ready and nothing was posted
  before the message it just received. Other instants go in rounds
  (`_deliver_rounds`): the calls asked at an earlier instant (Batsim's waiter wakes at the instant's first
  message: one round); the submissions (one round); the end of the static workload (`NoMoreJobs`, its own
  round); decisions held back until this instant (`CallMeLater(first=True)`: a kill then beats a job ending
  then); each job end in its own round, in start order, the last with the nodes done switching; then the
  rest (machine availability, calls asked during the instant, the Batsim adapter's `CallMeLater(last=True)`).
  Events that a call's decisions add
  at the same instant join the rounds still to come; a job started there counts, as its message offset, its
  decision's place after the earlier calls' decisions and ready signals.
  With the SimGrid execution model (and no external events), Batsim's own actors run
  in SimGrid instead (core/batsim_actors.py): every event is a SimGrid communication to the core, which does
  what Batsim's server does, and messages take the time SimGrid gives them on the platform's routes. The step
  execution model (core/step_execution.py) runs the same actors on SimGrid's solver steps computed in Python.
- `Delivery.INSTANT` (the library's default, used by the Kubernetes and Slurm layers and the experiments)
  applies every event of the instant first (ends, switches, submissions, calls) and asks the decision process
  once: fewer calls, and the policy sees the whole instant at once.
"""

from __future__ import annotations

import itertools
from bisect import insort
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Final

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
from clustersim.core.energy_meter import EnergyMeter
from clustersim.core.engine import EventClass, EventQueue
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
from clustersim.core.execution import ExecutionModel, FastExecution
from clustersim.core.gc_pace import fewer_collections
from clustersim.core.interface import DecisionProcess
from clustersim.core.interrupts import DeferredInterrupt
from clustersim.core.machine_states import MachineStatesTrace
from clustersim.core.nodes import NodeTracker
from clustersim.core.outcome import JobOutcome, OutcomeSink
from clustersim.core.power_switching import PowerSwitcher, Switching
from clustersim.core.sharing import shortfall
from clustersim.core.state import ClusterState, ClusterView, RunningJob
from clustersim.errors import ClusterSimError, DecisionError, InputError
from clustersim.intervals import IntervalSet
from clustersim.platform.events import AvailabilityChange
from clustersim.platform.model import Platform
from clustersim.workload.job import Job, id_order
from clustersim.workload.profiles import Composed, Delay, needs_speed
from clustersim.workload.stream import Workload

if TYPE_CHECKING:
    from clustersim.core.batsim_actors import BatsimActors


class _Execution:
    """A running job's true end, known only to the core. `cancelled` drops its end event (job was killed).

    `offset` and `born` serve Batsim's message timing (`_deliver_messages`): how many inter-actor messages after
    its start instant the job started (so ends), and the order in which its executor began to wait."""

    __slots__ = ("born", "cancelled", "end", "offset", "running", "state")

    def __init__(self, running: RunningJob, end: float, state: FinalState, offset: int = 0, born: int = 0):
        self.running = running
        self.end = end
        self.state = state
        self.cancelled = False
        self.offset = offset
        self.born = born


Payload = _Execution | Job | Switching | AvailabilityChange | None
Batch = list[tuple[EventClass, Payload]]


class _Start:
    """A start decision on its way to Batsim's server: its job starts when the server receives it."""

    __slots__ = ("execution",)

    def __init__(self, execution: _Execution):
        self.execution = execution


class _Switch:
    """A power switch on its way to Batsim's server: its nodes' switching actors start when the server receives
    it."""

    __slots__ = ("transitions",)

    def __init__(self, transitions: list[Switching]):
        self.transitions = transitions


class _Switched:
    """One node's switching actor tells Batsim's server it is done; the server tells the decision process once
    every node of the transition is (`left` counts those still to come)."""

    __slots__ = ("left", "transition")

    def __init__(self, transition: Switching):
        self.transition = transition
        self.left = len(transition.nodes)


_READY: Final = object()
"""The request-reply actor's last message: the decision process is ready for the next one."""

_COMPUTED: Final = 0
_WAITED: Final = 1
_SENT: Final = 2
"""How an actor came to post a message at a given message count (`_deliver_messages`): at the end of a computation
(a computing job's, a node's switch: SimGrid ends it a rounding error early, so a server that receives a message
at that very count already sees it waiting), at the end of a sleep (a delay job, the job submitter, a waiter:
exactly then, too late for that check), or in answer to a message the server received (a decision, the ready
signal, the submitter's goodbye)."""

_WOKEN: Final = object()
"""A waiter's message: a call asked at an earlier instant is due."""

_MESSAGE_KINDS: Final = (EventClass.JOB_END, EventClass.NODE_SWITCHED, EventClass.CALL)
"""The events `_deliver_messages` times in messages, besides the workload's submissions."""


class Delivery(Enum):
    """How the events of one instant are delivered to the decision process (see the module's docstring)."""

    BATSIM = "batsim"
    INSTANT = "instant"


@dataclass
class RunSummary:
    """What happened in a run, beyond the per-job outcomes the sinks received."""

    end_time: float = 0.0
    nb_submitted: int = 0
    nb_decision_calls: int = 0
    unfinished: list[str] = field(default_factory=list)
    """Jobs still pending when nothing else could happen: the decision process never started them."""
    unavailable_seconds: float = 0.0
    """Machine-seconds spent unavailable, over the periods that ended (Batsim's `time_unavailable`)."""


class Simulation:
    """One run: a platform, a workload, a decision process and the sinks that receive outcomes."""

    def __init__(
        self,
        platform: Platform,
        workload: Workload,
        decision_process: DecisionProcess,
        sinks: Iterable[OutcomeSink] = (),
        *,
        nodes: NodeTracker | None = None,
        meter: EnergyMeter | None = None,
        execution: ExecutionModel | None = None,
        events: Sequence[AvailabilityChange] = (),
        delivery: Delivery = Delivery.INSTANT,
        report_pending: bool = False,
        machine_states: MachineStatesTrace | None = None,
    ):
        """`nodes` enables power management (switching nodes off and on); `meter` accounts for energy;
        `execution` says how jobs execute (default: the fast model, where a job's end is known at its start);
        `events` are machines becoming unavailable and available again (Batsim's external events); `delivery` is
        how an instant's events reach the decision process; `report_pending` sends the sinks an outcome in state
        PENDING for each job never started, once the run is over (Kubernetes lists such pods: Pending);
        `machine_states` writes Batsim's machine_states.csv in a run without energy."""
        self.delivery = delivery
        self.machine_states = machine_states
        self.report_pending = report_pending
        self.platform = platform
        self.execution: ExecutionModel = execution if execution is not None else FastExecution(platform)
        self._fast = type(self.execution) is FastExecution
        self.events = events
        if events and (nodes is not None or meter is not None):
            raise ClusterSimError("external events (machines unavailable) with power management are not modelled")
        self._events_left = len(events)
        self._unavailable_since: dict[int, float] = {}
        self.workload = workload
        self.process = decision_process
        self._from_messages = bool(getattr(decision_process, "decides_from_messages", False))
        """The process decides from the events it is told only (an external scheduler): the energy files' rows
        may then follow Batsim's actors turn by turn (`_deliver_messages`), which moves what they do before the
        decisions apply. A built-in policy reads the cluster's state while it decides, so for it they keep the
        order in which the actors posted."""
        self.sinks = list(sinks)
        self._interrupts = DeferredInterrupt()
        self.meter = meter
        if meter is not None and nodes is None:
            nodes = meter.tracker
        self.state = ClusterState(platform, nodes)
        self.state.meter = meter
        self.view = ClusterView(self.state, quiet_calls=delivery is Delivery.INSTANT and meter is None
                                and nodes is None and not self.execution.stepped and not events)
        self._queue: EventQueue[Payload] = EventQueue()
        self._executions: dict[str, _Execution] = {}
        self._pod_nodes: dict[int, tuple[int, IntervalSet]] = {}
        """The node of a unit pods were given and that node's units (`_pod_node`)."""
        self._metadata: dict[str, str] = {}
        self._jobs: Iterator[Job] = iter(workload.jobs)
        self._lookahead: Job | None = None
        self._summary = RunSummary()
        self._replied = 0  # decisions applied so far in the current reply (`_decide`)
        self._born = 0  # how many actors began to wait so far (orders the messages posted at one offset)
        self._submitter: tuple[int, int] | None = None  # the job submitter's offset and order at its next instant
        self._power = PowerSwitcher(self.state, self._queue, meter, self._speeds_changed)
        self._actors: BatsimActors | None = None
        if self.execution.stepped:
            from clustersim.core.batsim_actors import BatsimActors
            from clustersim.core.simgrid_execution import SimgridExecution
            from clustersim.core.step_execution import StepExecution

            if delivery is Delivery.BATSIM and not events and isinstance(self.execution,
                                                                       (SimgridExecution, StepExecution)):
                self._actors = BatsimActors(self, self.execution)  # Batsim's actors run in the model's engine
            elif isinstance(self.execution, StepExecution):
                raise ClusterSimError("the step platform model runs Batsim's actors: it needs Batsim's delivery and "
                                      "no external events")
        self._appliers: dict[type, Callable[[Decision], None]] = {
            StartJob: self._start,  # type: ignore[dict-item]
            RejectJob: self._reject,  # type: ignore[dict-item]
            KillJob: self._kill,  # type: ignore[dict-item]
            CallMeLater: self._call_me_later,  # type: ignore[dict-item]
            SetJobMetadata: self._set_metadata,  # type: ignore[dict-item]
            SubmitJob: self._submit_job,  # type: ignore[dict-item]
            SwitchOff: self._power.switch_off,  # type: ignore[dict-item]
            SwitchOn: self._power.switch_on,  # type: ignore[dict-item]
            SetPState: self._set_pstate,  # type: ignore[dict-item]
        }

    def run(self) -> RunSummary:
        """Run until no event is left. Sinks are closed even when the run fails, so outputs stay valid."""
        with self._interrupts, fewer_collections():
            return self._run()

    def _run(self) -> RunSummary:
        try:
            self.execution.drive(self._loop)
            if self.report_pending:  # never started: the outputs list them too
                for job in list(self.state.pending.values()):
                    self._emit(JobOutcome(job, FinalState.PENDING, None, None, IntervalSet(),
                                          self._metadata.get(job.key, "")))
        finally:
            try:
                self.process.end(self.view)
            finally:
                if self.meter is not None:
                    self.meter.close(self._queue.now)
                if self.machine_states is not None:
                    self.machine_states.close()
                for sink in self.sinks:
                    sink.close()
        self._summary.end_time = self._queue.now
        self._summary.unfinished = list(self.state.pending)
        return self._summary

    @property
    def summary(self) -> RunSummary:
        """What happened so far (complete once `run` returns)."""
        return self._summary

    def _loop(self) -> None:
        """The event loop: a stepped execution model first runs up to the next event and reports job ends."""
        if self._actors is not None:  # Batsim's own actors in SimGrid deliver the events instead
            self._actors.serve()
            return
        self._pull_next_submission()
        for change in self.events:
            self._queue.push(change.time, EventClass.MACHINES, change)
        for decision in self.process.begin(self.view) or ():
            self._apply(decision)
            if self._power.started:
                self._time_switches(0)
        queue = self._queue
        execution = self.execution
        stepped = execution.stepped
        batsim = self.delivery is Delivery.BATSIM
        while True:
            if stepped:
                for end, key in execution.advance(queue.next_time()):
                    self._executed(key, end)
            if not queue:
                break
            if batsim:
                self._deliver_messages(queue.pop_instant())
                continue
            events = self._apply_instant(queue.pop_instant())
            if events:
                self._decide(events)

    def _call(self, events: list[Event]) -> Iterable[Decision]:
        """One call of the decision process at the current instant, counted; the caller applies its decisions."""
        now = self._queue.now
        self.state.now = now
        self._summary.nb_decision_calls += 1
        return self.process.decide(now, events, self.view)

    def _decide(self, events: list[Event], sent: int = 0) -> None:
        """Ask the decision process about `events`; `sent`: messages the instant's earlier calls sent."""
        self._replied = sent
        for decision in self._call(events):
            self._replied += 1  # in Batsim, the k-th decision of a reply reaches the server k messages later
            self._apply(decision)
            if self._power.started:
                self._time_switches(self._replied)

    def _deliver_rounds(self, pending: Batch, woken: bool = True) -> None:
        """Deliver one instant in Batsim's rounds (the module's docstring). Events that the decisions of a round
        add at the same instant (a kill's end, a registered job) join the rounds still to come.

        `woken`: `pending` opens the instant, so calls asked at an earlier instant are due in it. Batsim's waiter
        sleeps from the CALL_ME_LATER's reception to the exact target time, so its REQUESTED_CALL is posted at
        message 0 of the instant, before every job end (posted at its start's message, 1 or later): the server
        hears it first and alone (`_calls_first`)."""
        queue = self._queue
        sent = 0  # the messages (decisions, then the ready signal) of the instant's earlier calls: jobs start later
        due, pending = _calls_first(pending) if woken else ([], pending)
        while due or pending:
            if due:
                batch, due = due, []
            elif len(pending) == 1:  # most instants carry one event
                batch, pending = pending, []
            else:
                batch, pending = _first_round(pending)
            events = self._apply_instant(batch)
            if len(events) > 1 and type(events[-1]) is NoMoreJobs:
                self._decide(events[:-1], sent)  # Batsim says the workload is over in a message of its own
                sent = max(sent, self._replied + 1)
                del events[:-1]
            if events:
                self._decide(events, sent)
                sent = max(sent, self._replied + 1)
            if queue.next_time() == queue.now:
                pending = sorted(pending + queue.pop_instant(), key=_event_class)

    def _deliver_messages(self, pending: Batch) -> None:
        """Deliver one instant as Batsim 4.2's server hears it (docs/batsim-protocol.md, "How Batsim groups the
        events of one instant"), with time counted in inter-actor messages: each job end is posted at its start
        offset, the submissions at the job submitter's drift; the server receives one message per offset, in the
        order they were posted, and calls the decision process once it is ready and nothing was posted before the
        message it just received. Each decision is a message of its own, and then the ready signal.

        Instants with other events (kills, calls, registered jobs, machines, power switches) and stepped
        execution models keep `_deliver_rounds`; jobs started there count offset 0."""
        if self.execution.stepped or any(kind not in _MESSAGE_KINDS and not (kind is EventClass.JOB_SUBMIT and
                                                                               payload is None)
                                         for kind, payload in pending):
            self._deliver_rounds(pending)
            return
        queue = self._queue
        if self.meter is not None:
            self.meter.advance(queue.now)
        first = queue.now == 0.0 and self._submitter is None
        if len(pending) == 1 and not first and pending[0][0] in (EventClass.JOB_END, EventClass.JOB_SUBMIT):
            # most instants: one message, heard at once by an idle server
            kind, payload = pending[0]
            if kind is EventClass.JOB_END:
                assert isinstance(payload, _Execution)
                if not payload.cancelled:
                    self._answer([self._end(payload)], payload.offset + 1)
            else:
                received = (self._submitter or (0, 0))[0] + 1
                events = self._submit_instant()
                self._born += 1
                self._submitter = (1, self._born)
                goodbye = events.pop() if type(events[-1]) is NoMoreJobs else None
                # (`answered`, not `ready`: one name of two types is one int to mypyc, which then rejects True)
                answered = self._answer(events, received + (goodbye is not None))  # the goodbye arrives first
                if goodbye is not None:
                    self._answer([goodbye], answered)
            if queue.next_time() == queue.now:
                self._deliver_rounds(queue.pop_instant(), woken=False)
            return
        # (offset, _COMPUTED, _WAITED or _SENT, order) -> message
        posted: list[tuple[tuple[int, int, int], object]] = []
        ended: dict[int, JobCompleted] = {}  # id(execution) -> the end its executor recorded before its message came
        meter = self.meter
        early = meter is not None  # the energy files' rows follow the actors (docs/energy.md)

        def finish(now: int, ahead: bool) -> None:
            """The actors that post before the server handles message `now` did what Batsim's do before they post
            (pstate.cpp, jobs_execution.cpp): a switching actor moves its machine to its new state, an executor
            frees its machines, with their rows in the energy files. With `ahead`, so did those that post at `now`
            itself: they woke at the SimGrid time at which the server receives message `now`, run in the same
            scheduling round before it handles that message, and their `put`s (simcalls, handled after the round)
            come too late for its check (a job's new executor too runs after them).

            For a process that decides from messages, actors woken at one time run turn by turn, a simcall ending an
            actor's turn: a switching actor sets its machine's power state (a simcall) in its first turn and its
            state in the next; an executor writes its machine_states.csv row in its first turn, its
            consumed_energy.csv row after reading the energy (simcalls). So an executor's rows count the machines of
            the switches that end with it in their old state, and its wattmin has their new power (docs/energy.md)."""
            assert meter is not None
            bound = (now, _SENT if ahead else _WAITED)
            if not self._from_messages:  # in the order the actors posted
                for key, message in posted:
                    if key >= bound:
                        break
                    if type(message) is _Switched and not message.transition.finished:
                        self._power.finish(message.transition)
                    elif type(message) is _Execution and id(message) not in ended:
                        meter.moment = key[0]
                        ended[id(message)] = self._end(message)
                meter.moment = now
                return
            due = [entry for entry in itertools.takewhile(lambda entry: entry[0] < bound, posted)
                   if (type(entry[1]) is _Switched and not entry[1].transition.finished)
                   or (type(entry[1]) is _Execution and id(entry[1]) not in ended)]
            for (moment, _), woken in itertools.groupby(due, key=lambda entry: entry[0][:2]):
                meter.at_moment(moment)
                actors = [message for _, message in woken]
                switching = list(dict.fromkeys(m.transition for m in actors if type(m) is _Switched))
                if len(switching) < len(actors):  # executors too: they act between the two turns of the switches
                    meter.ahead = sum((meter.switch_watts(t.nodes, t.on) for t in switching), 0.0)
                    for message in actors:
                        if type(message) is _Execution:
                            ended[id(message)] = self._end(message)
                    meter.ahead = 0.0
                for transition in switching:
                    self._power.finish(transition)
            meter.at_moment(now)

        def arrivals(received: int) -> Iterator[int]:
            """The messages at which the replies to a call made at message `received` reach the server: each
            reply is posted when the previous one arrives, after what the other actors posted before it."""
            free = sent = received
            waiting = iter(key for key, _ in posted)
            ahead = next(waiting, None)
            while True:
                while ahead is not None and ahead < (sent, _SENT, sequence + 1):
                    free = max(free, ahead[0]) + 1
                    ahead = next(waiting, None)
                free = sent = max(free, sent) + 1
                yield free

        for kind, payload in pending:
            if kind is EventClass.JOB_END:
                assert isinstance(payload, _Execution)
                if not payload.cancelled:
                    posted.append(((payload.offset, _ended_by(payload), payload.born), payload))
            elif kind is EventClass.NODE_SWITCHED:  # one message per node, from its switching actor
                assert isinstance(payload, Switching)
                switched = _Switched(payload)
                posted.extend(((payload.offset, _COMPUTED, payload.born + i), switched)
                              for i in range(len(payload.nodes)))
            elif kind is EventClass.CALL:  # the waiter wakes at the instant itself: message 0, before any actor
                posted.append(((0, _WAITED, 0), _WOKEN))
            else:
                offset, born = (1, 0) if first else self._submitter or (0, 0)
                posted.append(((offset, _WAITED, born), None))
        posted.sort(key=lambda entry: entry[0])
        free = 2 if first else 0  # at t=0 the server first hears the submitter's hello and the scheduler's ready
        ready, told, replies, sequence = True, list[Event](), list[object](), 0

        def post(offset: int, message: object) -> None:
            nonlocal sequence
            sequence += 1
            insort(posted, ((offset, _SENT, sequence), message), key=lambda entry: entry[0])

        while posted:
            (sent_at, _, _), message = posted[0]
            received = max(free, sent_at) + 1
            free = received
            if early:
                finish(received, self._from_messages)
            del posted[0]
            self.state.now = queue.now
            if message is None:  # the instant's submissions
                events = self._submit_instant()
                self._born += 1
                self._submitter = (received - sent_at, self._born)
                if events and type(events[-1]) is NoMoreJobs:
                    post(received, events.pop())  # the submitter's goodbye follows its last submissions
                told.extend(events)
            elif isinstance(message, _Execution):
                done = ended.pop(id(message), None)  # its executor already ended it (`finish`)
                told.append(done if done is not None else self._end(message))
            elif isinstance(message, _Switched):
                message.left -= 1
                if not message.left:  # Batsim's server tells the scheduler once the whole request is done
                    told.append(self._power.switched(message.transition))
            elif message is _WOKEN:
                told.append(RequestedCall(queue.now))
            elif isinstance(message, NoMoreJobs):
                told.append(message)
            elif message is _READY:
                ready = True
            else:  # a decision (already applied: a policy decides on the state its earlier decisions made)
                if isinstance(message, _Start):  # the job's executor begins to wait now
                    self._born += 1
                    message.execution.offset, message.execution.born = received, self._born
                elif isinstance(message, _Switch):  # so do the switching actors, one per node
                    for transition in message.transitions:
                        transition.offset, transition.born = received, self._born + 1
                        self._born += len(transition.nodes)
                post(received, replies.pop(0) if replies else _READY)
            if ready and told and not (posted and posted[0][0] < (received, _WAITED)):
                self._decide_into(told, replies, finish if early else None,
                                  arrivals(received) if self._from_messages else itertools.count(received + 1))
                told, ready = [], False
                post(received, replies.pop(0) if replies else _READY)
        if meter is not None:
            meter.at_moment(None)  # (a no-op on the counts but the last, for a process that reads the state)
        if queue.next_time() == queue.now:  # decisions added events at this instant (a kill's end, a registration)
            self._deliver_rounds(queue.pop_instant(), woken=False)

    def _answer(self, events: list[Event], received: int) -> int:
        """Ask the decision process about `events`, heard at message `received` while nothing else is under way:
        its k-th decision reaches the server k messages later (a job starts then). Returns the message at which
        the ready signal arrives."""
        executions = self._executions
        for decision in self._call(events):
            self._apply(decision)
            received += 1
            if type(decision) is StartJob:
                execution = executions.get(decision.job_key)
                if execution is not None:
                    execution.offset = received
            elif self._power.started:
                self._time_switches(received)
        return received + 1

    def _decide_into(self, events: list[Event], replies: list[object],
                     finish: Callable[[int, bool], None] | None = None, arrivals: Iterator[int] | None = None) -> None:
        """Ask the decision process about `events` and apply its decisions; each also waits in `replies` (a start as
        its job's execution) to reach the server one message after the other, at the message `arrivals` gives.
        What Batsim's actors do before a decision reaches the server (`finish`) is done before it applies."""
        for decision in self._call(events):
            if finish is not None and arrivals is not None:
                finish(next(arrivals), self._from_messages or type(decision) is StartJob)
            self._apply(decision)
            started = self._executions.get(decision.job_key) if type(decision) is StartJob else None
            if started is not None:
                replies.append(_Start(started))
            elif self._power.started:
                replies.append(_Switch(self._time_switches(0)))
            else:
                replies.append(decision)

    def _time_switches(self, offset: int) -> list[Switching]:
        """The transitions a decision just started: their nodes' actors begin to wait, one after the other, at
        message `offset` of the instant."""
        started, self._power.started = self._power.started, []
        for transition in started:
            transition.offset, transition.born = offset, self._born + 1
            self._born += len(transition.nodes)
        return started

    def _executed(self, key: str, end: float) -> None:
        """A stepped model says a job's execution is over: it ends successfully, before its walltime."""
        execution = self._executions.get(key)
        if execution is None or execution.cancelled:
            return
        if execution.state is FinalState.COMPLETED_WALLTIME_REACHED and (
                end > execution.end or (end == execution.end and type(execution.running.job.profile) is Delay)):
            # Batsim (jobs_execution.cpp) sleeps a delay not shorter than the walltime until the walltime, which is
            # reached; a computation waits for its task with the walltime as timeout, and one that ends exactly
            # then completes
            return
        execution.cancelled = True
        done = _Execution(execution.running, max(end, self._queue.now), FinalState.COMPLETED_SUCCESSFULLY)
        self._executions[key] = done
        self._queue.push(done.end, EventClass.JOB_END, done)

    # -- events ------------------------------------------------------------------------------------------

    def _apply_instant(self, batch: Batch) -> list[Event]:
        """Apply the events of one instant, or of one round of it, in the queue's order; say what happened."""
        self.state.now = self._queue.now
        if self.meter is not None:
            self.meter.advance(self._queue.now)
        events: list[Event] = []
        for kind, payload in batch:
            if kind is EventClass.JOB_END:
                assert isinstance(payload, _Execution)
                if not payload.cancelled:
                    events.append(self._end(payload))
            elif kind is EventClass.JOB_SUBMIT:
                if payload is None:
                    events.extend(self._submit_instant())
                else:  # a SubmitJob decision, already queued: tell the decision process
                    assert isinstance(payload, Job)
                    events.append(JobSubmitted(payload))
            elif kind is EventClass.NODE_SWITCHED:
                assert isinstance(payload, Switching)
                events.append(self._power.switched(payload))
            elif kind is EventClass.MACHINES:
                assert isinstance(payload, AvailabilityChange)
                events.extend(self._availability(payload))
            else:
                events.append(RequestedCall(self._queue.now))
        return events

    def _submit_instant(self, taken: list[Job] | None = None) -> list[Event]:
        """Queue every job submitted at this instant, in id order, and schedule the next submission; or queue
        the jobs `taken` from the workload by Batsim's job submitter actor (`_take_instant`)."""
        now = self._queue.now
        batch = self._take_instant(now) if taken is None else taken
        if len(batch) > 1:  # Batsim submits an instant's jobs in the string order of their ids ("w0!12" < "w0!2")
            batch.sort(key=_batsim_order if self.delivery is Delivery.BATSIM else _id_order)
        pending = self.state.pending
        events: list[Event] = []
        executions = self._executions
        for job in batch:
            queued = len(pending)
            pending.setdefault(job.key, job)  # (one lookup in a queue of up to tens of thousands of jobs, not two)
            if len(pending) == queued or job.key in executions:
                if len(pending) > queued:
                    del pending[job.key]
                raise InputError(self.workload.source, f"job id '{job.key}' is submitted twice")
            events.append(JobSubmitted(job))
        self._summary.nb_submitted += len(batch)
        if self.meter is not None and batch:
            self.meter.job_submitted(now)
        if taken is None:
            self._schedule_lookahead()
        if self._lookahead is None:
            events.append(NoMoreJobs())
        return events

    def _take_instant(self, time: float) -> list[Job]:
        """The workload's jobs submitted at `time`, taken from it (the next one becomes the look-ahead)."""
        batch: list[Job] = []
        lookahead = self._lookahead
        while lookahead is not None and lookahead.submit_time == time:
            batch.append(lookahead)
            lookahead = next(self._jobs, None)
        self._lookahead = lookahead
        return batch

    def _availability(self, change: AvailabilityChange) -> list[Event]:
        """Machines become unavailable (nothing may start there; running jobs go on) or available again."""
        state, now, resources = self.state, self._queue.now, change.resources
        since = self._unavailable_since
        event: Event
        if change.available:
            back = state.make_available(resources)
            self._summary.unavailable_seconds += sum((now - since.pop(unit) for unit in back), 0.0)
            event = MachinesAvailable(resources)
        else:
            for unit in state.make_unavailable(resources):
                since[unit] = now
            event = MachinesUnavailable(resources)
        self._events_left -= 1
        return [event] if self._events_left else [event, NoMoreExternalEvents()]

    def _pull_next_submission(self) -> None:
        self._lookahead = next(self._jobs, None)
        self._schedule_lookahead()

    def _schedule_lookahead(self) -> None:
        job = self._lookahead
        if job is None:
            return
        if job.submit_time < self._queue.now:
            raise InputError(
                self.workload.source,
                f"job '{job.key}' is submitted at t={job.submit_time!r}, before the previous job "
                f"(t={self._queue.now!r}): workloads must be in submit order",
            )
        self._queue.push(job.submit_time, EventClass.JOB_SUBMIT, None)

    def _end(self, execution: _Execution) -> JobCompleted:
        running = execution.running
        key = running.job.key
        if execution.state is FinalState.COMPLETED_WALLTIME_REACHED and self.execution.stepped:
            self.execution.cancel(key)
        del self._executions[key]
        del self.state.running[key]
        if running.job.request is not None:
            self._end_pod(running)
        else:
            self.state.release(running.resources)
            if self.state.nodes is not None:
                self.state.nodes.release(running.resources, self._queue.now)
        return self._completed(running, execution)

    def _end_pod(self, running: RunningJob) -> None:
        """Give a pod's requests back to its node; a node left with no pod is whole and free again."""
        assert running.job.request is not None
        node, units = self._pod_node(running.resources.intervals[0][0])
        if self.state.shared.give_back(node, running.job.request):
            self.state.free = self.state.free | units
            if self.state.nodes is not None:
                self.state.nodes.release(units, self._queue.now)

    def _completed(self, running: RunningJob, execution: _Execution) -> JobCompleted:
        """Record the outcome of a job that ended, and say so to the decision process."""
        key = running.job.key
        metadata = self._metadata.pop(key, "") if self._metadata else ""
        energy = -1.0
        if self.meter is not None:
            now = self._queue.now
            energy = self.meter.job_ended(now, running.start, running.resources, needs_speed(running.job.profile))
        outcome = JobOutcome(
            running.job, execution.state, running.start, execution.end, running.resources, metadata, energy
        )
        self._emit(outcome)
        if self.machine_states is not None and self._actors is None:  # else Batsim's actors write the row
            self.machine_states.ended(self._queue.now, running.resources, execution)
        return JobCompleted(running.job, execution.state, running.resources)

    def _emit(self, outcome: JobOutcome) -> None:
        """Every sink records the outcome, or (on Ctrl-C) none yet: the interrupt waits for the last sink."""
        self._interrupts.critical = True
        try:
            for sink in self.sinks:
                sink.record(outcome)
        finally:
            self._interrupts.raise_pending()

    # -- decisions ---------------------------------------------------------------------------------------

    def _apply(self, decision: Decision) -> None:
        if type(decision) is StartJob:  # most decisions: a native call, not one through the table's bound method
            self._start(decision)
            return
        applier = self._appliers.get(type(decision))
        if applier is None:
            expected = ", ".join(sorted(t.__name__ for t in self._appliers))
            raise DecisionError(decision, f"not a decision; expected one of {expected}")
        applier(decision)

    def _pending_job(self, decision: Decision, key: str) -> Job:
        job = self.state.pending.get(key)
        if job is not None:
            return job
        if key in self.state.running:
            raise DecisionError(decision, f"job '{key}' is already running")
        raise DecisionError(decision, f"job '{key}' is not pending (unknown, not yet submitted, or finished)")

    def _start(self, d: StartJob) -> None:
        job = self._pending_job(d, d.job_key)
        resources = d.resources
        if job.request is not None:
            self._start_pod(d, job)
            return
        if len(resources) != job.nb_res:
            raise DecisionError(d, f"job '{job.key}' requests {job.nb_res} resources, got {len(resources)}")
        free = self.state.free
        remaining = free - resources
        if len(remaining) != len(free) - len(resources):
            busy = resources - free
            down = busy & self.state.unavailable
            if down:
                raise DecisionError(d, f"resources {down} are unavailable (an external event made them so)")
            raise DecisionError(d, f"resources {busy} are not free (free: {free or 'none'})")
        now = self._queue.now
        self.state.unqueue(job.key)
        self.state.free = remaining
        running = RunningJob(job, now, resources, d.storage_mapping)
        self.state.running[job.key] = running
        if self.state.nodes is not None and self._actors is None:  # else when EXECUTE_JOB reaches Batsim's server
            self.state.nodes.occupy(resources, now)
            if self.meter is not None:
                self.meter.job_started(now, resources, needs_speed(job.profile))
        self._launch(running)
        if self.machine_states is not None and self._actors is None:  # else the job's executor writes the row
            self.machine_states.started(now, resources, self._executions[job.key])

    def _start_pod(self, d: StartJob, job: Job) -> None:
        """Start a pod on the node of the one unit given, if its requests fit what the node has left."""
        assert job.request is not None
        if len(d.resources) != 1:
            raise DecisionError(d, f"pod '{job.key}' runs on one node: give exactly one unit, got {len(d.resources)}")
        if self.meter is not None:
            raise DecisionError(d, "energy accounting of pods (jobs with resource requests) is not modelled")
        unit = d.resources.intervals[0][0]
        found = self._pod_nodes.get(unit)
        if found is None:
            if unit >= self.platform.nb_resources:
                raise DecisionError(d, f"there is no unit {unit}")
            found = self._pod_node(unit)
        node, units = found
        shared = self.state.shared
        first_pod = shared.pods(node) == 0
        if first_pod and not units.issubset(self.state.free):
            raise DecisionError(d, f"node {node} is held by exclusive jobs or is not on")
        missing = shortfall(shared.free(node), {**job.request, "pods": 1})
        if missing:
            raise DecisionError(d, f"pod '{job.key}' does not fit node {node}: insufficient {', '.join(missing)}")
        now = self._queue.now
        self.state.unqueue(job.key)
        shared.take(node, job.request)
        if first_pod:
            self.state.free = self.state.free - units
            if self.state.nodes is not None:
                self.state.nodes.occupy(units, now)
        running = RunningJob(job, now, d.resources)
        self.state.running[job.key] = running
        self._launch(running)

    def _pod_node(self, unit: int) -> tuple[int, IntervalSet]:
        """The node of a unit and the node's units, kept: the platform's own calls are interpreted, and every
        pod's start and end asks."""
        found = self._pod_nodes.get(unit)
        if found is None:
            node = self.platform.node_of(unit).id
            found = self._pod_nodes[unit] = node, self.platform.units_of(node)
        return found

    def _launch(self, running: RunningJob) -> None:
        """Schedule the end of a started job: its run time, or its walltime if shorter.

        When the execution model reports ends later (stepped), only the walltime is scheduled here.
        """
        job, now = running.job, running.start
        profile = job.profile
        # (A delay's run time is its seconds in the fast model: read here, not through the model's Python-level call.)
        runtime = profile.seconds if type(profile) is Delay and self._fast else self.execution.start(running)
        walltime = job.walltime
        self._born += 1
        if runtime is not None:
            execution = self._schedule_end(running, runtime, now + runtime)
            execution.offset, execution.born = self._replied, self._born
            return
        if walltime is None or self._actors is not None:  # no end event until the model reports one
            self._executions[job.key] = _Execution(running, float("inf"), FinalState.COMPLETED_SUCCESSFULLY)
            return
        state, offset = FinalState.COMPLETED_WALLTIME_REACHED, self._replied
        execution = _Execution(running, now + walltime, state, offset, self._born)
        self._executions[job.key] = execution
        self._queue.push(execution.end, EventClass.JOB_END, execution)

    def _schedule_end(self, running: RunningJob, runtime: float, end: float) -> _Execution:
        """A job's execution ends at `end` (`runtime` after its start), or at its walltime if that comes first."""
        job = running.job
        walltime = job.walltime
        if walltime is not None and (runtime > walltime or (runtime == walltime and type(job.profile) is Delay)):
            # Batsim sleeps a delay job until its walltime when the delay is not shorter, then kills it
            execution = _Execution(running, running.start + walltime, FinalState.COMPLETED_WALLTIME_REACHED)
        else:
            execution = _Execution(running, end, FinalState.COMPLETED_SUCCESSFULLY)
        self._executions[job.key] = execution
        self._queue.push(execution.end, EventClass.JOB_END, execution)
        return execution

    def _set_pstate(self, d: SetPState) -> None:
        """Nodes change computation power state (DVFS): the execution model re-times the jobs running there."""
        self._speeds_changed(self._power.set_pstate(d), d.pstate)

    def _speeds_changed(self, speeds: dict[int, float], pstate: int) -> None:
        """Units compute at other speeds from now on: the execution model re-times the jobs running there."""
        for key, end in self.execution.change_speeds(self._queue.now, speeds, pstate, self.state.running):
            execution = self._executions[key]
            if execution.cancelled:  # killed at this instant
                continue
            execution.cancelled = True
            moved = self._schedule_end(execution.running, end - execution.running.start, end)
            moved.offset, moved.born = execution.offset, execution.born

    def _reject(self, d: RejectJob) -> None:
        job = self._pending_job(d, d.job_key)
        self.state.unqueue(job.key)
        self._emit(JobOutcome(job, FinalState.REJECTED, None, None, IntervalSet(), self._metadata.pop(job.key, "")))

    def _kill(self, d: KillJob) -> None:
        execution = self._executions.get(d.job_key)
        if execution is None or execution.cancelled:
            raise DecisionError(d, f"job '{d.job_key}' is not running")
        if d.state is FinalState.REJECTED:
            raise DecisionError(d, "a running job cannot end REJECTED")
        execution.cancelled = True
        self.execution.cancel(d.job_key)
        killed = _Execution(execution.running, self._queue.now, d.state)
        self._executions[d.job_key] = killed
        self._queue.push(killed.end, EventClass.JOB_END, killed)

    def _call_me_later(self, d: CallMeLater) -> None:
        now = self._queue.now
        if d.time < now:
            raise DecisionError(d, f"t={d.time!r} is in the past (now is t={now!r})")
        kind = EventClass.DUE if d.first else EventClass.LAST_CALL if d.last or d.time == now else EventClass.CALL
        self._queue.push(d.time, kind, None)

    def _submit_job(self, d: SubmitJob) -> None:
        job = d.job
        now = self._queue.now
        if job.submit_time != now:
            raise DecisionError(d, f"a job is submitted now: its submit time must be t={now!r}")
        if job.key in self.state.pending or job.key in self._executions:
            raise DecisionError(d, f"job '{job.key}' is already pending or running")
        self.state.pending[job.key] = job
        self._summary.nb_submitted += 1
        self._queue.push(now, EventClass.JOB_SUBMIT, job)

    def _set_metadata(self, d: SetJobMetadata) -> None:
        if d.job_key not in self.state.pending and d.job_key not in self.state.running:
            raise DecisionError(d, f"job '{d.job_key}' is neither pending nor running")
        self._metadata[d.job_key] = d.metadata


def _batsim_order(job: Job) -> str:
    return job.key


def _id_order(job: Job) -> tuple[int, int | str]:
    return id_order(job.id)


def _event_class(entry: tuple[EventClass, Payload]) -> EventClass:
    return entry[0]


def _ended_by(execution: _Execution) -> int:
    """Whether a job's end is posted at the end of a computation or of a sleep (a delay, or the walltime)."""
    if execution.state is not FinalState.COMPLETED_SUCCESSFULLY:
        return _WAITED
    profile = execution.running.job.profile
    while type(profile) is Composed:
        profile = profile.sequence[-1]
    return _COMPUTED if needs_speed(profile) else _WAITED


def _calls_first(batch: Batch) -> tuple[Batch, Batch]:
    """The requested calls of an instant that has other events too, and the rest; else nothing and the whole
    instant."""
    if len(batch) > 1 and any(entry[0] is EventClass.CALL for entry in batch):
        calls = [entry for entry in batch if entry[0] is EventClass.CALL]
        if len(calls) < len(batch):
            return calls, [entry for entry in batch if entry[0] is not EventClass.CALL]
    return [], batch


def _first_round(batch: Batch) -> tuple[Batch, Batch]:
    """Batsim's first round of what is left of an instant (sorted by event class), and the rest: the
    submissions, else the held-back decisions, else one job end (they come in start order; the last with the nodes
    done switching), else the rest."""
    for kind in (EventClass.JOB_SUBMIT, EventClass.DUE):
        if any(entry[0] is kind for entry in batch):
            return [e for e in batch if e[0] is kind], [e for e in batch if e[0] is not kind]
    if batch[0][0] is EventClass.JOB_END:
        rest = batch[1:]
        if any(entry[0] is EventClass.JOB_END for entry in rest):
            return batch[:1], rest
        # Nodes done switching arrive with the instant's last job end, in one message (docs/energy.md).
        switched = [e for e in rest if e[0] is EventClass.NODE_SWITCHED]
        return batch[:1] + switched, [e for e in rest if e[0] is not EventClass.NODE_SWITCHED]
    return batch, []
