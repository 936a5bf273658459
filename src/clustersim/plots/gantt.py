"""Gantt chart of a run: each job as rectangles on the resource axis, from its start to its finish.

Reads a Batsim-format `jobs.csv` (plain or gzipped) in one streaming pass, keeping only the rectangles' numbers
in compact arrays, and draws all of them as two polygon collections (jobs, then an outline over the killed ones),
so hundreds of thousands of jobs render in seconds. A job's rectangles are one per contiguous interval of its
allocation; unit `r` spans `r - 0.5 .. r + 0.5` so ticks sit on unit ids. Jobs that never ran (rejected:
`starting_time` empty as Batsim writes it, or -1 in older files; empty allocation) are skipped. Colours come
from a hash of `workload!job_id`, so a job has the same colour in every chart. Drawing uses the Agg canvas
directly (never pyplot, never a display), and SVG output is reproducible byte for byte (no date, fixed id salt,
text kept as text).
"""

from __future__ import annotations

import csv
import math
import zlib
from array import array
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
from matplotlib import rc_context
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PathCollection
from matplotlib.colors import hsv_to_rgb
from matplotlib.figure import Figure
from matplotlib.path import Path as MplPath
from matplotlib.ticker import MaxNLocator

from clustersim._io.textfile import open_text
from clustersim.errors import InputError
from clustersim.intervals import IntervalSet

REQUIRED_COLUMNS = ("job_id", "final_state", "starting_time", "finish_time", "allocated_resources")
"""Columns a jobs.csv must have to be drawn; `workload_name`, when present, distinguishes equal job ids."""

KILLED_STATES = frozenset({"COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED"})

FORMATS = {".png": "png", ".svg": "svg"}

LARGE = 5_000
"""Above this many rectangles: no edges, no hatching, no antialiasing, and rasterized jobs in SVG files."""

LABELLED = 60
"""Up to this many rectangles, each is labelled with its job id."""


@dataclass(frozen=True, slots=True)
class GanttSummary:
    """What a chart shows: counts and the data's extent (None when no job ran)."""

    nb_jobs: int
    """Jobs drawn (they ran: a start time and an allocation)."""
    nb_rectangles: int
    """One per contiguous interval of each drawn job's allocation."""
    nb_killed: int
    """Drawn jobs killed at their walltime or by the scheduler (outlined and hatched)."""
    nb_skipped: int
    """Rows not drawn: jobs that never ran (rejected)."""
    time_range: tuple[float, float] | None
    """Earliest start and latest finish of the drawn jobs."""
    resource_range: tuple[int, int] | None
    """Lowest and highest allocated unit id."""


PALETTE_SIZE = 256


