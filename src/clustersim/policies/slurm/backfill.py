"""One cycle of Slurm 22.05's backfill scheduler (src/plugins/sched/backfill/backfill.c, `_attempt_backfill`).

What makes Slurm's backfill differ from textbook EASY or conservative backfilling, and is modelled here:

- **Two resolutions.** Running jobs are tracked per CPU by the select plugin's will-run test, but pending jobs'
  reservations are recorded in a map of *whole nodes* over time (`NodeSpace`): once a higher-priority job is
  planned on a node, no lower-priority job may use any CPU of that node during the planned interval, even CPUs
  the planned job leaves idle.
- **The will-run test** (`will_run`, cons_common `_will_run_test`): if the job does not fit now, running jobs
  are removed in order of their end time (start + time limit), in batches whose window starts at the first
  end rounded up to 30 s and doubles after each batch; the job's planned start is the end of the last job
  removed in the batch that makes it fit.
- **bf_resolution**: reservation bounds are rounded *down* to multiples of it, so a reservation may end before
  the job it protects.
- **bf_window**: a job planned to start beyond it gets no reservation.
- **bf_max_job_test**: at most that many jobs are tested per cycle.
- **TRY_LATER**: when the nodes free of reservations do not suffice, or the planned nodes overlap a reservation,
  the job is tried again from the end of the map record where more nodes become available.

Node sets are ints used as bitmaps (bit i is node i). The map and the will-run test's walk hold them in two
words (`WORD`) so that the compiled path's set operations stay on machine integers.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Final

from clustersim.policies.slurm.select import Allocation, Consumables, GresHeld, ShapedRequest, bits, select_cpus
from clustersim.policies.sorted_search import first_after, first_from

WILL_RUN_WINDOW: Final = 30
"""cons_common's `time_window`: the first batch of running jobs removed ends within 30 s."""
YEAR: Final = 365 * 86400.0
WORD: Final = 62
"""Nodes per word: the map's records and the running jobs keep their node sets as two words, nodes 0 to 61 and
the others, because mypyc's fast integers are 63-bit tagged: a wider bitmap is a Python long, and every `&` or
`~` on it allocates. Up to 124 nodes every operation of the map and of the will-run walk stays on machine words
(beyond, the second word is a long again: the same results, as before)."""
LOW: Final = (1 << WORD) - 1


@dataclass(slots=True)
class Running:
    """A running job as the select plugin sees it: its CPUs per node and its expected end (start + limit)."""

    key: str
    end: float
    allocation: Allocation
    nodes: int
    limit: float | None = None
    """Its time limit in seconds (None: unlimited), for the guess made when OverTimeLimit is UNLIMITED."""
    memory: Allocation = field(default_factory=dict)
    """MiB it holds per node (memory as a consumable resource)."""
    gres: GresHeld = field(default_factory=dict)
    cpus: int = field(init=False)
    """Its CPUs in all (the will-run test adds them up at once when all its nodes are tested)."""
    per_node: int = field(init=False)
    """The CPUs it holds on each of its nodes when that is the same on all (0 otherwise)."""
    low: int = field(init=False)
    high: int = field(init=False)
    """`nodes` in two words (`WORD`), for the will-run walk."""

    def __post_init__(self) -> None:
        self.low, self.high = self.nodes & LOW, self.nodes >> WORD
        self.cpus = sum(self.allocation.values())
        counts = set(self.allocation.values())
        self.per_node = counts.pop() if len(counts) == 1 else 0


@dataclass(slots=True)
class Candidate:
    """A pending job as the backfill scheduler tests it."""

    key: str
    cpus: int
    nodes: int
    """The nodes of its partition (bitmap)."""
    time_limit: float
    """Seconds: min(job limit, partition MaxTime), whole minutes; a year when unlimited."""
    request: ShapedRequest | None = None
    """A request shaped by sbatch options or memory (None: `cpus` CPUs anywhere)."""


class Validity:
    """The interval of `now` over which a cycle's comparisons with now come out the same: [lo, hi)."""

    __slots__ = ("hi", "lo")

    def __init__(self, now: float):
        self.lo = now
        self.hi = math.inf

    def below(self, value: float) -> None:
        """A comparison found now < value."""
        if value < self.hi:
            self.hi = value

    def at_least(self, value: float) -> None:
        """A comparison found now >= value."""
        if value > self.lo:
            self.lo = value

    def never(self) -> None:
        """A result depends on now itself."""
        self.hi = self.lo


