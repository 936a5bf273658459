"""Schedule metrics accumulated from the stream of job outcomes, written as Batsim's `schedule.csv`.

Every metric is a running sum, max or count, so memory does not grow with the trace. Definitions (units,
formulas, neutral values) are in docs/outputs.md.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path

from clustersim._io.numbers import fmt
from clustersim._version import __version__
from clustersim.core.energy_meter import EnergySummary
from clustersim.core.events import FinalState
from clustersim.core.outcome import JobOutcome

BOUNDED_SLOWDOWN_TAU = 10.0
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
    makespan: float = 0.0
    first_submit: float = math.inf
    busy_resource_seconds: float = 0.0
    sums: dict[str, float] = field(
        default_factory=lambda: dict.fromkeys(("waiting", "turnaround", "slowdown", "bounded_slowdown"), 0.0)
    )
    maxima: dict[str, float] = field(
        default_factory=lambda: dict.fromkeys(("waiting", "turnaround", "slowdown", "bounded_slowdown"), 0.0)
    )

    def record(self, o: JobOutcome) -> None:
        self.nb_jobs += 1
        submit = o.job.submit_time
        if submit < self.first_submit:
            self.first_submit = submit
        start, finish = o.start, o.finish
        if start is None or finish is None:
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
        slowdown = turnaround / execution if execution > 0 else (1.0 if turnaround == 0 else math.inf)
        bounded = turnaround / (execution if execution > BOUNDED_SLOWDOWN_TAU else BOUNDED_SLOWDOWN_TAU)
        if bounded < 1.0:
            bounded = 1.0
        sums, maxima = self.sums, self.maxima
        sums["waiting"] += waiting
        sums["turnaround"] += turnaround
        sums["slowdown"] += slowdown
        sums["bounded_slowdown"] += bounded
        if waiting > maxima["waiting"]:
            maxima["waiting"] = waiting
        if turnaround > maxima["turnaround"]:
            maxima["turnaround"] = turnaround
        if slowdown > maxima["slowdown"]:
            maxima["slowdown"] = slowdown
        if bounded > maxima["bounded_slowdown"]:
            maxima["bounded_slowdown"] = bounded
        if finish > self.makespan:
            self.makespan = finish
        self.busy_resource_seconds += execution * len(o.resources)

    def close(self) -> None:
        """Nothing to release: the metrics are written by `write`."""

    def mean(self, name: str) -> float:
        return self.sums[name] / self.nb_finished if self.nb_finished else 0.0

    @property
    def utilisation(self) -> float:
        """Busy resource-seconds over the resource-seconds between the first submission and the makespan."""
        span = self.makespan - (self.first_submit if self.nb_jobs else 0.0)
        return self.busy_resource_seconds / (self.nb_resources * span) if span > 0 else 0.0

    def as_row(self, wall_clock: WallClock | None = None, energy: EnergySummary | None = None) -> dict[str, str]:
        """schedule.csv's columns, alphabetically as Batsim writes them."""
        total_resource_seconds = self.nb_resources * self.makespan
        row = {
            "batsim_version": f"clustersim-{__version__}",
            "consumed_joules": "0",
            "makespan": fmt(self.makespan),
            "max_bounded_slowdown": fmt(self.maxima["bounded_slowdown"]),
            "max_slowdown": fmt(self.maxima["slowdown"]),
            "max_turnaround_time": fmt(self.maxima["turnaround"]),
            "max_waiting_time": fmt(self.maxima["waiting"]),
            "mean_bounded_slowdown": fmt(self.mean("bounded_slowdown")),
            "mean_slowdown": fmt(self.mean("slowdown")),
            "mean_turnaround_time": fmt(self.mean("turnaround")),
            "mean_waiting_time": fmt(self.mean("waiting")),
            "nb_computing_machines": str(self.nb_resources),
            "nb_grouped_switches": "0",
            "nb_jobs": str(self.nb_jobs),
            "nb_jobs_finished": str(self.nb_finished),
            "nb_jobs_killed": str(self.nb_killed),
            "nb_jobs_rejected": str(self.nb_rejected),
            "nb_jobs_success": str(self.nb_success),
            "nb_machine_switches": "0",
            "scheduling_time": fmt(wall_clock.scheduling) if wall_clock else "-1",
            "simulation_time": fmt(wall_clock.simulation) if wall_clock else "-1",
            "success_rate": fmt(self.nb_success / self.nb_jobs if self.nb_jobs else 0.0),
            "time_computing": fmt(self.busy_resource_seconds),
            "time_idle": fmt(max(0.0, total_resource_seconds - self.busy_resource_seconds)),
            "time_sleeping": "0",
            "time_switching_off": "0",
            "time_switching_on": "0",
            "utilisation": fmt(self.utilisation),
        }
        if energy is not None:
            row.update(
                consumed_joules=fmt(energy.consumed_joules),
                nb_grouped_switches=str(energy.nb_grouped_switches),
                nb_machine_switches=str(energy.nb_machine_switches),
                time_computing=fmt(energy.time_computing),
                time_idle=fmt(energy.time_idle),
                time_sleeping=fmt(energy.time_sleeping),
                time_switching_off=fmt(energy.time_switching_off),
                time_switching_on=fmt(energy.time_switching_on),
            )
        return row

    def write(
        self,
        path: Path | str,
        wall_clock: WallClock | None = None,
        energy: EnergySummary | None = None,
        unavailable_seconds: float | None = None,
    ) -> None:
        """Write schedule.csv; `time_unavailable` is a column only when machines could be unavailable."""
        row = self.as_row(wall_clock, energy)
        if unavailable_seconds is not None:
            utilisation = row.pop("utilisation")
            row["time_unavailable"] = fmt(unavailable_seconds)
            row["utilisation"] = utilisation
        with open(path, "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f, lineterminator="\n")
            writer.writerow(row.keys())
            writer.writerow(row.values())
