"""batsched's main loop and data structures: what every variant's `make_decisions` sees.

batsched reads each message from Batsim, files its events into "recently" lists (released jobs, ended jobs,
machines whose power state changed, a requested call), calls the variant's `make_decisions(date)` once, and
answers with the decisions the variant added, all stamped `date`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

Message = dict[str, Any]


def interval_text(ids: Iterable[int]) -> str:
    """Batsim's interval-set notation: `0-3 8 10-11`."""
    parts: list[str] = []
    run: list[int] = []
    for i in sorted(ids):
        if run and i == run[-1] + 1:
            run.append(i)
            continue
        if run:
            parts.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [i]
    if run:
        parts.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return " ".join(parts)


def parse_intervals(text: str) -> set[int]:
    ids: set[int] = set()
    for part in text.split():
        lo, _, hi = part.partition("-")
        ids.update(range(int(lo), int(hi or lo) + 1))
    return ids


def left(ids: set[int], count: int) -> set[int]:
    """MachineRange::left: the `count` lowest ids."""
    return set(sorted(ids)[:count])


@dataclass
class Job:
    id: str
    submission_time: float
    nb_requested_resources: int
    walltime: float


class Batsched:
    """One batsched variant: subclasses implement `make_decisions`; `__call__` answers one Batsim message."""

    def __init__(self, options: dict[str, Any]):
        self.options = options
        self.nb_machines = 0
        self.jobs: dict[str, Job] = {}
        self.queue: list[Job] = []
        self.release_date: dict[str, float] = {}
        self.released: list[str] = []
        self.ended: list[str] = []
        self.pstate_changed: dict[int, set[int]] = {}
        self.nopped = False
        self.consumed_energy: float | None = None
        self._decisions: list[Message] = []
        self._date = 0.0

    # -- decisions ---------------------------------------------------------------------------------------

    def _add(self, kind: str, **data: Any) -> None:
        self._decisions.append({"timestamp": self._date, "type": kind, "data": data})

    def execute(self, job: Job, alloc: set[int]) -> None:
        self._add("EXECUTE_JOB", job_id=job.id, alloc=interval_text(alloc))

    def reject(self, job_id: str) -> None:
        self._add("REJECT_JOB", job_id=job_id)

    def set_state(self, machines: set[int], pstate: int) -> None:
        self._add("SET_RESOURCE_STATE", resources=interval_text(machines), state=str(pstate))

    def call_me_later(self, at: float) -> None:
        self._add("CALL_ME_LATER", timestamp=at)

    def query_energy(self) -> None:
        self._add("QUERY", requests={"consumed_energy": {}})

    # -- the main loop -----------------------------------------------------------------------------------

    def __call__(self, message: Message) -> list[Message]:
        self._date = float(message["now"])
        self._decisions = []
        for event in message["events"]:
            kind, data = event["type"], event["data"]
            if kind == "SIMULATION_BEGINS":
                self.nb_machines = int(data["nb_resources"])
                self.on_simulation_start(self._date)
            elif kind == "JOB_SUBMITTED":
                job = data["job"]
                self.jobs[data["job_id"]] = Job(data["job_id"], float(job["subtime"]), int(job["res"]),
                                                float(job.get("walltime", -1)))
                self.released.append(data["job_id"])
            elif kind == "JOB_COMPLETED":
                self.ended.append(data["job_id"])
            elif kind == "RESOURCE_STATE_CHANGED":
                self.pstate_changed.setdefault(int(data["state"]), set()).update(parse_intervals(data["resources"]))
            elif kind == "REQUESTED_CALL":
                self.nopped = True
            elif kind == "ANSWER":
                self.consumed_energy = float(data["consumed_energy"])
        self.make_decisions(self._date)
        self.released, self.ended, self.pstate_changed, self.nopped = [], [], {}, False
        return self._decisions

    def append_to_queue(self, job: Job) -> None:
        """Queue::append_job: the job's release date is the date batsched heard of it."""
        self.queue.append(job)
        self.release_date[job.id] = self._date

    def sort_queue(self) -> None:
        """batsched's default queue order (FCFSOrder): release date, then job id *as a string* (w0!10 < w0!9)."""
        self.queue.sort(key=lambda j: (self.release_date[j.id], j.id))

    def on_simulation_start(self, date: float) -> None:
        """Called once, before the first `make_decisions`."""

    def make_decisions(self, date: float) -> None:
        raise NotImplementedError
