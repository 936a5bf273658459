"""The autoscaling time series: one row per output interval, streamed to CSV and kept for the plots.

Counts (arrived, completed, failed) are over the interval ending at `time`; replica counts, the buffer and the
desired count are at `time`; latencies are of the requests completed in the interval.
"""

from __future__ import annotations

import csv
import math
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import TextIO


@dataclass(frozen=True, slots=True)
class Row:
    time: float
    desired_replicas: int
    replicas_pending: int
    replicas_starting: int
    replicas_unready: int
    replicas_ready: int
    replicas_terminating: int
    utilisation: float
    """CPU used by the serving replicas over the interval, in percent of their requests (true, not lagged)."""
    hpa_metric: float
    """The metric value the HPA computed at its last sync (utilisation % or requests/s per pod)."""
    traffic_rate: float
    """The traffic source's nominal rate at `time` (requests/s)."""
    arrived_per_s: float
    completed_per_s: float
    failed_per_s: float
    completed: float
    failed: float
    latency_mean: float
    latency_p50: float
    latency_p95: float
    latency_p99: float
    buffered: float
    in_flight: float
    cpu_request_m: float = math.nan
    """With a VPA: the mean cpu request of the replicas alive (millicores)."""
    cpu_target_m: float = math.nan
    """With a VPA: its cpu target (millicores); lower and upper bounds follow."""
    cpu_lower_m: float = math.nan
    cpu_upper_m: float = math.nan
    memory_request_mi: float = math.nan
    memory_target_mi: float = math.nan
    memory_lower_mi: float = math.nan
    memory_upper_mi: float = math.nan
    vpa_evictions: float = math.nan
    """Pods the VPA updater evicted in the interval; in-place resizes follow."""
    vpa_resizes: float = math.nan

    @property
    def replicas(self) -> int:
        """Replicas that exist and are not being deleted."""
        return self.replicas_pending + self.replicas_starting + self.replicas_unready + self.replicas_ready


ALL_COLUMNS = tuple(f.name for f in fields(Row))
VPA_COLUMNS = tuple(name for name in ALL_COLUMNS if name.startswith(("cpu_", "memory_", "vpa_")))
COLUMNS = tuple(name for name in ALL_COLUMNS if name not in VPA_COLUMNS)
"""The columns written without a VPA; with one, VPA_COLUMNS follow."""


def _cell(value: float | int) -> str:
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return ""
    return f"{value:.6g}"


class TimeSeries:
    """Rows in memory (few: one per interval) and, with a path, in a CSV written as they come."""

    def __init__(self, path: Path | None = None, *, vpa: bool = False):
        self.rows: list[Row] = []
        self._width = len(ALL_COLUMNS) if vpa else len(COLUMNS)
        self._file: TextIO | None = None
        self._writer: csv.writer | None = None  # type: ignore[valid-type]
        if path is not None:
            self._file = path.open("w", newline="")
            self._writer = csv.writer(self._file)
            self._writer.writerow(ALL_COLUMNS[:self._width])

    def add(self, row: Row) -> None:
        self.rows.append(row)
        if self._writer is not None:
            self._writer.writerow([_cell(v) for v in astuple(row)[:self._width]])

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def read_time_series(path: Path) -> list[dict[str, float]]:
    """A written time series, as numbers (empty cells are NaN)."""
    with path.open(newline="") as handle:
        return [{k: float(v) if v != "" else math.nan for k, v in row.items()} for row in csv.DictReader(handle)]
