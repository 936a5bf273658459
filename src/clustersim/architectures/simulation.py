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
from itertools import count
from typing import Protocol

import numpy as np

from clustersim.architectures.architecture import Architecture, ArchitectureSpec
from clustersim.architectures.cell import Cell
from clustersim.architectures.config import Config, MachineGroup
from clustersim.architectures.context import Action, Context
from clustersim.architectures.ledger import JobGroup, JobLedger, JobSink
from clustersim.architectures.metrics import SchedulerMetrics, WorkloadMetrics
from clustersim.architectures.prefill import PrefillReport, prefill
from clustersim.architectures.scheduler import SchedulerSet
from clustersim.architectures.workload import ArrivalStream
from clustersim.core.engine import EventClass, EventQueue


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


class Arrivals:
    """Feeds each job type's jobs to the architecture, keeping one arrival event ahead per type."""

    def __init__(self, events: EventQueue[Action], ledger: JobLedger, architecture: Architecture, duration: float):
        self.events = events
        self.ledger = ledger
        self.architecture = architecture
        self.duration = duration
        self._ids = count(1)

    def open(self, stream: ArrivalStream) -> None:
        self._schedule(stream, stream.gap())

    def _schedule(self, stream: ArrivalStream, time: float) -> None:
        if time < self.duration:
            self.events.push(time, EventClass.JOB_SUBMIT, lambda: self._arrive(stream, time))

    def _arrive(self, stream: ArrivalStream, time: float) -> None:
        job = stream.job(next(self._ids), time)
        self.ledger.submit(job, self.architecture.path_for(job.scheduler))
        self.architecture.submit(job)
        self._schedule(stream, time + stream.gap())


class Sampler:
    """Records the cell's utilisation every `period` seconds (at k * period, so times do not drift)."""

    def __init__(self, events: EventQueue[Action], cell: Cell, period: float, duration: float,
                 sink: UtilisationSink | None):
        self.events = events
        self.cell = cell
        self.period = period
        self.duration = duration
        self.sink = sink
        self.samples: list[UtilisationSample] = []

    def start(self) -> None:
        self._schedule(0)

    def _schedule(self, k: int) -> None:
        if k * self.period <= self.duration:
            self.events.push(k * self.period, EventClass.CALL, lambda: self._take(k))

    def _take(self, k: int) -> None:
        cell = self.cell
        point = UtilisationSample(
            k * self.period, cell.used_cpu / cell.total_cpu, cell.used_memory / cell.total_memory,
            cell.locked_cpu / cell.total_cpu, cell.locked_memory / cell.total_memory,
        )
        self.samples.append(point)
        if self.sink is not None:
            self.sink.write(point)
        self._schedule(k + 1)


def simulate(config: Config, spec: ArchitectureSpec, *, job_sink: JobSink | None = None,
             utilisation_sink: UtilisationSink | None = None) -> RunResult:
    """Run the configuration under the architecture `spec` for the configured duration."""
    duration = config.duration
    events: EventQueue[Action] = EventQueue()
    cell = build_cell(config.machines)
    job_types: dict[str, tuple[str, ...]] = {}
    for workload in config.workloads.values():
        job_types[workload.scheduler] = (*job_types.get(workload.scheduler, ()), workload.name)
    rngs = {name: stream(config.seed, f"scheduler/{name}") for name in config.schedulers}
    ledger = JobLedger(job_sink)
    ctx = Context(events, cell, SchedulerSet(dict(config.schedulers), rngs, job_types), ledger)
    report = prefill(ctx, config.initial_state, config.workloads, stream(config.seed, "prefill"))
    architecture = spec.build(ctx)
    arrivals = Arrivals(events, ledger, architecture, duration)
    for name, workload in config.workloads.items():
        arrivals.open(ArrivalStream(workload, stream(config.seed, f"workload/{name}")))
    sampler = Sampler(events, cell, config.utilisation_period, duration, utilisation_sink)
    sampler.start()

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
        sampler.samples, mean_cpu, mean_memory, ledger.submitted, report, processed,
    )
