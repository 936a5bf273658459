"""Run an autoscaling scenario end to end: the cluster core, the scheduler, the deployment and its HPA, the
traffic; write the time series, the plots and the core's jobs.csv."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from clustersim.autoscaling.controller import AutoscalingProcess
from clustersim.autoscaling.fluid import FluidModel
from clustersim.autoscaling.hpa import HorizontalPodAutoscaler
from clustersim.autoscaling.per_request import PerRequestModel
from clustersim.autoscaling.placer import scheduler_for
from clustersim.autoscaling.routers import create_router
from clustersim.autoscaling.scenario import Scenario
from clustersim.autoscaling.serving import ServingModel
from clustersim.autoscaling.timeseries import Row, TimeSeries
from clustersim.runner import simulate
from clustersim.workload.job import Job
from clustersim.workload.profiles import Delay
from clustersim.workload.stream import Workload


@dataclass
class AutoscaleResult:
    rows: list[Row]
    scheduler: str
    wall_seconds: float
    cpu_seconds: float
    unfinished: list[str]


def serving_model(scenario: Scenario, rng: np.random.Generator) -> ServingModel:
    """The per-request or the aggregate model, as the scenario's `mode` says."""
    if scenario.mode == "aggregate":
        return FluidModel(scenario.traffic, scenario.work, scenario.duration, scenario.timeout, scenario.fluid_step)
    router = create_router(scenario.router, rng)
    return PerRequestModel(scenario.traffic, scenario.work, router, rng, scenario.duration, scenario.timeout)


def background_workload(scenario: Scenario) -> Workload:
    """The other pods competing for the cluster."""
    jobs = [
        Job(f"bg{g}-{i}", group.start, 1, Delay(group.duration), workload="background",
            request={"cpu": group.cpu, "memory": group.memory})
        for g, group in enumerate(scenario.background) for i in range(group.count)
    ]
    return Workload.from_jobs(jobs, name="background")


def run_scenario(scenario: Scenario, output_dir: Path | None = None, *, figures: bool = True) -> AutoscaleResult:
    """Simulate; with a directory, write timeseries.csv, jobs.csv, schedule.csv, replicas.png and latency.png."""
    rng = np.random.default_rng(scenario.seed)
    if output_dir is not None:
        output_dir.mkdir(parents=True, exist_ok=True)
    series = TimeSeries(output_dir / "timeseries.csv" if output_dir is not None else None,
                        vpa=scenario.vpa is not None)
    scheduler = scheduler_for(scenario.scheduler)
    process = AutoscalingProcess(
        scenario.deployment, serving_model(scenario, rng), scheduler,
        horizon=scenario.duration,
        hpa=HorizontalPodAutoscaler(scenario.hpa) if scenario.hpa is not None else None,
        metrics=scenario.metrics, traffic=scenario.traffic, output=series,
        output_interval=scenario.output_interval, vpa=scenario.vpa,
    )
    wall, cpu = time.perf_counter(), time.process_time()
    result = simulate(scenario.platform, background_workload(scenario), process, output_dir)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if output_dir is not None and figures:
        from clustersim.autoscaling.plots import write_figures

        write_figures(series.rows, output_dir, title=scenario.name)
    name = str(getattr(scheduler, "name", scenario.scheduler))
    return AutoscaleResult(series.rows, name, wall, cpu, result.summary.unfinished)
