"""The initial cluster state: jobs already running at time 0, some of which end during the run.

A cluster never starts empty. Running jobs come from the seed's initial state file, from a list in the
configuration, or are drawn from a workload's distributions until a target share of the cpu is in use (each
then ends after a uniform fraction of its drawn run time, its residual life). They are placed with randomised
first fit, under the owner `prefill`, without think time; tasks that fit nowhere are counted and skipped.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from clustersim.architectures.cell import Cell
from clustersim.architectures.context import Context
from clustersim.architectures.pickers import RandomizedFirstFit
from clustersim.architectures.workload import WorkloadSpec, draw_shape, gib_to_bytes, millicores

OWNER = "prefill"
MAX_MISSES = 20
"""Filling stops after this many drawn jobs in a row that could not place a single task."""


@dataclass(frozen=True, slots=True)
class RunningTasks:
    """Tasks running at time 0: count, size per task (millicores, bytes), end time (None: after the run)."""

    tasks: int
    cpu: int
    memory: int
    end: float | None

    @staticmethod
    def of(tasks: int, cpu_cores: float, memory_gib: float, end: float | None) -> RunningTasks:
        return RunningTasks(tasks, millicores(cpu_cores), gib_to_bytes(memory_gib), end)


@dataclass(frozen=True, slots=True)
class Fill:
    """Draw jobs from `workload` until `cpu_fraction` of the cell's cpu is in use."""

    workload: str
    cpu_fraction: float


@dataclass(frozen=True)
class InitialState:
    jobs: tuple[RunningTasks, ...] = ()
    fill: Fill | None = None


@dataclass
class PrefillReport:
    jobs: int = 0
    tasks: int = 0
    skipped_tasks: int = 0
    with_end: int = 0


def _place(ctx: Context, running: RunningTasks, rng: random.Random, report: PrefillReport) -> int:
    placement = RandomizedFirstFit().place(ctx.cell, running.cpu, running.memory, running.tasks, rng)
    if placement.tasks:
        ctx.occupy(OWNER, placement, running.end)
        report.jobs += 1
        if running.end is not None:
            report.with_end += 1
    report.tasks += placement.tasks
    report.skipped_tasks += running.tasks - placement.tasks
    return placement.tasks


def prefill(ctx: Context, state: InitialState, workloads: dict[str, WorkloadSpec], rng: random.Random
            ) -> PrefillReport:
    """Occupy the cell with the initial state's jobs, at time 0."""
    report = PrefillReport()
    for running in state.jobs:
        _place(ctx, running, rng, report)
    if state.fill is not None:
        _fill(ctx, state.fill, workloads[state.fill.workload], rng, report)
    return report


def _fill(ctx: Context, fill: Fill, spec: WorkloadSpec, rng: random.Random, report: PrefillReport) -> None:
    cell: Cell = ctx.cell
    target = fill.cpu_fraction * cell.total_cpu
    misses = 0
    while cell.used_cpu < target and misses < MAX_MISSES:
        shape = draw_shape(spec, rng)
        wanted = min(shape.tasks, max(1, int((target - cell.used_cpu) // shape.cpu)))
        end = rng.random() * shape.runtime
        placed = _place(ctx, RunningTasks(wanted, shape.cpu, shape.memory, end), rng, report)
        misses = 0 if placed else misses + 1