class NodeSpace:
    """Slurm's `node_space_map_t`: contiguous time records, each with the nodes free of reservations.

    Record j is [bounds[j], bounds[j + 1]) with the nodes `low[j] | high[j] << WORD` (two words: `WORD`); no
    two neighbours have the same nodes (a reservation merges them). The records are found by bisection and a
    reservation only rewrites its own span.
    """

    __slots__ = ("bounds", "high", "low", "resolution")

    def __init__(self, begin: float, end: float, nodes: int, resolution: float):
        self.bounds: list[float] = [begin, end]
        self.low: list[int] = [nodes & LOW]
        self.high: list[int] = [nodes >> WORD]
        self.resolution = resolution

    @property
    def records(self) -> list[list[float | int]]:
        """The records as [begin, end, nodes] (Slurm's map entries)."""
        bounds, high = self.bounds, self.high
        return [[bounds[j], bounds[j + 1], low | high[j] << WORD] for j, low in enumerate(self.low)]

    def restrict(
        self, nodes: int, start: float, end: float, validity: Validity | None = None, limit: float = 0.0
    ) -> tuple[int, float]:
        """The nodes free of reservations on [start, end], and `later_start` (0 when none) as backfill.c finds.

        backfill.c walks the records that end after `start`, intersecting those that begin by `end` and noting
        the end of the first record after which more of `nodes` are free. With `validity`, `start` is the
        cycle's now and `end` now + `limit`: what the comparisons with now found is recorded there.
        """
        bounds, low, high = self.bounds, self.low, self.high
        count = len(low)
        # The first record ending after start (the first one for the cycle's now, as a rule).
        first = 0 if start < bounds[1] else first_after(bounds, start, 1, count + 1) - 1
        if first >= count:
            if validity is not None:
                validity.at_least(bounds[count])
            return nodes, 0.0
        last = first_after(bounds, end, first, count) - 1  # the last record beginning by end
        nodes_low, nodes_high = nodes & LOW, nodes >> WORD
        avail_low, avail_high = nodes_low, nodes_high
        later = 0.0
        # The records looked at: those intersected, and the one that ends the walk (when there is one).
        stop = min(max(last + 1, first), count - 1)
        for j in range(first, stop):
            avail_low &= low[j]
            avail_high &= high[j]
            if (low[j + 1] & nodes_low & ~avail_low or high[j + 1] & nodes_high & ~avail_high) and bounds[j + 1]:
                later = bounds[j + 1]
                for k in range(j + 1, last + 1):
                    avail_low &= low[k]
                    avail_high &= high[k]
                break
        else:
            if last >= stop:  # the last record begins by end
                avail_low &= low[stop]
                avail_high &= high[stop]
            elif stop + 1 < count and (low[stop + 1] & nodes_low & ~(avail_low & low[stop])
                                       or high[stop + 1] & nodes_high & ~(avail_high & high[stop])) \
                    and bounds[stop + 1]:
                later = bounds[stop + 1]  # noted at the record that ends the walk
        if validity is not None:
            if first:
                validity.at_least(bounds[first])
            validity.below(bounds[first + 1])
            if last >= first:
                validity.at_least(bounds[last] - limit)
            if last + 1 < count:
                validity.below(bounds[max(last + 1, first)] - limit)
        return avail_low | avail_high << WORD, later

    def overlaps(self, nodes: int, start: float, end: float) -> bool:
        """Whether planned nodes are reserved for another job somewhere in [start, end) (`_test_resv_overlap`)."""
        bounds, low, high = self.bounds, self.low, self.high
        count = len(low)
        first = first_after(bounds, start, 1, count + 1) - 1
        stop = first_from(bounds, end, 0, count)
        nodes_low, nodes_high = nodes & LOW, nodes >> WORD
        return any(nodes_low & ~low[j] or nodes_high & ~high[j] for j in range(first, stop))

    def reserve(self, start: float, end: float, nodes: int) -> bool:
        """Take whole `nodes` out of the map on [start, end) (`_add_reservation`); whether it reaches the map's end
        (where the map's extent, bf_window from now, shapes it)."""
        bounds, low, high = self.bounds, self.low, self.high
        start = max(start, bounds[0])
        end = max(end, start + self.resolution)
        map_end = bounds[-1]
        reached = end >= map_end
        if start >= map_end:
            return reached
        first = first_after(bounds, start, 0, len(bounds)) - 1
        if bounds[first] < start:  # split the record holding start
            first += 1
            bounds.insert(first, start)
            low.insert(first, low[first - 1])
            high.insert(first, high[first - 1])
        if end < map_end:
            stop = first_from(bounds, end, 0, len(bounds))
            if bounds[stop] != end:  # split the record holding end
                bounds.insert(stop, end)
                low.insert(stop, low[stop - 1])
                high.insert(stop, high[stop - 1])
        else:
            stop = len(low)
        taken_low, taken_high = ~(nodes & LOW), ~(nodes >> WORD)
        for j in range(first, stop):
            low[j] &= taken_low
            high[j] &= taken_high
        # Merge neighbours made equal (only around and inside the rewritten span).
        j = min(stop, len(low) - 1)
        while j > max(first - 1, 0):
            if low[j] == low[j - 1] and high[j] == high[j - 1]:
                del low[j], high[j], bounds[j]
            j -= 1
        return reached


