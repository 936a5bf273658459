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

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from greenlet import greenlet

from clustersim.core.interrupts import SignalWatch
from clustersim.core.state import RunningJob
from clustersim.errors import ClusterSimError
from clustersim.platform.model import Node, Platform
from clustersim.workload.profiles import Composed, Delay, Parallel, ParallelHomogeneous, Profile

TIMING_PRECISION = 1e-9
"""SimGrid's `precision/timing`: a sleep's rest below it is 0."""
WORK_PRECISION = 1e-5 * 1e-9
"""`precision/work-amount` times `precision/timing`: a message's remaining bytes below it are 0."""


class Actor:
    """Something the engine runs: `resume` runs it until its next simcall, which it returns (None: it is over)."""

    killed = False
    host: Any = None
    """The host it runs on: a `Host` (a compute host, whose energy SimGrid's plugin keeps), else the master."""

    def resume(self, value: Any) -> Simcall | None:
        raise NotImplementedError


class Comm:
    """A message: posted by `put_async`, started when a receiver takes it, done when its bytes are sent."""

    __slots__ = ("done", "payload", "rate", "remains", "size", "source", "waiters")

    def __init__(self, payload: Any, size: float, rate: float, source: Any = None):
        self.payload = payload
        self.source = source
        """The sender's host (SimGrid's ptask_L07 communication is an action on both hosts' CPUs)."""
        self.size = size
        self.rate = rate
        self.remains = -1.0
        """Bytes left; -1 while posted and not yet received."""
        self.done = False
        self.waiters: list[Actor] = []


class _Sleep:
    __slots__ = ("actor", "exec", "rest")

    def __init__(self, actor: Actor, rest: float, exec: Exec | None = None):
        self.actor = actor
        self.rest = rest
        self.exec = exec
        """For a wait's timeout: the execution waited for (the actor wakes with False if it is not done)."""


class Exec:
    """A parallel task (SimGrid's ptask_L07 action, no communication): `flops[i]` on `hosts[i]`. Its work is 1 and
    its rate the solver's value, the slowest host's speed over its flops; it ends when its work is below 1e-14."""

    __slots__ = ("done", "flops", "hosts", "rate", "remains", "timer", "waiter")

    def __init__(self, hosts: Sequence[Host], flops: Sequence[float]):
        self.hosts = hosts
        self.flops = flops
        self.remains = 1.0
        self.rate = 0.0
        """The value of its variable at the last solve (0 before the first: it loads no CPU until then)."""
        self.done = False
        self.waiter: Actor | None = None
        self.timer: _Sleep | None = None

    def solve(self) -> None:
        rate = -1.0
        for host, flops in zip(self.hosts, self.flops, strict=True):
            if flops > 0:
                value = host.speed / flops
                rate = value if rate < 0 or value < rate else rate
        self.rate = rate if rate > 0 else 0.0


class Host:
    """A compute host as Batsim's actors use it, with what SimGrid's energy plugin keeps of it (host_energy.cpp,
    SimGrid 3.32): the energy up to `last_updated`, in the power state `saved_pstate` seen then.

    Setting `pstate` is a simcall (s4u `Host::set_pstate`), which brings the energy up to date (`on_speed_change`)."""

    __slots__ = ("_actors", "cores", "execs", "last_updated", "name", "pstate_now", "ranges", "saved_pstate",
                 "speeds", "total_energy")

    def __init__(self, actors: _Actors, name: str, speeds: Sequence[float],
                 ranges: Sequence[tuple[float, float, float]], pstate: int, cores: int = 1):
        self._actors = actors
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
        """The executions under way on it, with their flops here: its load."""

    @property
    def speed(self) -> float:
        return self.speeds[self.pstate_now]

    @property
    def pstate(self) -> int:
        return self.pstate_now

    @pstate.setter
    def pstate(self, value: int) -> None:
        self._actors.call(SetPstate(self, value))

    def update(self, now: float) -> None:
        """HostEnergy::update: the energy since the last update at the power of the power state saved then and of
        the load now; then the power state is saved again."""
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
    """Post a message of `size` bytes to the server's mailbox, sent at `rate` bytes per second once received."""

    payload: Any
    size: float
    rate: float


class Wait(NamedTuple):
    comm: Comm


class Get(NamedTuple):
    pass


class SetPstate(NamedTuple):
    host: Host
    pstate: int


class Update(NamedTuple):
    """The energy plugin's simcall: a host's energy read when it is older than the clock."""

    host: Host


class StartExec(NamedTuple):
    hosts: Sequence[Host]
    flops: Sequence[float]


