"""Bytes a queued SWF job costs: read a stretch of a trace into a dict by key, as the simulation holds its queue.

Usage: python benchmarks/queued_job_memory.py ../shared/traces/RICC-2010-2.swf.gz [--skip 100000] [--jobs 50000]
       [--columns keyed|bisect]

A queued job is held until it starts, so a trace whose queue grows (RICC queues 50,000 jobs under fcfs) needs this
times its longest queue on top of what the first jobs need. Prints the bytes per job (`tracemalloc`, the dict's
entries included) and the allocations that make them up, by source line.

`--columns` holds the same jobs as columns instead (what a queue that does not keep a `Job` per queued job would
need): ids, submit times, sizes, walltimes and run times in arrays of machine numbers, plus either a dict from each
key to its position (`keyed`: the key strings stay) or nothing more (`bisect`: a key's number is found by
bisection in the ids, which needs ids that grow in queue order, as SWF traces' do).
"""

from __future__ import annotations

import argparse
import math
import tracemalloc
from array import array
from collections.abc import Iterator
from itertools import islice

from clustersim.workload.job import Job
from clustersim.workload.profiles import Delay
from clustersim.workload.swf import read_swf


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trace")
    parser.add_argument("--skip", type=int, default=100_000, help="jobs read and dropped first (default 100,000)")
    parser.add_argument("--jobs", type=int, default=50_000, help="jobs held (default 50,000)")
    parser.add_argument("--columns", choices=("keyed", "bisect"), help="hold the jobs as columns (see above)")
    args = parser.parse_args()
    jobs = iter(read_swf(args.trace).jobs)
    for _ in islice(jobs, args.skip):
        pass
    tracemalloc.start()
    if args.columns:
        _columns(jobs, args.jobs, args.columns == "keyed")
        return
    held: dict[str, Job] = {}
    for job in islice(jobs, args.jobs):
        held[job.key] = job
    size, _ = tracemalloc.get_traced_memory()
    snapshot = tracemalloc.take_snapshot()
    tracemalloc.stop()
    count = len(held)
    print(f"{args.trace}: {count} jobs held after {args.skip} skipped: {size / count:.0f} bytes per job")
    for stat in snapshot.statistics("lineno")[:10]:
        frame = stat.traceback[0]
        print(f"  {stat.size / count:6.1f} B/job  {stat.count:>8} blocks  {frame.filename}:{frame.lineno}")


def _columns(jobs: Iterator[Job], count: int, keyed: bool) -> None:
    ids, sizes = array("q"), array("q")
    submits, walltimes, runs = array("d"), array("d"), array("d")
    positions: dict[str, int] = {}
    for job in islice(jobs, count):
        if keyed:
            positions[job.key] = len(ids)
        ids.append(int(job.id))
        sizes.append(job.nb_res)
        submits.append(job.submit_time)
        walltimes.append(math.nan if job.walltime is None else job.walltime)
        runs.append(job.profile.seconds if isinstance(job.profile, Delay) else math.nan)
    size, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"{len(ids)} jobs held as columns ({'with a dict by key' if keyed else 'ids bisected'}): "
          f"{size / len(ids):.0f} bytes per job")


if __name__ == "__main__":
    main()
