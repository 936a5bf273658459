"""Schedule metrics accumulated from the stream of job outcomes, written as Batsim's `schedule.csv` (exactly
Batsim 4.2's columns, order, accounting and `%f` numbers) and `extra_metrics.csv` (what Batsim does not have:
bounded slowdown and utilisation).

Every metric is a running sum, max or count (plus one last-release time per resource for Batsim's `time_idle`),
so memory does not grow with the trace. Definitions (units, formulas, neutral values) are in docs/outputs.md.
"""

from __future__ import annotations

import csv
import math
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from clustersim._io.numbers import fmt
from clustersim._version import __version__
from clustersim.core.energy_meter import EnergySummary
from clustersim.core.events import FinalState
from clustersim.core.outcome import ZERO_RUNTIME, JobOutcome

SCHEDULE_COLUMNS = (
    "batsim_version", "consumed_joules", "makespan", "max_slowdown", "max_turnaround_time", "max_waiting_time",
    "mean_slowdown", "mean_turnaround_time", "mean_waiting_time", "nb_computing_machines", "nb_grouped_switches",
    "nb_jobs", "nb_jobs_finished", "nb_jobs_killed", "nb_jobs_rejected", "nb_jobs_success", "nb_machine_switches",
    "scheduling_time", "simulation_time", "success_rate", "time_computing", "time_idle", "time_sleeping",
    "time_switching_off", "time_switching_on", "time_unavailable",
)
"""Batsim 4.2's schedule.csv columns, in its order."""

EXTRA_COLUMNS = ("max_bounded_slowdown", "mean_bounded_slowdown", "utilisation")
"""extra_metrics.csv: the schedule metrics clustersim adds to Batsim's."""

BOUNDED_SLOWDOWN_TAU: Final = 10.0
"""Seconds below which a job's run time does not inflate its bounded slowdown (Feitelson's τ)."""


@dataclass
class WallClock:
    """Real seconds spent, when the user asks for them in outputs (they make outputs non-reproducible)."""

    simulation: float
    scheduling: float


