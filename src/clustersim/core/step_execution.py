"""The step platform model: Batsim's actors on SimGrid 3.32's solver steps, computed in plain Python.

At an exact tie, whether Batsim's server sees a job's end before it calls the scheduler is decided by SimGrid's
arithmetic (docs/batsim-protocol.md, "How Batsim groups the events of one instant"): times in steps of the shortest
remaining action, wake-ups in the order the actions began, sleeps and messages that end a step below SimGrid's
precisions. `Engine` does that arithmetic, and only that, for the actions Batsim's actors use (SimGrid 3.32,
ptask_L07: `EngineImpl::run` and `solve`, `HostL07Model::update_actions_state`,
`Model::next_occurring_event_full`, `double_update`):

- actors run in sub-rounds at one clock value, in the order they were made ready; the simcalls of a sub-round
  (sleep, `put_async`, `wait`, `get`, actor creation) are handled after it, in that order;
- a step lasts the shortest remaining time among the actions: a sleep's rest, a message's remaining bytes over
  its route's rate; the clock moves `now = now + step`; every action loses the step; a sleep's rest below 1e-9 s
  (`precision/timing`) and a message's bytes below 1e-14 are set to 0; the actions that reach 0 end in that step,
  in the order they began, and wake their actors.

The server's one mailbox has one receiver, which takes one message at a time, so at most one message is under way
and no two share a link: each goes at its route's rate.

`StepExecution` is the execution model on that engine: it offers Batsim's actors (core/batsim_actors.py) what
`SimgridExecution` offers them (a clock, actors, a mailbox, sleep, kill, a job's executor made by `start` and
created by `launch`, `on_end`), without SimGrid. The actors are greenlets: each runs until its next simcall, which
hands control back to the engine. It runs jobs whose profiles are delays (Batsim's executor sleeps them), on
platforms where every message to the master host takes the same time (platform/messages.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from greenlet import greenlet

from clustersim.core.interrupts import SignalWatch
from clustersim.core.state import RunningJob
from clustersim.errors import ClusterSimError
from clustersim.workload.profiles import Composed, Delay, Profile

TIMING_PRECISION = 1e-9
"""SimGrid's `precision/timing`: a sleep's rest below it is 0."""
WORK_PRECISION = 1e-5 * 1e-9
"""`precision/work-amount` times `precision/timing`: a message's remaining bytes below it are 0."""


class Actor:
    """Something the engine runs: `resume` runs it until its next simcall, which it returns (None: it is over)."""

    killed = False

    def resume(self, value: Any) -> Simcall | None:
        raise NotImplementedError


class Comm:
    """A message: posted by `put_async`, started when a receiver takes it, done when its bytes are sent."""

    __slots__ = ("done", "payload", "rate", "remains", "size", "waiters")

    def __init__(self, payload: Any, size: float, rate: float):
        self.payload = payload
        self.size = size
        self.rate = rate
        self.remains = -1.0
        """Bytes left; -1 while posted and not yet received."""
        self.done = False
        self.waiters: list[Actor] = []


class _Sleep:
    __slots__ = ("actor", "rest")

    def __init__(self, actor: Actor, rest: float):
        self.actor = actor
        self.rest = rest


class Sleep(NamedTuple):
    seconds: float


class Create(NamedTuple):
    actor: Actor


class PutAsync(NamedTuple):
    """Post a message of `size` bytes to the server's mailbox, sent at `rate` bytes per second once received."""

    payload: Any
    size: float
    rate: float


class Wait(NamedTuple):
    comm: Comm


class Get(NamedTuple):
    pass


Simcall = Sleep | Create | PutAsync | Wait | Get


