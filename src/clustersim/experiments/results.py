"""The results table of a campaign: one row per run, its axis values and every `schedule.csv` metric.

The table is rebuilt from the run directories, in plan order, each time it is written: it does not depend on
which backend ran the runs, in which order they finished, or how many restarts it took. Columns:

- `run` (directory name), `status` (`ok`, `failed`, or `pending` when the run never finished);
- one column per axis, values as written in the experiment file;
- every column of the runs' `schedule.csv` and `extra_metrics.csv` (so energy or other metrics appear when a
  run writes them);
- `nb_jobs_unfinished` (jobs the policy never started) and `error` (first line of a failed run's error).

Written as CSV (numbers as in `schedule.csv`) and Parquet (typed columns, null for missing values).
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clustersim._io.extras import available, require
from clustersim._io.numbers import fmt
from clustersim.errors import InputError
from clustersim.experiments.execute import ERROR_FILE, read_marker

MANIFEST_FILE = "campaign.json"
RUNS_DIR = "runs"
_INTEGER = re.compile(r"-?\d+")


@dataclass
class Table:
    """Rows of typed values (None when missing) under named columns."""

    columns: list[str]
    rows: list[dict[str, object]] = field(default_factory=list)

    def column(self, name: str) -> list[object]:
        return [row.get(name) for row in self.rows]


@dataclass(frozen=True)
class Manifest:
    """What a campaign directory holds: the runs in plan order, with the axis values that set them apart."""

    name: str
    axes: list[str]
    aggregate_over: str
    runs: list[tuple[str, dict[str, object]]]

    def write(self, directory: Path) -> None:
        document = {
            "name": self.name,
            "axes": self.axes,
            "aggregate_over": self.aggregate_over,
            "runs": [{"name": name, "axes": axes} for name, axes in self.runs],
        }
        (directory / MANIFEST_FILE).write_text(json.dumps(document, indent=1, default=str) + "\n", encoding="utf-8")

    @classmethod
    def read(cls, directory: Path) -> Manifest:
        path = directory / MANIFEST_FILE
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
            runs = [(str(r["name"]), dict(r["axes"])) for r in document["runs"]]
            return cls(str(document["name"]), list(document["axes"]), str(document["aggregate_over"]), runs)
        except OSError as error:
            raise InputError(
                str(path), f"not a campaign directory (no readable {MANIFEST_FILE}: {error.strerror or error})"
            ) from None
        except (ValueError, KeyError, TypeError) as error:
            raise InputError(str(path), f"corrupt campaign manifest: {error}") from None


def parse_number(text: str) -> object:
    """A metric as typed data: int, float, or the text itself when it is not a number."""
    if _INTEGER.fullmatch(text):
        return int(text)
    try:
        return float(text)
    except ValueError:
        return text


def _read_schedule(path: Path) -> dict[str, str]:
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
    except OSError:
        return {}
    return dict(zip(rows[0], rows[1], strict=False)) if len(rows) >= 2 else {}


def _first_line(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError:
        return ""
    return text.splitlines()[0] if text else ""


def collect_results(directory: Path) -> Table:
    """The results table of the campaign in `directory`, from its manifest and run directories."""
    manifest = Manifest.read(directory)
    metric_columns: dict[str, None] = {}
    rows: list[dict[str, object]] = []
    for name, axes in manifest.runs:
        run_dir = directory / RUNS_DIR / name
        row: dict[str, object] = {"run": name, "status": "pending", **axes}
        marker = read_marker(run_dir)
        if marker is not None:
            schedule = _read_schedule(run_dir / "schedule.csv")
            schedule.update(_read_schedule(run_dir / "extra_metrics.csv"))
            metric_columns.update(dict.fromkeys(schedule))
            row.update({key: parse_number(text) for key, text in schedule.items()})
            row["status"] = "ok"
            unfinished = marker.get("nb_unfinished", 0)
            row["nb_jobs_unfinished"] = unfinished if isinstance(unfinished, int) else None
        elif (run_dir / ERROR_FILE).exists():
            row["status"] = "failed"
            row["error"] = _first_line(run_dir / ERROR_FILE)
        rows.append(row)
    columns = ["run", "status", *manifest.axes, *metric_columns, "nb_jobs_unfinished", "error"]
    return Table(columns, rows)


def cell_text(value: object) -> str:
    """How a value is written in CSV: empty when missing, numbers as in schedule.csv, lists as JSON."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return fmt(value) if math.isfinite(value) else str(value)
    if isinstance(value, list | tuple | dict):
        return json.dumps(value, separators=(", ", ": "), default=str)
    return str(value)


def write_csv(table: Table, path: Path) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(table.columns)
        for row in table.rows:
            writer.writerow(cell_text(row.get(column)) for column in table.columns)


def column_kind(values: Iterable[object]) -> str:
    """The Parquet type of a column: bool, int64, float64, or string (anything mixed or structured)."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return "bool"
    if any(isinstance(v, bool) for v in present):
        return "string"
    if all(isinstance(v, int) for v in present):
        return "int64" if present else "string"
    if all(isinstance(v, int | float) for v in present):
        return "float64"
    return "string"


def write_parquet(table: Table, path: Path) -> None:
    pa: Any = require("pyarrow", "parquet", "writing Parquet tables")  # untyped: used through Any
    pq: Any = require("pyarrow.parquet", "parquet", "writing Parquet tables")

    arrays = {}
    for column in table.columns:
        values = table.column(column)
        kind = column_kind(values)
        if kind == "string":
            values = [None if v is None else cell_text(v) for v in values]
        elif kind == "float64":
            values = [None if v is None else float(v) for v in values]  # type: ignore[arg-type]
        arrays[column] = pa.array(values, type=getattr(pa, kind if kind != "string" else "string")())
    pq.write_table(pa.table(arrays), path)


def read_parquet_rows(path: Path) -> list[dict[str, object]]:
    """The rows of a Parquet table as dictionaries (for tests and users without pandas)."""
    pq: Any = require("pyarrow.parquet", "parquet", "reading Parquet tables")
    rows: list[dict[str, object]] = pq.read_table(path).to_pylist()
    return rows


def write_table(table: Table, directory: Path, stem: str) -> tuple[Path, Path | None]:
    """Write `stem.csv` into `directory`, and `stem.parquet` when the `parquet` extra is installed."""
    csv_path, parquet_path = directory / f"{stem}.csv", directory / f"{stem}.parquet"
    write_csv(table, csv_path)
    if not available("pyarrow"):
        parquet_path.unlink(missing_ok=True)  # never leave a stale copy next to a fresh CSV
        return csv_path, None
    write_parquet(table, parquet_path)
    return csv_path, parquet_path


def numeric_columns(table: Table, exclude: Sequence[str] | Mapping[str, object] = ()) -> list[str]:
    """Columns whose present values are all numbers (not booleans), in table order."""
    out = []
    for column in table.columns:
        if column in exclude:
            continue
        present = [v for v in table.column(column) if v is not None]
        if present and all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
            out.append(column)
    return out

