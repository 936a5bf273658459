"""Mesos: an allocator offers the cell's free resources to one framework scheduler at a time, in DRF order.

Jobs queue at their framework, which asks the allocator for offers while its queue is not empty. Offer rounds
are batched (`offer_interval`, 1 s as in the seed): a round picks the requesting framework with the lowest
dominant share (DRF; ties in configuration order) among those not already holding an offer, and locks every
free resource for it. The framework goes through its queue against the offer, spending each job's think time,
and answers when done: the tasks it placed start, the rest of the offer is unlocked. While an offer is out its
resources are unavailable to every other framework: a slow framework starves the others (pessimistic
concurrency, the paper's point about Mesos).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from clustersim._io.fields import Checker, child
from clustersim.architectures.architecture import ARCHITECTURES, Architecture
from clustersim.architectures.cell import Cell, IntArray, Lock, Placement
from clustersim.architectures.context import Context
from clustersim.architectures.jobs import Job
from clustersim.architectures.scheduler import Outcome, SchedulerStats


class OfferView:
    """An offer's resources as its framework sees them while deciding; its own placements are taken out."""

    def __init__(self, cell: Cell, lock: Lock):
        self.free_cpu: IntArray = lock.cpu.copy()
        self.free_memory: IntArray = lock.memory.copy()
        self.capacity_cpu = cell.capacity_cpu
        self.capacity_memory = cell.capacity_memory

    def take(self, placement: Placement) -> None:
        self.free_cpu[placement.machines] -= placement.counts * placement.cpu
        self.free_memory[placement.machines] -= placement.counts * placement.memory

    def exhausted(self) -> bool:
        return not (np.any(self.free_cpu) and np.any(self.free_memory))


class Framework:
    """A framework's scheduler: its queue, and the offer it is deciding on."""

    def __init__(self, ctx: Context, allocator: Allocator, stats: SchedulerStats, index: int):
        self.ctx = ctx
        self.allocator = allocator
        self.stats = stats
        self.index = index
        self.queue: deque[Job] = deque()
        self.holding = False

    @property
    def name(self) -> str:
        return self.stats.name

    def enqueue(self, job: Job) -> None:
        self.queue.append(job)
        self.allocator.offer_soon()

    def receive(self, lock: Lock) -> None:
        """Decide on the offer: place queued jobs until the offer is used up, answer after thinking."""
        ctx = self.ctx
        self.stats.start_busy(ctx.now)
        view = OfferView(ctx.cell, lock)
        decisions: list[tuple[Job, float, Placement]] = []
        thinking = 0.0
        while self.queue and not view.exhausted():
            job = self.queue.popleft()
            think = ctx.begin_attempt(job)
            thinking += think
            picker = ctx.spec(job.scheduler).picker
            placement = picker.place(view, job.cpu, job.memory, job.unscheduled, ctx.rng(job.scheduler))
            view.take(placement)
            decisions.append((job, think, placement))
        ctx.after(thinking, lambda: self._answer(lock, decisions))

    def _answer(self, lock: Lock, decisions: list[tuple[Job, float, Placement]]) -> None:
        ctx = self.ctx
        self.stats.stop_busy()
        ctx.cell.unlock(lock, ctx.now)
        for job, think, placement in decisions:
            ctx.start(job, placement)
            tasks = placement.tasks
            ctx.end_attempt(job, self.stats, think, Outcome.USEFUL if tasks else Outcome.NO_FIT, tasks, 0,
                            self.enqueue)
        self.holding = False
        self.allocator.offer_soon()


class Allocator:
    """Makes offer rounds, batched by `interval`, to the requesting framework first in DRF order."""

    def __init__(self, ctx: Context, interval: float, think: float):
        self.ctx = ctx
        self.interval = interval
        self.think = think
        self.frameworks: list[Framework] = []
        self._round_pending = False
        self.offers = 0

    def _candidates(self) -> list[Framework]:
        return [f for f in self.frameworks if f.queue and not f.holding]

    def offer_soon(self) -> None:
        if not self._round_pending and self._candidates():
            self._round_pending = True
            self.ctx.after(self.interval, self._round)

    def _round(self) -> None:
        self._round_pending = False
        candidates = self._candidates()
        if not candidates:
            return
        cell = self.ctx.cell
        framework = min(candidates, key=lambda f: (cell.dominant_share(f.name), f.index))
        lock = cell.lock_all(self.ctx.now)
        if lock is None:
            return  # nothing free: the next task end asks for a new round
        self.offers += 1
        framework.holding = True
        self.ctx.after(self.think, lambda: framework.receive(lock))


class Mesos:
    def __init__(self, ctx: Context, interval: float, think: float):
        self.allocator = Allocator(ctx, interval, think)
        self._frameworks = {
            name: Framework(ctx, self.allocator, SchedulerStats(name, ctx.schedulers.job_types.get(name, ())), i)
            for i, name in enumerate(ctx.schedulers.names())
        }
        self.allocator.frameworks = list(self._frameworks.values())
        ctx.release_listeners.append(self.allocator.offer_soon)

    def path_for(self, scheduler: str) -> str:
        return scheduler

    def submit(self, job: Job) -> None:
        self._frameworks[job.scheduler].enqueue(job)

    def close(self, end: float) -> None:
        for framework in self._frameworks.values():
            framework.stats.close(end)

    def stats(self) -> list[SchedulerStats]:
        return [framework.stats for framework in self._frameworks.values()]


@dataclass(frozen=True)
class MesosSpec:
    offer_interval: float = 1.0
    allocator_think: float = 0.0
    name: str = "mesos"

    def label(self) -> str:
        return self.name

    def build(self, ctx: Context) -> Architecture:
        return Mesos(ctx, self.offer_interval, self.allocator_think)


@ARCHITECTURES.register("mesos")
def _parse(options: Mapping[str, object], field: str, check: Checker) -> MesosSpec:
    check.known_keys(options, field, ("offer_interval", "allocator_think"))
    interval = check.number(options.get("offer_interval", MesosSpec.offer_interval), child(field, "offer_interval"), 0)
    think = check.number(options.get("allocator_think", MesosSpec.allocator_think), child(field, "allocator_think"), 0)
    return MesosSpec(interval, think)
