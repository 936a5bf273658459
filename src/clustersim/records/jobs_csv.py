"""`jobs.csv`: one row per job with exactly Batsim's columns, streamed as jobs end.

Rows are in the order jobs end (Batsim sorts them at the end instead, which needs the whole trace in memory).
A rejected job leaves every time column, its allocation and its energy empty, as Batsim 4.2 does. A job that
ran for no time has Batsim's stretch: Batsim counts its run time as ZERO_RUNTIME (1e-5 s) to divide by it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final, TextIO

from clustersim._io.numbers import fmt
from clustersim.core.events import FinalState
from clustersim.core.outcome import ZERO_RUNTIME, JobOutcome

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

_SUCCESS: Final = FinalState.COMPLETED_SUCCESSFULLY
_NOT_RUN: Final = ",,,,,,"
_STATES: Final = {state: ("1," if state is _SUCCESS else "0,") + state.value for state in FinalState}
"""The success and final_state fields of each final state."""
_SUCCEEDED: Final = _STATES[_SUCCESS]

def _text(value: str) -> str:
    """A text field, quoted as CSV requires only when it must be."""
    if "," in value or '"' in value or "\n" in value or "\r" in value:
        return '"' + value.replace('"', '""') + '"'
    return value


def _plain(fields: str) -> bool:
    """Whether three text fields, each followed by a comma, need no quotes: they hold no quote, line break or
    comma of their own."""
    return not ('"' in fields or "\n" in fields or "\r" in fields) and fields.count(",") == 3


def _energy(o: JobOutcome) -> str:
    """The consumed_energy field of a job that ran: Batsim's -1 without energy accounting (most runs)."""
    energy = o.consumed_energy
    return "-1" if energy == -1.0 else fmt(energy)


def job_line(o: JobOutcome) -> str:
    """The jobs.csv line of one outcome (with its newline).

    (Numbers are joined rather than written in an f-string, and the final state's text comes from a table rather
    than `.value`: compiled with mypyc, a conversion makes the f-string a `str.format` call and `.value` is a
    Python-level property; together they were half of the line's cost. The table is not asked for the most
    common state: an enum member's hash is a Python-level call too.)"""
    job = o.job
    submit = job.submit_time
    walltime = -1.0 if job.walltime is None else job.walltime
    start, finish = o.start, o.finish
    if start is None or finish is None:
        times = _NOT_RUN
    else:
        execution = finish - start
        turnaround = finish - submit
        stretch = turnaround / (execution if execution > 0 else ZERO_RUNTIME)
        times = ",".join((
            fmt(start), fmt(execution), fmt(finish), fmt(start - submit), fmt(turnaround), fmt(stretch), ""
        ))
    request = ",".join((fmt(submit), str(job.nb_res), fmt(walltime), ""))
    state = o.state
    resources = str(o.resources)
    names = f"{job.id},{job.workload},{job.profile_name},"
    if not _plain(names):  # (one check of the three texts joined, not three: most are plain)
        names = f"{_text(job.id)},{_text(job.workload)},{_text(job.profile_name)},"
    metadata = o.metadata
    return (
        f"{names}{request}{_SUCCEEDED if state is _SUCCESS else _STATES[state]},{times}{resources},"
        f"{_energy(o) if start is not None else ''},{_text(metadata) if metadata else ''}\n"
    )


LINES_PER_WRITE: Final = 4096
"""Lines joined into one write: a write per line cost a fifth of the line's own cost (the text layer's per-call
work); a block of 4,096 lines is about half a megabyte."""


class JobsCsvWriter:
    """An outcome sink that appends each job's line to jobs.csv as it ends, in blocks of LINES_PER_WRITE lines
    (and the rest when closed)."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self._file: TextIO = open(self.path, "w", encoding="utf-8")  # noqa: SIM115 (closed in close)
        self._file.write(",".join(COLUMNS) + "\n")
        self._lines: list[str] = []

    def record(self, outcome: JobOutcome) -> None:
        lines = self._lines
        lines.append(job_line(outcome))
        if len(lines) == LINES_PER_WRITE:
            self._file.write("".join(lines))
            lines.clear()

    def close(self) -> None:
        try:
            if self._lines:
                self._file.write("".join(self._lines))
                self._lines.clear()
        finally:
            self._file.close()