class Engine:
    """Sub-rounds of actors, their simcalls, and SimGrid's steps over sleeps and messages to one mailbox."""

    def __init__(self) -> None:
        self.now = 0.0
        self.stopped = False
        self._ready: list[tuple[Actor, Any]] = []
        self._actions: list[_Sleep | Comm] = []
        self._posted: list[Comm] = []
        """The mailbox's messages that no receiver took yet, in the order they were posted."""
        self._receiver: Actor | None = None
        """An actor waiting in `get` for a message."""
        self._handlers: dict[type, Callable[[Actor, Any], None]] = {
            Sleep: self._sleep, Create: self._create, PutAsync: self._put_async, Wait: self._wait, Get: self._get,
        }

    @property
    def clock(self) -> float:
        """The clock, as SimGrid's engine names it."""
        return self.now

    def create(self, actor: Actor) -> None:
        """An actor made ready from outside the engine's actors (before `run`)."""
        self._ready.append((actor, None))

    def kill(self, actor: Actor) -> None:
        """The actor runs no more: its sleep and its place among the ready actors or as the receiver go."""
        actor.killed = True
        self._ready = [entry for entry in self._ready if entry[0] is not actor]
        self._actions = [action for action in self._actions if type(action) is not _Sleep or action.actor is not actor]
        if self._receiver is actor:
            self._receiver = None

    def run(self) -> None:
        """Run the actors until none can run and no action is under way, or `stopped` is set."""
        while not self.stopped:
            while self._ready and not self.stopped:
                ran, self._ready = self._ready, []
                calls: list[tuple[Actor, Simcall]] = []
                for actor, value in ran:
                    if actor.killed:
                        continue
                    call = actor.resume(value)
                    if call is not None:
                        calls.append((actor, call))
                for actor, call in calls:
                    if not actor.killed:
                        self._handlers[type(call)](actor, call)
            if not self._actions or self.stopped:
                return
            self._step()

    def _step(self) -> None:
        """One solver step: the shortest remaining action ends, every other loses as much."""
        step = min(action.rest if type(action) is _Sleep else action.remains / action.rate  # type: ignore[union-attr]
                   for action in self._actions)
        self.now = self.now + step
        ended: list[_Sleep | Comm] = []
        left: list[_Sleep | Comm] = []
        for action in self._actions:
            if type(action) is _Sleep:
                action.rest -= step
                if action.rest < TIMING_PRECISION:
                    action.rest = 0.0
                    ended.append(action)
                    continue
            else:
                assert type(action) is Comm
                action.remains -= action.rate * step
                if action.remains < WORK_PRECISION:
                    action.remains = 0.0
                    ended.append(action)
                    continue
            left.append(action)
        self._actions = left
        for action in ended:
            if type(action) is _Sleep:
                self._ready.append((action.actor, None))
            else:
                assert type(action) is Comm
                action.done = True
                for waiter in action.waiters:
                    if not waiter.killed:
                        self._ready.append((waiter, action.payload))

    # -- simcalls, handled after the sub-round that made them --------------------------------------------

    def _sleep(self, actor: Actor, call: Sleep) -> None:
        self._actions.append(_Sleep(actor, call.seconds))

    def _create(self, actor: Actor, call: Create) -> None:
        self._ready.append((call.actor, None))
        self._ready.append((actor, None))

    def _put_async(self, actor: Actor, call: PutAsync) -> None:
        comm = Comm(call.payload, call.size, call.rate)
        if self._receiver is not None:
            receiver, self._receiver = self._receiver, None
            self._start(comm, receiver)
        else:
            self._posted.append(comm)
        self._ready.append((actor, comm))

    def _wait(self, actor: Actor, call: Wait) -> None:
        if call.comm.done:
            self._ready.append((actor, None))
        else:
            call.comm.waiters.append(actor)

    def _get(self, actor: Actor, call: Get) -> None:
        if self._posted:
            self._start(self._posted.pop(0), actor)
        elif self._receiver is not None:
            raise ClusterSimError("the step model's mailbox has one receiver")
        else:
            self._receiver = actor

    def _start(self, comm: Comm, receiver: Actor) -> None:
        comm.remains = comm.size
        comm.waiters.append(receiver)
        self._actions.append(comm)


class _Green(Actor):
    """An actor whose body is a plain function: it runs in a greenlet and each simcall switches back to the
    engine's loop (`_Actors.call`)."""

    def __init__(self, body: Callable[..., None], args: tuple[Any, ...]):
        self._body = body
        self._args = args
        self._greenlet: Any = None

    def resume(self, value: Any) -> Simcall | None:
        if self._greenlet is None:  # made here, so that its parent is the engine's loop
            self._greenlet = greenlet(self._run)
        call: Simcall | None = self._greenlet.switch(value)
        return None if self._greenlet.dead else call

    def _run(self, _: Any) -> None:
        self._body(*self._args)


class _Comm:
    """What `put_async` returns to an actor: its message, to wait for."""

    def __init__(self, actors: _Actors, comm: Comm):
        self._actors = actors
        self._comm = comm

    def wait(self) -> None:
        self._actors.call(Wait(self._comm))


class _Mailbox:
    def __init__(self, actors: _Actors):
        self._actors = actors

    def put_async(self, message: Any, size: int) -> _Comm:
        comm: Comm = self._actors.call(PutAsync(message, size, self._actors.bandwidth))
        return _Comm(self._actors, comm)

    def get(self) -> Any:
        return self._actors.call(Get())


class _ThisActor:
    def __init__(self, actors: _Actors):
        self._actors = actors

    def sleep_for(self, seconds: float) -> None:
        self._actors.call(Sleep(seconds))


class _Handle:
    """An actor as the code that created it sees it."""

    def __init__(self, engine: Engine, actor: Actor):
        self._engine = engine
        self._actor = actor

    def kill(self) -> None:
        self._engine.kill(self._actor)


