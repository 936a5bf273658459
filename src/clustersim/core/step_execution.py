"""The step platform model: Batsim's actors on SimGrid 3.32's solver steps, computed in plain Python.

At an exact tie, whether Batsim's server sees a job's end before it calls the scheduler is decided by SimGrid's
arithmetic (docs/batsim-protocol.md, "How Batsim groups the events of one instant"): times in steps of the shortest
remaining action, wake-ups in the order the actions began, sleeps, computations and messages that end a step below
SimGrid's precisions. `Engine` does that arithmetic, and only that, for the actions Batsim's actors use (SimGrid
3.32, ptask_L07: `EngineImpl::run` and `solve`, `HostL07Model::update_actions_state`, the `L07Action`,
`Model::next_occurring_event_full`, `double_update`):

- actors run in sub-rounds at one clock value, in the order they were made ready; the simcalls of a sub-round
  (sleep, `put_async`, `wait`, `get`, actor creation, a computation's start and `wait_for`) are handled after it,
  in that order;
- a step lasts the shortest remaining time among the actions: a sleep's rest, a message's remaining bytes over
  its route's rate, a computation's remaining work (one unit, the whole parallel task, at the start) over its
  rate (the smallest speed / flops of its hosts); the clock moves `now = now + step`; every action loses the
  step; a sleep's rest below 1e-9 s (`precision/timing`) and a message's bytes or a computation's work below
  1e-14 are set to 0; the actions that reach 0 end in that step, in the order they began, and wake their actors;
- waiting for a computation at most some time (the walltime's rest) adds a sleep of that time after it: the
  first of the two to end answers the wait, the computation when both end in one step.

The server's one mailbox has one receiver, which takes one message at a time, so at most one message is under way
and no two share a link: each goes at its route's rate.

`StepExecution` is the execution model on that engine: it offers Batsim's actors (core/batsim_actors.py) what
`SimgridExecution` offers them (a clock, actors, a mailbox, sleep, kill, a job's executor made by `start` and
created by `launch`, `on_end`), without SimGrid. The actors are greenlets: each runs until its next simcall, which
hands control back to the engine. It runs jobs whose profiles are delays (Batsim's executor sleeps them) or parallel
tasks without communication (it computes them, on the job's hosts), on platforms where every message to the master
host has a known time by sending host (platform/messages.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from greenlet import greenlet

from clustersim.core.interrupts import SignalWatch
from clustersim.core.state import RunningJob
from clustersim.errors import ClusterSimError, InputError
from clustersim.platform.messages import MessageRates
from clustersim.platform.model import Node, Platform
from clustersim.workload.profiles import (
    Composed,
    Delay,
    Parallel,
    ParallelHomogeneous,
    Profile,
    local_work,
    only_delays,
)

TIMING_PRECISION = 1e-9
"""SimGrid's `precision/timing`: a sleep's rest below it is 0."""
WORK_PRECISION = 1e-5 * 1e-9
"""`precision/work-amount` times `precision/timing`: a message's remaining bytes below it are 0."""


class Actor:
    """Something the engine runs: `resume` runs it until its next simcall, which it returns (None: it is over).

    `message_rate`: the bytes per second of its messages to the master host (over its host's route), for a
    `PutAsync` that names no rate."""

    killed = False
    message_rate = 0.0
    host: Any = None
    """Where it runs; a `Host` in energy runs, whose energy SimGrid's plugin keeps (its actions there update it)."""

    def resume(self, value: Any) -> Simcall | None:
        raise NotImplementedError


class Comm:
    """A message: posted by `put_async`, started when a receiver takes it, done when its bytes are sent."""

    __slots__ = ("done", "payload", "rate", "remains", "size", "source", "waiters")

    def __init__(self, payload: Any, size: float, rate: float, source: Any = None):
        self.payload = payload
        self.source = source
        """The sender's host (ptask_L07's message is an action on both hosts' CPUs)."""
        self.size = size
        self.rate = rate
        self.remains = -1.0
        """Bytes left; -1 while posted and not yet received."""
        self.done = False
        self.waiters: list[Actor] = []


class _Sleep:
    """A sleep's rest; `exec` when it is the timeout of an actor's wait for that computation (`WaitFor`), and
    `dead` once that computation ended first (its timeout no longer counts)."""

    __slots__ = ("actor", "dead", "exec", "rest")

    def __init__(self, actor: Actor, rest: float, exec: Exec | None = None):
        self.actor = actor
        self.rest = rest
        self.exec = exec
        self.dead = False


