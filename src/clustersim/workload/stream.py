"""A workload as the core consumes it: jobs streamed in submit order, plus what the reader skipped.

Readers yield jobs lazily so memory follows the jobs alive in the simulation, never the size of the trace.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from clustersim.workload.job import Job, id_order


@dataclass
class SkipReport:
    """Counts of source records a reader did not turn into jobs, by reason, and other things it noticed."""

    skipped: Counter[str] = field(default_factory=Counter)
    notes: Counter[str] = field(default_factory=Counter)

    def skip(self, reason: str) -> None:
        self.skipped[reason] += 1

    def note(self, what: str) -> None:
        self.notes[what] += 1

    @property
    def total_skipped(self) -> int:
        return sum(self.skipped.values())

    def lines(self) -> list[str]:
        """Human-readable summary, one line per reason, most frequent first, ties by name."""
        out = [f"skipped {n} record(s): {why}" for why, n in sorted(self.skipped.items(), key=_by_count)]
        out += [f"{n} record(s): {what}" for what, n in sorted(self.notes.items(), key=_by_count)]
        return out


def _by_count(item: tuple[str, int]) -> tuple[int, str]:
    return (-item[1], item[0])


@dataclass
class Workload:
    """Jobs in submit order (ties by id), with the hints the source gives about its platform.

    `jobs` is consumed once. `skips` fills up while `jobs` is consumed. `header` holds source metadata such as
    SWF's `MaxProcs`/`MaxNodes`; `nb_res` is the platform size the source declares, when it declares one.
    `communicates` says that some job's profile sends bytes between hosts (readers that hold every job set it),
    which only the simgrid platform model can time. `delays_only` says that every job's profile is a delay (or a
    composition of delays), as readers that hold every job may say; `local_only` that every job's profile only
    waits or computes on its own hosts (`profiles.local_work`): the step platform model runs those.
    """

    name: str
    jobs: Iterator[Job]
    source: str = "<memory>"
    nb_res: int | None = None
    header: Mapping[str, str] = field(default_factory=dict)
    skips: SkipReport = field(default_factory=SkipReport)
    communicates: bool = False
    delays_only: bool = False
    local_only: bool = False

    @classmethod
    def from_jobs(cls, jobs: Iterable[Job], name: str = "w0", nb_res: int | None = None) -> Workload:
        """A workload from jobs held in memory (tests, generators); they are sorted into submit order."""
        ordered = sorted(jobs, key=lambda j: (j.submit_time, id_order(j.id)))
        return cls(name=name, jobs=iter(ordered), nb_res=nb_res)
