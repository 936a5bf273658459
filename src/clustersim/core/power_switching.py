"""Switching nodes off and on, and between computation power states: validated power decisions, transitions in
simulated time, energy hooks.

The core owns this state change like any other: a node switching off leaves the free units at once; a node
switching on joins them when its transition is over (a NODE_SWITCHED event), and the decision process is told.
A change of computation power state (DVFS) is immediate: the node's speed and watts change at once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from clustersim.core.decisions import Decision, SetPState, SwitchOff, SwitchOn
from clustersim.core.energy_meter import EnergyMeter
from clustersim.core.engine import EventClass
from clustersim.core.events import NodesSwitched
from clustersim.core.nodes import NodeState
from clustersim.core.state import ClusterState
from clustersim.errors import DecisionError
from clustersim.platform.power_model import SleepState
from clustersim.workload.profiles import needs_speed


class Switching:
    """Nodes of one decision switching on or off together, to the end of their transition (a NODE_SWITCHED event).

    `offset` and `born` serve Batsim's message timing (the core's delivery): Batsim starts one switching actor per
    node when the decision reaches its server, and each actor tells the server it is done with a message of its
    own, posted at the transition's end plus the message at which the decision arrived (`offset`); `born` orders
    the first node's actor among the actors that began to wait (the others follow it, in node order)."""

    __slots__ = ("born", "finished", "nodes", "offset", "on")

    def __init__(self, nodes: tuple[int, ...], on: bool):
        self.nodes = nodes
        self.on = on
        self.offset = 0
        self.born = 0
        self.finished = False
        """The nodes are in their new state, the server has not heard of it yet (`PowerSwitcher.finish`)."""


class Clock(Protocol):
    """What the switcher needs of the event queue: the time, and scheduling the end of transitions."""

    @property
    def now(self) -> float: ...

    def push(self, time: float, kind: EventClass, payload: Switching) -> None: ...


