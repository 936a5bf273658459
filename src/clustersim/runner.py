"""Run one simulation end to end: wire the core to its sinks and write the outputs of a run directory."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from clustersim.core.energy_meter import EnergyMeter, EnergySummary
from clustersim.core.execution import ExecutionModel
from clustersim.core.interface import DecisionProcess
from clustersim.core.machine_states import MachineStatesTrace
from clustersim.core.nodes import NodeTracker
from clustersim.core.outcome import OutcomeSink
from clustersim.core.simulation import Delivery, RunSummary, Simulation
from clustersim.platform.events import AvailabilityChange
from clustersim.platform.model import Platform
from clustersim.records.jobs_csv import JobsCsvWriter
from clustersim.records.metrics import ScheduleMetrics, WallClock
from clustersim.workload.stream import Workload


@dataclass
class RunResult:
    summary: RunSummary
    metrics: ScheduleMetrics
    wall_seconds: float
    energy: EnergySummary | None = None


def simulate(
    platform: Platform,
    workload: Workload,
    process: DecisionProcess,
    output_dir: Path | str | None = None,
    *,
    extra_sinks: list[OutcomeSink] | None = None,
    record_wall_clock: bool = False,
    prefix: str = "",
    energy: bool = False,
    energy_traces: bool = True,
    power: bool = False,
    execution: ExecutionModel | None = None,
    events: Sequence[AvailabilityChange] = (),
    delivery: Delivery = Delivery.INSTANT,
    report_pending: bool = False,
    machine_states: bool = False,
) -> RunResult:
    """Simulate and, with an output directory, write `jobs.csv` and `schedule.csv` into it.

    `prefix` is prepended to the file names (Batsim's `-e out/exp` is output_dir `out`, prefix `exp_`).
    `energy` turns on power management and energy accounting (every node needs a power model); with
    `energy_traces` it also writes Batsim's `machine_states.csv` and `consumed_energy.csv`. `power` alone
    keeps node power states (for power policies) without accounting for energy. `execution` is how jobs
    execute (default: the fast model). `events` make machines unavailable and available again; with them,
    schedule.csv also has Batsim's `time_unavailable`. `delivery` is how an instant's events
    reach the decision process (clustersim.core.simulation.Delivery). `report_pending` lists jobs never started
    in the outputs, state PENDING (as Kubernetes lists pods never scheduled). `machine_states` writes Batsim's
    `machine_states.csv` without energy too (machines idle and computing), as Batsim always does.

    `schedule.csv` is written even when the run fails or is interrupted, with the jobs that ended until then (as
    many as jobs.csv holds), and extra_metrics.csv has a last column `partial` set to 1. Wall-clock
    columns are -1 unless `record_wall_clock`: they would make two runs' outputs differ.
    """
    metrics = ScheduleMetrics(platform.nb_resources)
    sinks: list[OutcomeSink] = [metrics, *(extra_sinks or [])]
    out = Path(output_dir) if output_dir is not None else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        sinks.append(JobsCsvWriter(out / f"{prefix}jobs.csv"))
    meter = EnergyMeter(platform, NodeTracker(platform), out if energy_traces else None, prefix) if energy else None
    states = None
    if machine_states and out is not None and meter is None:
        states = MachineStatesTrace(platform, out / f"{prefix}machine_states.csv")
    nodes = NodeTracker(platform) if power and meter is None else None
    simulation = Simulation(
        platform, workload, process, sinks, nodes=nodes, meter=meter, execution=execution, events=events,
        delivery=delivery, report_pending=report_pending, machine_states=states,
    )
    started = time.perf_counter()
    completed = False
    try:
        summary = simulation.run()
        completed = True
    finally:
        wall = time.perf_counter() - started
        if out is not None:
            metrics.write(
                out / f"{prefix}schedule.csv",
                WallClock(wall, -1.0) if record_wall_clock else None,
                meter.summary() if meter is not None else None,
                simulation.summary.unavailable_seconds if events else None,
                partial=not completed,
            )
    return RunResult(summary, metrics, wall, meter.summary() if meter is not None else None)
