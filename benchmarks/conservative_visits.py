"""Count what conservative backfilling's compressions do, to know what skipping the jobs that cannot move would save.

At every job end conservative_bf places every queued job again (`TimeSlices.replan`). This replays a trace under
`conservative` and sorts those visits: a job placed for the first time, a job that moved (another start or other
hosts), a job that stayed because no region freed since its last placement can move it (`_may_move`, no search),
and a job that stayed after a search. It prints each kind's count and the CPU seconds spent in `replan` for it
(the clock read around each call: relative figures, slower than a plain run). An index that skipped every job that
stays, at no cost, would save at most the two "stayed" rows (and their share of the policy's loop).

    python benchmarks/conservative_visits.py ../shared/traces/HPC2N-2002-2.2-cln.swf.gz
    python benchmarks/conservative_visits.py ../shared/traces/HPC2N-2002-2.2-cln.swf.gz --jobs 60000

It wraps the pure-Python modules' methods, so it measures the pure build (run it without the compiled build on
PYTHONPATH).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import Counter
from itertools import islice
from pathlib import Path

from clustersim.core.simulation import Delivery
from clustersim.intervals import IntervalSet
from clustersim.platform.swf_header import platform_from_swf_header
from clustersim.policies.batch.timeslices import Pick, TimeSlices
from clustersim.policies.registry import create_policy
from clustersim.runner import simulate
from clustersim.workload.swf import read_swf

KINDS = ("placed first", "moved", "stayed, no search", "stayed after a search")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trace", type=Path, help="SWF trace")
    parser.add_argument("--jobs", type=int, help="only the first JOBS jobs")
    args = parser.parse_args()

    counts: Counter[str] = Counter()
    cpu: Counter[str] = Counter()
    searched = [False]
    replan, may_move = TimeSlices.replan, TimeSlices._may_move
    if not hasattr(replan, "__code__"):
        parser.error("the compiled build is on PYTHONPATH: this wraps the pure-Python modules")

    def counted_may_move(plan: TimeSlices, seen: int, start: float, end: float,
                         hosts: int) -> tuple[float, float, bool] | None:
        window = may_move(plan, seen, start, end, hosts)
        searched[0] = window is not None
        return window

    def counted_replan(plan: TimeSlices, key: str, nb_res: int, walltime: float,
                       pick: Pick = IntervalSet.lowest) -> bool:
        job = plan._jobs.get(key)
        searched[0] = True
        started = time.process_time_ns()
        now = replan(plan, key, nb_res, walltime, pick)
        spent = time.process_time_ns() - started
        placed = plan._jobs.get(key)
        if job is None:
            kind = KINDS[0]
        elif placed is None or (placed.start, placed.hosts) != (job.start, job.hosts):
            kind = KINDS[1]
        else:
            kind = KINDS[3] if searched[0] else KINDS[2]
        counts[kind] += 1
        cpu[kind] += spent
        return now

    TimeSlices.replan = counted_replan  # type: ignore[method-assign, assignment]
    TimeSlices._may_move = counted_may_move  # type: ignore[method-assign, assignment]
    workload = read_swf(args.trace)
    if args.jobs:
        workload.jobs = islice(workload.jobs, args.jobs)
    started = time.process_time()
    with tempfile.TemporaryDirectory() as out:
        result = simulate(platform_from_swf_header(workload.header), workload, create_policy("conservative"), out,
                          delivery=Delivery.BATSIM)
    total = time.process_time() - started
    visits = sum(counts.values())
    print(f"{args.trace.name}: {result.metrics.nb_jobs} jobs, {visits} visits, {total:.1f} s CPU in all (counting)")
    print(f"{'visit':24} {'count':>10} {'share':>6} {'replan s':>10} {'share':>6}")
    spent = sum(cpu.values()) or 1
    for kind in KINDS:
        print(f"{kind:24} {counts[kind]:>10} {counts[kind] / max(visits, 1):>6.1%} {cpu[kind] / 1e9:>10.1f} "
              f"{cpu[kind] / spent:>6.1%}")


if __name__ == "__main__":
    main()