class PowerSwitcher:
    """Applies SwitchOff/SwitchOn decisions to the cluster state and completes their transitions."""

    def __init__(
        self,
        state: ClusterState,
        queue: Clock,
        meter: EnergyMeter | None,
        speeds_changed: Callable[[dict[int, float], int], None] | None = None,
    ):
        """`speeds_changed(unit speeds, pstate)` is told when waking nodes compute at another speed."""
        self._state = state
        self._queue = queue
        self._meter = meter
        self._speeds_changed = speeds_changed
        self._waking_into: dict[int, tuple[int, float]] = {}
        """Node -> the computation power state it wakes into and its speed (a SwitchOn that names one)."""
        self.started: list[Switching] = []
        """The transitions started since the core last took them (it times their messages)."""

    def _sleep_state(self, decision: Decision, node: int) -> SleepState:
        nodes = self._state.nodes
        if nodes is None:
            raise DecisionError(decision, "power management is off for this run (no node states are kept)")
        if not 0 <= node < len(self._state.platform.nodes):
            raise DecisionError(decision, f"there is no node {node}")
        power = self._state.platform.nodes[node].power
        if power is None or power.sleep is None:
            raise DecisionError(decision, f"node {node} ('{self._state.platform.nodes[node].name}') has no sleep state")
        return power.sleep

    def switch_off(self, d: SwitchOff) -> None:
        self._switch(d, NodeState.IDLE, NodeState.SWITCHING_OFF, on=False)

    def switch_on(self, d: SwitchOn) -> None:
        self._switch(d, NodeState.SLEEPING, NodeState.SWITCHING_ON, on=True)

    def _switch(self, d: SwitchOff | SwitchOn, required: NodeState, state: NodeState, on: bool) -> None:
        """Check the decision, then start transitions; nodes that take equally long finish together, as one event."""
        switched = d.nodes
        sleep_states = [self._sleep_state(d, node) for node in switched]
        nodes = self._state.nodes
        assert nodes is not None
        for node in switched:
            if nodes.state(node) is not required:
                raise DecisionError(d, f"node {node} is {nodes.state(node).label}; only {required.label} nodes can "
                                       f"switch {'on' if on else 'off'}")
        if len(set(switched)) != len(switched):
            raise DecisionError(d, "a node is listed twice")
        transitions = [sleep.switch_on if on else sleep.switch_off for sleep in sleep_states]
        if isinstance(d, SwitchOn) and d.pstate is not None:
            for node in switched:
                self._waking_into[node] = (d.pstate, self._computation_speed(d, node, d.pstate))
        now = self._queue.now
        if self._meter is not None and switched:
            self._meter.switches_requested(now, switched, on)
        ending: dict[float, list[int]] = {}
        for node, transition in zip(switched, transitions, strict=True):
            old = nodes.move(node, state, now)
            if not on:
                self._state.free = self._state.free - nodes.units(node)
            if self._meter is not None:
                self._meter.node_changed(now, node, old, state)
            ending.setdefault(now + transition.seconds, []).append(node)
        if self._meter is not None and switched:
            self._meter.states_changed(now)
        for end, group in ending.items():
            switching = Switching(tuple(group), on)
            self.started.append(switching)
            self._queue.push(end, EventClass.NODE_SWITCHED, switching)

    def finish(self, switching: Switching) -> None:
        """The nodes' switches are over but the server has not heard of it yet: Batsim's switching actor moves
        its machine to its new state (and power state) before it tells the server (pstate.cpp), so the counts of
        machines per state written at that instant include them. Their units become free when the server hears
        of it (`switched`)."""
        if switching.on:
            self._wake_into(switching.nodes)
        self._move(switching, free=False)
        switching.finished = True

    def switched(self, switching: Switching) -> NodesSwitched:
        """Transitions are over: nodes are asleep, or on and idle with their units free."""
        switched, on = switching.nodes, switching.on
        moved = switching.finished
        if on and not moved:
            self._wake_into(switched)
        if self._meter is not None:
            self._meter.switches_done(self._queue.now, switched, on, moved)
        if not moved:
            self._move(switching, free=True)
        elif on:
            nodes = self._state.nodes
            assert nodes is not None
            for node in switched:
                self._state.free = self._state.free | nodes.units(node)
        if self._meter is not None:
            self._meter.states_changed(self._queue.now)
        return NodesSwitched(switched, on)

    def _move(self, switching: Switching, free: bool) -> None:
        """The nodes take the state their switch leads to (asleep, or on and idle), with their units when `free`."""
        nodes = self._state.nodes
        assert nodes is not None
        now = self._queue.now
        state = NodeState.IDLE if switching.on else NodeState.SLEEPING
        for node in switching.nodes:
            old = nodes.move(node, state, now)
            if free and switching.on:
                self._state.free = self._state.free | nodes.units(node)
            if self._meter is not None:
                self._meter.node_changed(now, node, old, state)

    def set_pstate(self, d: SetPState) -> dict[int, float]:
        """Check a change of computation power state and account for its energy; returns the new speed of each
        unit of the nodes (the core gives it to the execution model, which re-times their jobs)."""
        nodes = self._state.nodes
        if nodes is None:
            raise DecisionError(d, "power management is off for this run (no node states are kept)")
        platform = self._state.platform
        if len(set(d.nodes)) != len(d.nodes):
            raise DecisionError(d, "a node is listed twice")
        speeds: dict[int, float] = {}
        for node in d.nodes:
            if not 0 <= node < len(platform.nodes):
                raise DecisionError(d, f"there is no node {node}")
            state = self._computation_speed(d, node, d.pstate)
            if nodes.state(node) not in (NodeState.IDLE, NodeState.COMPUTING):
                raise DecisionError(d, f"node {node} is {nodes.state(node).label}; only nodes that are on (idle or "
                                       "computing) change computation power state")
            for unit in platform.units_of(node):
                speeds[unit] = state
        if self._meter is not None:
            computing = dict.fromkeys(d.nodes, 0)
            for running in self._state.running.values():
                if needs_speed(running.job.profile):
                    for node, count in nodes.split(running.resources):
                        if node in computing:
                            computing[node] += count
            self._meter.pstate_changed(self._queue.now, d.nodes, d.pstate, [computing[n] for n in d.nodes])
        return speeds

    def _computation_speed(self, d: Decision, node: int, pstate: int) -> float:
        """The speed of a node's computation power state; refused when it has no such state."""
        platform = self._state.platform
        power = platform.nodes[node].power
        state = power.computation(pstate) if power is not None else None
        if state is None:
            known = ", ".join(str(n) for n, _ in power.computation_states) if power is not None else ""
            raise DecisionError(d, f"node {node} ('{platform.nodes[node].name}') has no computation power state "
                                   f"{pstate} (its computation power states: {known or 'none declared'})")
        return state.speed

    def waking_into(self, node: int) -> int | None:
        """The computation power state a node switching on was asked to wake into, if any."""
        waking = self._waking_into.get(node)
        return waking[0] if waking is not None else None

    def _wake_into(self, nodes: tuple[int, ...]) -> None:
        """Nodes done switching on that were asked for a computation power state take it now."""
        by_pstate: dict[int, list[int]] = {}
        speeds: dict[int, dict[int, float]] = {}
        platform = self._state.platform
        for node in nodes:
            waking = self._waking_into.pop(node, None)
            if waking is not None:
                pstate, speed = waking
                by_pstate.setdefault(pstate, []).append(node)
                speeds.setdefault(pstate, {}).update(dict.fromkeys(platform.units_of(node), speed))
        for pstate, group in by_pstate.items():
            if self._meter is not None:
                self._meter.waking_into(group, pstate)
            if self._speeds_changed is not None:
                self._speeds_changed(speeds[pstate], pstate)
