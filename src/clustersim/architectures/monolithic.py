"""Monolithic: one decision path for every job, on the cell's true state, so there are never conflicts.

Jobs of every type wait in one queue; each job still takes its own scheduler's think time and picker (the
paper's multi-path monolithic scheduler; give every scheduler the same times for the single-path one). Tasks
are placed on the true state when thinking ends. A slow decision for one job type delays every other type:
head-of-line blocking is what this architecture shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from clustersim._io.fields import Checker
from clustersim.architectures.architecture import ARCHITECTURES, Architecture
from clustersim.architectures.context import Context
from clustersim.architectures.jobs import Job
from clustersim.architectures.scheduler import Outcome, SchedulerStats
from clustersim.architectures.serial import SerialPath

PATH = "monolithic"


class MonolithicPath(SerialPath[None]):
    def prepare(self, job: Job) -> None:
        return None

    def apply(self, job: Job, decision: None) -> tuple[Outcome, int, int]:
        ctx = self.ctx
        picker = ctx.spec(job.scheduler).picker
        placement = picker.place(ctx.cell, job.cpu, job.memory, job.unscheduled, ctx.rng(job.scheduler))
        ctx.start(job, placement)
        tasks = placement.tasks
        return (Outcome.USEFUL if tasks else Outcome.NO_FIT), tasks, 0


class Monolithic:
    def __init__(self, ctx: Context):
        self._path = MonolithicPath(ctx, SchedulerStats(PATH, ctx.schedulers.all_job_types()))

    def path_for(self, scheduler: str) -> str:
        return PATH

    def submit(self, job: Job) -> None:
        self._path.enqueue(job)

    def close(self, end: float) -> None:
        self._path.stats.close(end)

    def stats(self) -> list[SchedulerStats]:
        return [self._path.stats]


@dataclass(frozen=True)
class MonolithicSpec:
    name: str = "monolithic"

    def label(self) -> str:
        return self.name

    def build(self, ctx: Context) -> Architecture:
        return Monolithic(ctx)


@ARCHITECTURES.register("monolithic")
def _parse(options: Mapping[str, object], field: str, check: Checker) -> MonolithicSpec:
    check.known_keys(options, field, ())
    return MonolithicSpec()