class Exec:
    """A computation: SimGrid's ptask_L07 action, whose work is one unit (the whole parallel task) done at `rate`
    units per second: the smallest of its hosts' speed over their flops (each host computes alone, Batsim does not
    share hosts). Its rest below 1e-14 units is 0 (`precision/work-amount` times `precision/timing`)."""

    __slots__ = ("actor", "done", "flops", "hosts", "rate", "remains", "timeout", "waiter")

    def __init__(self, actor: Actor, rate: float, hosts: Sequence[Host] = (), flops: Sequence[float] = ()):
        self.actor = actor
        self.rate = rate
        self.hosts = hosts
        self.flops = flops
        """In energy runs, its `Host`s and their flops: its rate is solved again at each step, from the hosts'
        current power states (and its load counts in their energy)."""
        self.remains = 1.0
        self.done = False
        self.waiter: Actor | None = None
        """The actor waiting for it to end (`WaitFor`)."""
        self.timeout: _Sleep | None = None
        """The sleep that stops that wait, if it ends first."""

    def solve(self) -> None:
        """The solver's value of its variable: the smallest of its hosts' current speed over their flops (0 before
        the first solve: it loads no CPU until then)."""
        rate = -1.0
        for host, flops in zip(self.hosts, self.flops, strict=True):
            if flops > 0:
                value = host.speed / flops
                rate = value if rate < 0 or value < rate else rate
        self.rate = rate if rate > 0 else 0.0

    def release(self) -> None:
        """It no longer loads its hosts."""
        for host in self.hosts:
            host.execs = [entry for entry in host.execs if entry[0] is not self]


class Host:
    """A compute host in energy runs, with what SimGrid's energy plugin keeps of it (host_energy.cpp, SimGrid 3.32):
    the energy up to `last_updated`, in the power state `saved_pstate` seen then.

    Setting `pstate` is a simcall (s4u `Host::set_pstate`), which brings the energy up to date (`on_speed_change`)."""

    __slots__ = ("_actors", "cores", "execs", "last_updated", "name", "node", "pstate_now", "ranges",
                 "saved_pstate", "speeds", "total_energy")

    def __init__(self, actors: _Actors | None, node: int, name: str, speeds: Sequence[float],
                 ranges: Sequence[tuple[float, float, float]], pstate: int, cores: int = 1):
        self._actors = actors
        self.node = node
        self.name = name
        self.cores = cores
        self.speeds = speeds
        self.ranges = ranges
        """Per power state: (idle, epsilon, slope) watts, as the plugin reads `wattage_per_state`."""
        self.pstate_now = pstate
        self.saved_pstate = pstate
        self.last_updated = 0.0
        self.total_energy = 0.0
        self.execs: list[tuple[Exec, float]] = []
        """The computations under way on it, with their flops here: its load."""

    @property
    def speed(self) -> float:
        return self.speeds[self.pstate_now]

    @property
    def pstate(self) -> int:
        return self.pstate_now

    @pstate.setter
    def pstate(self, value: int) -> None:
        assert self._actors is not None
        self._actors.call(SetPstate(self, value))

    def update(self, now: float) -> None:
        """HostEnergy::update: the energy since the last update at the power of the power state saved then and of
        the load now (`epsilon + load x slope`, else idle watts); then the power state is saved again."""
        start = self.last_updated
        if start < now:
            speed = self.speeds[self.saved_pstate]
            idle, epsilon, slope = self.ranges[self.saved_pstate]
            if speed <= 0:
                load = 1.0
            else:
                usage = 0.0
                for action, flops in self.execs:
                    if flops > 0:
                        usage += flops * action.rate
                load = usage / speed
                load /= self.cores
                if load > 1:
                    load = 1.0
            power = epsilon + load * slope if load > 0 else idle
            self.total_energy = self.total_energy + power * (now - start)
            self.last_updated = now
        self.saved_pstate = self.pstate_now

    def touched(self, now: float) -> None:
        """An action on its CPU changed state (`CpuAction::on_state_change`): the energy is brought up to date."""
        if self.last_updated < now:
            self.update(now)


class Sleep(NamedTuple):
    seconds: float


class Create(NamedTuple):
    actor: Actor


class PutAsync(NamedTuple):
    """Post a message of `size` bytes to the server's mailbox, sent at `rate` bytes per second once received (None:
    the sender's `message_rate`, its host's route to the master)."""

    payload: Any
    size: float
    rate: float | None


class Wait(NamedTuple):
    comm: Comm


class Get(NamedTuple):
    pass


class Execute(NamedTuple):
    """Start a computation of `rate` units per second (`Exec`; SimGrid's `exec_init` then `start`): the actor
    gets it back at once, to wait for."""

    rate: float