class Releases:
    """The idle CPUs of every node once the first k running jobs (in end order) have ended, for each k asked: what
    a will-run result chooses its CPUs on (`Fit.allocation`).

    select_cpus reads the idle CPUs of the job's nodes only, and there they are the free CPUs plus those of every
    job among the first k (a job not on those nodes adds nothing there), whatever the nodes. So the states are
    shared by all the results of a cycle, and of the cycles after it while no job starts or ends (the memory
    holding them is cleared then). Each state keeps its nodes by idle CPUs as bitmaps (count c: words 2c and
    2c + 1, two words as `WORD`), made from the one before by one job's CPUs: the key of a choice already made
    (`_SELECTIONS`) is then a few `&`, not a walk over the nodes."""

    __slots__ = ("_counted", "_current", "_epoch", "_free", "_levels", "_running", "_walks")

    def __init__(self, free: list[int], running: Sequence[Running], epoch: float):
        self._free = free
        self._running = running
        self._epoch = epoch
        self._walks: dict[int, _Walk] = {}
        self._current = list(free)
        """The idle CPUs once the jobs of the last state made have ended."""
        words: list[int] = []
        counted = True
        for node, count in enumerate(free):
            if count > 0:
                _add_node(words, count, node)
            elif count < 0:
                counted = False
        self._levels: list[list[int]] = [words]
        self._counted = counted
        """Whether the bitmaps count every idle CPU (no node is over-committed), for `idle`."""

    def walk(self, nodes: int) -> _Walk:
        """The will-run walk on `nodes` (kept: `_Walk`)."""
        walk = self._walks.get(nodes)
        if walk is None:
            walk = self._walks[nodes] = _Walk(nodes, self.idle(nodes), self._running, self._epoch)
        return walk

    def idle(self, nodes: int) -> int:
        """The idle CPUs of `nodes` in all: a few popcounts of the bitmaps by idle CPUs, no list of members."""
        if not self._counted:
            return idle_total(self._free, bits(nodes))
        words = self._levels[0]
        low, high = nodes & LOW, nodes >> WORD
        total = 0
        for index in range(2, len(words), 2):
            total += (index >> 1) * ((words[index] & low).bit_count() + (words[index + 1] & high).bit_count())
        return total

    def _level(self, k: int) -> list[int]:
        """The nodes by idle CPUs once the first k running jobs have ended."""
        levels = self._levels
        current = self._current
        while len(levels) <= k:
            words = list(levels[-1])
            for node, count in self._running[len(levels) - 1].allocation.items():
                before = current[node]
                after = current[node] = before + count
                if before > 0:
                    _add_node(words, before, node, False)
                if after > 0:
                    _add_node(words, after, node)
            levels.append(words)
        return levels[k]

    def select(self, cpus: int, nodes: int, k: int, weights: Sequence[int] | None) -> tuple[Allocation, int]:
        """select_cpus for `cpus` on `nodes` once the first k running jobs have ended (their idle CPUs must
        suffice in all, so it cannot fail), remembered with the allocation's nodes as a bitmap.

        The key is the nodes of `nodes` with each count of idle CPUs (select_cpus sees nothing else: a node
        without an idle CPU breaks a run of consecutive nodes as a node outside `nodes` does), so node sets that
        differ only by nodes without one share an entry."""
        words = self._level(k)
        low, high = nodes & LOW, nodes >> WORD
        parts: list[int] = [cpus]
        for index in range(0, len(words), 2):
            part_low, part_high = words[index] & low, words[index + 1] & high
            if part_low or part_high:
                parts.append(index)
                parts.append(part_low)
                parts.append(part_high)
        key = (tuple(parts), None if weights is None else tuple(weights))
        entry = _SELECTIONS.get(key)
        if entry is None:
            future = list(self._free)
            running = self._running
            for i in range(k):
                job = running[i]
                if job.low & low or job.high & high:
                    for node, count in job.allocation.items():
                        future[node] += count
            allocation = select_cpus(cpus, nodes, future, weights=weights)
            assert allocation is not None
            entry = (allocation, node_bitmap(allocation))
            if len(_SELECTIONS) >= 65536:
                _SELECTIONS.clear()
            _SELECTIONS[key] = entry
        return entry


