"""The queue grouped by job shape (units, walltime), so a backfilling scan looks only at jobs that could start.

On a full cluster the queue holds thousands of jobs and almost none may backfill: they need more units than are
free, or run past the reservation. Jobs of one shape share that verdict, and a queue has far fewer shapes than
jobs, so a scan asks each shape instead of each job.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Mapping

from clustersim.policies.batch.additions import added_since
from clustersim.workload.job import Job

Shape = tuple[int, float | None]
"""A job's units and walltime (None: unlimited)."""


class ShapeIndex:
    """The pending jobs of a submit-ordered queue, by shape, each with its rank in the queue.

    The index follows the queue: `sync` adds the jobs queued since (they come last, in submit order) and
    `discard` drops a job that started. When the queue changed otherwise, `sync` builds the index again.

    Each shape's jobs are a deque in rank order. The job that starts is almost always the first of its shape (the
    head of the queue, or the earliest job of a shape that may backfill), so `discard` pops it from the front; a
    dict per shape would keep a hole there until it next grows, and finding the first job would walk every hole.

    The shapes are also listed by units, fewest first, so a scan stops at the first shape that needs more units
    than are free: on a full cluster that is after the few small ones.
    """

    __slots__ = ("_by_units", "_rank", "_shapes", "_units", "_where")

    def __init__(self) -> None:
        self._shapes: dict[Shape, _Jobs] = {}
        self._by_units: list[_Jobs] = []
        """The shapes in order of units (ties in no particular order)."""
        self._units: list[int] = []
        """`_by_units`' units, for bisection."""
        self._where: dict[str, tuple[_Jobs, int, Job]] = {}
        """Each queued job's shape (its jobs: no shape tuple hashed again at its start) and rank."""
        self._rank = 0

    def sync(self, pending: Mapping[str, Job]) -> list[Job]:
        """Add the jobs queued since the last call; rebuild if jobs left the queue other than by `discard`.
        Returns the jobs added: those queued since, or the whole queue after a rebuild."""
        new = added_since(pending, self._where)
        if new is None:
            self._shapes.clear()
            self._by_units.clear()
            self._units.clear()
            self._where.clear()
            new = list(pending.values())
        shapes, where = self._shapes, self._where
        rank = self._rank
        for job in new:
            shape = (job.nb_res, job.walltime)
            rank += 1
            jobs = shapes.get(shape)
            if jobs is None:
                jobs = shapes[shape] = _Jobs(job.nb_res, job.walltime)
                i = bisect_right(self._units, job.nb_res)
                self._units.insert(i, job.nb_res)
                self._by_units.insert(i, jobs)
            where[job.key] = (jobs, rank, job)
            jobs.queue.append((rank, job))
        self._rank = rank
        return new

    def discard(self, key: str) -> None:
        known = self._where.pop(key, None)
        if known is not None:
            jobs, rank, job = known
            queue = jobs.queue
            if queue[0][0] == rank:
                queue.popleft()
            else:
                queue.remove((rank, job))
            if not queue:
                del self._shapes[jobs.nb_res, jobs.walltime]
                i = bisect_left(self._units, jobs.nb_res)
                while self._by_units[i] is not jobs:
                    i += 1
                del self._units[i]
                del self._by_units[i]

    def fewest_units(self) -> int:
        """The fewest units a queued job needs (0 when none is queued)."""
        return self._units[0] if self._units else 0

    def first_backfill(self, now: float, start: float, nb_free: int, nb_outside: int) -> Job | None:
        """The earliest queued job that may backfill now before a reservation at `start`: it needs at most
        `nb_outside` units (those the reservation does not need), or at most `nb_free` and ends by `start`."""
        best_rank = 0
        best: Job | None = None
        for jobs in self._by_units:
            nb_res = jobs.nb_res
            if nb_res > nb_free:
                break  # and so do all the shapes after it
            walltime = jobs.walltime
            if nb_res <= nb_outside or (walltime is not None and now + walltime <= start):
                rank, job = jobs.queue[0]
                if best is None or rank < best_rank:
                    best_rank, best = rank, job
        return best


class _Jobs:
    """The queued jobs of one shape, in rank order."""

    __slots__ = ("nb_res", "queue", "walltime")

    def __init__(self, nb_res: int, walltime: float | None) -> None:
        self.nb_res = nb_res
        self.walltime = walltime
        self.queue: deque[tuple[int, Job]] = deque()


def may_backfill(nb_res: int, walltime: float | None, now: float, start: float, nb_free: int, nb_outside: int) -> bool:
    """Whether a job of this shape may start now before a reservation at `start`: it needs at most `nb_outside`
    units (those the reservation does not need), or at most `nb_free` and ends by `start`."""
    return nb_res <= nb_outside or (nb_res <= nb_free and walltime is not None and now + walltime <= start)
