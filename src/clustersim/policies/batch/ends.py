"""The running jobs in order of expected end, kept in step with the cluster between decisions.

EASY's reservation needs the running jobs in the order they end by their walltimes, and only the first few
(until enough units are freed). On a cluster running thousands of jobs, sorting them all after every job end
was half of a replay's time; this index is updated by the jobs that ended and started since the last call.
"""

from __future__ import annotations

import math
from bisect import bisect_left, insort
from collections.abc import Callable, Iterable, Iterator, Mapping
from operator import itemgetter
from typing import Final

from clustersim.core.state import RunningJob
from clustersim.policies.batch.additions import added_since

_Entry = tuple[float, int, RunningJob]
"""(expected end, discovery order, job): the first two are unique, so a job is never compared."""
_JOB: Final[Callable[[_Entry], RunningJob]] = itemgetter(2)


class RunningByEnd:
    """The running jobs by expected end (ties in start order): `forget` the jobs that ended, `sync` the jobs
    started since; when the view changed otherwise (a job neither ended nor started as seen), `sync` rebuilds."""

    __slots__ = ("_entries", "_order", "_where")

    def __init__(self) -> None:
        self._entries: list[_Entry] = []
        self._where: dict[str, _Entry] = {}
        self._order = 0

    def forget(self, keys: Iterable[str]) -> float:
        """Drop the jobs that ended; returns the latest of their expected ends (infinite if a key is unknown: a
        job started since the last `sync`), -inf when there are none."""
        where, entries = self._where, self._entries
        latest = -math.inf
        for key in keys:
            entry = where.pop(key, None)
            if entry is None:
                latest = math.inf
                continue
            del entries[bisect_left(entries, entry)]
            if entry[0] > latest:
                latest = entry[0]
        return latest

    def sync(self, running: Mapping[str, RunningJob]) -> None:
        """Add the jobs started since the last call (they come last in the view, in start order)."""
        where = self._where
        new = added_since(running, where)
        if new is None:
            self._entries.clear()
            where.clear()
            new = list(running.values())
        entries = self._entries
        for job in new:
            self._order += 1
            entry = (job.expected_end, self._order, job)
            where[job.job.key] = entry
            insort(entries, entry)

    def __iter__(self) -> Iterator[RunningJob]:
        return map(_JOB, self._entries)  # at C speed: EASY's reservation walks thousands of them
