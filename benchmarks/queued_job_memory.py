"""Bytes a queued SWF job costs: read a stretch of a trace into a dict by key, as the simulation holds its queue.

Usage: python benchmarks/queued_job_memory.py ../shared/traces/RICC-2010-2.swf.gz [--skip 100000] [--jobs 50000]

A queued job is held until it starts, so a trace whose queue grows (RICC queues 50,000 jobs under fcfs) needs this
times its longest queue on top of what the first jobs need. Prints the bytes per job (`tracemalloc`, the dict's
entries included) and the allocations that make them up, by source line.
"""

from __future__ import annotations

import argparse
import tracemalloc
from itertools import islice

from clustersim.workload.job import Job
from clustersim.workload.swf import read_swf


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trace")
    parser.add_argument("--skip", type=int, default=100_000, help="jobs read and dropped first (default 100,000)")
    parser.add_argument("--jobs", type=int, default=50_000, help="jobs held (default 50,000)")
    args = parser.parse_args()
    jobs = iter(read_swf(args.trace).jobs)
    for _ in islice(jobs, args.skip):
        pass
    tracemalloc.start()
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


if __name__ == "__main__":
    main()
