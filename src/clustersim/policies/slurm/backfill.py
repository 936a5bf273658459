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

Node sets are ints used as bitmaps (bit i is node i).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from clustersim.policies.slurm.select import Allocation, select_cpus

WILL_RUN_WINDOW = 30
"""cons_common's `time_window`: the first batch of running jobs removed ends within 30 s."""
KILL_WAIT = 30.0
"""slurm.conf KillWait default: how long past its limit a job still running is guessed to end."""


@dataclass(slots=True)
class Running:
    """A running job as the select plugin sees it: its CPUs per node and its expected end (start + limit)."""

    key: str
    end: float
    allocation: Allocation
    nodes: int


@dataclass(slots=True)
class Candidate:
    """A pending job as the backfill scheduler tests it."""

    key: str
    cpus: int
    nodes: int
    """The nodes of its partition (bitmap)."""
    time_limit: float
    """Seconds: min(job limit, partition MaxTime), whole minutes; a year when unlimited."""


class NodeSpace:
    """Slurm's `node_space_map_t`: contiguous time records, each with the nodes free of reservations."""

    def __init__(self, begin: float, end: float, nodes: int, resolution: float):
        self.records: list[list[float | int]] = [[begin, end, nodes]]
        self.resolution = resolution

    def restrict(self, nodes: int, start: float, end: float) -> tuple[int, float]:
        """The nodes free of reservations on [start, end], and `later_start` (0 when none) as backfill.c finds."""
        records = self.records
        avail = nodes
        later = 0.0
        for j, (begin, stop, free) in enumerate(records):
            free_bits = int(free)
            if stop > start and j + 1 < len(records) and later == 0:
                next_bits = nodes & int(records[j + 1][2])
                if next_bits & ~(avail & free_bits):
                    later = float(stop)
            if stop <= start:
                continue
            if begin <= end:
                avail &= free_bits
            else:
                break
        return avail, later

    def overlaps(self, nodes: int, start: float, end: float) -> bool:
        """Whether planned nodes are reserved for another job somewhere in [start, end) (`_test_resv_overlap`)."""
        return any(stop > start and begin < end and nodes & ~int(free) for begin, stop, free in self.records)

    def reserve(self, start: float, end: float, nodes: int) -> None:
        """Take whole `nodes` out of the map on [start, end) (`_add_reservation`)."""
        records = self.records
        start = max(start, float(records[0][0]))
        end = max(end, start + self.resolution)
        index = None
        for j, record in enumerate(records):
            begin, stop = float(record[0]), float(record[1])
            if stop > start:
                if begin < start:
                    records.insert(j + 1, [start, stop, record[2]])
                    record[1] = start
                    index = j + 1
                else:
                    index = j
                break
            if stop == start:
                index = j + 1
                break
        if index is None:
            return
        while index < len(records):
            record = records[index]
            if end < float(record[1]):
                records.insert(index + 1, [end, record[1], record[2]])
                record[1] = end
            record[2] = int(record[2]) & ~nodes
            if end == float(record[1]):
                break
            index += 1
        merged: list[list[float | int]] = [records[0]]
        for record in records[1:]:
            if record[2] == merged[-1][2]:
                merged[-1][1] = record[1]
            else:
                merged.append(record)
        self.records = merged


def will_run(
    cpus: int, nodes: int, free: Sequence[int], running: Sequence[Running], now: float, epoch: float = 0.0
) -> tuple[float, Allocation] | None:
    """When and where a job could start on `nodes`, by removing running jobs in batches of end times.

    `epoch` is the wall-clock second of t=0: Slurm aligns the 30 s windows on epoch time.
    """
    allocation = select_cpus(cpus, nodes, free)
    if allocation is not None:
        return now, allocation
    future = list(free)
    ordered = sorted(running, key=lambda r: r.end)
    window = WILL_RUN_WINDOW
    batch_end = 0.0
    i = 0
    more = True
    while more:
        last: Running | None = None
        following: Running | None = None
        while True:
            if i >= len(ordered):
                more = False
                break
            job = ordered[i]
            i += 1
            if not job.nodes & nodes:
                continue
            if batch_end == 0.0:
                batch_end = job.end + (WILL_RUN_WINDOW - math.fmod(job.end + epoch, WILL_RUN_WINDOW))
            last = job
            for node, count in job.allocation.items():
                future[node] += count
            if i >= len(ordered):
                more = False
                break
            following = ordered[i]
            if following.end > batch_end + window:
                break
        if last is None:
            break
        window *= 2
        while following is not None and following.end > batch_end + window:
            window *= 2
        allocation = select_cpus(cpus, nodes, future)
        if allocation is not None:
            start = last.end if last.end > now else _guess_end(last, now)
            return start, allocation
    return None


def _guess_end(job: Running, now: float) -> float:
    """A job past its limit but not yet killed: Slurm guesses it ends KillWait later (`_guess_job_end`)."""
    end = job.end + KILL_WAIT
    return end if end > now else now + 1


@dataclass(frozen=True, slots=True)
class BackfillParameters:
    """SchedulerParameters of the backfill scheduler (seconds)."""

    interval: float = 30.0
    resolution: float = 60.0
    window: float = 86400.0
    max_job_test: int = 500
    continue_: bool = False


def backfill_cycle(
    now: float,
    queue: Sequence[Candidate],
    free: list[int],
    running: list[Running],
    up_nodes: int,
    params: BackfillParameters,
    epoch: float = 0.0,
) -> Iterator[tuple[Candidate, Allocation]]:
    """Test the queue (in priority order) and yield the jobs to start now with their CPUs.

    The caller starts each yielded job before resuming the generator; `free` and `running` are updated here,
    so later jobs see it, as the select plugin sees a job started by backfill. `epoch` is the wall-clock second
    of t=0: Slurm rounds to bf_resolution on epoch time.
    """
    res = params.resolution

    def floor(t: float) -> float:
        return math.floor((t + epoch) / res) * res - epoch

    space = NodeSpace(floor(now), floor(now + params.window), up_nodes, res)
    tested = 0
    for job in queue:
        if tested >= params.max_job_test:
            break
        counted = False
        later_start = now
        previous_start = -math.inf
        while True:  # backfill.c's TRY_LATER
            start_res = later_start
            if start_res <= previous_start:
                break  # no progress: Slurm would end the cycle on bf_max_time
            previous_start = start_res
            end_time = job.time_limit + max(start_res, now)
            avail, later_start = space.restrict(job.nodes & up_nodes, start_res, end_time)
            if not avail:
                if later_start:
                    continue
                break
            if not counted:
                tested += 1
                counted = True
            result = will_run(job.cpus, avail, free, running, now, epoch)
            if result is None:
                if later_start:
                    continue
                break
            start, allocation = max(result[0], start_res), result[1]
            if start <= now:
                yield job, allocation
                for node, count in allocation.items():
                    free[node] -= count
                running.append(Running(job.key, now + job.time_limit, allocation, _bitmap(allocation)))
                break
            if later_start and start > later_start:
                continue
            if start > now + params.window:
                break
            planned = _bitmap(allocation)
            begin = floor(start)
            end = floor(start + job.time_limit)
            if space.overlaps(planned, begin, end):
                later_start = start
                continue
            space.reserve(begin, end, planned)
            break


def _bitmap(allocation: Allocation) -> int:
    value = 0
    for node in allocation:
        value |= 1 << node
    return value
