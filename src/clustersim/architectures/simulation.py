"""One run: a configuration under one architecture, on clustersim's event queue.

Events at equal times follow the engine's rule: task ends first, then job arrivals, then everything else
(decisions ending, retries, offer rounds, utilisation samples), each group in insertion order. Every random
stream is derived from the seed and a fixed name (`workload/batch`, `scheduler/service`, `prefill`), so the
same configuration gives the same outputs byte for byte, and changing one scheduler's think time leaves the
jobs every workload generates unchanged.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from clustersim.architectures.architecture import ArchitectureSpec
from clustersim.architectures.cell import Cell
from clustersim.architectures.config import Config, MachineGroup
from clustersim.architectures.context import Action, Context
from clustersim.architectures.ledger import JobGroup, JobLedger, JobSink
from clustersim.architectures.metrics import SchedulerMetrics, WorkloadMetrics
from clustersim.architectures.prefill import PrefillReport, prefill
from clustersim.architectures.scheduler import SchedulerSet
from clustersim.architectures.workload import ArrivalStream
from clustersim.engine import EventClass, EventQueue


def stream(seed: int, name: str) -> random.Random:
    """The random stream `name` of a run; string seeds hash with SHA-512, the same on every platform."""
    return random.Random(f"clustersim/{seed}/{name}")


def build_cell(groups: tuple[MachineGroup, ...]) -> Cell:
    cpu = np.concatenate([np.full(g.count, g.cpu, np.int64) for g in groups])
    memory = np.concatenate([np.full(g.count, g.memory, np.int64) for g in groups])
    return Cell(cpu, memory)


@dataclass(frozen=True, slots=True)
class UtilisationSample:
    time: float
    cpu: float
    memory: float
    cpu_locked: float
    memory_locked: float


class UtilisationSink(Protocol):
    def write(self, sample: UtilisationSample) -> None: ...


@dataclass
class RunResult:
    """What a run produced besides the streamed records."""

    architecture: str
    duration: float
    schedulers: list[SchedulerMetrics]
    workloads: list[WorkloadMetrics]
    utilisation: list[UtilisationSample]
    mean_cpu: float
    mean_memory: float
    jobs_submitted: int
    prefill: PrefillReport
    events: int


def simulate(config: Config, spec: ArchitectureSpec, *, job_sink: JobSink | None = None,
             utilisation_sink: UtilisationSink | None = None) -> RunResult:
    """Run the configuration under the architecture `spec` for the configured duration."""
    duration = config.duration
    events: EventQueue[Action] = EventQueue()
    cell = build_cell(config.machines)
    job_types: dict[str, tuple[str, ...]] = {}
    for workload in config.workloads.values():
        job_types[workload.scheduler] = (*job_types.get(workload.scheduler, ()), workload.name)
    schedulers = SchedulerSet(
        dict(config.schedulers), {name: stream(config.seed, f"scheduler/{name}") for name in config.schedulers},
        job_types,
    )
    ledger = JobLedger(job_sink)
    ctx = Context(events, cell, schedulers, ledger)
    report = prefill(ctx, config.initial_state, config.workloads, stream(config.seed, "prefill"))
    architecture = spec.build(ctx)
    next_id = iter(range(1, 2**62))

    def arrive(arrivals: ArrivalStream, submit: float) -> None:
        job = arrivals.job(next(next_id), submit)
        ledger.submit(job, architecture.path_for(job.scheduler))
        architecture.submit(job)
        following = submit + arrivals.gap()
        if following < duration:
            events.push(following, EventClass.JOB_SUBMIT, lambda: arrive(arrivals, following))

    def open_stream(arrivals: ArrivalStream) -> None:
        first = arrivals.gap()
        if first < duration:
            events.push(first, EventClass.JOB_SUBMIT, lambda: arrive(arrivals, first))

    for name, workload in config.workloads.items():
        open_stream(ArrivalStream(workload, stream(config.seed, f"workload/{name}")))

    samples: list[UtilisationSample] = []

    def sample(time: float) -> None:
        point = UtilisationSample(
            time, cell.used_cpu / cell.total_cpu, cell.used_memory / cell.total_memory,
            cell.locked_cpu / cell.total_cpu, cell.locked_memory / cell.total_memory,
        )
        samples.append(point)
        if utilisation_sink is not None:
            utilisation_sink.write(point)
        following = time + config.utilisation_period
        if following <= duration:
            events.push(following, EventClass.CALL, lambda: sample(following))

    events.push(0.0, EventClass.CALL, lambda: sample(0.0))
    processed = 0
    while events and (events.next_time() or 0.0) <= duration:
        for _, action in events.pop_instant():
            action()
            processed += 1
    architecture.close(duration)
    ledger.close()
    mean_cpu, mean_memory = cell.mean_utilisation(duration)
    return RunResult(
        spec.label(), duration,
        [SchedulerMetrics.of(s, ledger.by_path.get(s.name, JobGroup()), duration) for s in architecture.stats()],
        [
            WorkloadMetrics.of(name, architecture.path_for(workload.scheduler), ledger.by_type.get(name, JobGroup()))
            for name, workload in config.workloads.items()
        ],
        samples, mean_cpu, mean_memory, ledger.submitted, report, processed,
    )