def _add_node(words: list[int], count: int, node: int, present: bool = True) -> None:
    """Put `node` in (or, not `present`, take it out of) the bitmap of the nodes with `count` idle CPUs."""
    index = 2 * count
    if node >= WORD:
        index += 1
        node -= WORD
    while len(words) <= index | 1:
        words.append(0)
    if present:
        words[index] |= 1 << node
    else:
        words[index] &= ~(1 << node)


_SelectionKey = tuple[tuple[int, ...], tuple[int, ...] | None]
_SELECTIONS: Final[dict[_SelectionKey, tuple[Allocation, int]]] = {}
"""select_cpus results with their nodes as a bitmap, by (CPUs and the usable nodes by idle CPUs, weights): it
reads nothing else, and the same states recur from cycle to cycle. The allocations are shared: nobody changes
one."""


class Fit:
    """Where a will-run test found a job fits: after the last running job removed (None: now), on CPUs chosen
    only when first asked (`allocation`). The backfill pass never uses 40% of its results (their start comes
    after the map record where more nodes free up, or beyond bf_window), so it mostly skips the choice."""

    __slots__ = ("_allocation", "_ended", "_planned", "_releases", "cpus", "last", "nodes", "weights")

    def __init__(self, last: Running | None, cpus: int, nodes: int, releases: Releases | None, ended: int,
                 weights: Sequence[int] | None, allocation: Allocation | None = None):
        self.last = last
        self.cpus = cpus
        self.nodes = nodes
        self._releases = releases
        """The idle CPUs as the running jobs end (their free CPUs must not change while the result is kept)."""
        self._ended = ended
        """The running jobs, first in end order, whose CPUs come back before the job starts (`last` among them)."""
        self.weights = weights
        self._allocation = allocation
        self._planned = -1
        """The nodes of `allocation` as a bitmap (-1: not asked yet)."""

    def allocation(self) -> Allocation:
        """The job's CPUs: select_cpus on the nodes' idle CPUs and those of the removed jobs (chosen once)."""
        allocation = self._allocation
        if allocation is None:
            releases = self._releases
            assert releases is not None
            allocation, self._planned = releases.select(self.cpus, self.nodes, self._ended, self.weights)
            self._allocation = allocation
            self._releases = None
        return allocation

    def planned(self) -> int:
        """The nodes the job would be planned on (`allocation`'s, as a bitmap; asked once)."""
        planned = self._planned
        if planned < 0:
            allocation = self.allocation()
            planned = self._planned
            if planned < 0:
                planned = self._planned = node_bitmap(allocation)
        return planned


WillRunCache = dict[tuple[int, int], "Fit | None"]
"""(CPUs, nodes) -> where the job fits, or None when it never fits. Valid while no job starts or ends: the caller
clears it then."""
_UNKNOWN: Final = Fit(None, 0, 0, None, 0, None)
"""Not in the cache (a cached result may be None)."""


def will_run(
    cpus: int,
    nodes: int,
    free: list[int],
    running: Sequence[Running],
    now: float,
    epoch: float = 0.0,
    cache: WillRunCache | None = None,
    params: BackfillParameters | None = None,
    validity: Validity | None = None,
    request: ShapedRequest | None = None,
    other: Consumables | None = None,
) -> tuple[float, Allocation] | None:
    """When and where a job could start on `nodes`, by removing running jobs in batches of end times.

    `running` is in order of end time (stable: jobs ending together keep their order). `epoch` is the
    wall-clock second of t=0: Slurm aligns the 30 s windows on epoch time. With a `cache`, a test already made
    on the same free CPUs and running jobs is not made again (only `now` may differ, and it only enters the
    result through the guess for a job past its limit). `params` gives the nodes' weights and the guess's
    KillWait and OverTimeLimit. `validity` records how the result depends on now. A shaped `request` is tested
    on the free CPUs and `other` resources (memory, GPUs) instead of `cpus`, without the cache.
    """
    found = will_run_fit(cpus, nodes, free, running, now, epoch, cache, params, validity, request, other)
    return None if found is None else (found[0], found[1].allocation())


