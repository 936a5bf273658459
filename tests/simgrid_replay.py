"""Replay a Batsim reference case's schedule (its starts and allocations) through the simgrid platform model.

    python tests/simgrid_replay.py CASE_DIR    # prints {job_id: [start, execution_time, final_state]} as JSON

SimGrid runs one simulation per process, so the tests call this script once per case. The scripted decision
process starts each job at Batsim's starting time on Batsim's hosts, so the execution times measure the
execution model alone, apart from the scheduler. Batsim numbers the hosts in SimGrid's order, by name
(`h10` before `h2`): the network family's heterogeneous platforms show it, as `--host-order name` does.
"""

from __future__ import annotations

import csv
import json
import sys
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path

from clustersim.execution.simgrid import SimgridExecution
from clustersim.intervals import IntervalSet
from clustersim.platform.simgrid import IgnoredPlatformElements, read_simgrid_platform
from clustersim.records.outcome import JobOutcome
from clustersim.scheduling.decisions import CallMeLater, Decision, StartJob
from clustersim.scheduling.events import Event
from clustersim.simulation import Simulation
from clustersim.state import ClusterView
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


def replay(case: Path) -> dict[str, list[object]]:
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
    execution = SimgridExecution(platform, case / "platform.xml")
    Simulation(platform, workload, BatsimSchedule(starts), [outcomes], execution=execution).run()
    return outcomes.rows


if __name__ == "__main__":
    json.dump(replay(Path(sys.argv[1])), sys.stdout)