class WaitExec(NamedTuple):
    """Wait for an execution, at most `timeout` seconds (< 0: no timeout); the answer says whether it ended."""

    exec: Exec
    timeout: float


Simcall = Sleep | Create | PutAsync | Wait | Get | SetPstate | Update | StartExec | WaitExec


class Engine:
    """Sub-rounds of actors, their simcalls, and SimGrid's steps over sleeps and messages to one mailbox."""

    def __init__(self) -> None:
        self.now = 0.0
        self.stopped = False
        self._ready: list[tuple[Actor, Any]] = []
        self._actions: list[_Sleep | Comm | Exec] = []
        self._posted: list[Comm] = []
        """The mailbox's messages that no receiver took yet, in the order they were posted."""
        self._receiver: Actor | None = None
        """An actor waiting in `get` for a message."""
        self.running: Actor | None = None
        """The actor resumed last: the one that runs, while an actor runs."""
        self._handlers: dict[type, Callable[[Actor, Any], None]] = {
            Sleep: self._sleep, Create: self._create, PutAsync: self._put_async, Wait: self._wait, Get: self._get,
            SetPstate: self._set_pstate, Update: self._update, StartExec: self._start_exec, WaitExec: self._wait_exec,
        }

    @property
    def clock(self) -> float:
        """The clock, as SimGrid's engine names it."""
        return self.now

    def create(self, actor: Actor) -> None:
        """An actor made ready from outside the engine's actors (before `run`)."""
        self._ready.append((actor, None))

    def kill(self, actor: Actor) -> None:
        """The actor runs no more: its sleep and its place among the ready actors or as the receiver go; the
        execution it waits for is cancelled (its hosts' energy brought up to date, as a failed action's)."""
        actor.killed = True
        self._ready = [entry for entry in self._ready if entry[0] is not actor]
        kept: list[_Sleep | Comm | Exec] = []
        for action in self._actions:
            if type(action) is _Sleep and action.actor is actor:
                if type(action.actor.host) is Host:
                    action.actor.host.touched(self.now)
                continue
            if type(action) is Exec and action.waiter is actor:
                for host in action.hosts:
                    host.touched(self.now)
                self.drop(action)
                continue
            kept.append(action)
        self._actions = kept
        if self._receiver is actor:
            self._receiver = None

    def drop(self, action: Exec) -> None:
        """An execution no longer loads its hosts (SimGrid frees its variable; no energy update)."""
        action.done = True
        if action in self._actions:
            self._actions.remove(action)
        for host in action.hosts:
            host.execs = [entry for entry in host.execs if entry[0] is not action]

    def run(self) -> None:
        """Run the actors until none can run and no action is under way, or `stopped` is set."""
        while not self.stopped:
            while self._ready and not self.stopped:
                ran, self._ready = self._ready, []
                calls: list[tuple[Actor, Simcall]] = []
                for actor, value in ran:
                    if actor.killed:
                        continue
                    self.running = actor
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
        step = math.inf
        for action in self._actions:
            if type(action) is _Sleep:
                rest = action.rest
            elif type(action) is Comm:
                rest = action.remains / action.rate
            else:
                assert type(action) is Exec
                action.solve()
                rest = action.remains / action.rate if action.rate > 0 else (0.0 if action.remains <= 0 else math.inf)
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
                assert type(action) is Comm or type(action) is Exec
                action.remains -= action.rate * step
                if action.remains < WORK_PRECISION:
                    action.remains = 0.0
                    ended.append(action)
                    continue
            left.append(action)
        self._actions = left
        now = self.now
        for action in ended:  # the energy plugin (`CpuAction::on_state_change`), the ended actions' load counted
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
        for action in ended:
            if type(action) is _Sleep:
                if action.exec is None:
                    self._ready.append((action.actor, None))
                elif not action.exec.done and action.exec.waiter is action.actor:
                    action.exec.waiter = action.exec.timer = None
                    self._ready.append((action.actor, False))
            elif type(action) is Exec:
                action.done = True
                for host in action.hosts:
                    host.execs = [entry for entry in host.execs if entry[0] is not action]
                if action.timer is not None:
                    timer, action.timer = action.timer, None
                    if timer in self._actions:
                        self._actions.remove(timer)
                if action.waiter is not None and not action.waiter.killed:
                    self._ready.append((action.waiter, True))
                action.waiter = None
            else:
                assert type(action) is Comm
                action.done = True
                for waiter in action.waiters:
                    if not waiter.killed:
                        self._ready.append((waiter, action.payload))

    # -- simcalls, handled after the sub-round that made them --------------------------------------------

    def _sleep(self, actor: Actor, call: Sleep) -> None:
        self._actions.append(_Sleep(actor, call.seconds))

    def _set_pstate(self, actor: Actor, call: SetPstate) -> None:
        call.host.pstate_now = call.pstate
        call.host.update(self.now)  # (`Host::on_speed_change`)
        self._ready.append((actor, None))

    def _update(self, actor: Actor, call: Update) -> None:
        call.host.touched(self.now)
        self._ready.append((actor, None))

    def _start_exec(self, actor: Actor, call: StartExec) -> None:
        action = Exec(call.hosts, call.flops)
        if all(flops <= 0 for flops in call.flops):
            action.remains = 0.0
        for host, flops in zip(call.hosts, call.flops, strict=True):
            host.execs.append((action, flops))
        self._actions.append(action)
        self._ready.append((actor, action))

    def _wait_exec(self, actor: Actor, call: WaitExec) -> None:
        action = call.exec
        if action.done:
            self._ready.append((actor, True))
            return
        action.waiter = actor
        if call.timeout >= 0:
            action.timer = _Sleep(actor, call.timeout, action)
            self._actions.append(action.timer)

    def _create(self, actor: Actor, call: Create) -> None:
        self._ready.append((call.actor, None))
        self._ready.append((actor, None))

    def _put_async(self, actor: Actor, call: PutAsync) -> None:
        comm = Comm(call.payload, call.size, call.rate, actor.host)
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

    def __init__(self, body: Callable[..., None], args: tuple[Any, ...], host: Any = None):
        self._body = body
        self._args = args
        self.host = host
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

    def execute(self, flops: float) -> None:
        """s4u's `this_actor::execute` on the actor's host: the start (a simcall, then the energy plugin's update of
        that host, `Exec::on_start`), then the wait."""
        actors = self._actors
        host = actors.current_host()
        assert type(host) is Host
        action = actors.start_exec([host], [flops])
        actors.call(WaitExec(action, -1.0))


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

    def current_host(self) -> Any:
        """The host of the actor that runs now."""
        running = self.engine.running
        return running.host if running is not None else None

    def update(self, host: Host) -> None:
        """The energy plugin's update of a host's energy: a simcall from an actor."""
        if self._loop is None or greenlet.getcurrent() is self._loop:
            host.touched(self.engine.now)
        else:
            self.call(Update(host))

    def start_exec(self, hosts: Sequence[Host], flops: Sequence[float]) -> Exec:
        """An execution's start, from the running actor: a simcall, then (on one host) the energy plugin's update of
        that host (`Exec::on_start`, in the actor, after the simcall)."""
        action: Exec = self.call(StartExec(hosts, flops))
        if len(hosts) == 1:
            hosts[0].update(self.engine.now)
        return action

    def create(self, name: str, host: object, body: Callable[..., None], *args: Any) -> _Handle:
        actor = _Green(body, args, host)
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


