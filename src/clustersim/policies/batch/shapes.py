"""The queue grouped by job shape (units, walltime), so a backfilling scan looks only at jobs that could start.

On a full cluster the queue holds thousands of jobs and almost none may backfill: they need more units than are
free, or run past the reservation. Jobs of one shape share that verdict, and a queue has far fewer shapes than
jobs, so a scan asks each shape instead of each job.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from clustersim.policies.batch.parts import added_since
from clustersim.workload.job import Job

Shape = tuple[int, float | None]
"""A job's units and walltime (None: unlimited)."""


class ShapeIndex:
    """The pending jobs of a submit-ordered queue, by shape, each with its rank in the queue.

    The index follows the queue: `sync` adds the jobs queued since (they come last, in submit order) and
    `discard` drops a job that started. When the queue changed otherwise, `sync` builds the index again.
    """

    __slots__ = ("_rank", "_shapes", "_where")

    def __init__(self) -> None:
        self._shapes: dict[Shape, dict[str, tuple[int, Job]]] = {}
        self._where: dict[str, tuple[Shape, Job]] = {}
        self._rank = 0

    def sync(self, pending: Mapping[str, Job]) -> None:
        """Add the jobs queued since the last call; rebuild if jobs left the queue other than by `discard`."""
        new = added_since(pending, self._where)
        if new is None:
            self._shapes.clear()
            self._where.clear()
            new = list(pending.values())
        for job in new:
            self._add(job)

    def _add(self, job: Job) -> None:
        shape = (job.nb_res, job.walltime)
        self._where[job.key] = (shape, job)
        self._rank += 1
        self._shapes.setdefault(shape, {})[job.key] = (self._rank, job)

    def discard(self, key: str) -> None:
        known = self._where.pop(key, None)
        if known is not None:
            shape = known[0]
            jobs = self._shapes[shape]
            del jobs[key]
            if not jobs:
                del self._shapes[shape]

    def first(self, passes: Callable[[int, float | None], bool]) -> Job | None:
        """The earliest queued job whose shape `passes`."""
        best: tuple[int, Job] | None = None
        for shape, jobs in self._shapes.items():
            if passes(*shape):
                entry = next(iter(jobs.values()))
                if best is None or entry[0] < best[0]:
                    best = entry
        return None if best is None else best[1]

