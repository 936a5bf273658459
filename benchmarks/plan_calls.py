"""Record the calls conservative backfilling makes to its time-slice plan, and replay them on the plan alone.

`record` runs a trace under `conservative` (pure modules: it wraps `TimeSlices`' methods) and writes every call
to the plan with the place each re-placement gave. `replay` makes the same calls on a fresh plan, with whatever
build of `policies.batch.timeslices` is on PYTHONPATH, checks every place against the recorded one and prints
the CPU seconds: a change to the plan is timed in seconds instead of a whole simulation's minutes.

    PYTHONPATH=src python benchmarks/plan_calls.py record ../shared/traces/HPC2N-2002-2.2-cln.swf.gz \
        calls.pickle --first 108000 --jobs 12000      # HPC2N's busiest stretch: long queues, plans of 260 slices
    PYTHONPATH=$(python tests/compiled_build.py) python benchmarks/plan_calls.py replay calls.pickle

Only the calls from outside the plan are recorded (a re-placement's own take-out is not), so a replay makes the
policy's calls exactly; the record holds pickled Python tuples and is trusted input, like the traces.
"""

from __future__ import annotations

import argparse
import pickle
import tempfile
import time
from itertools import islice
from pathlib import Path
from typing import Any

NEW, FIRST, REMOVE, REPLAN, RUNNING = range(5)


def record(trace: Path, out: Path, first: int, jobs: int | None) -> None:
    from clustersim.core.simulation import Delivery
    from clustersim.intervals import IntervalSet
    from clustersim.platform.swf_header import platform_from_swf_header
    from clustersim.policies.batch.timeslices import TimeSlices
    from clustersim.policies.registry import create_policy
    from clustersim.runner import simulate
    from clustersim.workload.swf import read_swf

    if not hasattr(TimeSlices.replan, "__code__"):
        raise SystemExit("the compiled build is on PYTHONPATH: recording wraps the pure-Python modules")
    calls: list[tuple[Any, ...]] = []
    plans: dict[int, int] = {}
    init, first_slice, remove, replan, running = (TimeSlices.__init__, TimeSlices.update_first_slice, TimeSlices.remove,
                                            TimeSlices.replan, TimeSlices.place_running)

    def rec_init(plan: TimeSlices, now: float, hosts: IntervalSet) -> None:
        plans[id(plan)] = len(plans)
        calls.append((NEW, len(plans) - 1, now, hosts.mask))
        init(plan, now, hosts)

    def rec_first(plan: TimeSlices, now: float) -> None:
        calls.append((FIRST, plans[id(plan)], now))
        first_slice(plan, now)

    inside = [False]  # the plan's own calls (replan takes a job out) are not recorded

    def rec_remove(plan: TimeSlices, key: str) -> bool:
        if not inside[0]:
            calls.append((REMOVE, plans[id(plan)], key))
        return remove(plan, key)

    def rec_replan(plan: TimeSlices, key: str, nb_res: int, walltime: float, pick: Any = IntervalSet.lowest) -> bool:
        if pick is not IntervalSet.lowest:
            raise SystemExit("only the default host selection is recorded")
        inside[0] = True
        try:
            now = replan(plan, key, nb_res, walltime, pick)
        finally:
            inside[0] = False
        job = plan._jobs.get(key)
        place = None if job is None else (job.start, job.hosts)
        calls.append((REPLAN, plans[id(plan)], key, nb_res, walltime, now, place))
        return now

    def rec_running(plan: TimeSlices, key: str, hosts: IntervalSet, end: float) -> None:
        calls.append((RUNNING, plans[id(plan)], key, hosts.mask, end))
        running(plan, key, hosts, end)

    TimeSlices.__init__ = rec_init  # type: ignore[method-assign, assignment]
    TimeSlices.update_first_slice = rec_first  # type: ignore[method-assign, assignment]
    TimeSlices.remove = rec_remove  # type: ignore[method-assign, assignment]
    TimeSlices.replan = rec_replan  # type: ignore[method-assign, assignment]
    TimeSlices.place_running = rec_running  # type: ignore[method-assign, assignment]
    workload = read_swf(trace)
    if first or jobs:
        workload.jobs = islice(workload.jobs, first, None if jobs is None else first + jobs)
    with tempfile.TemporaryDirectory() as directory:
        simulate(platform_from_swf_header(workload.header), workload, create_policy("conservative"), directory,
                 delivery=Delivery.BATSIM)
    with open(out, "wb") as f:
        pickle.dump(calls, f, protocol=pickle.HIGHEST_PROTOCOL)
    print(f"{len(calls)} calls, {sum(call[0] == REPLAN for call in calls)} re-placements -> {out}")


def replay(path: Path, check: bool) -> None:
    from clustersim.intervals import IntervalSet
    from clustersim.policies.batch.timeslices import TimeSlices

    with open(path, "rb") as f:
        calls: list[tuple[Any, ...]] = pickle.load(f)
    plans: list[TimeSlices] = []
    wrong = 0
    started = time.process_time()
    for call in calls:
        op = call[0]
        if op == REPLAN:
            plan = plans[call[1]]
            if plan.replan(call[2], call[3], call[4]) != call[5]:
                wrong += 1
            elif check:
                job = plan._jobs.get(call[2])
                if (None if job is None else (job.start, job.hosts)) != call[6]:
                    wrong += 1
        elif op == FIRST:
            plans[call[1]].update_first_slice(call[2])
        elif op == REMOVE:
            plans[call[1]].remove(call[2])
        elif op == RUNNING:
            plans[call[1]].place_running(call[2], IntervalSet.from_mask(call[3]), call[4])
        else:
            plans.append(TimeSlices(call[2], IntervalSet.from_mask(call[3])))
    spent = time.process_time() - started
    print(f"{len(calls)} calls replayed in {spent:.2f} s CPU, {wrong} differing from the record"
          + ("" if check else " (starts now only)"))
    if wrong:
        raise SystemExit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    rec = commands.add_parser("record", help="run a trace and record the plan's calls")
    rec.add_argument("trace", type=Path)
    rec.add_argument("out", type=Path)
    rec.add_argument("--first", type=int, default=0, help="skip the trace's first FIRST jobs")
    rec.add_argument("--jobs", type=int, help="only JOBS jobs")
    rep = commands.add_parser("replay", help="replay recorded calls on the plan alone")
    rep.add_argument("calls", type=Path)
    rep.add_argument("--starts-only", action="store_true", help="check only whether each job starts now")
    args = parser.parse_args()
    if args.command == "record":
        record(args.trace, args.out, args.first, args.jobs)
    else:
        replay(args.calls, not args.starts_only)


if __name__ == "__main__":
    main()