class WaitFor(NamedTuple):
    """Wait for a computation to end, at most `timeout` seconds (SimGrid's `wait_for`; -1: no limit). The actor
    gets False when it ended, True when the timeout came first: the computation then goes on until the actor is
    over (Batsim's executor keeps its task until then) or ends."""

    exec: Exec
    timeout: float


class ExecuteOn(NamedTuple):
    """Start a computation of `flops` on `hosts` (energy runs: `Host`s, its rate solved at each step)."""

    hosts: Sequence[Host]
    flops: Sequence[float]


class SetPstate(NamedTuple):
    host: Host
    pstate: int


class Update(NamedTuple):
    """The energy plugin's simcall: a host's energy read when it is older than the clock."""

    host: Host


Simcall = Sleep | Create | PutAsync | Wait | Get | Execute | WaitFor | ExecuteOn | SetPstate | Update


class Engine:
    """Sub-rounds of actors, their simcalls, and SimGrid's steps over sleeps, computations and messages to one
    mailbox."""

    def __init__(self) -> None:
        self.now = 0.0
        self.stopped = False
        self._ready: list[tuple[Actor, Any]] = []
        self._actions: list[_Sleep | Comm | Exec] = []
        self._posted: list[Comm] = []
        """The mailbox's messages that no receiver took yet, in the order they were posted."""
        self._receiver: Actor | None = None
        """An actor waiting in `get` for a message."""
        self._orphans: dict[Actor, Exec] = {}
        """Computations whose wait timed out, by their actor: they go on until it is over."""
        self.energy = False
        """Whether SimGrid's energy plugin keeps the hosts' energy (the actors then run on `Host`s)."""

        self._handlers: dict[type, Callable[[Actor, Any], None]] = {
            Sleep: self._sleep, Create: self._create, PutAsync: self._put_async, Wait: self._wait, Get: self._get,
            Execute: self._execute, WaitFor: self._wait_for, ExecuteOn: self._execute_on, SetPstate: self._set_pstate,
            Update: self._update,
        }

    @property
    def clock(self) -> float:
        """The clock, as SimGrid's engine names it."""
        return self.now

    def create(self, actor: Actor) -> None:
        """An actor made ready from outside the engine's actors (before `run`)."""
        self._ready.append((actor, None))

    def kill(self, actor: Actor) -> None:
        """The actor runs no more: its sleeps and computations, and its place among the ready actors or as the
        receiver go."""
        actor.killed = True
        self._ready = [entry for entry in self._ready if entry[0] is not actor]
        if type(actor.host) is Host:  # its actions fail: SimGrid's plugin brings their hosts up to date
            self._cancel_on_hosts(actor)
        self._actions = [action for action in self._actions if getattr(action, "actor", None) is not actor]
        self._orphans.pop(actor, None)
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
                    elif self._orphans:
                        self._over(actor)
                for actor, call in calls:
                    if not actor.killed:
                        self._handlers[type(call)](actor, call)
            if not self._actions or self.stopped:
                return
            self._step()

    def _cancel_on_hosts(self, actor: Actor) -> None:
        """A killed actor's sleeps and computations, cancelled (a failed action's state change)."""
        now = self.now
        for action in self._actions:
            if getattr(action, "actor", None) is not actor:
                continue
            if type(action) is Exec:
                for host in action.hosts:
                    host.touched(now)
                action.release()
            elif type(action) is _Sleep:
                actor.host.touched(now)

    def _over(self, actor: Actor) -> None:
        """An actor's body returned: a computation it stopped waiting for stops too (its task is dropped; its hosts'
        energy is not brought up to date then)."""
        orphan = self._orphans.pop(actor, None)
        if orphan is not None:
            self._actions = [action for action in self._actions if action is not orphan]
            orphan.release()

    def _step(self) -> None:
        """One solver step: the shortest remaining action ends, every other loses as much."""
        step = math.inf
        for action in self._actions:
            if type(action) is _Sleep:
                rest = action.rest
            else:
                if type(action) is Exec and action.hosts:
                    action.solve()
                rest = action.remains / action.rate  # type: ignore[union-attr]
            if rest < step:
                step = rest
        self.now = self.now + step
        ended: list[_Sleep | Comm | Exec] = []
        left: list[_Sleep | Comm | Exec] = []
        for action in self._actions:
            if type(action) is _Sleep:
                action.rest -= step
                if action.rest < TIMING_PRECISION:
                    action.rest = 0.0
                    ended.append(action)
                    continue
            else:
                action.remains -= action.rate * step  # type: ignore[union-attr]
                if action.remains < WORK_PRECISION:  # type: ignore[union-attr]
                    action.remains = 0.0  # type: ignore[union-attr]
                    ended.append(action)
                    continue
            left.append(action)
        self._actions = left
        if self.energy:
            self._touch(ended)
        for action in ended:
            if type(action) is _Sleep:
                if action.exec is None:
                    self._ready.append((action.actor, None))
                elif not action.dead:
                    self._timed_out(action, action.exec)
            elif type(action) is Comm:
                action.done = True
                for waiter in action.waiters:
                    if not waiter.killed:
                        self._ready.append((waiter, action.payload))
            else:
                assert type(action) is Exec
                self._computed(action)

    def _touch(self, ended: list[_Sleep | Comm | Exec]) -> None:
        """SimGrid's energy plugin (`CpuAction::on_state_change`): the hosts of the actions that ended are brought up
        to date, with the load of those actions still counted."""
        now = self.now
        for action in ended:
            if type(action) is Exec:
                for host in action.hosts:
                    host.touched(now)
            elif type(action) is _Sleep:
                if type(action.actor.host) is Host:
                    action.actor.host.touched(now)
            else:
                assert type(action) is Comm
                if type(action.source) is Host:
                    action.source.touched(now)

    def _computed(self, exec: Exec) -> None:
        """A computation ends: its waiter gets False (done), its timeout is dropped (even one ending in this step,
        after it: SimGrid answers the wait once)."""
        exec.done = True
        exec.release()
        timeout = exec.timeout
        if timeout is not None:
            timeout.dead = True
            if timeout.rest > 0:
                self._actions = [action for action in self._actions if action is not timeout]
        if exec.waiter is not None:
            self._ready.append((exec.waiter, False))
        elif self._orphans.get(exec.actor) is exec:
            del self._orphans[exec.actor]

    def _timed_out(self, timeout: _Sleep, exec: Exec) -> None:
        """A wait's timeout ends before its computation: the waiter gets True, the computation goes on."""
        exec.waiter = exec.timeout = None
        self._orphans[timeout.actor] = exec
        self._ready.append((timeout.actor, True))

    # -- simcalls, handled after the sub-round that made them --------------------------------------------

    def _sleep(self, actor: Actor, call: Sleep) -> None:
        self._actions.append(_Sleep(actor, call.seconds))

    def _create(self, actor: Actor, call: Create) -> None:
        self._ready.append((call.actor, None))
        self._ready.append((actor, None))

    def _put_async(self, actor: Actor, call: PutAsync) -> None:
        comm = Comm(call.payload, call.size, actor.message_rate if call.rate is None else call.rate, actor.host)
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

    def _execute(self, actor: Actor, call: Execute) -> None:
        exec = Exec(actor, call.rate)
        self._actions.append(exec)
        self._ready.append((actor, exec))

    def _execute_on(self, actor: Actor, call: ExecuteOn) -> None:
        exec = Exec(actor, 0.0, call.hosts, call.flops)
        for host, flops in zip(call.hosts, call.flops, strict=True):
            host.execs.append((exec, flops))
        self._actions.append(exec)
        self._ready.append((actor, exec))

    def _set_pstate(self, actor: Actor, call: SetPstate) -> None:
        call.host.pstate_now = call.pstate
        call.host.update(self.now)  # (`Host::on_speed_change`)
        self._ready.append((actor, None))

    def _update(self, actor: Actor, call: Update) -> None:
        call.host.touched(self.now)
        self._ready.append((actor, None))

    def _wait_for(self, actor: Actor, call: WaitFor) -> None:
        exec = call.exec
        if exec.done:
            self._ready.append((actor, False))
            return
        exec.waiter = actor
        if call.timeout >= 0:  # SimGrid's wait makes a sleep of the timeout, after the computation began
            exec.timeout = _Sleep(actor, call.timeout, exec)
            self._actions.append(exec.timeout)


