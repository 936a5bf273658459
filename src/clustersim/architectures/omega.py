"""Omega: every scheduler decides on a snapshot of the shared cell, then commits its claims as a transaction.

Schedulers run in parallel, each with its own queue. When a decision starts, the scheduler places the job's
tasks on the cell as it is then (its snapshot); when thinking ends it commits them. Claims that conflict with
what other schedulers committed meanwhile are rejected, as the conflict detector and transaction mode say, and
the job retries; the attempt's think time is then counted as wasted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from clustersim._io.fields import Checker, child
from clustersim.architectures.architecture import ARCHITECTURES, Architecture
from clustersim.architectures.context import Context
from clustersim.architectures.jobs import Job
from clustersim.architectures.scheduler import Outcome, SchedulerStats
from clustersim.architectures.serial import SerialPath
from clustersim.architectures.transactions import (
    CONFLICT_ALIASES,
    CONFLICT_DETECTORS,
    TRANSACTION_MODES,
    ConflictDetector,
    Transaction,
    TransactionMode,
)


class OmegaPath(SerialPath[Transaction]):
    def __init__(self, ctx: Context, stats: SchedulerStats, detector: ConflictDetector, mode: TransactionMode):
        super().__init__(ctx, stats)
        self.detector = detector
        self.mode = mode

    def prepare(self, job: Job) -> Transaction:
        ctx = self.ctx
        picker = ctx.spec(job.scheduler).picker
        placement = picker.place(ctx.cell, job.cpu, job.memory, job.unscheduled, ctx.rng(job.scheduler))
        return Transaction.on(ctx.cell, job.scheduler, placement)

    def apply(self, job: Job, decision: Transaction) -> tuple[Outcome, int, int]:
        if len(decision.placement.machines) == 0:
            return Outcome.NO_FIT, 0, 0
        result = self.ctx.transact(job, decision, self.detector, self.mode)
        outcome = Outcome.WASTED if result.conflicted else Outcome.USEFUL
        return outcome, result.committed.tasks, result.conflicted_tasks


class Omega:
    def __init__(self, ctx: Context, conflicts: str, transactions: str):
        detector = CONFLICT_DETECTORS.get(conflicts)()
        mode = TRANSACTION_MODES.get(transactions)()
        self._paths = {
            name: OmegaPath(ctx, SchedulerStats(name, _job_types(ctx, name)), detector, mode)
            for name in ctx.schedulers.names()
        }

    def path_for(self, scheduler: str) -> str:
        return scheduler

    def submit(self, job: Job) -> None:
        self._paths[job.scheduler].enqueue(job)

    def close(self, end: float) -> None:
        for path in self._paths.values():
            path.stats.close(end)

    def stats(self) -> list[SchedulerStats]:
        return [path.stats for path in self._paths.values()]


def _job_types(ctx: Context, scheduler: str) -> tuple[str, ...]:
    return ctx.schedulers.job_types.get(scheduler, ())


@dataclass(frozen=True)
class OmegaSpec:
    conflicts: str = "resource-fit"
    transactions: str = "incremental"
    name: str = "omega"

    def label(self) -> str:
        return f"{self.name}/{self.conflicts}/{self.transactions}"

    def build(self, ctx: Context) -> Architecture:
        return Omega(ctx, self.conflicts, self.transactions)


@ARCHITECTURES.register("omega")
def _parse(options: Mapping[str, object], field: str, check: Checker) -> OmegaSpec:
    check.known_keys(options, field, ("conflicts", "transactions"))
    conflicts = check.string(options.get("conflicts", OmegaSpec.conflicts), child(field, "conflicts"))
    conflicts = CONFLICT_ALIASES.get(conflicts, conflicts)
    if conflicts not in CONFLICT_DETECTORS:
        valid = [*CONFLICT_DETECTORS.names(), *CONFLICT_ALIASES]
        check.fail(child(field, "conflicts"), f"unknown conflict detector '{conflicts}'; valid: {', '.join(valid)}")
    transactions = check.string(options.get("transactions", OmegaSpec.transactions), child(field, "transactions"))
    if transactions not in TRANSACTION_MODES:
        check.fail(
            child(field, "transactions"),
            f"unknown transaction mode '{transactions}'; valid: {', '.join(TRANSACTION_MODES.names())}",
        )
    return OmegaSpec(conflicts, transactions)
