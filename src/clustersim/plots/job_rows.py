"""The columns of a `jobs.csv` (clustersim's or Batsim's) that plots need, as numpy arrays.

Rows are read with the csv module and only the needed columns are kept, as float arrays: a million jobs take
a few tens of megabytes, and plots need every point anyway.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from clustersim.errors import InputError
from clustersim.records.metrics import BOUNDED_SLOWDOWN_TAU

NEEDED = ("submission_time", "starting_time", "finish_time", "requested_number_of_resources")

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class JobRows:
    """Per-job submit, start and finish times and resource counts; start and finish are NaN for rejected jobs."""

    submit: FloatArray
    start: FloatArray
    finish: FloatArray
    nb_res: FloatArray

    @property
    def ran(self) -> NDArray[np.bool_]:
        return ~np.isnan(self.start)

    def waiting_times(self) -> FloatArray:
        ran = self.ran
        return self.start[ran] - self.submit[ran]

    def bounded_slowdowns(self, tau: float = BOUNDED_SLOWDOWN_TAU) -> FloatArray:
        """max(1, turnaround / max(execution, tau)), as schedule.csv's mean_bounded_slowdown averages."""
        ran = self.ran
        execution = self.finish[ran] - self.start[ran]
        turnaround = self.finish[ran] - self.submit[ran]
        return np.maximum(1.0, turnaround / np.maximum(execution, tau))


def read_job_rows(path: Path | str) -> JobRows:
    """Read the plotted columns of a jobs.csv; empty or -1 times (never started) become NaN."""
    columns: dict[str, list[float]] = {name: [] for name in NEEDED}
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if header is None:
                raise InputError(str(path), "empty file; expected a jobs.csv header")
            missing = [name for name in NEEDED if name not in header]
            if missing:
                raise InputError(str(path), f"not a jobs.csv: missing column(s) {', '.join(missing)}")
            indices = [(columns[name], header.index(name)) for name in NEEDED]
            for line, row in enumerate(reader, start=2):
                try:
                    for values, index in indices:
                        text = row[index]
                        values.append(float(text) if text else -1.0)  # empty: a rejected job's times
                except (ValueError, IndexError):
                    raise InputError(str(path), f"expected numbers in columns {', '.join(NEEDED)}", line=line) from None
    except OSError as error:
        raise InputError(str(path), f"cannot read the file: {error.strerror or error}") from None
    submit, start, finish, nb_res = (np.asarray(columns[name], dtype=np.float64) for name in NEEDED)
    never = start < 0
    start[never] = np.nan
    finish[never] = np.nan
    return JobRows(submit, start, finish, nb_res)