class _Green(Actor):
    """An actor whose body is a plain function: it runs in a greenlet and each simcall switches back to the
    engine's loop (`_Actors.call`). `host` is where it runs, as the actors' API names hosts."""

    def __init__(self, body: Callable[..., None], args: tuple[Any, ...], host: object, message_rate: float):
        self._body = body
        self._args = args
        self._greenlet: Any = None
        self.host = host
        self.message_rate = message_rate

    def resume(self, value: Any) -> Simcall | None:
        if self._greenlet is None:  # made here, so that its parent is the engine's loop
            self._greenlet = greenlet(self._run)
            self._greenlet.actor = self
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
        """A message from the calling actor's host, at its route's rate."""
        comm: Comm = self._actors.call(PutAsync(message, size, None))
        return _Comm(self._actors, comm)

    def get(self) -> Any:
        return self._actors.call(Get())


class _ThisActor:
    def __init__(self, actors: _Actors):
        self._actors = actors

    def sleep_for(self, seconds: float) -> None:
        self._actors.call(Sleep(seconds))

    def execute(self, flops: float) -> None:
        """Compute `flops` on the calling actor's host, at its speed (`_Actors.speed_of`), until done. On a `Host`
        (energy runs): at its current power state's speed, the start followed by the energy plugin's update of that
        host (`Exec::on_start`)."""
        actor: _Green = greenlet.getcurrent().actor
        if type(actor.host) is Host:
            action = self._actors.start_exec([actor.host], [flops])
            self._actors.call(WaitFor(action, -1.0))
            return
        compute(self._actors.call, self._actors.speed_of(actor.host) / flops)


