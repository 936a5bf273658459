"""The decision call of a composed batch policy, compiled with the hot path (pyproject.toml `[tool.clustersim]
compiled`).

`Policy.decide` and `BatchPolicy.schedule` are Python (users subclass them), so each call of a built-in batch
policy ran two Python frames before reaching its compiled backfilling: on RICC under EASY, half a million calls.
A `BatchPolicy` that overrides neither takes `ComposedCall.decide` as its `decide` instead: the same steps as
those two methods, in one compiled call.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from clustersim.core.decisions import Decision
from clustersim.core.events import Event, JobSubmitted
from clustersim.core.state import ClusterView

if TYPE_CHECKING:
    from clustersim.policies.batch.parts import BatchPolicy


class ComposedCall:
    """`Policy.decide` then `BatchPolicy.schedule`, as one call: reject nothing and schedule (almost every call),
    or hand over to the policy's own `_reject_then_schedule` when a job submitted now can never fit.

    The policy's parts are read at each call, so a part replaced after construction is the one used."""

    __slots__ = ("policy",)

    def __init__(self, policy: BatchPolicy) -> None:
        self.policy = policy

    def decide(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        policy = self.policy
        capacity = view.platform.nb_resources
        for event in events:  # `base._never_fits`, inlined as in `Policy.decide`
            if isinstance(event, JobSubmitted) and not 0 < event.job.nb_res <= capacity:
                return policy._reject_then_schedule(now, events, view)
        if not view.pending:
            return iter(())
        return policy.backfilling.schedule(now, events, view, policy.order, policy.hosts)
