"""Kubernetes Jobs' `parallelism`: a decision-process wrapper that submits a Job's next pod when one completes.

It stands for the Job controller of a real cluster: at most `parallelism` pods of a Job exist at once; the
held pods enter the simulation (SubmitJob, at the completion's instant) one per completed pod.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace

from clustersim.core.decisions import Decision, SubmitJob
from clustersim.core.events import Event, JobCompleted
from clustersim.core.interface import DecisionProcess
from clustersim.core.state import ClusterView
from clustersim.workload.job import Job


class JobController:
    """Wraps the scheduler; releases held pods (by Job name, in order) as the Job's pods complete."""

    def __init__(self, inner: DecisionProcess, held: dict[str, list[Job]]):
        self.inner = inner
        self.held = {name: list(reversed(jobs)) for name, jobs in held.items()}

    def begin(self, view: ClusterView) -> Iterable[Decision] | None:
        return self.inner.begin(view)

    def decide(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        for event in events:
            if isinstance(event, JobCompleted):
                owner = event.job.extra.get("job-name")
                waiting = self.held.get(owner) if isinstance(owner, str) else None
                if waiting:
                    job = waiting.pop()
                    yield SubmitJob(_at(job, now))
        yield from self.inner.decide(now, events, view)

    def end(self, view: ClusterView) -> None:
        self.inner.end(view)


def _at(job: Job, now: float) -> Job:
    """The same pod submitted at `now`."""
    return replace(job, submit_time=now)