@dataclass
class ScheduleMetrics:
    """An outcome sink that accumulates Batsim's schedule metrics plus bounded slowdown and utilisation."""

    nb_resources: int
    nb_jobs: int = 0
    nb_finished: int = 0
    nb_success: int = 0
    nb_killed: int = 0
    nb_rejected: int = 0
    nb_pending: int = 0
    """Jobs never started (FinalState.PENDING): counted in nb_jobs, neither finished nor rejected."""
    makespan: float = 0.0
    first_submit: float = math.inf
    busy_resource_seconds: float = 0.0
    sum_waiting: float = 0.0
    sum_turnaround: float = 0.0
    sum_slowdown: float = 0.0
    sum_bounded_slowdown: float = 0.0
    max_waiting: float = 0.0
    max_turnaround: float = 0.0
    max_slowdown: float = 0.0
    max_bounded_slowdown: float = 0.0
    """The running sums and maxima, as plain fields: compiled, they are native floats (a dict of them boxed a float
    and looked a key up at each update, 16 times a job); `sums` and `maxima` give them by name."""
    released: array[float] = field(default_factory=lambda: array("d"))
    """Per resource, when its last job ended (0 if none ran): Batsim's time_idle counts idle periods that ended.
    (An array of doubles: a job's interval is set by one copy, not a reference per unit; CEA-Curie's jobs hold
    1,236 units on average.)"""
    _one: array[float] = field(init=False, repr=False, compare=False)
    """One double, repeated into an interval's stretch of `released`."""

    def __post_init__(self) -> None:
        self.released = array("d", bytes(8 * self.nb_resources))
        self._one = array("d", [0.0])

    def record(self, o: JobOutcome) -> None:
        self.nb_jobs += 1
        submit = o.job.submit_time
        if submit < self.first_submit:
            self.first_submit = submit
        start, finish = o.start, o.finish
        if start is None or finish is None:
            if o.state is FinalState.PENDING:
                self.nb_pending += 1
            else:
                self.nb_rejected += 1
            return
        self.nb_finished += 1
        if o.state is FinalState.COMPLETED_SUCCESSFULLY:
            self.nb_success += 1
        else:
            self.nb_killed += 1
        execution = finish - start
        waiting = start - submit
        turnaround = finish - submit
        slowdown = turnaround / (execution if execution > 0 else ZERO_RUNTIME)
        bounded = turnaround / (execution if execution > BOUNDED_SLOWDOWN_TAU else BOUNDED_SLOWDOWN_TAU)
        if bounded < 1.0:
            bounded = 1.0
        self.sum_waiting += waiting
        self.sum_turnaround += turnaround
        self.sum_slowdown += slowdown
        self.sum_bounded_slowdown += bounded
        if waiting > self.max_waiting:
            self.max_waiting = waiting
        if turnaround > self.max_turnaround:
            self.max_turnaround = turnaround
        if slowdown > self.max_slowdown:
            self.max_slowdown = slowdown
        if bounded > self.max_bounded_slowdown:
            self.max_bounded_slowdown = bounded
        if finish > self.makespan:
            self.makespan = finish
        self.busy_resource_seconds += execution * len(o.resources)
        released = self.released
        for first, last in o.resources.intervals:  # jobs end in time order: the last end is the latest
            if first == last:
                released[first] = finish
            else:
                one = self._one
                one[0] = finish
                released[first : last + 1] = one * (last + 1 - first)

    def close(self) -> None:
        """Nothing to release: the metrics are written by `write`."""

    @property
    def sums(self) -> dict[str, float]:
        """The sums over the jobs that ran, by name: waiting, turnaround, slowdown, bounded_slowdown."""
        return {"waiting": self.sum_waiting, "turnaround": self.sum_turnaround, "slowdown": self.sum_slowdown,
                "bounded_slowdown": self.sum_bounded_slowdown}

    @property
    def maxima(self) -> dict[str, float]:
        """The maxima over the jobs that ran (0 if none), by name, as `sums`."""
        return {"waiting": self.max_waiting, "turnaround": self.max_turnaround, "slowdown": self.max_slowdown,
                "bounded_slowdown": self.max_bounded_slowdown}

    def mean(self, name: str) -> float:
        """The mean over the jobs that ran."""
        return self.sums[name] / self.nb_finished if self.nb_finished else 0.0

    def batsim_mean(self, name: str) -> float:
        """The mean as Batsim's schedule.csv writes it: over every job, a rejected one counting 0."""
        return self.sums[name] / self.nb_jobs if self.nb_jobs else 0.0

    @property
    def utilisation(self) -> float:
        """Busy resource-seconds over the resource-seconds between the first submission and the makespan."""
        span = self.makespan - (self.first_submit if self.nb_jobs else 0.0)
        return self.busy_resource_seconds / (self.nb_resources * span) if span > 0 else 0.0

    @property
    def idle_resource_seconds(self) -> float:
        """Batsim's time_idle: idle periods that ended, i.e. each resource's last release minus its busy time."""
        return max(0.0, math.fsum(self.released) - self.busy_resource_seconds)

    def as_row(self, wall_clock: WallClock | None = None, energy: EnergySummary | None = None) -> dict[str, str]:
        """schedule.csv's row, Batsim's columns in Batsim's order, numbers as Batsim writes them (`%f`)."""
        row: dict[str, float | int | str] = {
            "batsim_version": f"clustersim-{__version__}",
            "consumed_joules": 0.0,
            "makespan": self.makespan,
            "max_slowdown": self.maxima["slowdown"],
            "max_turnaround_time": self.maxima["turnaround"],
            "max_waiting_time": self.maxima["waiting"],
            "mean_slowdown": self.batsim_mean("slowdown"),
            "mean_turnaround_time": self.batsim_mean("turnaround"),
            "mean_waiting_time": self.batsim_mean("waiting"),
            "nb_computing_machines": self.nb_resources,
            "nb_grouped_switches": 0,
            "nb_jobs": self.nb_jobs,
            "nb_jobs_finished": self.nb_finished,
            "nb_jobs_killed": self.nb_killed,
            "nb_jobs_rejected": self.nb_rejected,
            "nb_jobs_success": self.nb_success,
            "nb_machine_switches": 0,
            "scheduling_time": wall_clock.scheduling if wall_clock else -1.0,
            "simulation_time": wall_clock.simulation if wall_clock else -1.0,
            "success_rate": self.nb_success / self.nb_jobs if self.nb_jobs else 0.0,
            "time_computing": self.busy_resource_seconds,
            "time_idle": self.idle_resource_seconds,
            "time_sleeping": 0.0,
            "time_switching_off": 0.0,
            "time_switching_on": 0.0,
            "time_unavailable": 0.0,
        }
        if energy is not None:
            row.update(
                consumed_joules=energy.consumed_joules,
                nb_grouped_switches=energy.nb_grouped_switches,
                nb_machine_switches=energy.nb_machine_switches,
                time_computing=energy.time_computing,
                time_idle=energy.time_idle,
                time_sleeping=energy.time_sleeping,
                time_switching_off=energy.time_switching_off,
                time_switching_on=energy.time_switching_on,
            )
        return {name: _batsim_number(name, value) for name, value in row.items()}

    def extra_row(self) -> dict[str, str]:
        """extra_metrics.csv's row: bounded slowdown (tau = BOUNDED_SLOWDOWN_TAU) and utilisation."""
        return {
            "max_bounded_slowdown": fmt(self.maxima["bounded_slowdown"]),
            "mean_bounded_slowdown": fmt(self.mean("bounded_slowdown")),
            "utilisation": fmt(self.utilisation),
        }

    def write(
        self,
        path: Path | str,
        wall_clock: WallClock | None = None,
        energy: EnergySummary | None = None,
        unavailable_seconds: float | None = None,
        partial: bool = False,
    ) -> None:
        """schedule.csv at `path` (`time_unavailable` from `unavailable_seconds`, 0 without external events), and
        extra_metrics.csv next to it (with the same file name prefix); a run that did not complete has a last
        column `partial` (1) in extra_metrics.csv, so schedule.csv keeps exactly Batsim's columns."""
        path = Path(path)
        row = self.as_row(wall_clock, energy)
        if unavailable_seconds is not None:
            row["time_unavailable"] = _batsim_number("time_unavailable", unavailable_seconds)
        extra = path.with_name(path.name.removesuffix("schedule.csv") + "extra_metrics.csv")
        extra_row = self.extra_row()
        if partial:
            extra_row["partial"] = "1"
        for target, values in ((path, row), (extra, extra_row)):
            with open(target, "w", newline="", encoding="utf-8") as f:
                writer = csv.writer(f, lineterminator="\n")
                writer.writerow(values.keys())
                writer.writerow(values.values())


def _batsim_number(name: str, value: float | int | str) -> str:
    """Batsim's format: counts (the `nb_` columns) as integers, every other number with `%f` (6 decimals), even
    a time that happens to be a Python int (jobs built in code with whole-second times)."""
    if isinstance(value, str):
        return value
    if name.startswith("nb_"):
        return str(value)
    return f"{value:f}"