def will_run_fit(
    cpus: int,
    nodes: int,
    free: list[int],
    running: Sequence[Running],
    now: float,
    epoch: float = 0.0,
    cache: WillRunCache | None = None,
    params: BackfillParameters | None = None,
    validity: Validity | None = None,
    request: ShapedRequest | None = None,
    other: Consumables | None = None,
    releases: Releases | None = None,
) -> tuple[float, Fit] | None:
    """`will_run` with the CPUs chosen when asked (`Fit.allocation`): `free` must not change before then.
    `releases`, made on the same `free` and `running`, chooses the CPUs (shared by the tests of a cycle)."""
    params = params or BackfillParameters()
    key = (cpus, nodes)
    cached = _UNKNOWN if cache is None or request is not None else cache.get(key, _UNKNOWN)
    if request is not None:
        found = _will_run_request(request, nodes, free, other, running, epoch)
    elif cached is not _UNKNOWN:
        found = cached
    else:
        capacity = params.capacity(nodes)
        # Every CPU is idle or held by a running job: with fewer CPUs in all, removing them all does not help.
        found = None if capacity is not None and capacity < cpus else _will_run(
            cpus, nodes, free, running, epoch, params.weights, releases)
        if cache is not None:
            cache[key] = found
    if found is None:
        return None
    last = found.last
    if last is None:
        return now, found
    if last.end > now:
        if validity is not None:
            validity.below(last.end)
        return last.end, found
    if validity is not None:
        validity.at_least(last.end)
    return _guess_end(last, now, params, validity), found


def _will_run(
    cpus: int, nodes: int, free: list[int], running: Sequence[Running], epoch: float,
    weights: Sequence[int] | None, releases: Releases | None = None,
) -> Fit | None:
    """`_will_run_test`: None when the job never fits, else after which running job removed it fits (None: now).

    select_cpus fails exactly when the nodes' idle CPUs total less than the job asks, so the running total of
    CPUs freed by the removed batches says when the job fits; the CPUs are chosen later, if asked. The walk is
    kept per node set with `releases` (`_Walk`).
    """
    if releases is None:
        releases = Releases(free, running, epoch)
    walk = releases.walk(nodes)
    if walk.idle >= cpus:
        return Fit(None, cpus, nodes, releases, 0, weights)
    index = walk.reach(cpus)
    if index < 0:
        return None
    return Fit(walk.lasts[index], cpus, nodes, releases, walk.ended[index], weights)


class _Walk:
    """`_will_run_test`'s walk over the running jobs on one node set, kept for the tests of other job sizes on the
    same nodes (a third of the fresh tests of a cycle repeat a node set on the same free CPUs): the nodes' idle
    CPUs, then, at the end of each batch of removed jobs, the CPUs in all, the last job removed and how many
    running jobs (first in end order) are behind. Made batch by batch, as far as a test needs."""

    __slots__ = ("_batch_end", "_epoch", "_high", "_i", "_low", "_more", "_nodes", "_running", "_total",
                 "_window", "ended", "idle", "lasts", "totals")

    def __init__(self, nodes: int, idle: int, running: Sequence[Running], epoch: float):
        self._nodes = nodes
        self._low, self._high = nodes & LOW, nodes >> WORD
        self._running = running
        self._epoch = epoch
        self.idle = self._total = idle
        self._i = 0
        self._window = WILL_RUN_WINDOW
        self._batch_end = 0.0
        self._more = True
        self.totals: list[int] = []
        """The CPUs in all at the end of each batch."""
        self.lasts: list[Running] = []
        self.ended: list[int] = []

    def reach(self, cpus: int) -> int:
        """The first batch after which the nodes have `cpus` CPUs in all (-1: none)."""
        totals = self.totals
        for index in range(len(totals)):
            if totals[index] >= cpus:
                return index
        nodes, nodes_low, nodes_high = self._nodes, self._low, self._high
        ordered = self._running
        epoch = self._epoch
        total, i, window, batch_end = self._total, self._i, self._window, self._batch_end
        while self._more:
            last: Running | None = None
            following: Running | None = None
            while True:
                if i >= len(ordered):
                    self._more = False
                    break
                job = ordered[i]
                i += 1
                if not (job.low & nodes_low or job.high & nodes_high):
                    continue
                if batch_end == 0.0:
                    batch_end = job.end + (WILL_RUN_WINDOW - math.fmod(job.end + epoch, WILL_RUN_WINDOW))
                last = job
                if not (job.low & ~nodes_low or job.high & ~nodes_high):
                    total += job.cpus
                elif job.per_node:
                    total += job.per_node * ((job.low & nodes_low).bit_count() + (job.high & nodes_high).bit_count())
                else:
                    total += sum(count for node, count in job.allocation.items() if nodes >> node & 1)
                if i >= len(ordered):
                    self._more = False
                    break
                following = ordered[i]
                if following.end > batch_end + window:
                    break
            if last is None:
                self._more = False
                break
            window *= 2
            while following is not None and following.end > batch_end + window:
                window *= 2
            totals.append(total)
            self.lasts.append(last)
            self.ended.append(i)
            if total >= cpus:
                self._total, self._i, self._window, self._batch_end = total, i, window, batch_end
                return len(totals) - 1
        self._total, self._i, self._window, self._batch_end = total, i, window, batch_end
        return -1


