"""Power policies by name: which idle nodes to switch off, which sleeping nodes to switch on.

They are separate from the scheduling policy and combine with any of them (see `powered.py`). A power-off
policy proposes idle nodes, best first; a power-on policy proposes sleeping nodes. Neither sees the other;
the composition keeps them from undoing each other.
"""

from __future__ import annotations

import inspect
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from clustersim.core.events import Event, JobSubmitted
from clustersim.core.nodes import NodeState
from clustersim.core.state import ClusterView, NodesView
from clustersim.errors import InputError
from clustersim.plugins import Registry
from clustersim.policies.power.prediction import ArrivalHistory, gamma_arrivals_quantile, poisson_quantile


@dataclass
class Proposal:
    """Nodes a power policy wants to switch, and when it wants to be asked again (if ever)."""

    nodes: list[int] = field(default_factory=list)
    call_at: float | None = None


def _nodes(view: ClusterView) -> NodesView:
    nodes = view.nodes
    assert nodes is not None, "power policies run with power management on"
    return nodes


def _idle_longest_first(view: ClusterView) -> list[int]:
    return list(_nodes(view).members(NodeState.IDLE))


class PowerOffPolicy:
    """Proposes idle nodes to switch off."""

    name = "power-off"

    def propose(self, now: float, events: Sequence[Event], view: ClusterView) -> Proposal:
        raise NotImplementedError


class Never(PowerOffPolicy):
    """Keep every node on: the baseline."""

    def propose(self, now: float, events: Sequence[Event], view: ClusterView) -> Proposal:
        return Proposal()


class Always(PowerOffPolicy):
    """Switch a node off as soon as it is idle."""

    def propose(self, now: float, events: Sequence[Event], view: ClusterView) -> Proposal:
        return Proposal(_idle_longest_first(view))


class IdleTimeout(PowerOffPolicy):
    """Switch a node off once it has been idle for `timeout` seconds."""

    def __init__(self, timeout: float = 600.0):
        self.timeout = timeout

    def propose(self, now: float, events: Sequence[Event], view: ClusterView) -> Proposal:
        proposal = Proposal()
        for node, since in _nodes(view).members(NodeState.IDLE).items():  # idle the longest first
            if now - since < self.timeout:
                proposal.call_at = since + self.timeout
                break
            proposal.nodes.append(node)
        return proposal


class RandomOff(PowerOffPolicy):
    """When a node becomes idle, switch it off with probability `p` (a seeded Bernoulli draw)."""

    def __init__(self, p: float = 0.5, *, seed: int = 0):
        self.p = p
        self.rng = random.Random(seed)

    def propose(self, now: float, events: Sequence[Event], view: ClusterView) -> Proposal:
        newly_idle = [n for n, since in _nodes(view).members(NodeState.IDLE).items() if since == now]
        return Proposal([n for n in newly_idle if self.rng.random() < self.p])


class LoadThreshold(PowerOffPolicy):
    """While the load (busy units / units on) is under `threshold`, switch idle nodes off."""

    def __init__(self, threshold: float = 0.5):
        self.threshold = threshold

    def propose(self, now: float, events: Sequence[Event], view: ClusterView) -> Proposal:
        nodes = _nodes(view)
        on_units = nodes.units_in(NodeState.IDLE) + nodes.units_in(NodeState.COMPUTING)
        busy = on_units - len(view.free)
        chosen = []
        for node in _idle_longest_first(view):
            if on_units == 0 or busy / on_units >= self.threshold:
                break
            chosen.append(node)
            on_units -= len(nodes.units(node))
        return Proposal(chosen)


class SecurityMargin(PowerOffPolicy):
    """Keep at least `margin` (a share of the platform) of the units on and free; switch the rest off."""

    def __init__(self, margin: float = 0.1):
        self.margin = margin

    def propose(self, now: float, events: Sequence[Event], view: ClusterView) -> Proposal:
        keep = math.ceil(self.margin * view.platform.nb_resources)
        return Proposal(_beyond(view, keep))


def _beyond(view: ClusterView, keep_free: int) -> list[int]:
    """Idle nodes (longest idle first) that can go while at least `keep_free` units stay on and free."""
    nodes = _nodes(view)
    free = len(view.free)
    chosen = []
    for node in _idle_longest_first(view):
        units = len(nodes.units(node))
        if free - units < keep_free:
            continue
        chosen.append(node)
        free -= units
    return chosen


class _Predictive(PowerOffPolicy):
    """Keep on the capacity that the arrivals predicted before a sleeping node could be back would need."""

    def __init__(self, quantile: float = 0.95, window: int = 100):
        self.quantile = quantile
        self.history = ArrivalHistory(window)

    def arrivals(self, horizon: float) -> int:
        raise NotImplementedError

    def propose(self, now: float, events: Sequence[Event], view: ClusterView) -> Proposal:
        for event in events:
            if isinstance(event, JobSubmitted):
                self.history.add(now, event.job.nb_res)
        horizon = _wake_up_seconds(view)
        keep = math.ceil(self.arrivals(horizon) * self.history.mean_size())
        return Proposal(_beyond(view, keep))


class ExponentialPrediction(_Predictive):
    """Arrivals as a Poisson process of the observed rate: keep capacity for its `quantile` within the horizon."""

    def arrivals(self, horizon: float) -> int:
        moments = self.history.moments()
        if moments is None:
            return 0
        mean = moments[0]
        return poisson_quantile(horizon / mean if mean > 0 else math.inf, self.quantile)


