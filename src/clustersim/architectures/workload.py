"""Workload generation: per job type, jobs drawn lazily from distributions of interarrival times, sizes,
run times and task shapes.

Each job type has its own stream with its own seeded generator, drawn in a fixed order (task count, run time,
cpu, memory, then the gap to the next job), so the jobs of one type do not depend on anything else in the run.
The next job is drawn only when the previous one arrives: memory does not grow with the simulated duration.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from clustersim.architectures.distributions import Distribution
from clustersim.architectures.jobs import GIB, MILLICORES, Job


def millicores(cores: float) -> int:
    """Cores to whole millicores, rounding up (never 0: a task always asks for something)."""
    return max(1, math.ceil(round(cores * MILLICORES, 6)))


def gib_to_bytes(gib: float) -> int:
    return max(1, math.ceil(round(gib * GIB, 3)))


@dataclass(frozen=True)
class WorkloadSpec:
    """A job type: the scheduler its jobs go to, and the distributions of their parameters."""

    name: str
    scheduler: str
    interarrival: Distribution
    tasks: Distribution
    runtime: Distribution
    cpu: Distribution
    memory: Distribution


@dataclass(frozen=True, slots=True)
class JobShape:
    tasks: int
    cpu: int
    memory: int
    runtime: float


def draw_shape(spec: WorkloadSpec, rng: random.Random) -> JobShape:
    """A job's size, run time and task shape (cpu in cores, memory in GiB, rounded up to millicores, bytes)."""
    tasks = max(1, math.ceil(spec.tasks.sample(rng)))
    runtime = max(0.0, spec.runtime.sample(rng))
    return JobShape(tasks, millicores(spec.cpu.sample(rng)), gib_to_bytes(spec.memory.sample(rng)), runtime)


class ArrivalStream:
    """The jobs of one type, one at a time."""

    def __init__(self, spec: WorkloadSpec, rng: random.Random):
        self.spec = spec
        self.rng = rng

    def gap(self) -> float:
        return max(0.0, self.spec.interarrival.sample(self.rng))

    def job(self, job_id: int, submit: float) -> Job:
        shape = draw_shape(self.spec, self.rng)
        return Job(job_id, self.spec.name, self.spec.scheduler, submit, shape.tasks, shape.cpu, shape.memory,
                   shape.runtime)
