"""A scheduling policy combined with power policies: one decision process for the core.

At each instant: the scheduler decides first (it uses the nodes that are on), then the power-on policy wakes
nodes, then the power-off policy puts idle nodes to sleep. The power-off policy never takes capacity the
capacity the power-on policy reserves (at least what the queued jobs ask for), so they never undo each other.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from clustersim.core.decisions import CallMeLater, Decision, SwitchOff, SwitchOn
from clustersim.core.events import Event
from clustersim.core.interface import DecisionProcess
from clustersim.core.nodes import NodeState
from clustersim.core.state import ClusterView
from clustersim.policies.power.switch_policies import PowerOffPolicy, PowerOnPolicy, waking_units


class PoweredProcess:
    """Runs `scheduler`, then `power_on`, then `power_off`, at every instant."""

    def __init__(self, scheduler: DecisionProcess, power_off: PowerOffPolicy, power_on: PowerOnPolicy):
        self.scheduler = scheduler
        self.power_off = power_off
        self.power_on = power_on
        self._calls: set[float] = set()

    def begin(self, view: ClusterView) -> Iterable[Decision] | None:
        return self.scheduler.begin(view)

    def end(self, view: ClusterView) -> None:
        self.scheduler.end(view)

    def decide(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        yield from self.scheduler.decide(now, events, view)
        wake = self.power_on.propose(now, events, view)
        if wake.nodes:
            yield SwitchOn(tuple(wake.nodes))
        yield from self._call(now, wake.call_at)
        sleep = self.power_off.propose(now, events, view)
        chosen = self._spare(view, sleep.nodes) if sleep.nodes else []
        if chosen:
            yield SwitchOff(tuple(chosen))
        yield from self._call(now, sleep.call_at)

    def _spare(self, view: ClusterView, proposed: list[int]) -> list[int]:
        """The proposed idle nodes that can go while the power-on policy's reserve stays on and free."""
        nodes = view.nodes
        assert nodes is not None
        available = len(view.free) + waking_units(view)
        spare = available - self.power_on.reserve(view, available)
        chosen = []
        for node in proposed:
            units = len(nodes.units(node))
            if nodes.state(node) is NodeState.IDLE and units <= spare:
                chosen.append(node)
                spare -= units
        return chosen

    def _call(self, now: float, at: float | None) -> Iterator[Decision]:
        """Ask to be called at `at`, once per distinct time."""
        if at is not None and at > now and at not in self._calls:
            if len(self._calls) > 64:
                self._calls = {t for t in self._calls if t > now}  # memory follows the calls still ahead
            self._calls.add(at)
            yield CallMeLater(at)