def compute(call: Callable[[Simcall], Any], rate: float, timeout: float = -1.0) -> bool:
    """Run one computation of `rate` units per second from the calling actor, as SimGrid's `exec_init`, `start`
    and `wait_for(timeout)` (-1: no limit) do: True when the timeout came first (the computation goes on until the
    actor is over), False when it ended."""
    exec: Exec = call(Execute(rate))
    timed_out: bool = call(WaitFor(exec, timeout))
    return timed_out


class _Handle:
    """An actor as the code that created it sees it."""

    def __init__(self, engine: Engine, actor: Actor):
        self._engine = engine
        self._actor = actor

    def kill(self) -> None:
        self._engine.kill(self._actor)


class _Actors:
    """SimGrid's Python API as Batsim's actors use it (`Actor.create`, `Mailbox.by_name`, `this_actor.sleep_for`
    and `execute`, a communication's `wait`), on `Engine`. `rate_of(host)`: the bytes per second of a message from
    that host to the master; `speed_of(host)`: its flops per second."""

    def __init__(self, engine: Engine, rate_of: Callable[[Any], float], speed_of: Callable[[Any], float]):
        self.engine = engine
        self.rate_of = rate_of
        self.speed_of = speed_of
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
        actor = _Green(body, args, host, self.rate_of(host))
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

    def update(self, host: Host) -> None:
        """The energy plugin's update of a host's energy: a simcall from an actor."""
        if self._loop is None or greenlet.getcurrent() is self._loop:
            host.touched(self.engine.now)
        else:
            self.call(Update(host))

    def start_exec(self, hosts: Sequence[Host], flops: Sequence[float]) -> Exec:
        """A computation's start from the running actor: a simcall, then (on one host) the energy plugin's update of
        that host (`Exec::on_start`, in the actor, after the simcall)."""
        action: Exec = self.call(ExecuteOn(hosts, flops))
        if len(hosts) == 1:
            hosts[0].update(self.engine.now)
        return action


class Computation(NamedTuple):
    """A step of a job that computes: one parallel task of `rate` units (the whole task) per second."""

    rate: float


Step = float | Computation
"""A step of a job: seconds of sleep (`delay`), or a computation."""


def job_steps(profile: Profile, speeds: Sequence[float]) -> list[Step]:
    """A profile's steps on hosts of these speeds (the allocation's, in id order), as Batsim runs them
    (task_execution.cpp): a delay sleeps; a parallel task computes the i-th amount on the i-th host, at the pace of
    the host whose amount takes longest (SimGrid's rate: the smallest speed over flops); a composed profile's steps
    in order, `repeat` times. Communication and I/O are refused (the simgrid model times them)."""
    if isinstance(profile, Delay):
        return [float(profile.seconds)]
    if isinstance(profile, Composed):
        once = [step for part in profile.sequence for step in job_steps(part, speeds)]
        return once * profile.repeat
    flops: Sequence[float]
    if isinstance(profile, ParallelHomogeneous) and profile.comm_bytes <= 0:
        flops = [profile.flops] * len(speeds)
    elif isinstance(profile, Parallel) and not any(profile.comm):
        flops = profile.flops
        if len(flops) != len(speeds):
            raise ClusterSimError(f"a 'parallel' profile of {len(flops)} tasks cannot run on {len(speeds)} hosts "
                                  "(Batsim requires as many hosts as tasks)")
    else:
        raise ClusterSimError(f"the step platform model runs delays and computations, not a "
                              f"{type(profile).__name__} profile that communicates or does I/O (--platform-model "
                              "simgrid times it)")
    rates = [speed / amount for speed, amount in zip(speeds, flops, strict=True) if amount > 0]
    if not rates:
        raise ClusterSimError("the step platform model does not run a parallel task without computation "
                              "(--platform-model simgrid does)")
    return [Computation(min(rates))]


