"""A run's output directory read for the viewer: every file any front end writes, each optional, read by column name.

The viewer opens whatever a directory holds: `jobs.csv` (the core's Batsim columns; placements become Gantt
rectangles), `schedule.csv` (the platform's size), `pods.csv` (Kubernetes node names), `machine_states.csv` and
`consumed_energy.csv` (energy), `timeseries.csv` (autoscaling), `utilisation.csv` and `schedulers.csv`
(architectures). Columns are looked up by name, never by position, so added or reordered columns do not matter;
a missing column the viewer needs fails naming the file and the column.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from clustersim._io.textfile import open_text
from clustersim.errors import InputError

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

STATES = ("COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED", "COMPLETED_FAILED",
          "REJECTED", "RUNNING", "OTHER")
"""Job states in colour order; pods and architecture jobs map onto them (`scheduled` is a success)."""


@dataclass(frozen=True)
class Table:
    """A CSV file as named text columns (rows in file order)."""

    path: Path
    columns: dict[str, list[str]]

    @property
    def nb_rows(self) -> int:
        return len(next(iter(self.columns.values()), []))

    def has(self, *names: str) -> bool:
        return all(name in self.columns for name in names)

    def text(self, name: str) -> list[str]:
        if name not in self.columns:
            raise InputError(str(self.path), f"missing column (has: {', '.join(self.columns)})", field=name)
        return self.columns[name]

    def numbers(self, name: str) -> FloatArray:
        """The column as floats; empty cells and `NA` are NaN, `-1` stays -1 (callers know which columns use it)."""
        values = np.empty(self.nb_rows)
        for row, cell in enumerate(self.text(name)):
            try:
                values[row] = float(cell) if cell not in ("", "NA") else math.nan
            except ValueError:
                raise InputError(str(self.path), f"expected a number, got {cell!r}", line=row + 2, field=name) from None
        return values


def read_table(path: Path) -> Table:
    """Read a CSV with a header line into columns; a short row fails naming its line."""
    with open_text(path) as text:
        reader = csv.reader(text)
        header = next(reader, None)
        if not header:
            raise InputError(str(path), "empty file: expected a header line")
        cells: list[list[str]] = [[] for _ in header]
        for line, row in enumerate(reader, start=2):
            if len(row) < len(header):
                raise InputError(str(path), f"expected {len(header)} cells, got {len(row)}", line=line)
            for column, cell in zip(cells, row, strict=False):
                column.append(cell)
    return Table(path, dict(zip(header, cells, strict=True)))


@dataclass(frozen=True)
class Jobs:
    """Per-job arrays (rejected or never-started jobs: NaN start and finish) and their placement rectangles."""

    ids: list[str]
    submit: FloatArray
    start: FloatArray
    finish: FloatArray
    units: FloatArray
    state: NDArray[np.uint8]
    user: list[str] | None
    """One owner per job when the run says it (pods' namespace), else None."""
    rect_job: IntArray
    """Index of the job of each rectangle (one per contiguous interval of its allocation)."""
    rect_lo: IntArray
    rect_hi: IntArray

    @property
    def nb_units(self) -> int:
        return int(self.rect_hi.max()) + 1 if self.rect_hi.size else 0


@dataclass
class Run:
    """Everything the viewer found in one output directory."""

    directory: Path
    name: str
    jobs: Jobs | None = None
    nb_units: int = 0
    unit_labels: list[str] | None = None
    """Row labels (node names) when the run names its units' nodes (pods.csv)."""
    tables: dict[str, Table] = field(default_factory=dict)
    """The other CSV files found, by file name."""

    @property
    def kinds(self) -> list[str]:
        """What the run has, in display order: gantt, energy, autoscaling, kubernetes, architectures."""
        found = []
        if self.jobs is not None and self.jobs.rect_job.size:
            found.append("gantt")
        if "machine_states.csv" in self.tables or "consumed_energy.csv" in self.tables:
            found.append("energy")
        if "timeseries.csv" in self.tables:
            found.append("autoscaling")
        if "pods.csv" in self.tables:
            found.append("kubernetes")
        if "schedulers.csv" in self.tables:
            found.append("architectures")
        return found


OPTIONAL_FILES = ("machine_states.csv", "consumed_energy.csv", "timeseries.csv", "pods.csv", "utilisation.csv",
                  "schedulers.csv")


def run_directories(directory: Path) -> list[Path]:
    """The directory itself if it holds outputs, else its subdirectories that do (power-compare's runs, a
    campaign's): one page over all of them."""
    if not directory.is_dir():
        raise InputError(str(directory), "not a directory: expected a run's output directory")
    def holds(d: Path) -> bool:
        return any((d / name).is_file() for name in ("jobs.csv", *OPTIONAL_FILES))
    if holds(directory):
        return [directory]
    return sorted(d for d in directory.iterdir() if d.is_dir() and holds(d)) or [directory]


def read_run(directory: Path) -> Run:
    """Read every output file the viewer knows in `directory`; fails if it holds none."""
    if not directory.is_dir():
        raise InputError(str(directory), "not a directory: expected a run's output directory")
    run = Run(directory, directory.resolve().name)
    for name in OPTIONAL_FILES:
        if (directory / name).is_file():
            run.tables[name] = read_table(directory / name)
    pods = run.tables.get("pods.csv")
    jobs_path = directory / "jobs.csv"
    if jobs_path.is_file():
        table = read_table(jobs_path)
        run.jobs = _batsim_jobs(table, pods) if table.has("allocated_resources") else None
        if run.jobs is None:
            run.tables["jobs.csv"] = table  # architectures: no placement on units
    if not run.tables and run.jobs is None:
        raise InputError(str(directory), "no run outputs here: expected jobs.csv, timeseries.csv, schedulers.csv "
                         "or utilisation.csv")
    schedule = directory / "schedule.csv"
    if schedule.is_file():
        sched = read_table(schedule)
        if sched.has("nb_computing_machines") and sched.nb_rows:
            run.nb_units = int(float(sched.text("nb_computing_machines")[0]))
    if run.jobs is not None:
        run.nb_units = max(run.nb_units, run.jobs.nb_units)
    if pods is not None and run.jobs is not None:
        run.unit_labels = _unit_labels(run.jobs, pods, run.nb_units)
    return run


def _state_codes(states: list[str]) -> NDArray[np.uint8]:
    index = {name: code for code, name in enumerate(STATES)}
    aliases = {"scheduled": 0, "Succeeded": 0, "abandoned": 3, "Failed": 3, "pending": 5}
    other = len(STATES) - 1
    return np.fromiter((index.get(s, aliases.get(s, other)) for s in states), np.uint8, len(states))


def _batsim_jobs(table: Table, pods: Table | None) -> Jobs:
    ids = table.text("job_id")
    start = table.numbers("starting_time")
    finish = table.numbers("finish_time")
    ran = start >= 0
    start[~ran] = math.nan
    finish[~ran] = math.nan
    units = table.numbers("requested_number_of_resources") if table.has("requested_number_of_resources") \
        else np.ones(len(ids))
    rect_job: list[int] = []
    rect_lo: list[int] = []
    rect_hi: list[int] = []
    for row, text in enumerate(table.text("allocated_resources")):
        if not text or not ran[row]:
            continue
        for token in text.split():
            lo, _, hi = token.partition("-")
            try:
                rect_lo.append(int(lo))
                rect_hi.append(int(hi) if hi else int(lo))
            except ValueError:
                raise InputError(str(table.path), f"expected unit ids like '0-3 8', got {text!r}", line=row + 2,
                                 field="allocated_resources") from None
            rect_job.append(row)
    user = None
    if table.has("user"):
        user = table.text("user")
    elif pods is not None and pods.has("job_id", "namespace"):
        owner = dict(zip(pods.text("job_id"), pods.text("namespace"), strict=True))
        user = [owner.get(job, "") for job in ids]
    return Jobs(ids, table.numbers("submission_time"), start, finish, units, _state_codes(table.text("final_state")),
                user, np.array(rect_job, np.int64), np.array(rect_lo, np.int64), np.array(rect_hi, np.int64))


def _unit_labels(jobs: Jobs, pods: Table, nb_units: int) -> list[str]:
    """Each unit's node name, learnt from the pods placed on it (units never used keep their id)."""
    labels = [str(unit) for unit in range(nb_units)]
    if not pods.has("job_id", "node"):
        return labels
    node_of = dict(zip(pods.text("job_id"), pods.text("node"), strict=True))
    for job, lo, hi in zip(jobs.rect_job, jobs.rect_lo, jobs.rect_hi, strict=True):
        node = node_of.get(jobs.ids[job], "")
        if node:
            for unit in range(int(lo), int(hi) + 1):
                labels[unit] = node
    return labels


def with_owners(run: Run, owners: dict[str, str]) -> Run:
    """The run with each job's user taken from its workload (jobs.csv does not carry it); unknown ids get ''."""
    if run.jobs is not None and run.jobs.user is None:
        run.jobs = replace(run.jobs, user=[owners.get(job, "") for job in run.jobs.ids])
    return run
