"""EASY backfilling (Lifka; Mu'alem & Feitelson), with the reservation on specific hosts.

The queue is in submit order (or another `order`). Jobs start from the head while they fit. The first job
that does not fit (the head) gets one reservation: at the earliest time enough resources are free according
to the running jobs' walltimes, on the lowest ids free then. Any later job starts now if it fits now and
cannot delay that reservation: it ends (by its walltime) no later than the reservation starts, or it uses
only resources the reservation does not need. The reservation is recomputed after every job end, from the
current running jobs, so it moves earlier whenever a job ends before its walltime.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from operator import attrgetter
from typing import Final

from clustersim.core.decisions import Decision, StartJob
from clustersim.core.events import (
    Event,
    JobCompleted,
    JobSubmitted,
    NoMoreExternalEvents,
    NoMoreJobs,
    RequestedCall,
)
from clustersim.core.state import ClusterView, RunningJob
from clustersim.intervals import Interval, IntervalSet
from clustersim.platform.model import Platform
from clustersim.policies.batch.ends import KEY_SHIFT, RunningByEnd
from clustersim.policies.batch.parts import BACKFILLING, BatchPolicy, Hosts
from clustersim.policies.batch.queue_order import QueueOrder
from clustersim.policies.batch.shapes import ShapeIndex, may_backfill
from clustersim.policies.registry import register_policy
from clustersim.workload.job import Job


@dataclass(frozen=True, slots=True)
class Reservation:
    """Where and when the head job is guaranteed to start."""

    start: float
    resources: IntervalSet


def reserve(
    nb_res: int, view: ClusterView, hosts: Hosts = IntervalSet.lowest, by_end: Iterable[RunningJob] | None = None
) -> Reservation:
    """The earliest time `nb_res` units are free by the running jobs' walltimes, on the `hosts` of those.

    `by_end` is the running jobs in order of expected end (`RunningByEnd`), sorted here when not given. Units of
    unavailable machines are not freed when their job ends: the reservation waits for others.
    """
    free = view.free
    if nb_res <= len(free):
        return Reservation(view.now, hosts(free, nb_res))
    if by_end is None:
        by_end = sorted(view.running.values(), key=attrgetter("expected_end"))
    unavailable = view.unavailable
    available = len(free)
    start = math.inf
    if hosts is IntervalSet.lowest and not unavailable:
        keys = [lo << _SHIFT | hi for lo, hi in free.intervals]  # free and running units are disjoint: one sort
        for running in by_end:
            if running.expected_end > start:
                break  # the jobs ending at the reservation's start all free their units: later ones do not
            resources = running.resources
            available += len(resources)
            for lo, hi in resources.intervals:
                keys.append(lo << _SHIFT | hi)
            if available >= nb_res:
                start = running.expected_end
        return Reservation(start, _lowest_of(keys, nb_res))
    freed: list[Interval] = list(free.intervals)
    for running in by_end:
        if running.expected_end > start:
            break
        available += len(running.resources - unavailable if unavailable else running.resources)
        freed.extend(running.resources.intervals)
        if available >= nb_res:
            start = running.expected_end
    return Reservation(start, hosts(IntervalSet(freed) - unavailable, nb_res))


_SHIFT: Final = KEY_SHIFT
"""An interval (lo, hi) as the one int `lo << _SHIFT | hi` (`ends.KEY_SHIFT`)."""
_HI_BITS: Final = (1 << _SHIFT) - 1


def _lowest_of(keys: list[int], count: int) -> IntervalSet:
    """`IntervalSet(intervals).lowest(count)` of the intervals as keys (`_SHIFT`): one sort, and a walk that
    joins touching intervals and stops at `count` ids instead of merging the whole union (free units and the
    units of the jobs ending by then)."""
    keys.sort()
    lowest: list[Interval] = []
    left = count
    last_lo, last_hi = -2, -2
    for key in keys:
        lo = key >> _SHIFT
        hi = key & _HI_BITS
        if lo <= last_hi:  # units held twice (pods sharing a node): only those above are new
            if hi <= last_hi:
                continue
            lo = last_hi + 1
        take = hi - lo + 1 if hi - lo < left else left
        if lo != last_hi + 1:
            if last_hi >= 0:
                lowest.append((last_lo, last_hi))
            last_lo = lo
        last_hi = lo + take - 1
        left -= take
        if not left:
            break
    if last_hi >= 0:
        lowest.append((last_lo, last_hi))
    return IntervalSet._trusted(lowest, count - left)


def reserved_cutoff(
    nb_res: int, view: ClusterView, by_end: list[RunningJob], keys: list[list[int]], shift: int = _SHIFT
) -> tuple[float, int]:
    """`reserve`'s start and the highest id of its units (-1: none), with hosts by lowest id and no machine
    unavailable, without the set: the walk of `reserve`, then one merge of the free intervals (sorted already)
    with those of the jobs ending by the start (few: their keys, `keys` as `RunningByEnd` keeps them with `shift`,
    joined and sorted here).

    The merge runs from the top when no pod was walked: free units and the units of exclusive jobs are disjoint,
    so the units counted hold exactly `available` ids, and the reservation's highest is the one that leaves the
    `available - nb_res` above it (fewer than the last job walked freed, often a handful); from the bottom it would
    walk every free interval below the reservation, hundreds on a fragmented cluster. Pods share nodes (their
    units may be counted twice): from the bottom, skipping the ids already seen."""
    free = view.free
    if nb_res <= len(free):
        return view.now, _nth_lowest(free.intervals, [], nb_res, shift)
    available = len(free)
    start = math.inf
    freed: list[int] = []
    walked = 0
    shared = False
    for i in range(len(by_end)):
        running = by_end[i]
        end = running.expected_end
        if end > start:
            break
        available += len(running.resources)
        if running.job.request is not None:
            shared = True
        if walked == 0:
            freed = keys[i]  # one job's keys are sorted: read, never changed (a second job's makes a new list)
        elif walked == 1:
            freed = freed + keys[i]
        else:
            freed.extend(keys[i])
        walked += 1
        if available >= nb_res:
            start = end
    if walked > 1:
        freed.sort()
    if shared:
        return start, _nth_lowest(free.intervals, freed, nb_res, shift)
    return start, _nth_highest(free.intervals, freed, available - nb_res if available > nb_res else 0, shift)


def _nth_lowest(first: tuple[Interval, ...], second: list[int], count: int, shift: int = _SHIFT) -> int:
    """The highest of the `count` lowest ids of the union of a sorted interval list and sorted interval keys
    (`lo << shift | hi`; the highest of the union if it holds fewer, -1 if none): `_lowest_of`'s walk, over the
    two lists merged as it goes."""
    if count <= 0:
        return -1
    hi_bits = (1 << shift) - 1
    i = j = 0
    nb_first, nb_second = len(first), len(second)
    left = count
    last_hi = -1
    while True:
        if j < nb_second:
            key = second[j]
            if i < nb_first and first[i][0] <= key >> shift:
                lo, hi = first[i]
                i += 1
            else:
                lo = key >> shift
                hi = key & hi_bits
                j += 1
        elif i < nb_first:
            lo, hi = first[i]
            i += 1
        else:
            return last_hi
        if lo <= last_hi:  # units held twice (pods sharing a node): only those above are new
            if hi <= last_hi:
                continue
            lo = last_hi + 1
        if hi - lo + 1 >= left:
            return lo + left - 1
        left -= hi - lo + 1
        last_hi = hi


def _nth_highest(first: tuple[Interval, ...], second: list[int], skip: int, shift: int = _SHIFT) -> int:
    """The highest id of the union of a sorted interval list and sorted interval keys (`lo << shift | hi`),
    disjoint, once the `skip` highest are left out (-1 if it holds no more): `_nth_lowest`'s merge, from the top."""
    hi_bits = (1 << shift) - 1
    i = len(first) - 1
    j = len(second) - 1
    while True:
        if j >= 0:
            key = second[j]
            if i >= 0 and first[i][0] > key >> shift:
                lo, hi = first[i]
                i -= 1
            else:
                lo = key >> shift
                hi = key & hi_bits
                j -= 1
        elif i >= 0:
            lo, hi = first[i]
            i -= 1
        else:
            return -1
        if hi - lo >= skip:
            return hi - skip
        skip -= hi - lo + 1