def _palette(size: int) -> npt.NDArray[np.float64]:
    """`size` distinct RGB colours: hues spread by the golden ratio, saturation and value in three bands."""
    i = np.arange(size, dtype=np.float64)
    hue = (i * 0.6180339887498949) % 1.0
    saturation = 0.50 + 0.15 * (np.arange(size) % 3)
    value = 0.95 - 0.10 * ((np.arange(size) // 3) % 3)
    rgb: npt.NDArray[np.float64] = hsv_to_rgb(np.stack([hue, saturation, value], axis=-1))
    return rgb


PALETTE = _palette(PALETTE_SIZE)


def job_colour(workload: str, job_id: str) -> int:
    """The palette index of a job: a stable hash of `workload!job_id`, the same in every run and process."""
    return zlib.crc32(f"{workload}!{job_id}".encode()) % PALETTE_SIZE


class _Rectangles:
    """Rectangles as parallel compact arrays (8 bytes a number), so memory stays small for huge traces.

    Unit `r` spans `r - 0.5 .. r + 0.5`; `lo`/`hi` are the first and last unit of the rectangle.
    """

    def __init__(self) -> None:
        self.start = array("d")
        self.finish = array("d")
        self.lo = array("d")
        self.hi = array("d")
        self.colour = array("B")
        self.killed = array("b")
        self.labels: list[str] | None = []
        """The job id of each rectangle, while there are few enough to label them."""

    def __len__(self) -> int:
        return len(self.start)

    def array(self, name: str) -> npt.NDArray[np.float64]:
        return np.frombuffer(getattr(self, name), dtype=np.float64)

    def vertices(self, mask: npt.NDArray[np.bool_] | None = None) -> npt.NDArray[np.float64]:
        """An (n, 5, 2) array: each rectangle's corners counter-clockwise from the bottom left, then the first again."""
        x0, x1, lo, hi = (self.array(name) for name in ("start", "finish", "lo", "hi"))
        if mask is not None:
            x0, x1, lo, hi = x0[mask], x1[mask], lo[mask], hi[mask]
        verts = np.empty((len(x0), 5, 2), dtype=np.float64)
        verts[:, 0, 0] = verts[:, 3, 0] = verts[:, 4, 0] = x0
        verts[:, 1, 0] = verts[:, 2, 0] = x1
        verts[:, 0, 1] = verts[:, 1, 1] = verts[:, 4, 1] = lo - 0.5
        verts[:, 2, 1] = verts[:, 3, 1] = hi + 0.5
        return verts

    def by_colour(self) -> tuple[list[MplPath], npt.NDArray[np.float64]]:
        """One compound path per palette colour in use, with those colours: a few hundred paths at most."""
        colours = np.frombuffer(self.colour, dtype=np.uint8)
        order = np.argsort(colours, kind="stable")
        verts = self.vertices()[order]
        used, first = np.unique(colours[order], return_index=True)
        bounds = [*first.tolist(), len(order)]
        paths = [_compound(verts[bounds[k] : bounds[k + 1]]) for k in range(len(used))]
        return paths, PALETTE[used]

    def killed_mask(self) -> npt.NDArray[np.bool_]:
        return np.frombuffer(self.killed, dtype=np.int8).astype(bool)


def _compound(verts: npt.NDArray[np.float64]) -> MplPath:
    """Rectangles given as an (n, 5, 2) array as one path of n closed sub-paths."""
    return MplPath(verts.reshape(-1, 2), np.tile(_RECTANGLE_CODES, len(verts)))


_RECTANGLE_CODES = np.array(
    [MplPath.MOVETO, MplPath.LINETO, MplPath.LINETO, MplPath.LINETO, MplPath.CLOSEPOLY], dtype=MplPath.code_type
)


def _read(path: Path, nb_resources: int | None) -> tuple[_Rectangles, int, int, int]:
    """Stream the CSV into rectangles; returns them with the counts of jobs drawn, killed and skipped."""
    source = str(path)
    rects = _Rectangles()
    add_start, add_finish = rects.start.append, rects.finish.append
    add_lo, add_hi = rects.lo.append, rects.hi.append
    add_colour, add_killed = rects.colour.append, rects.killed.append
    nb_jobs = nb_killed = nb_skipped = 0
    with open_text(path) as text:
        reader = csv.reader(text)
        header = next(reader, None)
        if header is None:
            raise InputError(source, "the file is empty: expected a jobs.csv header line")
        index = {name.strip(): i for i, name in enumerate(header)}
        missing = [name for name in REQUIRED_COLUMNS if name not in index]
        if missing:
            raise InputError(
                source,
                f"missing column{'s' if len(missing) > 1 else ''} {', '.join(repr(m) for m in missing)} "
                f"(a jobs.csv needs {', '.join(REQUIRED_COLUMNS)})",
                line=1,
            )
        i_id, i_state, i_start, i_finish, i_alloc = (index[name] for name in REQUIRED_COLUMNS)
        i_workload = index.get("workload_name")
        width = max(index.values()) + 1
        limit = nb_resources if nb_resources is not None else -1
        for row in reader:
            if not row:
                continue
            line = reader.line_num
            if len(row) < width:
                raise InputError(source, f"expected {len(header)} fields, got {len(row)}", line=line)
            allocation = row[i_alloc]
            if not row[i_start]:  # rejected: Batsim leaves its times empty
                nb_skipped += 1
                continue
            try:
                start = float(row[i_start])
                finish = float(row[i_finish])
            except ValueError:
                start = _number(row[i_start], source, line, "starting_time")
                finish = _number(row[i_finish], source, line, "finish_time")
            if start < 0 or not allocation or allocation.isspace():
                nb_skipped += 1
                continue
            if not (math.isfinite(start) and math.isfinite(finish)):
                _number(row[i_start], source, line, "starting_time")
                _number(row[i_finish], source, line, "finish_time")
            if not finish >= start:
                raise InputError(
                    source, f"finish_time {row[i_finish]} is before starting_time {row[i_start]}", line=line
                )
            intervals = _intervals(allocation, source, line)
            if limit >= 0 and intervals[-1][1] >= limit:
                raise InputError(
                    source,
                    f"resource {intervals[-1][1]} is outside the platform's ids 0..{limit - 1}",
                    line=line,
                    field="allocated_resources",
                )
            killed = row[i_state].strip() in KILLED_STATES
            colour = job_colour(row[i_workload] if i_workload is not None else "", row[i_id])
            for lo, hi in intervals:
                add_start(start)
                add_finish(finish)
                add_lo(lo)
                add_hi(hi)
                add_colour(colour)
                add_killed(killed)
            labels = rects.labels
            if labels is not None:
                if len(labels) + len(intervals) <= LABELLED:
                    labels.extend([row[i_id]] * len(intervals))
                else:
                    rects.labels = None
            nb_jobs += 1
            nb_killed += killed
    return rects, nb_jobs, nb_killed, nb_skipped


def _intervals(text: str, source: str, line: int) -> tuple[tuple[int, int], ...] | list[tuple[int, int]]:
    """Parse an allocation such as `0-3 8`; fast for the usual sorted, disjoint form written by simulators."""
    intervals: list[tuple[int, int]] = []
    last = -2
    try:
        for token in text.split():
            lo_text, dash, hi_text = token.partition("-")
            lo = int(lo_text)
            hi = int(hi_text) if dash else lo
            if lo <= last + 1 or hi < lo:
                raise ValueError(token)  # unsorted, adjacent or overlapping, or invalid: the general parser decides
            intervals.append((lo, hi))
            last = hi
    except ValueError:
        return IntervalSet.parse(text, f"{source}, line {line}, field 'allocated_resources'").intervals
    return intervals


def _number(text: str, source: str, line: int, field: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(source, f"'{text}' is not a number", line=line, field=field) from None
    if not math.isfinite(value):
        raise InputError(source, f"'{text}' is not a finite number", line=line, field=field)
    return value


def plot_gantt(
    jobs_csv: Path | str,
    output: Path | str,
    *,
    nb_resources: int | None = None,
    title: str | None = None,
) -> GanttSummary:
    """Draw the Gantt chart of `jobs_csv` into `output` (PNG or SVG, by extension) and say what it shows.

    `nb_resources` fixes the resource axis to the platform's ids 0..nb_resources-1 (and refuses allocations
    outside it); without it the axis spans the allocated ids.
    """
    jobs_path, out = Path(jobs_csv), Path(output)
    image_format = FORMATS.get(out.suffix.lower())
    if image_format is None:
        raise InputError(
            str(out), f"unsupported image format '{out.suffix}'; expected one of {', '.join(sorted(FORMATS))}"
        )
    if nb_resources is not None and nb_resources <= 0:
        raise InputError(str(jobs_path), f"nb_resources must be positive, got {nb_resources}")
    rects, nb_jobs, nb_killed, nb_skipped = _read(jobs_path, nb_resources)

    n = len(rects)
    time_range: tuple[float, float] | None = None
    resource_range: tuple[int, int] | None = None
    if n:
        time_range = (float(rects.array("start").min()), float(rects.array("finish").max()))
        resource_range = (int(rects.array("lo").min()), int(rects.array("hi").max()))
    summary = GanttSummary(nb_jobs, n, nb_killed, nb_skipped, time_range, resource_range)
    _draw(rects, summary, out, image_format, nb_resources, title)
    return summary


def _draw(
    rects: _Rectangles,
    summary: GanttSummary,
    out: Path,
    image_format: str,
    nb_resources: int | None,
    title: str | None,
) -> None:
    n = len(rects)
    large = n > LARGE
    y_high = nb_resources - 1 if nb_resources is not None else (summary.resource_range or (0, 0))[1]
    height = min(12.0, max(4.0, 2.5 + 0.25 * (y_high + 1)))

    with rc_context({"svg.fonttype": "none", "svg.hashsalt": "clustersim"}):
        fig = Figure(figsize=(11.0, height), dpi=100, layout="constrained")
        FigureCanvasAgg(fig)
        try:
            ax = fig.add_subplot()
            if n:
                paths, colours = rects.by_colour()
                ax.add_collection(PathCollection(
                    paths,
                    facecolors=colours,
                    edgecolors="none" if large else "black",
                    linewidths=0.0 if large else 0.4,
                    antialiaseds=not large,
                    rasterized=large,
                ), autolim=False)
                killed = rects.killed_mask()
                if killed.any():
                    ax.add_collection(PathCollection(
                        [_compound(rects.vertices(killed))],
                        facecolors="none",
                        edgecolors="red",
                        linewidths=0.6 if large else 1.2,
                        hatch=None if large else "///",
                        rasterized=large,
                    ), autolim=False)
                for k, label in enumerate(rects.labels or ()):
                    if rects.finish[k] > rects.start[k]:
                        ax.text(
                            (rects.start[k] + rects.finish[k]) / 2, (rects.lo[k] + rects.hi[k]) / 2, label,
                            ha="center", va="center", fontsize=8, clip_on=True,
                        )
            t0, t1 = summary.time_range if summary.time_range is not None else (0.0, 1.0)
            pad = (t1 - t0) * 0.01 if t1 > t0 else 0.5
            ax.set_xlim(t0 - pad, t1 + pad)
            ax.set_ylim(-0.5, y_high + 0.5)
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
            ax.set_xlabel("time (s)")
            ax.set_ylabel("resource id")
            if title:
                ax.set_title(title)
            out.parent.mkdir(parents=True, exist_ok=True)
            metadata: dict[str, str | None] = {"Date": None} if image_format == "svg" else {}
            fig.savefig(out, format=image_format, metadata=metadata)
        finally:
            fig.clear()