class _Actors:
    """SimGrid's Python API as Batsim's actors use it (`Actor.create`, `Mailbox.by_name`, `this_actor.sleep_for`,
    a communication's `wait`), on `Engine`."""

    def __init__(self, engine: Engine, bandwidth: float):
        self.engine = engine
        self.bandwidth = bandwidth
        """Bytes per second of every message."""
        self.this_actor = _ThisActor(self)
        self.Actor = self  # `simgrid.Actor.create`
        self.Mailbox = self  # `simgrid.Mailbox.by_name`
        self._mailbox = _Mailbox(self)
        self._loop: Any = None
        """The greenlet of the engine's loop, where a simcall goes (None before `run`)."""

    def call(self, simcall: Simcall) -> Any:
        """A simcall from the running actor: the engine resumes it with the simcall's answer."""
        return self._loop.switch(simcall)

    def create(self, name: str, host: object, body: Callable[..., None], *args: Any) -> _Handle:
        actor = _Green(body, args)
        if self._loop is None or greenlet.getcurrent() is self._loop:
            self.engine.create(actor)
        else:
            self.call(Create(actor))
        return _Handle(self.engine, actor)

    def by_name(self, name: str) -> _Mailbox:
        return self._mailbox

    def run(self) -> None:
        self._loop = greenlet.getcurrent()
        self.engine.run()


def delays(profile: Profile) -> list[float] | None:
    """A profile's steps when they are all delays (a composed profile's unrolled), else None."""
    if type(profile) is Delay:
        return [float(profile.seconds)]
    if type(profile) is Composed:
        once: list[float] = []
        for part in profile.sequence:
            steps = delays(part)
            if steps is None:
                return None
            once += steps
        return once * profile.repeat
    return None


class StepExecution:
    """Jobs of delay profiles, with Batsim's actors, on SimGrid's solver steps computed in Python (no SimGrid).

    `bandwidth` is the bytes per second of every message to the master host on the platform
    (platform/messages.py)."""

    stepped = True

    def __init__(self, bandwidth: float):
        self._engine = Engine()
        self._actors = _Actors(self._engine, bandwidth)
        self._running: dict[str, _Handle] = {}
        self._prepared: dict[str, tuple[list[float], float]] = {}
        self._error: BaseException | None = None
        self._signals = SignalWatch()
        self.on_end: Callable[[str, float, bool], None] | None = None
        """Set by Batsim's actors: a job's executor calls it when the job ends (key, time, walltime reached)."""

    @property
    def engine(self) -> Engine:
        """The engine: its `clock`, for Batsim's actors."""
        return self._engine

    @property
    def simgrid(self) -> Any:
        """The actors' API, as Batsim's actors call SimGrid's."""
        return self._actors

    @property
    def master(self) -> str:
        return "master"

    def host_of(self, node: int) -> Any:
        """A node's host, as Batsim's actors name it (the step model's messages do not depend on it)."""
        return node

    def drive(self, loop: Callable[[], None]) -> None:
        def core() -> None:
            try:
                loop()
            except BaseException as error:  # carried out of the engine, raised again below
                self._error = error
            finally:
                for handle in list(self._running.values()):
                    handle.kill()
                self._running.clear()

        self._actors.create("clustersim", self.master, core)
        with self._signals:
            self._actors.run()
        if self._error is not None:
            raise self._error

    def check_interrupt(self) -> None:
        self._signals.check()

    def start(self, running: RunningJob) -> None:
        """Prepare a job's executor; `launch` creates it when the start's message reaches the server."""
        steps = delays(running.job.profile)
        if steps is None:
            raise ClusterSimError(f"the step platform model runs delay profiles only, not job "
                                  f"'{running.job.key}'s {type(running.job.profile).__name__}")
        walltime = running.job.walltime
        self._prepared[running.job.key] = (steps, -1.0 if walltime is None else float(walltime))
        return None

    def is_prepared(self, key: str) -> bool:
        return key in self._prepared

    def launch(self, key: str) -> None:
        steps, walltime = self._prepared.pop(key)
        self._running[key] = self._actors.create(f"job {key}", None, self._execute_within, key, steps, walltime)

    def _execute_within(self, key: str, steps: list[float], walltime: float) -> None:
        """Batsim's executor (jobs_execution.cpp): each delay within the time left of the walltime (-1: none); a
        delay not shorter than that time sleeps it and reaches the walltime."""
        sleep_for = self._actors.this_actor.sleep_for
        remaining, reached = walltime, False
        for seconds in steps:
            if remaining < 0 or seconds < remaining:
                sleep_for(seconds)
                if remaining > 0:
                    remaining = remaining - seconds
                continue
            sleep_for(remaining)
            reached = True
            break
        self._running.pop(key, None)
        assert self.on_end is not None
        self.on_end(key, self._engine.now, reached)

    def advance(self, until: float | None) -> Sequence[tuple[float, str]]:
        return ()  # Batsim's actors report the ends (`on_end`)

    def cancel(self, key: str) -> None:
        self._prepared.pop(key, None)
        handle = self._running.pop(key, None)
        if handle is not None:
            handle.kill()

    def change_speeds(self, now: float, speeds: object, pstate: int, running: object) -> Sequence[tuple[str, float]]:
        return ()  # delays do not depend on speeds