def earliest_start(nb_res: int, view: ClusterView, by_end: list[RunningJob]) -> float:
    """`reserve`'s start alone: a walk that only counts units, without their sets."""
    unavailable = view.unavailable
    available = len(view.free)
    if nb_res <= available:
        return view.now
    for running in by_end:
        available += len(running.resources - unavailable if unavailable else running.resources)
        if available >= nb_res:
            return running.expected_end
    return math.inf


_UNCHANGING: Final = (JobSubmitted, RequestedCall, NoMoreJobs, NoMoreExternalEvents)
"""Events after which the head's reservation stays what it was (no job ended, no node changed state)."""
_ENDS: Final = (JobCompleted, *_UNCHANGING)
"""Events after which it stays what it was if its start does (see `EasyBackfilling`)."""


class EasyBackfilling:
    """One reservation for the first job that does not fit; later jobs start if they cannot delay it.

    The reservation is kept between calls while the head is the same and only submissions or calls happened:
    backfilled jobs never change it (they end before it, or use units it does not need). After job ends it is
    kept too when its start stays the same (a walk that only counts units, `earliest_start`), every job that
    ended was expected to end by that start, and hosts are the lowest ids: the units the reservation picks
    from (the free ones and those of the jobs expected to end by its start) are then the same, less only
    units backfilled jobs took outside it, all above its own.

    In submit order the queue is scanned by job shape (`ShapeIndex`): whether a job may backfill depends only on
    its units and walltime, and the free units only shrink during a scan, so a shape that cannot start a job
    cannot later in the same scan. The next job started is then the earliest queued job of the shapes that can
    start one: each start costs one look at each shape instead of a walk over the queue. Other orders walk it.

    When no queued job fits the free units, nothing may backfill: the reservation is not even computed (the one
    held stays as it was, since no job started but heads, and a new head gets its own).

    A scan that ends with nothing more to start is remembered (`_settled`): at the next call, if the free units
    and the reservation are the very same objects (no job started or ended, no machine changed, the head is the
    same), every job it turned down is turned down again (the units free and outside the reservation are the
    same, and a later `now` only ends a job later), so only the jobs queued since are looked at (on RICC, a
    fifth of the scans: submissions while the cluster is full).

    With hosts by lowest id, the units a scan may give away without delaying the head are the free units above
    the reservation's highest: the reservation is the lowest ids of the units it picked from, and every free unit
    is one of those while it is kept (free then, or freed since by a job that ended by its start: a later end or a
    machine's change drops it), so the difference of the free set with the reservation is a cut by bisection.
    That cut needs only the reservation's highest id, so it is all a scan by shape computes (`reserved_cutoff`):
    no set of the reserved units, made and dropped at each head.
    """

    def __init__(self) -> None:
        self._reservation: _Held | None = None
        self._recheck = False
        """Jobs ended since the reservation was computed: it holds only if its start is still the same."""
        self._shapes = ShapeIndex()
        """The queue by job shape, in submit order."""
        self._by_end = RunningByEnd()
        """The running jobs by expected end, for the reservation."""
        self._platform: Platform | None = None
        self._shift = KEY_SHIFT
        """The bits that hold any unit id of `_platform` (the one of the last view synced): `_by_end`'s keys."""
        self._settled: tuple[IntervalSet, _Held, int] | None = None
        """The free units and the reservation with which the last call's scan by shape ended starting nothing
        more, and at least the number of free units outside the reservation then (see the class)."""

    def schedule(
        self, now: float, events: Sequence[Event], view: ClusterView, order: QueueOrder, hosts: Hosts
    ) -> Iterator[Decision]:
        if not all(isinstance(e, _UNCHANGING) for e in events):
            latest_end = self._by_end.forget([e.job.key for e in events if type(e) is JobCompleted])
            kept = self._reservation
            if (kept is not None and hosts is IntervalSet.lowest and latest_end <= kept.start
                    and all(isinstance(e, _ENDS) for e in events)):
                self._recheck = True
            else:
                self._reservation = None
        settled, self._settled = self._settled, None
        pending = view.pending
        indexed = order.key is None
        added: list[Job] = []
        if indexed:
            added = self._shapes.sync(pending)
            head = view.head()  # submit order: the live head of the queue (`order.heads`, without its generator)
            while head is not None:
                free = view.free
                if head.nb_res > len(free):
                    break
                yield StartJob(head.key, hosts(free, head.nb_res))
                self._shapes.discard(head.key)
                head = view.head()
        else:
            for head in order.heads(pending):
                free = view.free
                if head.nb_res > len(free):
                    break
                yield StartJob(head.key, hosts(free, head.nb_res))
        free = view.free
        if not pending or not free:
            return  # nothing left, or nothing can backfill: no need to look at the queue
        if indexed and self._shapes.fewest_units() > len(free):
            return  # no queued job fits the free units: none may backfill, wherever the head's reservation is
        queue = None if indexed else order.jobs(pending)
        head = next(iter(pending.values())) if queue is None else queue[0]
        held = self._reservation
        if held is None or held.head != head.key or (queue is not None and held.resources is None) or (
            self._recheck and not self._same_start(head.nb_res, view, held.start)
        ):
            held = self._reserve(head, view, hosts, queue is None and hosts is IntervalSet.lowest)
            self._reservation = held
        self._recheck = False
        if queue is None:
            if settled is not None and settled[0] is free and settled[1] is held and not any(
                may_backfill(job.nb_res, job.walltime, now, held.start, len(free), settled[2])
                for job in added
            ):
                self._settled = settled  # nothing changed but jobs queued that cannot backfill either
                return
            yield from self._backfill_by_shape(now, view, held, hosts)
        else:
            assert held.resources is not None
            yield from _backfill(now, islice(queue, 1, None), view, held.start, held.resources, hosts)

    def _reserve(self, head: Job, view: ClusterView, hosts: Hosts, cut: bool) -> _Held:
        """The head's reservation; only its highest id (`reserved_cutoff`) when the scan `cut`s by it."""
        by_end = self._synced(view)
        if cut and not view.unavailable:
            start, cutoff = reserved_cutoff(head.nb_res, view, by_end.jobs, by_end.keys, by_end.shift)
            return _Held(head.key, start, cutoff, None)
        reservation = reserve(head.nb_res, view, hosts, by_end.jobs)
        resources = reservation.resources
        return _Held(head.key, reservation.start, resources.max() if resources else -1, resources)

    def _same_start(self, nb_res: int, view: ClusterView, start: float) -> bool:
        return earliest_start(nb_res, view, self._synced(view).jobs) == start

    def _synced(self, view: ClusterView) -> RunningByEnd:
        """The running jobs by end, caught up with the view, their keys in as few bits as the platform's ids need
        (one digit below 2**30, `ends.KEY_SHIFT`)."""
        platform = view.platform
        if platform is not self._platform:
            self._platform = platform
            self._shift = platform.nb_resources.bit_length()
        self._by_end.sync(view.running, self._shift)
        return self._by_end

    def _backfill_by_shape(self, now: float, view: ClusterView, held: _Held, hosts: Hosts) -> Iterator[Decision]:
        """The scan of `_backfill`, one shape lookup per start (see the class).

        Most scans start nothing: a first lookup that counts every free unit as outside the reservation (it
        admits every shape the exact one does) says so before the units outside are computed, a difference with
        a set that a fragmented cluster splits into hundreds of intervals."""
        free = view.free
        start = held.start
        if self._shapes.first_backfill(now, start, len(free), len(free)) is None:
            self._settled = (free, held, len(free))
            return
        if hosts is IntervalSet.lowest:
            # the reservation is the lowest ids of a set that holds every free unit (see the class): the free
            # units outside it are those above its last, a cut by bisection instead of a difference of two sets
            outside = _above(free, held.cutoff)
        else:
            assert held.resources is not None  # computed whole for other host selections
            outside = free - held.resources
        while True:
            job = self._shapes.first_backfill(now, start, len(free), len(outside))
            if job is None:
                self._settled = (free, held, len(outside))
                return
            if job.walltime is not None and now + job.walltime <= start:
                resources = hosts(free, job.nb_res)
            else:
                resources = hosts(outside, job.nb_res)
            yield StartJob(job.key, resources)
            self._shapes.discard(job.key)
            free = view.free
            if not free:
                return
            outside = outside - resources