class StepEnergyPlugin:
    """SimGrid's energy plugin as Batsim 4.2 reads it for consumed_energy.csv (export.cpp, machines.cpp), on the step
    engine's hosts: each machine's consumed energy (`sg_host_get_consumed_energy`: a simcall, an `Update`, whenever
    the host's energy is older than the clock), summed in C's `long double` as `EnergyPlugin` sums SimGrid's."""

    def __init__(self, actors: _Actors, hosts: Sequence[Host]):
        self._actors = actors
        self._hosts = hosts
        self._last_date = 0
        self._last_energy = 0

    def _energy(self, hosts: Sequence[Host] | None = None) -> int:
        """The machines' energies read and summed as Batsim does, a `long double` in units of 2**-1074."""
        from clustersim.core.simgrid_execution import _extended, _scaled

        actors, now = self._actors, self._actors.engine.now
        energy = 0
        for host in self._hosts if hosts is None else hosts:
            if host.last_updated < now:
                actors.update(host)
            energy = _extended(energy + _scaled(host.total_energy))
        return energy

    def total(self) -> float:
        """The platform's energy since t=0 as Batsim answers an energy QUERY (the machines' energies summed)."""
        from clustersim.core.simgrid_execution import _double

        return _double(self._energy())

    def machines(self, nodes: Sequence[int]) -> int:
        """Some machines' energy, read and summed as Batsim does (a `long double` in units of 2**-1074)."""
        return self._energy([self._hosts[node] for node in nodes])

    def reading(self, date: float) -> tuple[float, float | None, float]:
        """A consumed_energy.csv row's (energy, epower or None for NA, wattmin) at `date`, read from the calling
        actor as `EnergyPlugin.reading` reads SimGrid's."""
        from clustersim.core.simgrid_execution import _double, _extended, _quotient, _scaled

        energy = self._energy()
        wattmin = 0
        for host in self._hosts:
            wattmin = _extended(wattmin + _scaled(host.ranges[host.pstate_now][1]))
        scaled_date = _scaled(date)
        elapsed = _extended(scaled_date - self._last_date)
        epower = _quotient(_extended(energy - self._last_energy), elapsed) if elapsed > 0 else None
        self._last_date, self._last_energy = scaled_date, energy
        return _double(energy), epower, _double(wattmin)


def power_ranges(text: str) -> list[tuple[float, float, float]]:
    """`wattage_per_state` as SimGrid's energy plugin reads it: per power state (idle, epsilon, slope); with two
    values per state, epsilon is the idle value."""
    ranges = []
    for state in text.split(","):
        values = [float(value) for value in state.split(":")]
        idle = values[0]
        epsilon = values[1] if len(values) == 3 else idle
        ranges.append((idle, epsilon, values[-1] - epsilon))
    return ranges


def computations(profile: Profile, nb_hosts: int) -> list[float | list[float]]:
    """A profile's steps in energy runs: a delay's seconds, or a computation without communication's flops per host
    (solved at each step on the hosts' power states); a composed profile's unrolled."""
    if type(profile) is Delay:
        return [float(profile.seconds)]
    if type(profile) is Composed:
        once = [step for part in profile.sequence for step in computations(part, nb_hosts)]
        return once * profile.repeat
    if type(profile) is ParallelHomogeneous and profile.comm_bytes <= 0 and profile.flops > 0:
        return [[float(profile.flops)] * nb_hosts]
    if type(profile) is Parallel and local_work(profile):
        if len(profile.flops) != nb_hosts:
            raise ClusterSimError(f"a 'parallel' profile of {len(profile.flops)} tasks cannot run on {nb_hosts} "
                                  "hosts (Batsim requires as many hosts as tasks)")
        return [[float(value) for value in profile.flops]]
    raise ClusterSimError(f"the step platform model runs delays and computations, not a {type(profile).__name__} "
                          "profile that communicates, does I/O or computes nothing (--platform-model simgrid times it)")


