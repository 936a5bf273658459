"""The running jobs in order of expected end, kept in step with the cluster between decisions.

EASY's reservation needs the running jobs in the order they end by their walltimes, and only the first few
(until enough units are freed). On a cluster running thousands of jobs, sorting them all after every job end
was half of a replay's time; this index is updated by the jobs that ended and started since the last call.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Mapping

from clustersim.core.state import RunningJob
from clustersim.policies.batch.additions import added_since


class RunningByEnd:
    """The running jobs by expected end (ties in start order): `forget` the jobs that ended, `sync` the jobs
    started since; when the view changed otherwise (a job neither ended nor started as seen), `sync` rebuilds.

    The order is kept as three parallel lists, the jobs' expected ends, their discovery orders and the jobs: a
    bisection compares floats (ints within a tie) instead of `(end, order, job)` tuples, and `jobs` is a plain
    list that a compiled caller walks by index."""

    __slots__ = ("_ends", "_order", "_orders", "_where", "jobs")

    def __init__(self) -> None:
        self.jobs: list[RunningJob] = []
        """The running jobs by expected end, ties in start order (read only: the index edits it)."""
        self._ends: list[float] = []
        """`jobs`' expected ends."""
        self._orders: list[int] = []
        """`jobs`' discovery orders: unique and increasing with discovery, so ties keep start order."""
        self._where: dict[str, tuple[int, RunningJob]] = {}
        self._order = 0

    def forget(self, keys: Iterable[str]) -> float:
        """Drop the jobs that ended; returns the latest of their expected ends (infinite if a key is unknown: a
        job started since the last `sync`), -inf when there are none."""
        where, ends, orders, jobs = self._where, self._ends, self._orders, self.jobs
        latest = -math.inf
        for key in keys:
            entry = where.pop(key, None)
            if entry is None:
                latest = math.inf
                continue
            order, job = entry
            end = job.expected_end
            i = bisect_left(ends, end)
            if jobs[i] is not job:  # a tie on the end: its place among the tied jobs, by order
                i = bisect_left(orders, order, i, bisect_right(ends, end, i))
            del ends[i]
            del orders[i]
            del jobs[i]
            if end > latest:
                latest = end
        return latest

    def sync(self, running: Mapping[str, RunningJob]) -> None:
        """Add the jobs started since the last call (they come last in the view, in start order)."""
        where = self._where
        new = added_since(running, where)
        if new is None:
            self._ends.clear()
            self._orders.clear()
            self.jobs.clear()
            where.clear()
            new = list(running.values())
        ends, orders, jobs = self._ends, self._orders, self.jobs
        order = self._order
        for job in new:
            order += 1
            end = job.expected_end
            where[job.job.key] = (order, job)
            i = bisect_right(ends, end)  # after the tied jobs, all discovered earlier
            ends.insert(i, end)
            orders.insert(i, order)
            jobs.insert(i, job)
        self._order = order

    def __iter__(self) -> Iterator[RunningJob]:
        return iter(self.jobs)