def _above(free: IntervalSet, cutoff: int) -> IntervalSet:
    """The ids of `free` above `cutoff`: `free - IntervalSet.range(0, cutoff + 1)`, as one bisection for the first
    interval that ends above it, and the count of the ids on the side with fewer intervals."""
    intervals = free.intervals
    nb = len(intervals)
    first, last = 0, nb
    while first < last:
        middle = (first + last) >> 1
        if intervals[middle][1] <= cutoff:
            first = middle + 1
        else:
            last = middle
    if first == nb:
        return _NONE
    lo, hi = intervals[first]
    if first == 0 and lo > cutoff:
        return free
    if first + first < nb:  # count what goes: the intervals below, and the part of the first at or below cutoff
        size = len(free) - (cutoff - lo + 1 if lo <= cutoff else 0)
        for k in range(first):
            below_lo, below_hi = intervals[k]
            size -= below_hi - below_lo + 1
    else:  # count what stays
        size = hi - (lo if lo > cutoff else cutoff + 1) + 1
        for k in range(first + 1, nb):
            above_lo, above_hi = intervals[k]
            size += above_hi - above_lo + 1
    if lo > cutoff:
        return IntervalSet._trusted(intervals[first:], size)
    return IntervalSet._trusted(((cutoff + 1, hi), *intervals[first + 1:]), size)


