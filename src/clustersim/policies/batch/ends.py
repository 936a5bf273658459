"""The running jobs in order of expected end, kept in step with the cluster between decisions.

EASY's reservation needs the running jobs in the order they end by their walltimes, and only the first few
(until enough units are freed). On a cluster running thousands of jobs, sorting them all after every job end
was half of a replay's time; this index is updated by the jobs that ended and started since the last call.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from typing import Final

from clustersim.core.state import RunningJob
from clustersim.limits import MAX_UNITS
from clustersim.policies.batch.additions import added_since
from clustersim.policies.sorted_search import first_after, first_from

KEY_SHIFT: Final = MAX_UNITS.bit_length()
"""An interval (lo, hi) as the one int `lo << KEY_SHIFT | hi`: ids are below `MAX_UNITS`, so the ints sort as the
tuples do, and a list of ints sorts several times faster (no tuple comparison, each a call per item). A platform
of fewer units may use fewer bits (`RunningByEnd.sync`'s `shift`): below 2**30 an int is one digit, and a list of
those sorts about twice as fast again (CPython compares them without its generic path)."""


class RunningByEnd:
    """The running jobs by expected end (ties in start order): `forget` the jobs that ended, `sync` the jobs
    started since; when the view changed otherwise (a job neither ended nor started as seen), `sync` rebuilds.

    The order is kept as parallel lists, the jobs' expected ends, their discovery orders, the jobs and their
    units as interval keys: a bisection compares native floats (ints within a tie) instead of `(end, order, job)`
    tuples, `jobs` is a plain list that a compiled caller walks by index, and each job's keys are made once at its
    start instead of at every reservation that walks past it (on RICC, three times per job)."""

    __slots__ = ("_ends", "_order", "_orders", "_where", "jobs", "keys", "shift")

    def __init__(self) -> None:
        self.jobs: list[RunningJob] = []
        """The running jobs by expected end, ties in start order (read only: the index edits it)."""
        self.keys: list[list[int]] = []
        """`jobs`' units, each job's intervals as sorted keys (`lo << shift | hi`; read only)."""
        self.shift = KEY_SHIFT
        """The bits of `keys`' his: the `shift` of the last `sync`."""
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
            i = first_from(ends, end, 0, len(ends))
            if jobs[i] is not job:  # a tie on the end: its place among the tied jobs, by order
                i = _first_order(orders, order, i, first_after(ends, end, i, len(ends)))
            del ends[i]
            del orders[i]
            del jobs[i]
            del self.keys[i]
            if end > latest:
                latest = end
        return latest

    def sync(self, running: Mapping[str, RunningJob], shift: int = KEY_SHIFT) -> None:
        """Add the jobs started since the last call (they come last in the view, in start order); `shift` bits
        hold any id of the platform (`KEY_SHIFT` any platform's): another than the last call's makes all keys
        again."""
        where = self._where
        new = added_since(running, where) if shift == self.shift else None
        self.shift = shift
        if new is None:
            self._ends.clear()
            self._orders.clear()
            self.jobs.clear()
            self.keys.clear()
            where.clear()
            new = list(running.values())
        ends, orders, jobs, keys = self._ends, self._orders, self.jobs, self.keys
        order = self._order
        for job in new:
            order += 1
            end = job.expected_end
            where[job.job.key] = (order, job)
            i = first_after(ends, end, 0, len(ends))  # after the tied jobs, all discovered earlier
            ends.insert(i, end)
            orders.insert(i, order)
            jobs.insert(i, job)
            keys.insert(i, [lo << shift | hi for lo, hi in job.resources.intervals])
        self._order = order

    def __iter__(self) -> Iterator[RunningJob]:
        return iter(self.jobs)


def _first_order(orders: list[int], order: int, lo: int, hi: int) -> int:
    """`bisect.bisect_left(orders, order, lo, hi)` as a plain loop (native ints when compiled)."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if orders[mid] < order:
            lo = mid + 1
        else:
            hi = mid
    return lo
