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
        if isinstance(event, JobSubmitted) and not 0 < event.job.nb_res <= capacity:
            yield RejectJob(event.job.key)


class Policy:
    """A built-in decision process. Subclasses implement `schedule`.

    `decide` rejects the jobs that can never fit (`never_fitting`), then asks `schedule` about the others.

    `decide` is a generator: the core applies each decision as it is yielded, so `view` always shows the
    state after the decisions already made (free resources shrink as jobs are started).
    """

    name = "policy"

    def begin(self, view: ClusterView) -> None:
        """Built-in policies need no set-up."""

    def end(self, view: ClusterView) -> None:
        """Built-in policies hold nothing to release."""

    def decide(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        yield from never_fitting(events, view)
        if view.pending:
            yield from self.schedule(now, events, view)

    def schedule(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        """Decide for the jobs in `view.pending`, all of which fit the platform when it is empty."""
        raise NotImplementedError
