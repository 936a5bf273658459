"""batsched's time-slice schedule (batsched 1.4, `src/schedule.cpp`): the plan conservative backfilling and
batsched's energy variants are built on.

The future is cut into slices `[begins[i], begins[i+1])` (the last one lasts forever), each with the set of hosts
free all along it. A job is placed by first fit: the first slice, in time order, from whose beginning the job's
`nb_res` hosts stay free for its walltime, where "free" is the intersection of the free sets of every slice the
job spans; it takes the lowest hosts of that intersection (or what the host selection picks). A job with a zero
walltime holds its hosts over the whole slice it is placed in (to the end of time in the last one), and over the
slices later cut out of it: batsched's slice split copies the slice's jobs. A slice is cut at
the end of each job placed, and two neighbouring slices merge again when no job starts or ends between them (the
same jobs in both: batsched's rule). The first slice begins at the current time: it is moved forward at each
decision, and it may last zero seconds when a job ends exactly now but its end has not been told yet; a job
placed after it is then not "started in the first slice", as in batsched.

batsched computes with exact rationals; this uses floats, the same numbers whenever times and walltimes are
integers (all of the reference corpus and every SWF trace). Free hosts are kept as bit masks (`IntervalSet.mask`):
the intersections over the slices a job spans, made for every queued job at every compression, then cost a few
machine operations each.

A compression places every queued job again, but most keep their place: the plan logs each region freed (a job
taken out) with the stretch its hosts are then free through, and a job is searched again only if a region freed
since its last placement could hold part of a new place, and then only over the starts that region allows
(`_may_move` proves it; the outputs are those of searching every job). Once jobs have moved, a region is seen as
the plan is now: what moved jobs filled in it no longer counts.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable
from functools import reduce
from itertools import accumulate, repeat
from operator import and_, or_
from typing import Final, NamedTuple

from clustersim.intervals import IntervalSet
from clustersim.policies.sorted_search import first_after, first_from

PRUNE_FROM_SLICES = 64
"""By default, a plan of at most this many slices searches every job again (`_may_move` is not asked): a search
there costs less than keeping the freed regions current, which its many moves make stale (HPC2N's first 60,000
jobs: about 42 slices, half the re-placements move)."""

Pick = Callable[[IntervalSet, int], IntervalSet]
"""Which `count` hosts of the candidates a job takes (batsched: the lowest)."""

_LOWEST: Final[Pick] = IntervalSet.lowest
"""batsched's host selection, compared by identity (read once, not looked up on the class at every call)."""


class Planned:
    """A planned job's place: from `start` to `end` on the hosts of the mask `hosts` (`nb_res` of them), `first`
    when it was placed in the first slice, and `seen`, how many regions had been freed when it was last placed or
    kept (the position in the log of freed regions it has seen). A place never changes: a job placed again gets a
    new one; only `seen` moves forward when a compression keeps the job where it is (one store, compiled, no
    tuple to build)."""

    __slots__ = ("end", "first", "hosts", "nb_res", "seen", "start")

    def __init__(self, start: float, end: float, hosts: int, nb_res: int, first: bool, seen: int) -> None:
        self.start = start
        self.end = end
        self.hosts = hosts
        self.nb_res = nb_res
        self.first = first
        self.seen = seen


class Placement(NamedTuple):
    """Where a job was placed: from `start` on the hosts of `mask`; `now` is True when it starts in the first
    slice."""

    start: float
    mask: int
    now: bool

    @property
    def hosts(self) -> IntervalSet:
        return IntervalSet.from_mask(self.mask)


