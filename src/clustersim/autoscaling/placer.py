"""A tiny first-fit pod placer: the fallback scheduling policy when the `kube` policy is not installed.

Pending jobs in queue order: a pod goes to the lowest-numbered node whose free vector covers its requests; an
exclusive job takes the lowest free units. A job that does not fit waits (later ones may still start). It is
deliberately minimal: the autoscaler works with any policy that places pending pods.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from clustersim.core.decisions import Decision, StartJob
from clustersim.core.events import Event
from clustersim.core.interface import DecisionProcess
from clustersim.core.sharing import shortfall
from clustersim.core.state import ClusterView
from clustersim.intervals import IntervalSet
from clustersim.policies.base import Policy


class FirstFitPods(Policy):
    """First fit of pods onto nodes by their free resource vectors."""

    name = "first-fit"

    def schedule(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        platform = view.platform
        for job in list(view.pending.values()):
            if job.request is None:
                if len(view.free) >= job.nb_res:
                    yield StartJob(job.key, view.free.lowest(job.nb_res))
                continue
            need = {**job.request, "pods": 1}
            for node in platform.nodes:
                units = platform.units_of(node.id)
                if view.shared.pods(node.id) == 0 and not units.issubset(view.free):
                    continue
                if not shortfall(view.shared.free(node.id), need):
                    yield StartJob(job.key, IntervalSet.from_ids([units.intervals[0][0]]))
                    break


def scheduler_for(name: str) -> DecisionProcess:
    """`auto` is `kube` when that policy can be imported, else first-fit; any other name is a registered policy."""
    from clustersim.errors import UnknownNameError
    from clustersim.policies.registry import create_policy

    if name == "first-fit":
        return FirstFitPods()
    if name == "auto":
        try:
            return create_policy("kube")
        except (ImportError, UnknownNameError):
            return FirstFitPods()
    return create_policy(name)