def idle_total(free: list[int], members: list[int]) -> int:
    """The idle CPUs of the nodes `members` in all: a plain loop, which the compiled path runs on the list itself
    (`sum(map(free.__getitem__, ...))` calls a Python method per node)."""
    total = 0
    for node in members:
        total += free[node]
    return total


def _will_run_request(
    request: ShapedRequest, nodes: int, free: list[int], other: Consumables | None,
    running: Sequence[Running], epoch: float,
) -> Fit | None:
    """`_will_run` for a shaped request: the same batches of running jobs, tested with `request.select`."""
    allocation = request.select(nodes, free, other)
    if allocation is not None:
        return Fit(None, request.shape.tasks, nodes, None, 0, None, allocation)
    future = list(free)
    future_other = None if other is None else other.copy()
    last: Running | None = None
    for batch in _removal_batches(nodes, running, epoch):
        for job in batch:
            for node, count in job.allocation.items():
                future[node] += count
            if future_other is not None:
                future_other.add(job.memory, job.gres)
            last = job
        allocation = request.select(nodes, future, future_other)
        if allocation is not None:
            return Fit(last, request.shape.tasks, nodes, None, 0, None, allocation)
    return None


def _removal_batches(nodes: int, running: Sequence[Running], epoch: float) -> Iterator[list[Running]]:
    """The running jobs on `nodes` in the batches `_will_run` removes them: a batch ends after a job on `nodes`
    when the next running job ends beyond the window (from the first end rounded up to 30 s), which then
    doubles until it holds that job."""
    window = WILL_RUN_WINDOW
    batch_end = 0.0
    batch: list[Running] = []
    for i, job in enumerate(running):
        if not job.nodes & nodes:
            continue
        if batch_end == 0.0:
            batch_end = job.end + (WILL_RUN_WINDOW - math.fmod(job.end + epoch, WILL_RUN_WINDOW))
        batch.append(job)
        if i + 1 < len(running) and running[i + 1].end > batch_end + window:
            yield batch
            batch = []
            window *= 2
            while running[i + 1].end > batch_end + window:
                window *= 2
    if batch:
        yield batch


def _guess_end(job: Running, now: float, params: BackfillParameters, validity: Validity | None) -> float:
    """A job past its limit but not yet killed: when Slurm guesses it ends (`_guess_job_end`): KillWait and
    OverTimeLimit after its limit, or, with OverTimeLimit=UNLIMITED, its whole limit from now."""
    if params.over_time_limit is None:
        if validity is not None:
            validity.never()
        return now + (YEAR if job.limit is None else job.limit)
    end = job.end + params.kill_wait + params.over_time_limit
    if end > now:
        if validity is not None:
            validity.below(end)
        return end
    if validity is not None:
        validity.never()
    return now + 1