class TimeSlices:
    """batsched's `Schedule`: the planned jobs (running or not) and the free hosts of every time slice."""

    __slots__ = (
        "_alive_end",
        "_alive_regions",
        "_alive_seen",
        "_alive_takes",
        "_edges",
        "_freed",
        "_freed_base",
        "_jobs",
        "_takes",
        "begins",
        "counts",
        "free",
        "prune",
        "prune_from",
    )

    def __init__(self, now: float, hosts: IntervalSet):
        self.begins: list[float] = [now]
        self.free: list[int] = [hosts.mask]
        """The free hosts of each slice, as bit masks."""
        self.counts: list[int] = [len(hosts)]
        self._edges: dict[float, int] = {}
        """How many planned jobs start or end at each boundary between two slices (the first slice's beginning
        is not one): the boundary goes when that count falls to zero."""
        self._jobs: dict[str, Planned] = {}
        """Each planned job's place."""
        self._freed: list[tuple[int, float, float, float, float, int]] = []
        """Every region freed (a job taken out), in order: those of its hosts still free somewhere in it, the
        earliest beginning and latest end of the stretch any of them is free through it (`_may_move`), the
        region's beginning and end, and the value of `_takes` when the first three were computed (-1 when its
        stretch is not computed yet: `_log_freed`)."""
        self._takes = 0
        """How many places were taken so far: a freed region's free hosts and stretch computed since the last take
        are current (`_refreshed`)."""
        self._alive_seen = self._alive_end = self._alive_takes = -1
        """The position, end of `_freed` and `_takes` that `_alive_regions` were computed for (`_alive`)."""
        self._alive_regions: list[tuple[int, float, float]] = []
        self._freed_base = 0
        """How many freed regions were dropped from the front of `_freed` (seen by every planned job)."""
        self.prune = True
        """Skip re-placing a job that no region freed since its last placement can move (`_may_move`); False
        re-places every job by the full search (the straightforward computation, for the tests)."""
        self.prune_from = PRUNE_FROM_SLICES
        """Skip only in a plan of more slices than this (a test sets 0 to skip in small plans)."""

    def __contains__(self, key: str) -> bool:
        return key in self._jobs

    def __len__(self) -> int:
        return len(self._jobs)

    def start(self, key: str) -> float:
        """When a planned job starts (or started)."""
        return self._jobs[key].start

    def slices(self) -> list[tuple[float, IntervalSet]]:
        """Each slice's beginning and free hosts."""
        return [(begin, IntervalSet.from_mask(free)) for begin, free in zip(self.begins, self.free, strict=True)]

    def update_first_slice(self, now: float) -> None:
        """The present moves to `now`: the first slice begins there (batsched's `update_first_slice`).

        batsched requires `now` to be within the first slice; slices that ended before `now` (which a simulation
        where jobs end by their walltime never leaves) are dropped rather than refused."""
        begins = self.begins
        while len(begins) > 1 and begins[1] < now:
            self._edges.pop(begins[1], None)
            del begins[0], self.free[0], self.counts[0]
        begins[0] = now

    def hosts(self, key: str) -> IntervalSet:
        """The hosts of a planned job."""
        return IntervalSet.from_mask(self._jobs[key].hosts)

    def add(self, key: str, nb_res: int, walltime: float, pick: Pick = IntervalSet.lowest) -> Placement | None:
        """Place a job by first fit (batsched's `add_job_first_fit`); None if it can never fit."""
        return self._placement(key) if self._add(key, nb_res, walltime, pick) else None

    def _add(self, key: str, nb_res: int, walltime: float, pick: Pick) -> bool:
        """`add`: whether the job was placed."""
        fit = self._first_fit(nb_res, walltime)
        if fit is None:
            return False
        i, k, start, end, candidates = fit
        self._take(key, i, k, start, end, _picked(pick, candidates, nb_res), nb_res)
        return True

    def _placement(self, key: str) -> Placement | None:
        job = self._jobs.get(key)
        return None if job is None else Placement(job.start, job.hosts, job.first)

    def replace(self, key: str, nb_res: int, walltime: float, pick: Pick = IntervalSet.lowest) -> Placement | None:
        """Take a job out and place it again by first fit (batsched's compression step), or place it if it was not
        planned; None if it can never fit."""
        self.replan(key, nb_res, walltime, pick)
        return self._placement(key)

    def replan(self, key: str, nb_res: int, walltime: float, pick: Pick = IntervalSet.lowest) -> bool:
        """`replace`, telling only whether the job starts now (placed in the first slice): a compression keeps
        most jobs where they are, and this makes no `Placement` for them.

        The new place is computed first as if the job were out; when it is the old one (the usual case) nothing
        changes, which saves taking the job out and back. The two give the same place: the boundaries taking the
        job out would merge separate slices with equal free hosts, and a start there is tried on the earlier
        slice first, with the same hosts and no more constraints.
        """
        job = self._jobs.get(key)
        if job is None or walltime == 0:
            # A zero walltime's place lasts to the end of the slice it is found in, which taking it out may merge.
            if job is not None:
                self.remove(key)
            return self._add(key, nb_res, walltime, pick) and self._jobs[key].first
        start, end, hosts, nb_own, first = job.start, job.end, job.hosts, job.nb_res, job.first
        begins, counts = self.begins, self.counts
        lowest = pick is _LOWEST
        if (
            self.prune
            and len(begins) > self.prune_from
            and start > begins[0]
            and lowest
            and nb_own == nb_res
            and end == start + walltime
        ):
            window = self._may_move(job.seen, start, end, hosts)
            if window is None:
                job.seen = self._freed_base + len(self._freed)
                return False
            # Only starts within the window may fit before the job's own.
            if NATIVE:
                i = first_after(begins, start, 0, len(begins)) - 1
                lo = first_from(begins, window[0], 0, i)
                stop = first_after(begins, window[1], lo, i)
            else:
                i = bisect.bisect_right(begins, start) - 1
                lo = bisect.bisect_left(begins, window[0], hi=i)
                stop = bisect.bisect_right(begins, window[1], lo=lo, hi=i)
            lower = window[2]
        else:
            i = 0 if first else bisect.bisect_right(begins, start) - 1
            lo, stop, lower = 0, i, True
        if i > 0:
            if NATIVE:
                k = first_from(begins, end, i + 1, len(begins))
                roomy = _reaches(counts, lo, stop, nb_res)
            else:
                k = bisect.bisect_left(begins, end, lo=i + 1)
                roomy = lo < stop and max(counts[lo:stop]) >= nb_res
            if lowest and not roomy:
                # No earlier slice has room enough even by count: the job stays, and keeps its hosts unless a
                # lower one is now free all along its place.
                below = (1 << (hosts.bit_length() - 1)) - 1
                if not lower or not self._free_below(i, k, below):
                    self._kept(job)
                    return False
            own = (i, k, hosts, nb_own)
            # Another host selection may pick other hosts at the own start or later (and `lo` is 0 then).
            fit = self._first_fit(nb_res, walltime, own, stop if lowest else None, lo)
            if fit is None and lowest:
                # Nothing fits before the own place, which still fits: the job stays there, on its hosts unless a
                # lower one is now free all along.
                # It is the first fit then, with the hosts free all along plus its own.
                below = (1 << (hosts.bit_length() - 1)) - 1
                free_along = self._free_below(i, k, below) if lower else 0
                if free_along:
                    fit = i, k, start, end, free_along | hosts
            if fit is None and lowest:
                self._kept(job)
                return False
            if fit is not None:
                new_i, _, new_start, new_end, candidates = fit
                if new_i == i and new_end == end:
                    if lowest:
                        # The candidates hold the old hosts: they stay the lowest unless a lower one is free.
                        below = (1 << (hosts.bit_length() - 1)) - 1
                        if not candidates & ~hosts & below:
                            self._kept(job)
                            return False
                    elif _picked(pick, candidates, nb_res) == hosts:
                        self._kept(job)
                        return False
                new_hosts = _picked(pick, candidates, nb_res)
                # Take the job out, then the new place (a boundary there survives the removal, or the first fit
                # would have found the earlier slice the removal merges it into).
                self.remove(key)
                if new_i:
                    new_i = bisect.bisect_right(begins, new_start) - 1
                new_k = bisect.bisect_left(begins, new_end, lo=new_i + 1)
                self._take(key, new_i, new_k, new_start, new_end, new_hosts, nb_res)
                return new_i == 0
        self.remove(key)
        return self._add(key, nb_res, walltime, pick) and self._jobs[key].first

    def _free_below(self, i: int, k: int, below: int) -> int:
        """The hosts of `below` free all along slices i..k-1 (the two ends first: they rule out most)."""
        free = self.free
        along = free[i] & free[k - 1] & below
        return along and along & reduce(and_, free[i + 1 : k - 1], -1)

    def _kept(self, job: Planned) -> None:
        """A job keeps its place, which is its first fit now: it has seen every region freed so far."""
        job.seen = self._freed_base + len(self._freed)

    def _may_move(self, seen: int, start: float, end: float, hosts: int) -> tuple[float, float, bool] | None:
        """The earliest and latest start of a place that regions freed since a job was placed (at position `seen`
        of `_freed`) may let it take instead of its own (earlier, or on lower hosts), and whether a host below its
        own may now be free all along its place (False proves none is); None proves its place is still its first
        fit.

        Its place was the first fit when it was placed; since then the plan has only gained jobs except in the
        regions freed (and time passed, which removes starts). So a new first fit uses a freed cell, on some host h
        of the region freed last among those it uses; when that region was freed, every other cell of the new
        place was free already, except the job's own. So h was then free through a stretch that begins no later
        than the job's start and either lasts its walltime or, when h is one of the job's hosts, reaches its
        start (the job's own cells on h follow). The new place starts within that stretch.

        A stretch computed at any moment between the region's freeing and now bounds the same places: the new
        place's cells, free when its last region was freed and free now, stayed free in between (a cell taken and
        freed again would be in a later region). So each region's stretch is computed again on the current plan
        once places were taken since (`_refreshed`): moved jobs fill what was freed, and a region with no host
        free any more (filled) moves no job.

        The same start on a lower host h needs h free all along the job's place now, when it was not at the
        placement (the job took the lowest hosts free all along). Take the region freed last among those holding a
        cell of h in the place: when it was freed, h was free all along the place already (a cell taken then would
        be freed by a later region), so the region's stretch, computed then or since, begins no later than the
        job's start and ends no earlier than its end, and the region holds h, below the job's highest host."""
        freed = self._freed
        since = seen - self._freed_base
        # When many regions were freed (many jobs moved), checking each would cost more than the search it saves,
        # which takes a few steps per slice: the whole plan is searched then.
        if len(freed) - since > 16 + len(self.begins) // 4:
            return -math.inf, start, True
        walltime = end - start
        below = -1  # the hosts below the job's highest one, computed when a region first asks
        lo, hi = math.inf, -math.inf
        lower = False
        for region, first, last in self._alive(seen):
            if first <= start:
                if region & hosts and last >= start:
                    lo, hi = min(lo, first), start
                elif last - first >= walltime:
                    lo, hi = min(lo, first), max(hi, last - walltime if walltime < math.inf else start)
                if last >= end and not lower:
                    if below < 0:
                        below = (1 << (hosts.bit_length() - 1)) - 1
                    if region & below:
                        lower = True
        if hi < lo:
            return (start, start, True) if lower else None
        return lo, min(hi, start), lower

    def _first_fit(
        self,
        nb_res: int,
        walltime: float,
        own: tuple[int, int, int, int] | None = None,
        stop: int | None = None,
        begin: int = 0,
    ) -> tuple[int, int, float, float, int] | None:
        """The first slice i from which `nb_res` hosts stay free for `walltime`, the end k of its span, the start,
        end and the hosts free all along (a mask). `own` (slices i0..k0-1, hosts mask, number of hosts) are free
        too: the job being placed again holds them. Only slices from `begin` (and before `stop`) are tried.

        A start needs `nb_res` free hosts in its first slice and in every slice of its span: the counts are checked
        from the span's end, and where one has too few every start up to it fails too (its span holds that slice,
        since spans end no earlier as starts move later), so the scan jumps past it. Then the whole span is checked
        at once, the intersections of its slices' free hosts accumulated from the span's end backwards at C level
        rather than a Python step per slice (spans of a hundred slices are common in long queues). Where the
        intersection of slices j..k-1 falls below `nb_res` hosts, every start up to j fails too, for the same
        reason, so the scan jumps past j. Within the own slices, the own hosts add to the free hosts (and to the
        count) of each slice."""
        begins, free, counts = self.begins, self.free, self.counts
        own_from, own_to, own_hosts, own_nb = own if own is not None else (0, 0, 0, 0)
        nb_slices = len(begins)
        last = nb_slices if stop is None else stop
        i = begin
        while i < last:
            count = counts[i]
            if count < nb_res and not (own_from <= i < own_to and count + own_nb >= nb_res):
                i += 1
                continue
            start = begins[i]
            end = start + walltime if walltime else begins[i + 1] if i + 1 < nb_slices else math.inf
            k = first_from(begins, end, i + 1, nb_slices) if NATIVE else bisect.bisect_left(begins, end, i + 1)
            # Every slice of the span needs `nb_res` free hosts: the last that has fewer rules out every start up
            # to it (its span holds it), by the counts alone, before any intersection is made.
            s = k - 1
            while s > i:
                count = counts[s]
                if count < nb_res and not (own_from <= s < own_to and count + own_nb >= nb_res):
                    break
                s -= 1
            if s > i:
                i = s + 1
                continue
            if NATIVE:
                s, along = _narrowed(free, i, k, own_from, own_to, own_hosts, nb_res)
                if s < i:
                    return i, k, start, end, along
                i = s + 1
                continue
            if k <= own_from or i >= own_to:
                span = free[i:k]
            else:
                # The span's parts before, within and after the own slices: [i, a), [a, b), [b, k).
                a, b = max(i, own_from), min(k, own_to)
                span = free[i:a]
                span += map(or_, free[a:b], repeat(own_hosts))
                span += free[b:k]
            # The intersections of the span's last slices, from its end: where they get too few hosts, every
            # start up to there fails too (its span holds those slices).
            span.reverse()
            ands = list(accumulate(span, and_))
            fitting = bisect.bisect_right(ands, -nb_res, key=_minus_bits)
            if fitting == k - i:
                return i, k, start, end, ands[-1]
            i = k - fitting
        return None

    def _take(self, key: str, i: int, k: int, start: float, end: float, hosts: int, nb_res: int) -> None:
        """Take `hosts` on slices i..k-1, cutting slice k-1 at `end` first."""
        begins, free, counts, edges = self.begins, self.free, self.counts, self._edges
        if begins[k - 1] < end < (begins[k] if k < len(begins) else math.inf):
            begins.insert(k, end)
            free.insert(k, free[k - 1])
            counts.insert(k, counts[k - 1])
        if end != math.inf and (end != start or (k < len(begins) and begins[k] == end)):
            # A job in a first slice of zero length holds that slice's end: batsched merges no slices whose jobs
            # differ.
            edges[end] = edges.get(end, 0) + 1
        if i:
            edges[start] = edges.get(start, 0) + 1
        self._takes += 1
        keep = ~hosts
        for s in range(i, k):
            free[s] &= keep
            counts[s] -= nb_res
        self._jobs[key] = Planned(start, end, hosts, nb_res, i == 0, self._freed_base + len(self._freed))

    def place_running(self, key: str, hosts: IntervalSet, end: float) -> None:
        """Hold `hosts` from now until `end` for a job already running (when the plan is built again)."""
        begins = self.begins
        k = bisect.bisect_left(begins, end) if end > begins[0] else 1
        self._take(key, 0, max(k, 1), begins[0], end, hosts.mask, len(hosts))

    def remove(self, key: str) -> bool:
        """Take a job out of the plan (batsched's `remove_job_if_exists`); False if it was not in it."""
        job = self._jobs.pop(key, None)
        if job is None:
            return False
        start, end, hosts, nb_res, first = job.start, job.end, job.hosts, job.nb_res, job.first
        begins, free, counts = self.begins, self.free, self.counts
        if first:
            i = 0
        else:
            i = (first_after(begins, start, 0, len(begins)) if NATIVE else bisect.bisect_right(begins, start)) - 1
        s = i
        nb_slices = len(begins)
        while s < nb_slices and (s == i or begins[s] < end):
            free[s] |= hosts
            counts[s] += nb_res
            s += 1
        self._log_freed(i, s, hosts)
        # The boundaries this job made go when no other job starts or ends there: the end first (it is later).
        held = s < nb_slices and begins[s] == end
        if end != math.inf and (end != start or held):
            self._unmark(end, s if held else None)
        if not first:
            self._unmark(start, i)
        return True

    def _log_freed(self, i: int, k: int, hosts: int) -> None:
        """Log the region of slices i..k-1 just freed on `hosts`. Its stretch (through which any of them is free)
        is computed when a job first asks (`_alive` refreshes an entry whose `_takes` is not current): a stretch
        computed at any moment after the freeing bounds the same places (`_may_move`), most regions are freed by
        a job that moves, whose new place is taken at once and makes a stretch computed now stale, and a plan of
        few slices never asks. A region of zero length is not computed again (`_refreshed`): its stretch is
        computed now."""
        begins = self.begins
        begin, stop = begins[i], begins[k] if k < len(begins) else math.inf
        freed = self._freed
        if stop <= begin:
            first, last = self._stretch(i, k, hosts)
            freed.append((hosts, first, last, begin, stop, self._takes))
        else:
            freed.append((hosts, begin, stop, begin, stop, -1))
        if len(freed) > 256 + 2 * len(self._jobs):
            # Drop what every job waiting in the plan has seen (jobs in the first slice are never skipped).
            end = self._freed_base + len(freed)
            seen = min((job.seen for job in self._jobs.values() if not job.first), default=end)
            del freed[: seen - self._freed_base]
            self._freed_base = seen

    def _alive(self, seen: int) -> list[tuple[int, float, float]]:
        """The regions freed since position `seen` that still have a free host, each with its free hosts and
        stretch, as the plan is now; kept until a place is taken or a region freed (the jobs of a compression
        mostly ask from the same position)."""
        takes, end = self._takes, self._freed_base + len(self._freed)
        if seen != self._alive_seen or end != self._alive_end or takes != self._alive_takes:
            freed = self._freed
            alive = []
            for index in range(seen - self._freed_base, len(freed)):
                entry = freed[index]
                # A region with no free host left (filled) never gets one back: it is not computed again.
                if entry[5] != takes and entry[0]:
                    entry = freed[index] = self._refreshed(entry)
                if entry[0]:
                    alive.append((entry[0], entry[1], entry[2]))
            self._alive_seen, self._alive_end, self._alive_takes, self._alive_regions = seen, end, takes, alive
        return self._alive_regions

    def _refreshed(
        self, entry: tuple[int, float, float, float, float, int]
    ) -> tuple[int, float, float, float, float, int]:
        """A freed region's entry computed again on the current plan: its hosts free on some slice of it, and the
        stretch through which any of those is free, an upper bound for each (the earliest beginning and latest end
        over them, as `_log_freed`'s). A region of zero length (in a first slice of zero length) is kept as it
        was logged."""
        hosts, first, last, begin, end, _ = entry
        if end <= begin:
            return entry
        begins = self.begins
        if NATIVE:
            i = max(first_after(begins, begin, 0, len(begins)) - 1, 0)
            k = first_from(begins, end, i + 1, len(begins))
        else:
            i = max(bisect.bisect_right(begins, begin) - 1, 0)
            k = bisect.bisect_left(begins, end, lo=i + 1)
        # Its hosts free on some slice of it: slice by slice, until every one was found (often in the first).
        free = self.free
        missing = hosts
        for s in range(i, k):
            found = free[s] & missing
            if found:
                missing ^= found
                if not missing:
                    break
        hosts ^= missing
        if hosts:
            first, last = self._stretch(i, k, hosts)
        return hosts, first, last, begin, end, self._takes

    def _stretch(self, i: int, k: int, hosts: int) -> tuple[float, float]:
        """The earliest beginning and latest end of the stretch around slices i..k-1 through which any of `hosts`
        is free (an upper bound for each host's own)."""
        begins, free = self.begins, self.free
        nb_slices = len(begins)
        left, held = i, hosts
        while left > 0 and held & free[left - 1]:
            held &= free[left - 1]
            left -= 1
        right, held = k, hosts
        while right < nb_slices and held & free[right]:
            held &= free[right]
            right += 1
        return begins[left], begins[right] if right < nb_slices else math.inf

    def _unmark(self, t: float, index: int | None) -> None:
        edges = self._edges
        left = edges.get(t, 0) - 1
        if left > 0:
            edges[t] = left
            return
        edges.pop(t, None)
        if index is None:
            index = bisect.bisect_right(self.begins, t) - 1
        if index > 0 and self.begins[index] == t:
            del self.begins[index], self.free[index], self.counts[index]