class StepExecution:
    """Jobs of delays and computations, with Batsim's actors, on SimGrid's solver steps computed in Python (no
    SimGrid).

    `rates`: the bytes per second of the messages to the master host on the platform, by sending host
    (platform/messages.py; one number: every message's). `platform`: the hosts' names and speeds (needed for
    computations and per-host rates). With `energy` the compute hosts are `Host`s in their power states (the
    switching actors set them, computations are solved on them at each step) and SimGrid's energy plugin keeps their
    energy (`energy_plugin`), as Batsim's -E."""

    stepped = True

    def __init__(self, rates: float | MessageRates, platform: Platform | None = None, energy: bool = False):
        if not isinstance(rates, MessageRates):
            rates = MessageRates(rates, {}, rates)
        self._master_rate = rates.master
        self._node_rates: list[float] = []
        """Each node's rate, when the platform is known."""
        missing: list[str] = []
        for node in platform.nodes if platform is not None else ():
            rate = rates.of(node.name)
            if rate is None:
                missing.append(node.name)
            self._node_rates.append(rates.master if rate is None else rate)
        if missing:
            raise InputError("--platform-model", f"the step model does not know how long a message from host(s) "
                             f"{', '.join(missing[:5])} to the master takes (docs/platform-model.md)")
        self._default_rate = rates.default
        self._speeds: dict[int, float] = {}
        """Units whose speed a power state changed (`change_speeds`)."""
        self._platform = platform
        self._engine = Engine()
        self._actors = _Actors(self._engine, self._rate_of, self._speed_of)
        self._running: dict[str, _Handle] = {}
        self._prepared: dict[str, tuple[list[Step], float, int]] = {}
        self._prepared_on_hosts: dict[str, tuple[list[Host], list[float | list[float]], float]] = {}
        self._error: BaseException | None = None
        self._signals = SignalWatch()
        self.on_end: Callable[[str, float, bool], None] | None = None
        """Set by Batsim's actors: a job's executor calls it when the job ends (key, time, walltime reached)."""
        self.on_launched: Callable[[str], None] | None = None
        """Set by Batsim's actors in energy runs: a job's executor calls it first, in its first turn."""
        self._hosts: list[Host] | None = None
        self.energy_plugin: StepEnergyPlugin | None = None
        if energy:
            if platform is None:
                raise ClusterSimError("the step platform model accounts for energy on a platform's hosts: none given")
            self._hosts = [self._host(node) for node in platform.nodes]
            self._engine.energy = True
            self.energy_plugin = StepEnergyPlugin(self._actors, self._hosts)

    def _host(self, node: Node) -> Host:
        speeds_text = node.properties.get("speeds")
        speeds = [float(value) for value in speeds_text.split(",")] if speeds_text else [node.speed]
        watts = node.properties.get("wattage_per_state")
        ranges = power_ranges(watts) if watts else [(0.0, 0.0, 0.0)] * len(speeds)
        pstate = node.power.compute_pstate if node.power is not None else 0
        return Host(self._actors, node.id, node.name, speeds, ranges, pstate, node.cores)

    def _rate_of(self, host: Any) -> float:
        """Bytes per second of a message from an actor on `host` (the master, or a node) to the master."""
        if type(host) is Host:
            host = host.node
        if type(host) is int and self._node_rates:
            return self._node_rates[host]
        if host == self.master or self._default_rate is None:
            return self._master_rate
        return self._default_rate

    def _speed_of(self, host: Any) -> float:
        """Flops per second of a node's host."""
        if type(host) is Host:
            return host.speed
        if self._platform is None or type(host) is not int:
            raise ClusterSimError("the step platform model computes on the platform's nodes only")
        return self._platform.nodes[host].speed

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
        """A node's host, as Batsim's actors name it: its `Host` in energy runs, else its id."""
        return self._hosts[node] if self._hosts is not None else node

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
        """Prepare a job's executor; `launch` creates it, on the job's first host, when the start's message reaches
        the server."""
        job = running.job
        platform = self._platform
        if self._hosts is not None and platform is not None:
            self._prepare_on_hosts(running, platform)
            return None
        if type(job.profile) is Delay:
            steps: list[Step] = [float(job.profile.seconds)]
        else:
            speeds = ([self._speeds.get(unit, platform.unit_speeds[unit]) for unit in running.resources]
                      if platform is not None else [])
            try:
                if not speeds and local_work(job.profile):
                    raise ClusterSimError("the step platform model computes on a platform's hosts: none given")
                steps = job_steps(job.profile, speeds)
            except ClusterSimError as error:
                raise ClusterSimError(f"job '{job.key}': {error}") from None
        host = platform.node_of(running.resources.intervals[0][0]).id if platform is not None else 0
        self._prepared[job.key] = (steps, -1.0 if job.walltime is None else float(job.walltime), host)
        return None

    def _prepare_on_hosts(self, running: RunningJob, platform: Platform) -> None:
        """Energy runs: the job's executor will run on its first `Host` (`_compute_within`)."""
        job = running.job
        hosts = [self._hosts[node] for node in dict.fromkeys(  # type: ignore[index]
            platform.node_of(unit).id for unit in running.resources)]
        try:
            tasks = computations(job.profile, len(hosts))
        except ClusterSimError as error:
            raise ClusterSimError(f"job '{job.key}': {error}") from None
        self._prepared_on_hosts[job.key] = (hosts, tasks, -1.0 if job.walltime is None else float(job.walltime))

    def is_prepared(self, key: str) -> bool:
        return key in self._prepared or key in self._prepared_on_hosts

    def launch(self, key: str) -> None:
        if key in self._prepared_on_hosts:
            hosts, tasks, limit = self._prepared_on_hosts.pop(key)
            self._running[key] = self._actors.create(f"job {key}", hosts[0], self._compute_within, key, hosts, tasks,
                                                     limit)
            return
        steps, walltime, host = self._prepared.pop(key)
        self._running[key] = self._actors.create(f"job {key}", host, self._execute_within, key, steps, walltime)

    def _compute_within(self, key: str, hosts: list[Host], steps: list[float | list[float]], walltime: float) -> None:
        """Batsim's executor in energy runs, on the job's first host, as the simgrid model's
        (`SimgridExecution._execute_within`): it reads the energy first (`on_launched`), then sleeps the delays and
        waits for each computation within the time left of the walltime; a computation that reaches the walltime
        goes on until the executor is over."""
        actors = self._actors
        if self.on_launched is not None:
            self.on_launched(key)
        remaining, reached = walltime, False
        for step in steps:
            if type(step) is float:
                if remaining < 0 or step < remaining:
                    actors.call(Sleep(step))
                    if remaining > 0:
                        remaining = remaining - step
                    continue
                actors.call(Sleep(remaining))
                reached = True
                break
            assert type(step) is list
            before = self._engine.now
            action = actors.start_exec(hosts, step)
            if actors.call(WaitFor(action, remaining)):
                reached = True
                break
            if remaining >= 0:
                remaining = remaining - (self._engine.now - before)
        self._running.pop(key, None)
        assert self.on_end is not None
        self.on_end(key, self._engine.now, reached)

    def _execute_within(self, key: str, steps: list[Step], walltime: float) -> None:
        """Batsim's executor (jobs_execution.cpp, task_execution.cpp): each step within the time left of the
        walltime (-1: none). A delay not shorter than that time sleeps it and reaches the walltime; a computation
        is waited for at most that time (SimGrid's `wait_for`): when the timeout comes first, the walltime is
        reached and the computation goes on until the executor is over (after its JOB_COMPLETED message), as
        Batsim's does not cancel it."""
        call = self._actors.call
        remaining, reached = walltime, False
        for step in steps:
            if type(step) is float:
                if remaining < 0 or step < remaining:
                    call(Sleep(step))
                    if remaining > 0:
                        remaining = remaining - step
                    continue
                call(Sleep(remaining))
                reached = True
                break
            assert type(step) is Computation
            if remaining < 0:
                compute(call, step.rate)
                continue
            before = self._engine.now
            if compute(call, step.rate, remaining):
                reached = True
                break
            remaining = remaining - (self._engine.now - before)
        self._running.pop(key, None)
        assert self.on_end is not None
        self.on_end(key, self._engine.now, reached)

    def advance(self, until: float | None) -> Sequence[tuple[float, str]]:
        return ()  # Batsim's actors report the ends (`on_end`)

    def cancel(self, key: str) -> None:
        self._prepared.pop(key, None)
        self._prepared_on_hosts.pop(key, None)
        handle = self._running.pop(key, None)
        if handle is not None:
            handle.kill()

    def change_speeds(self, now: float, speeds: Mapping[int, float], pstate: int,
                      running: Mapping[str, RunningJob]) -> Sequence[tuple[str, float]]:
        """Jobs started from now on compute at the new speeds; a computing job already running there is refused
        (SimGrid would re-time its computation: --platform-model simgrid does). In energy runs the hosts take the
        power state (a simcall each, as the simgrid model's), and the solver re-times the computations there."""
        if self._hosts is not None and self._platform is not None:
            for node in dict.fromkeys(self._platform.node_of(unit).id for unit in speeds):
                host = self._hosts[node]
                if host.pstate_now != pstate:
                    host.pstate = pstate
            return ()
        for key, job in running.items():
            if not only_delays(job.job.profile) and any(unit in speeds for unit in job.resources):
                raise ClusterSimError(f"the step platform model does not change the speed of the hosts of job "
                                      f"'{key}', which computes (--platform-model simgrid does)")
        self._speeds.update(speeds)
        return ()

