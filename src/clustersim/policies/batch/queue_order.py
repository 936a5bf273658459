"""The order in which a batch policy considers its queued jobs (a part of `policies.batch.parts`).

A module of its own so that it is compiled with the hot path (pyproject.toml `[tool.clustersim] compiled`):
`heads` runs at every decision.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from clustersim.workload.job import Job


@dataclass(frozen=True)
class QueueOrder:
    """The order in which queued jobs are considered: by `key` (ties keep submit order), or submit order."""

    key: Callable[[Job], float] | None = None

    def jobs(self, pending: Mapping[str, Job]) -> list[Job]:
        return list(pending.values()) if self.key is None else sorted(pending.values(), key=self.key)

    def heads(self, pending: Mapping[str, Job]) -> Iterator[Job]:
        """The jobs in order, for a caller that starts every job it is given or stops: in submit order, the
        live head of the queue (no copy of the queue)."""
        if self.key is None:
            while pending:
                yield next(iter(pending.values()))
        else:
            yield from sorted(pending.values(), key=self.key)
