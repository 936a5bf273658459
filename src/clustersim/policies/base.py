"""The base of built-in policies: what they all share, so each policy file holds only its own rule."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from clustersim.core.decisions import Decision, RejectJob
from clustersim.core.events import Event, JobSubmitted
from clustersim.core.state import ClusterView


def never_fitting(events: Sequence[Event], view: ClusterView) -> Iterator[RejectJob]:
    """Rejections of the jobs submitted now that can never fit: asking for no resource or more than exist."""
    capacity = view.platform.nb_resources
    for event in events:
        if _never_fits(event, capacity):
            assert isinstance(event, JobSubmitted)
            yield RejectJob(event.job.key)


def _never_fits(event: Event, capacity: int) -> bool:
    return isinstance(event, JobSubmitted) and not 0 < event.job.nb_res <= capacity


class Policy:
    """A built-in decision process. Subclasses implement `schedule`.

    `decide` rejects the jobs that can never fit (`never_fitting`), then asks `schedule` about the others.

    `decide`'s decisions come lazily: the core applies each as it is yielded, so `view` always shows the
    state after the decisions already made (free resources shrink as jobs are started).
    """

    name = "policy"

    def begin(self, view: ClusterView) -> None:
        """Built-in policies need no set-up."""

    def end(self, view: ClusterView) -> None:
        """Built-in policies hold nothing to release."""

    def decide(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        capacity = view.platform.nb_resources
        for event in events:  # `_never_fits`, inlined: this runs at every call, as Python even when compiled
            if isinstance(event, JobSubmitted) and not 0 < event.job.nb_res <= capacity:
                return self._reject_then_schedule(now, events, view)
        # Nothing to reject (almost every call): `schedule`'s own iterator, one generator layer fewer per call.
        return self.schedule(now, events, view) if view.pending else iter(())

    def _reject_then_schedule(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        yield from never_fitting(events, view)
        if view.pending:
            yield from self.schedule(now, events, view)

    def schedule(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        """Decide for the jobs in `view.pending`, all of which fit the platform when it is empty."""
        raise NotImplementedError