@dataclass(frozen=True, slots=True)
class BackfillParameters:
    """What the backfill scheduler reads from slurm.conf: its SchedulerParameters, KillWait and OverTimeLimit
    (seconds; None: UNLIMITED) and the nodes' Weight (None: all equal)."""

    interval: float = 30.0
    resolution: float = 60.0
    window: float = 86400.0
    max_job_test: int = 500
    continue_: bool = False
    kill_wait: float = 30.0
    over_time_limit: float | None = 0.0
    weights: tuple[int, ...] | None = None
    node_cpus: tuple[int, ...] | None = None
    """The CPUs of each node (None: unknown): a job asking more than its nodes hold in all never fits, known
    without walking the running jobs."""
    uniform_cpus: int = field(init=False, default=0)
    """The CPUs of every node when all have the same (0 otherwise)."""

    def __post_init__(self) -> None:
        cpus = self.node_cpus
        object.__setattr__(self, "uniform_cpus", cpus[0] if cpus and min(cpus) == max(cpus) else 0)

    def capacity(self, nodes: int) -> int | None:
        """The CPUs the nodes hold in all (idle or not); None when node_cpus is unknown."""
        cpus = self.node_cpus
        if cpus is None:
            return None
        if self.uniform_cpus:
            return self.uniform_cpus * nodes.bit_count()
        return sum(map(cpus.__getitem__, bits(nodes)))



@dataclass(slots=True)
class BackfillMemory:
    """What one cycle may reuse from the previous ones while no job starts or ends (the caller calls `clear`
    then): the will-run tests, and the last cycle that started nothing with the interval of now over which its
    comparisons with now come out the same (the same queue then starts nothing again)."""

    will_run: WillRunCache = field(default_factory=dict)
    queue: tuple[Candidate, ...] | None = None
    valid_from: float = 0.0
    valid_until: float = -math.inf
    idle: dict[int, int] = field(default_factory=dict)
    """Idle CPUs in all per node set (the main scheduler asks them too, for the same free CPUs)."""
    releases: Releases | None = None
    """The idle CPUs as the running jobs end, which the will-run results choose their CPUs on."""

    def clear(self) -> None:
        self.will_run.clear()
        self.idle.clear()
        self.queue = None
        self.releases = None

    def releases_for(self, free: list[int], running: Sequence[Running], epoch: float) -> Releases:
        """The idle CPUs as the running jobs end (`free` and `running` as when the memory was last cleared)."""
        releases = self.releases
        if releases is None:
            releases = self.releases = Releases(free, running, epoch)
        return releases

    def repeats(self, now: float, queue: tuple[Candidate, ...]) -> bool:
        """Whether a cycle at now repeats the last idle cycle: it starts nothing either."""
        return self.queue == queue and self.valid_from <= now < self.valid_until

    def idle_cpus(self, nodes: int, free: list[int]) -> int:
        """The idle CPUs of `nodes` in all (`free` must be the CPUs free since the last `clear`)."""
        total = self.idle.get(nodes)
        if total is None:
            total = self.idle[nodes] = idle_total(free, bits(nodes))
        return total


def _last_fit(queue: Sequence[Candidate], free: list[int], up_nodes: int, memory: BackfillMemory) -> int:
    """The last position of the queue whose job fits the idle CPUs of its nodes, reservations ignored (-1:
    none)."""
    for position in range(len(queue) - 1, -1, -1):
        job = queue[position]
        if job.cpus <= memory.idle_cpus(job.nodes & up_nodes, free):
            return position
    return -1


def idle_until(
    now: float, queue: Sequence[Candidate], free: list[int], up_nodes: int, memory: BackfillMemory
) -> float:
    """Until when (exclusive; cycles at now or later) a cycle is known to start nothing without running it while
    no job is submitted, starts or ends (`backfill_cycle`'s two shortcuts): for ever when no job fits the idle
    CPUs of its nodes; to the end of its validity when it repeats the last idle cycle; -inf when not known."""
    if _last_fit(queue, free, up_nodes, memory) < 0:
        return math.inf
    if memory.repeats(now, tuple(queue)):
        return memory.valid_until
    return -math.inf


