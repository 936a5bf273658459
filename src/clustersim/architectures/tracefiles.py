"""Readers of the seed simulator's input files: samples of job parameters and the initial cluster state.

Sample files hold one value per line, or the seed's rows `cluster policy scheduler_id value` (scheduler id 0 is
batch, 1 is service; a file may mix both). The initial state file holds the seed's rows
`11 0 job_id prod sched_class tasks cpus memory_bytes` for jobs running at time 0 (cpus and memory are the
job's totals) and `12 time job_id prod sched_class _` for those that end at `time`. Errors name the file, the
line, and the configuration key that pointed at the file.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from clustersim._io.textfile import open_text
from clustersim.errors import InputError

PRESENT = "11"
ENDS = "12"


def _number(text: str, source: str, line: int, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(source, f"expected {what}, got {text!r}", line=line) from None
    if not math.isfinite(value) or value < 0:
        raise InputError(source, f"expected {what} (finite, >= 0), got {text!r}", line=line)
    return value


@contextmanager
def _named_by(field: str, config: str) -> Iterator[None]:
    """Add the configuration key that pointed at the file to any error about the file."""
    try:
        yield
    except InputError as error:
        raise InputError(error.source, f"{error.reason} (file named by '{field}' in {config})",
                         line=error.line) from None


def _lines(path: Path) -> list[tuple[int, list[str]]]:
    with open_text(path) as text:
        rows = [(number, line.split()) for number, line in enumerate(text, 1)]
    return [(number, fields) for number, fields in rows if fields and not fields[0].startswith("#")]


def read_samples(path: Path, trace_id: int | None, *, field: str, config: str) -> list[float]:
    """The samples of one parameter: every value of a plain file, or the rows of `trace_id` in a seed file."""
    with _named_by(field, config):
        return _samples(path, trace_id)


def _samples(path: Path, trace_id: int | None) -> list[float]:
    source = str(path)
    values: list[float] = []
    for number, fields in _lines(path):
        if len(fields) == 1:
            values.append(_number(fields[0], source, number, "a number"))
        elif len(fields) == 4:
            if trace_id is None:
                raise InputError(
                    source, "rows in the simulator's format need a 'trace_id' next to the file's key "
                    "(0 for batch, 1 for service)", line=number,
                )
            if fields[2] == str(trace_id):
                values.append(_number(fields[3], source, number, "a number in column 4"))
        else:
            raise InputError(
                source, f"expected one value, or 4 columns (cluster policy scheduler_id value), got {len(fields)} "
                "columns", line=number,
            )
    if not values:
        which = "" if trace_id is None else f" with scheduler id {trace_id}"
        raise InputError(source, f"no samples{which}")
    return values


@dataclass(frozen=True, slots=True)
class RunningJob:
    """A job already running at time 0: its tasks' size and when they end (None: after the run)."""

    name: str
    tasks: int
    cpu: float
    memory_gib: float
    end: float | None


def read_initial_state(path: Path, *, field: str, config: str) -> list[RunningJob]:
    """Jobs of the seed's initial cluster state file, with the end times its `12` rows give."""
    with _named_by(field, config):
        return _initial_state(path)


def _initial_state(path: Path) -> list[RunningJob]:
    source = str(path)
    present: dict[str, tuple[int, float, float]] = {}
    ends: dict[str, float] = {}
    for number, fields in _lines(path):
        kind = fields[0]
        if kind == PRESENT:
            if len(fields) != 8:
                raise InputError(source, f"a '11' row has 8 columns, got {len(fields)}", line=number)
            tasks = _number(fields[5], source, number, "a task count in column 6")
            if tasks < 1 or not tasks.is_integer():
                raise InputError(source, f"expected a task count >= 1 in column 6, got {fields[5]!r}", line=number)
            cpu = _number(fields[6], source, number, "a cpu total in column 7")
            memory = _number(fields[7], source, number, "a memory total in bytes in column 8")
            present[fields[2]] = (int(tasks), cpu / tasks, memory / tasks / 2**30)
        elif kind == ENDS:
            if len(fields) != 6:
                raise InputError(source, f"a '12' row has 6 columns, got {len(fields)}", line=number)
            if fields[2] not in present:
                raise InputError(source, f"job {fields[2]} ends but was not listed by a '11' row", line=number)
            ends[fields[2]] = _number(fields[1], source, number, "a time in column 2")
        else:
            raise InputError(source, f"expected a row starting with 11 or 12, got {kind!r}", line=number)
    return [RunningJob(name, tasks, cpu, memory, ends.get(name)) for name, (tasks, cpu, memory) in present.items()]
