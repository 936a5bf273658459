"""What a decision process may ask the core to do. The core validates each one before applying it."""

from __future__ import annotations

from dataclasses import dataclass

from clustersim.intervals import IntervalSet


@dataclass(slots=True)
class StartJob:
    """Start a pending job now on exactly these resources (allocation unit ids)."""

    job_key: str
    resources: IntervalSet


@dataclass(slots=True)
class RejectJob:
    """Refuse a pending job; it ends in the REJECTED state without running."""

    job_key: str


@dataclass(slots=True)
class KillJob:
    """Stop a running job now; it ends in the COMPLETED_KILLED state."""

    job_key: str


@dataclass(slots=True)
class CallMeLater:
    """Ask to be woken up at simulated time `time` (not before now)."""

    time: float


@dataclass(slots=True)
class SetJobMetadata:
    """Attach a free-form string to a job, written in the `metadata` column of jobs.csv."""

    job_key: str
    metadata: str


Decision = StartJob | RejectJob | KillJob | CallMeLater | SetJobMetadata