def backfill_cycle(
    now: float,
    queue: Sequence[Candidate],
    free: list[int],
    running: list[Running],
    up_nodes: int,
    params: BackfillParameters,
    epoch: float = 0.0,
    memory: BackfillMemory | None = None,
    other: Consumables | None = None,
) -> Iterator[tuple[Candidate, Allocation]]:
    """Test the queue (in priority order) and yield the jobs to start now with their CPUs.

    The caller starts each yielded job before resuming the generator; the cycle works on copies of `free`,
    `running` and `other` that it updates, so later jobs see it, as the select plugin sees a job started by
    backfill. `epoch` is the wall-clock second
    of t=0: Slurm rounds to bf_resolution on epoch time. `memory` carries will-run tests and the last idle cycle
    over to later cycles while no job starts or ends (a start here clears it). `other` is the memory and GPUs free
    per node.

    Two kinds of cycles are known to start nothing without running them (their node space map dies with them):
    those in which no job fits the idle CPUs of its nodes, reservations ignored, and those that repeat an idle
    cycle (same queue, same running jobs) at a now for which every comparison with now comes out the same. A
    cycle ends once no later job fits the idle CPUs of its nodes (checked again after each start).
    """
    memory = memory if memory is not None else BackfillMemory()
    signature = tuple(queue)
    if memory.repeats(now, signature):
        return
    last_fit = _last_fit(queue, free, up_nodes, memory)
    """The last position whose job fits the idle CPUs of its nodes, reservations ignored: after it, the cycle
    can only plan reservations nobody after can use (starts only remove CPUs)."""
    if last_fit < 0:
        return
    cache = memory.will_run
    validity = Validity(now)
    free = list(free)
    other = None if other is None else other.copy()
    running = sorted(running, key=_end)
    res = params.resolution

    def floor(t: float) -> float:
        return math.floor((t + epoch) / res) * res - epoch

    space = NodeSpace(floor(now), floor(now + params.window), up_nodes, res)
    space_begin, map_end = space.bounds[0], space.bounds[-1]
    tested = 0
    started_keys: set[str] = set()
    for position, job in enumerate(queue):
        if tested >= params.max_job_test or position > last_fit:
            break
        if job.key in started_keys:
            continue  # a job queued in several partitions started from an earlier entry
        counted = False
        later_start = now
        previous_start = -math.inf
        job_nodes = job.nodes & up_nodes
        while True:  # backfill.c's TRY_LATER
            start_res = later_start
            if start_res <= previous_start:
                break  # no progress: Slurm would end the cycle on bf_max_time
            previous_start = start_res
            end_time = job.time_limit + max(start_res, now)
            if start_res == now:
                avail, later_start = space.restrict(job_nodes, now, end_time, validity, job.time_limit)
            else:
                avail, later_start = space.restrict(job_nodes, start_res, end_time)
            if not avail:
                if later_start:
                    continue
                break
            if not counted:
                tested += 1
                counted = True
            result = will_run_fit(job.cpus, avail, free, running, now, epoch, cache, params, validity, job.request,
                                  other, memory.releases_for(free, running, epoch))
            if result is None:
                if later_start:
                    continue
                break
            start, fit = max(result[0], start_res), result[1]
            if start <= now:
                allocation = fit.allocation()
                yield job, allocation
                for node, count in allocation.items():
                    free[node] -= count
                started = Running(job.key, now + job.time_limit, allocation, node_bitmap(allocation),
                                  job.time_limit)
                if job.request is not None and other is not None:
                    started.memory, started.gres = job.request.holds(allocation, other)
                    other.add(started.memory, started.gres, -1)
                running.insert(bisect.bisect_right(running, started.end, key=_end), started)
                memory.clear()
                started_keys.add(job.key)
                # The start took CPUs: later jobs that no longer fit the idle CPUs cannot start in this cycle
                # (and a cycle that started a job records no idle cycle), so it ends sooner.
                while last_fit > position and queue[last_fit].cpus > memory.idle_cpus(
                        queue[last_fit].nodes & up_nodes, free):
                    last_fit -= 1
                break
            validity.below(start)
            if later_start and start > later_start:
                continue
            if start > now + params.window:
                validity.below(start - params.window)
                break
            validity.at_least(start - params.window)
            planned = fit.planned()
            begin = floor(start)
            end = floor(start + job.time_limit)
            if space.overlaps(planned, begin, end):
                later_start = start
                continue
            if space.reserve(begin, end, planned):
                # It reaches the map's end (now + bf_window, rounded): a later cycle makes the same map while
                # that end stays at or before where the reservation wants to end (or start, when beyond).
                first = max(begin, space_begin)
                last = first if first >= map_end else max(end, first + res)
                validity.below(last + res - params.window)
            break
    if not started_keys:
        memory.queue = signature
        memory.valid_from, memory.valid_until = validity.lo, validity.hi


def _end(job: Running) -> float:
    return job.end


def node_bitmap(allocation: Allocation) -> int:
    """The nodes of an allocation as a bitmap (built in two words, `WORD`, joined once)."""
    low = high = 0
    for node in allocation:
        if node < WORD:
            low |= 1 << node
        else:
            high |= 1 << (node - WORD)
    return low | high << WORD
