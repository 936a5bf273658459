"""Machine states over time (Batsim's machine_states.csv) as a stacked step chart."""

from __future__ import annotations

import bisect
import csv
from dataclasses import dataclass
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from clustersim.errors import InputError

STATES = ("nb_computing", "nb_idle", "nb_switching_on", "nb_switching_off", "nb_sleeping")
COLOURS = ("#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#1f77b4")
SAMPLES = 2000
"""A long trace is drawn from this many samples of its step function (the state at each sample time)."""


@dataclass
class MachineStatesChart:
    """What was drawn, so tests can check the content."""

    nb_rows: int
    nb_series: int
    time_range: tuple[float, float]
    max_machines: int


def _read(path: Path) -> tuple[list[float], list[list[int]]]:
    times: list[float] = []
    counts: list[list[int]] = []
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = [c for c in ("time", *STATES) if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(str(path), f"not a machine_states.csv: missing column(s) {', '.join(missing)}")
        for line, row in enumerate(reader, start=2):
            try:
                times.append(float(row["time"]))
                counts.append([int(row[c]) for c in STATES])
            except (TypeError, ValueError):
                raise InputError(str(path), "expected a time and five machine counts", line=line) from None
    if not times:
        raise InputError(str(path), "no rows: nothing to draw")
    return times, counts


def plot_machine_states(states_csv: Path | str, output: Path | str, *, title: str | None = None) -> MachineStatesChart:
    """Draw how many machines are computing, idle, switching and asleep over time (PNG or SVG)."""
    times, counts = _read(Path(states_csv))
    end = times[-1]
    if len(times) > SAMPLES and end > times[0]:
        grid = [times[0] + (end - times[0]) * i / (SAMPLES - 1) for i in range(SAMPLES)]
        counts = [counts[bisect.bisect_right(times, t) - 1] for t in grid]
        times = grid
    figure = Figure(figsize=(10, 4))
    FigureCanvasAgg(figure)
    ax = figure.add_subplot()
    series = [[row[i] for row in counts] for i in range(len(STATES))]
    ax.stackplot(times, *series, labels=[s.removeprefix("nb_").replace("_", " ") for s in STATES], colors=COLOURS,
                 step="post")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("machines")
    ax.set_title(title or "machine states over time")
    ax.legend(loc="upper right", fontsize="small")
    ax.set_xlim(times[0], end if end > times[0] else times[0] + 1)
    figure.tight_layout()
    figure.savefig(output)
    return MachineStatesChart(len(times), len(STATES), (times[0], end), max(sum(row) for row in counts))
