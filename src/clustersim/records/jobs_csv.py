"""`jobs.csv`: one row per job with exactly Batsim's columns, streamed as jobs end.

Rows are in the order jobs end (Batsim sorts them at the end instead, which needs the whole trace in memory).
A rejected job has -1 in every time column and an empty allocation, as Batsim writes -1 for "not applicable".
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import TextIO

from clustersim.records.numbers import fmt
from clustersim.records.outcome import JobOutcome
from clustersim.scheduling.events import FinalState

COLUMNS = (
    "job_id",
    "workload_name",
    "profile",
    "submission_time",
    "requested_number_of_resources",
    "requested_time",
    "success",
    "final_state",
    "starting_time",
    "execution_time",
    "finish_time",
    "waiting_time",
    "turnaround_time",
    "stretch",
    "allocated_resources",
    "consumed_energy",
    "metadata",
)

_SUCCESS = FinalState.COMPLETED_SUCCESSFULLY


def job_row(o: JobOutcome) -> list[str]:
    """The jobs.csv fields of one outcome, formatted."""
    job = o.job
    walltime = -1.0 if job.walltime is None else job.walltime
    submit = job.submit_time
    start, finish = o.start, o.finish
    if start is None or finish is None:
        times = ["-1"] * 6
    else:
        execution = finish - start
        turnaround = finish - submit
        stretch = turnaround / execution if execution > 0 else (1.0 if turnaround == 0 else float("inf"))
        times = [fmt(start), fmt(execution), fmt(finish), fmt(start - submit), fmt(turnaround), fmt(stretch)]
    return [
        job.id,
        job.workload,
        job.profile_name,
        fmt(submit),
        str(job.nb_res),
        fmt(walltime),
        "1" if o.state is _SUCCESS else "0",
        o.state.value,
        *times,
        str(o.resources),
        fmt(o.consumed_energy),
        o.metadata,
    ]


class JobsCsvWriter:
    """An outcome sink that appends each job's row to jobs.csv as soon as it ends."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self._file: TextIO = open(self.path, "w", newline="", encoding="utf-8")  # noqa: SIM115 (closed in close)
        self._writer = csv.writer(self._file, lineterminator="\n")
        self._writer.writerow(COLUMNS)

    def record(self, outcome: JobOutcome) -> None:
        self._writer.writerow(job_row(outcome))

    def close(self) -> None:
        self._file.close()
