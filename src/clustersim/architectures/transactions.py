"""Omega's optimistic transactions: how a commit detects conflicts, and what it keeps when some claims conflict.

A scheduler decides on a snapshot of the cell, then commits its claims. Conflict detectors, by name:

- `resource-fit` (fine-grained, the paper's default): a claim conflicts only if its tasks no longer fit;
- `sequence-numbers` (coarse-grained, the paper's alternative): a claim conflicts if its machine changed at all
  (any task started or ended there) since the snapshot;
- `cell-version` (coarsest): every claim conflicts if anything in the cell changed since the snapshot.

Transaction modes, by name: `incremental` commits every claim that does not conflict; `all-or-nothing` (gang
scheduling) commits nothing if any claim conflicts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from clustersim.architectures.cell import Cell, IntArray, Placement
from clustersim.plugins import Registry


@dataclass(frozen=True, slots=True, eq=False)
class Transaction:
    """Claims decided on a snapshot, with what the snapshot said about the machines and the cell."""

    owner: str
    placement: Placement
    machine_seq: IntArray
    cell_version: int

    @staticmethod
    def on(cell: Cell, owner: str, placement: Placement) -> Transaction:
        return Transaction(owner, placement, cell.seq[placement.machines].copy(), cell.version)


@dataclass(frozen=True, slots=True)
class CommitResult:
    committed: Placement
    conflicted_tasks: int

    @property
    def conflicted(self) -> bool:
        return self.conflicted_tasks > 0


class ConflictDetector(Protocol):
    def acceptable(self, cell: Cell, transaction: Transaction) -> IntArray:
        """Per machine of the transaction, how many of its tasks can commit without conflict."""
        ...


class ResourceFit:
    """Fine-grained: only a lack of resources now is a conflict."""

    def acceptable(self, cell: Cell, transaction: Transaction) -> IntArray:
        return cell.fitting(transaction.placement)


class SequenceNumbers:
    """Coarse-grained: any change to the machine since the snapshot is a conflict."""

    def acceptable(self, cell: Cell, transaction: Transaction) -> IntArray:
        placement = transaction.placement
        unchanged = cell.seq[placement.machines] == transaction.machine_seq
        # an unchanged machine still has the resources the snapshot showed; fitting() guards against bugs
        kept: IntArray = np.where(unchanged, cell.fitting(placement), 0)
        return kept


class CellVersion:
    """Coarsest: any change to the cell since the snapshot is a conflict for every claim."""

    def acceptable(self, cell: Cell, transaction: Transaction) -> IntArray:
        if cell.version != transaction.cell_version:
            return np.zeros(len(transaction.placement.machines), np.int64)
        return cell.fitting(transaction.placement)


class TransactionMode(Protocol):
    def keep(self, wanted: IntArray, acceptable: IntArray) -> IntArray:
        """Tasks committed per machine, given those wanted and those that do not conflict."""
        ...


class Incremental:
    def keep(self, wanted: IntArray, acceptable: IntArray) -> IntArray:
        return acceptable


class AllOrNothing:
    def keep(self, wanted: IntArray, acceptable: IntArray) -> IntArray:
        if np.array_equal(wanted, acceptable):
            return acceptable
        return np.zeros(len(wanted), np.int64)


CONFLICT_DETECTORS: Registry[type[ConflictDetector]] = Registry("conflict detector")
CONFLICT_DETECTORS.add("resource-fit", ResourceFit)
CONFLICT_DETECTORS.add("sequence-numbers", SequenceNumbers)
CONFLICT_DETECTORS.add("cell-version", CellVersion)
CONFLICT_ALIASES = {"fine": "resource-fit", "coarse": "sequence-numbers"}

TRANSACTION_MODES: Registry[type[TransactionMode]] = Registry("transaction mode")
TRANSACTION_MODES.add("incremental", Incremental)
TRANSACTION_MODES.add("all-or-nothing", AllOrNothing)


def commit(cell: Cell, transaction: Transaction, detector: ConflictDetector, mode: TransactionMode,
           now: float) -> CommitResult:
    """Apply the transaction's non-conflicting claims to the cell, as the mode allows."""
    placement = transaction.placement
    kept = mode.keep(placement.counts, detector.acceptable(cell, transaction))
    committed = placement.keep(kept)
    if len(committed.machines):
        cell.claim(transaction.owner, committed, now)
    return CommitResult(committed, placement.tasks - committed.tasks)
