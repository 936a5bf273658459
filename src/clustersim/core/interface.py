"""The one interface every decision process implements, built-in or external."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from clustersim.core.decisions import Decision
from clustersim.core.events import Event
from clustersim.core.state import ClusterView


class DecisionProcess(Protocol):
    """Called by the core once per instant at which something happened; returns decisions for that instant.

    A process may say `decides_from_messages = True` (an external scheduler): it decides from the events it is told,
    not from the cluster's state, so the core may let Batsim's actors change that state before its decisions apply.
    """

    def begin(self, view: ClusterView) -> Iterable[Decision] | None:
        """The simulation starts: the platform is known, no job is submitted yet.

        May return decisions to apply at t=0 (an external scheduler's first answer may ask for a call).
        """

    def decide(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterable[Decision]:
        """React to the events of instant `now`. Decisions take effect at `now`, in the order returned."""
        ...

    def end(self, view: ClusterView) -> None:
        """The simulation is over (normally or not); release whatever the process holds."""