_NONE: Final = IntervalSet()


class _Held:
    """The head's reservation as `EasyBackfilling` holds it between calls: the head, the start, the highest
    reserved id (-1: none), and the reserved units, None where only that id is needed (see the class)."""

    __slots__ = ("cutoff", "head", "resources", "start")

    def __init__(self, head: str, start: float, cutoff: int, resources: IntervalSet | None) -> None:
        self.head = head
        self.start = start
        self.cutoff = cutoff
        self.resources = resources


def _backfill(
    now: float, candidates: Iterable[Job], view: ClusterView, start: float, reserved: IntervalSet, hosts: Hosts
) -> Iterator[Decision]:
    """Start each candidate, in order, that fits now and cannot delay the reservation (at `start`, on `reserved`)."""
    free = view.free
    outside = free - reserved
    nb_free, nb_outside = len(free), len(outside)
    for job in candidates:
        nb_res = job.nb_res
        if nb_res > nb_free:
            continue
        walltime = job.walltime
        if walltime is not None and now + walltime <= start:
            resources = hosts(free, nb_res)
        elif nb_res <= nb_outside:
            resources = hosts(outside, nb_res)
        else:
            continue
        yield StartJob(job.key, resources)
        free = view.free
        nb_free = len(free)
        if not nb_free:
            return
        outside = outside - resources
        nb_outside = len(outside)


BACKFILLING.add("easy", EasyBackfilling)


@register_policy("easy")
class Easy(BatchPolicy):
    """EASY backfilling: one reservation for the head of the queue (submit order unless `order` says)."""

    def __init__(self, order: str = "submit", hosts: str = "lowest"):
        super().__init__(order, "easy", hosts)