def _native() -> bool:
    """Whether this module runs compiled (a compiled function has no Python code object)."""
    return not hasattr(_native, "__code__")


NATIVE: Final = _native()
"""Compiled, the plan's searches over the slices' beginnings and counts run as loops on native numbers (`first_after`,
`first_from`, `_reaches`): a few nanoseconds a step, where a call to the C `bisect` or `max` boxes its arguments and
compares objects. In Python those loops would be slower than the C calls, which the pure path keeps."""


def _reaches(counts: list[int], lo: int, stop: int, nb_res: int) -> bool:
    """Whether a slice in lo..stop-1 has at least `nb_res` free hosts (`max(counts[lo:stop]) >= nb_res`)."""
    return any(counts[s] >= nb_res for s in range(lo, stop))


def _narrowed(
    free: list[int], i: int, k: int, own_from: int, own_to: int, own_hosts: int, nb_res: int
) -> tuple[int, int]:
    """The span check of `TimeSlices._first_fit` as a loop, compiled: the intersections of the free hosts of slices
    k-1, k-2, ... down to i (the own hosts added in the own slices), until one has fewer than `nb_res` hosts. The
    slice where that happens and the intersection before it; i - 1 and the intersection of the whole span when
    none does. The hosts are counted only when a slice takes some away."""
    along = -1
    s = k - 1
    while s >= i:
        slice_free = free[s] | own_hosts if own_from <= s < own_to else free[s]
        narrower = along & slice_free
        if narrower != along:
            if narrower.bit_count() < nb_res:
                return s, along
            along = narrower
        s -= 1
    return s, along


def _minus_bits(mask: int) -> int:
    return -mask.bit_count()


def _picked(pick: Pick, candidates: int, count: int) -> int:
    """The hosts `pick` takes among the candidates (masks)."""
    if pick is _LOWEST:
        return _lowest(candidates, count)
    return pick(IntervalSet.from_mask(candidates), count).mask


def _lowest(mask: int, count: int) -> int:
    """The `count` lowest bits of `mask` (which has at least that many), run by run."""
    taken = 0
    while count:
        lo = (mask & -mask).bit_length() - 1
        shifted = mask >> lo
        width = min((shifted ^ (shifted + 1)).bit_length() - 1, count)
        run = ((1 << width) - 1) << lo
        taken |= run
        mask ^= run
        count -= width
    return taken