def computations(profile: Profile, nb_hosts: int) -> list[float | list[float]] | None:
    """A profile's steps when each is a delay (seconds) or a computation without communication (flops per host), a
    composed profile's unrolled; else None."""
    if type(profile) is Delay:
        return [float(profile.seconds)]
    if type(profile) is ParallelHomogeneous:
        return [[float(profile.flops)] * nb_hosts] if profile.comm_bytes <= 0 else None
    if type(profile) is Parallel:
        if len(profile.flops) != nb_hosts or any(value > 0 for value in profile.comm):
            return None
        return [[float(value) for value in profile.flops]]
    if type(profile) is Composed:
        once: list[float | list[float]] = []
        for part in profile.sequence:
            steps = computations(part, nb_hosts)
            if steps is None:
                return None
            once += steps
        return once * profile.repeat
    return None


class StepExecution:
    """Jobs of delay profiles, with Batsim's actors, on SimGrid's solver steps computed in Python (no SimGrid).

    `bandwidth` is the bytes per second of every message to the master host on the platform
    (platform/messages.py). With `platform` its compute hosts are hosts of the engine: jobs may then also compute
    without communicating (parallel tasks at the hosts' speeds in their power states), switching actors compute
    their 1 flop, and with `energy` SimGrid's energy plugin keeps the hosts' energy (`energy_plugin`)."""

    stepped = True

    def __init__(self, bandwidth: float, platform: Platform | None = None, energy: bool = False):
        self._engine = Engine()
        self._actors = _Actors(self._engine, bandwidth)
        self._running: dict[str, _Handle] = {}
        self._prepared: dict[str, tuple[Any, list[Any], float]] = {}
        self._error: BaseException | None = None
        self._signals = SignalWatch()
        self.on_end: Callable[[str, float, bool], None] | None = None
        """Set by Batsim's actors: a job's executor calls it when the job ends (key, time, walltime reached)."""
        self.on_launched: Callable[[str], None] | None = None
        """Set by Batsim's actors in energy runs: a job's executor calls it first, in its first turn."""
        self._hosts: list[Host] | None = None
        self._units: list[Host] = []
        if platform is not None:
            self._hosts = [self._host(node) for node in platform.nodes]
            self._units = [self._hosts[platform.node_of(unit).id] for unit in range(platform.nb_resources)]
        self.energy_plugin = StepEnergyPlugin(self._actors, self._hosts) if energy and self._hosts else None

    def _host(self, node: Node) -> Host:
        speeds_text = node.properties.get("speeds")
        speeds = [float(value) for value in speeds_text.split(",")] if speeds_text else [node.speed]
        watts = node.properties.get("wattage_per_state")
        ranges = power_ranges(watts) if watts else [(0.0, 0.0, 0.0)] * len(speeds)
        pstate = node.power.compute_pstate if node.power is not None else 0
        return Host(self._actors, node.name, speeds, ranges, pstate, node.cores)

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
        """A node's host, as Batsim's actors name it (without a platform, the node: messages do not depend on it)."""
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
        """Prepare a job's executor; `launch` creates it when the start's message reaches the server."""
        key, walltime = running.job.key, running.job.walltime
        limit = -1.0 if walltime is None else float(walltime)
        if self._hosts is None:
            steps = delays(running.job.profile)
            if steps is None:
                raise ClusterSimError(f"the step platform model runs delay profiles only, not job "
                                      f"'{key}'s {type(running.job.profile).__name__}")
            self._prepared[key] = (None, list(steps), limit)
            return None
        hosts = [self._units[unit] for unit in running.resources]
        tasks = computations(running.job.profile, len(hosts))
        if tasks is None:
            raise ClusterSimError(f"the step platform model runs delays and computations without communication, not "
                                  f"job '{key}'s {type(running.job.profile).__name__}")
        self._prepared[key] = (hosts, tasks, limit)
        return None

    def is_prepared(self, key: str) -> bool:
        return key in self._prepared

    def launch(self, key: str) -> None:
        hosts, steps, walltime = self._prepared.pop(key)
        if hosts is None:
            self._running[key] = self._actors.create(f"job {key}", None, self._execute_within, key, steps, walltime)
        else:
            self._running[key] = self._actors.create(f"job {key}", hosts[0], self._compute_within, key, hosts, steps,
                                                     walltime)

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

    def _compute_within(self, key: str, hosts: list[Host], steps: list[float | list[float]], walltime: float) -> None:
        """Batsim's executor on the job's first host, as the simgrid model's (`SimgridExecution._execute_within`):
        delays are sleeps, computations parallel tasks waited for within the time left of the walltime. A task
        that reaches the walltime is not cancelled: it loads its hosts until the executor is over."""
        actors = self._actors
        if self.on_launched is not None:
            self.on_launched(key)
        remaining, reached = walltime, False
        left: Exec | None = None
        for step in steps:
            if type(step) is float:
                if remaining < 0 or step < remaining:
                    actors.this_actor.sleep_for(step)
                    if remaining > 0:
                        remaining = remaining - step
                    continue
                actors.this_actor.sleep_for(remaining)
                reached = True
                break
            assert type(step) is list
            before = self._engine.now
            action = actors.start_exec(hosts, step)
            if not actors.call(WaitExec(action, remaining)):
                reached, left = True, action
                break
            if remaining >= 0:
                remaining = remaining - (self._engine.now - before)
        self._running.pop(key, None)
        assert self.on_end is not None
        self.on_end(key, self._engine.now, reached)
        if left is not None:
            self._engine.drop(left)

    def advance(self, until: float | None) -> Sequence[tuple[float, str]]:
        return ()  # Batsim's actors report the ends (`on_end`)

    def cancel(self, key: str) -> None:
        self._prepared.pop(key, None)
        handle = self._running.pop(key, None)
        if handle is not None:
            handle.kill()

    def change_speeds(self, now: float, speeds: Mapping[int, float], pstate: int,
                      running: object) -> Sequence[tuple[str, float]]:
        """A change of computation power state (DVFS) sets the hosts' power states, as the simgrid model does: the
        solver re-times the computations there at its next step."""
        if self._units:
            for unit in speeds:
                host = self._units[unit]
                if host.pstate_now != pstate:
                    host.pstate = pstate
        return ()

