"""Replay a recorded schedule (a Batsim out_jobs.csv: starts and allocations) through an execution model.

    python -m clustersim.records.replay CASE_DIR [--model fast|simgrid]
        # CASE_DIR holds platform.xml, workload.json and out_jobs.csv (a Batsim reference case);
        # prints {job_id: [start, execution_time, final_state]} as JSON

The scripted decision process starts each job at the recorded time on the recorded hosts, so the execution
times measure the execution model alone, apart from any scheduler. SimGrid runs one simulation per process:
callers run this module once per case. Batsim numbers hosts in SimGrid's order, by name (`h10` before `h2`),
which is `--host-order name`: the reference corpus's heterogeneous platforms show it.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path

from clustersim.core.decisions import CallMeLater, Decision, StartJob
from clustersim.core.events import Event
from clustersim.core.execution_choice import MODELS, execution_model
from clustersim.core.outcome import JobOutcome
from clustersim.core.simulation import Simulation
from clustersim.core.state import ClusterView
from clustersim.intervals import IntervalSet
from clustersim.platform.simgrid import IgnoredPlatformElements, read_simgrid_platform
from clustersim.workload.batsim_json import read_batsim_workload


class BatsimSchedule:
    """Starts each job at the time, and on the hosts, that Batsim's out_jobs.csv gives.

    Batsim's times are rounded to the microsecond, so a job may be due a hair before the job holding its hosts
    ends here: it then starts as soon as they are free.
    """

    def __init__(self, starts: list[tuple[float, str, IntervalSet]]):
        self.starts = sorted(starts, key=lambda start: start[0])

    def begin(self, view: ClusterView) -> Iterable[Decision]:
        return [CallMeLater(time) for time in sorted({start[0] for start in self.starts})]

    def decide(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterable[Decision]:
        decisions: list[Decision] = []
        free = view.free
        for start in [s for s in self.starts if s[0] <= now]:
            _, key, units = start
            if key in view.pending and units.issubset(free):
                decisions.append(StartJob(key, units))
                free = free - units
                self.starts.remove(start)
        return decisions

    def end(self, view: ClusterView) -> None:
        return None


class Outcomes:
    def __init__(self) -> None:
        self.rows: dict[str, list[object]] = {}

    def record(self, outcome: JobOutcome) -> None:
        assert outcome.start is not None and outcome.finish is not None
        self.rows[outcome.job.id] = [outcome.start, outcome.finish - outcome.start, outcome.state.name]

    def close(self) -> None:
        return None


def replay(case: Path, model: str = "simgrid") -> dict[str, list[object]]:
    """Each job's (start, execution time, final state) when the case's recorded schedule is replayed."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IgnoredPlatformElements)
        platform = read_simgrid_platform(case / "platform.xml", order="name")
    starts: list[tuple[float, str, IntervalSet]] = []
    with open(case / "out_jobs.csv", newline="") as rows:
        for row in csv.DictReader(rows):
            if row["starting_time"]:
                units = IntervalSet.parse(row["allocated_resources"])
                key = f"{row['workload_name']}!{row['job_id']}"
                starts.append((float(row["starting_time"]), key, units))
    workload = read_batsim_workload(case / "workload.json")
    outcomes = Outcomes()
    execution = execution_model(model, platform, case / "platform.xml", workload)
    Simulation(platform, workload, BatsimSchedule(starts), [outcomes], execution=execution).run()
    return outcomes.rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("case", type=Path, help="folder with platform.xml, workload.json and out_jobs.csv")
    parser.add_argument("--model", choices=MODELS, default="simgrid", help="execution model (default simgrid)")
    args = parser.parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the fast model's warning that it ignores communication: known here
        json.dump(replay(args.case, args.model), sys.stdout)


if __name__ == "__main__":
    main()