class GammaPrediction(_Predictive):
    """Interarrivals as a gamma distribution fitted by moments (burstier than Poisson when variance is high)."""

    def arrivals(self, horizon: float) -> int:
        moments = self.history.moments()
        if moments is None:
            return 0
        mean, variance = moments
        if mean <= 0 or variance <= 0:
            return poisson_quantile(horizon / mean if mean > 0 else math.inf, self.quantile)
        return gamma_arrivals_quantile(horizon, mean * mean / variance, variance / mean, self.quantile)


def _wake_up_seconds(view: ClusterView) -> float:
    """The longest time a node of the platform takes to go to sleep and come back."""
    longest = 0.0
    for node in view.platform.nodes:
        sleep = node.power.sleep if node.power else None
        if sleep is not None:
            longest = max(longest, sleep.switch_off.seconds + sleep.switch_on.seconds)
    return longest


class PowerOnPolicy:
    """Keeps some capacity on and free: wakes sleeping nodes when less is free or waking up.

    `reserve` is that capacity; the power-off side never switches off units within it, so the two policies
    cannot undo each other forever.
    """

    name = "power-on"

    def reserve(self, view: ClusterView, cap: int) -> int:
        """Units to keep on and free or waking; the answer may stop at `cap` (no need to know beyond)."""
        raise NotImplementedError

    def propose(self, now: float, events: Sequence[Event], view: ClusterView) -> Proposal:
        nodes = _nodes(view)
        if not nodes.count(NodeState.SLEEPING):
            return Proposal()
        available = len(view.free) + waking_units(view)
        missing = self.reserve(view, available + nodes.units_in(NodeState.SLEEPING)) - available
        return Proposal(_wake(view, missing))


def waking_units(view: ClusterView) -> int:
    return _nodes(view).units_in(NodeState.SWITCHING_ON)


def _wake(view: ClusterView, missing: int) -> list[int]:
    """Sleeping nodes, lowest ids first, until `missing` units are covered."""
    chosen = []
    nodes = _nodes(view)
    for node in sorted(nodes.members(NodeState.SLEEPING)):
        if missing <= 0:
            break
        chosen.append(node)
        missing -= len(nodes.units(node))
    return chosen


def queue_demand(view: ClusterView, cap: int) -> int:
    """Units the queued jobs ask for in all, counted only up to `cap` (queues can be long)."""
    demand = 0
    for job in view.pending.values():
        demand += job.nb_res
        if demand >= cap:
            return cap
    return demand


class OnDemand(PowerOnPolicy):
    """Keep on what the queued jobs ask for: wake nodes when they need more than is free or waking up."""

    def reserve(self, view: ClusterView, cap: int) -> int:
        return queue_demand(view, cap)


class KeepMargin(PowerOnPolicy):
    """Keep at least `margin` (a share of the platform) of the units free or waking up; on demand beyond."""

    def __init__(self, margin: float = 0.1):
        self.margin = margin

    def reserve(self, view: ClusterView, cap: int) -> int:
        return max(math.ceil(self.margin * view.platform.nb_resources), queue_demand(view, cap))


POWER_OFF: Registry[Callable[..., PowerOffPolicy]] = Registry("power-off policy", group="clustersim.power_off")
"""Power-off policies; the value after `:` in `NAME:VALUE` is the first parameter (timeout, p, threshold...).

A factory with a keyword parameter `seed` gets the run's seed (policies that draw random numbers)."""
for _name, _factory in (
    ("never", Never),
    ("always", Always),
    ("idle-timeout", IdleTimeout),
    ("random", RandomOff),
    ("load-threshold", LoadThreshold),
    ("security-margin", SecurityMargin),
    ("exponential", ExponentialPrediction),
    ("gamma", GammaPrediction),
):
    POWER_OFF.add(_name, _factory)

POWER_ON: Registry[Callable[..., PowerOnPolicy]] = Registry("power-on policy", group="clustersim.power_on")
POWER_ON.add("on-demand", OnDemand)
POWER_ON.add("margin", KeepMargin)


def _parse(kind: str, spec: str) -> tuple[str, list[float]]:
    """`NAME`, `NAME:VALUE` or `package.module:Class[:VALUE]`, the value being the policy's first parameter."""
    name, _, value = spec.partition(":")
    if "." in name and value:  # a dotted path: package.module:Class
        attribute, _, value = value.partition(":")
        name = f"{name}:{attribute}"
    if not value:
        return name, []
    try:
        return name, [float(value)]
    except ValueError:
        raise InputError(spec, f"the {kind} parameter after ':' must be a number, got '{value}'") from None


def create_power_off(spec: str, seed: int = 0) -> PowerOffPolicy:
    """`idle-timeout:600`, `random:0.3`, `always`... (see POWER_OFF)."""
    name, args = _parse(POWER_OFF.kind, spec)
    factory = POWER_OFF.get(name)
    seeded = "seed" in inspect.signature(factory).parameters
    policy = factory(*args, seed=seed) if seeded else factory(*args)
    policy.name = spec
    return policy


def create_power_on(spec: str) -> PowerOnPolicy:
    """`on-demand` or `margin:0.1` (see POWER_ON)."""
    name, args = _parse(POWER_ON.kind, spec)
    policy = POWER_ON.get(name)(*args)
    policy.name = spec
    return policy
