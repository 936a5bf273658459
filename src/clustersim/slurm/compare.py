"""Compare two schedules of the same jobs (real vs simulated, or two real runs) from their jobs.csv files.

Job by job: start-time differences (other minus reference: distribution, maximum) and start-order flips (pairs
of jobs that start in one order in the reference and in the opposite order in the other, both strictly).
Schedule-wide: makespan, mean waiting time, mean bounded slowdown (tau = 10 s) and utilisation of each, and
their differences. Given a second run of the reference system, the same figures measure its run-to-run spread,
against which the simulation's deviation is judged (as the seed papers do).
"""

from __future__ import annotations

import csv
import json
import math
import statistics
from dataclasses import dataclass
from pathlib import Path

from clustersim.errors import InputError
from clustersim.intervals import IntervalSet
from clustersim.records.metrics import BOUNDED_SLOWDOWN_TAU

THRESHOLDS = (0.0, 1.0, 2.0, 5.0, 10.0)


@dataclass(frozen=True, slots=True)
class Row:
    """One job that ran, as jobs.csv gives it."""

    job_id: str
    submit: float
    start: float
    finish: float
    resources: IntervalSet


def read_schedule(path: Path | str, whole_seconds: bool = False) -> dict[str, Row]:
    """The jobs of a jobs.csv that ran (rejected jobs have no start); `whole_seconds` floors every time, as
    Slurm's records (`sacct`, `scontrol`) keep them, to compare a simulation with such records like for like."""
    rows: dict[str, Row] = {}
    try:
        with open(path, newline="", encoding="utf-8") as f:
            for record in csv.DictReader(f):
                start = float(record["starting_time"] or -1)  # empty (Batsim) or -1: rejected
                if start < 0:
                    continue
                submit, finish = float(record["submission_time"]), float(record["finish_time"])
                if whole_seconds:
                    submit, start, finish = (float(math.floor(t + 1e-6)) for t in (submit, start, finish))
                rows[record["job_id"]] = Row(
                    record["job_id"], submit, start, finish, IntervalSet.parse(record["allocated_resources"], str(path))
                )
    except (OSError, KeyError, ValueError) as error:
        raise InputError(str(path), f"not a jobs.csv: {error}") from None
    return rows


@dataclass(frozen=True, slots=True)
class Metrics:
    makespan: float
    mean_wait: float
    mean_bounded_slowdown: float
    utilisation: float


def metrics(rows: dict[str, Row], nb_resources: int) -> Metrics:
    if not rows:
        return Metrics(0.0, 0.0, 0.0, 0.0)
    jobs = rows.values()
    makespan = max(r.finish for r in jobs)
    first = min(r.submit for r in jobs)
    waits = [r.start - r.submit for r in jobs]
    bsld = [
        max(1.0, (r.finish - r.submit) / max(r.finish - r.start, BOUNDED_SLOWDOWN_TAU)) for r in jobs
    ]
    busy = sum((r.finish - r.start) * len(r.resources) for r in jobs)
    span = makespan - first
    return Metrics(makespan, statistics.fmean(waits), statistics.fmean(bsld),
                   busy / (nb_resources * span) if span > 0 else 0.0)


@dataclass(frozen=True)
class Deviation:
    """How a schedule deviates from a reference schedule of the same jobs."""

    jobs: int
    start_differences: tuple[float, ...]
    """other - reference, per common job (in job id order)."""
    order_flips: int
    ordered_pairs: int
    reference: Metrics
    other: Metrics

    def within(self, seconds: float) -> float:
        """Fraction of jobs whose start differs by at most `seconds`."""
        if not self.start_differences:
            return 1.0
        return sum(abs(d) <= seconds + 1e-9 for d in self.start_differences) / len(self.start_differences)

    @property
    def max_abs(self) -> float:
        return max((abs(d) for d in self.start_differences), default=0.0)

    @property
    def mean_abs(self) -> float:
        return statistics.fmean(abs(d) for d in self.start_differences) if self.start_differences else 0.0

    @property
    def makespan_difference(self) -> float:
        """other - reference, seconds."""
        return self.other.makespan - self.reference.makespan

    def quantile(self, q: float) -> float:
        values = sorted(abs(d) for d in self.start_differences)
        if not values:
            return 0.0
        return values[min(len(values) - 1, int(q * len(values)))]

    def relative(self, name: str) -> float:
        """(other - reference) / reference for a schedule metric (0 when the reference is 0)."""
        ref, val = getattr(self.reference, name), getattr(self.other, name)
        return (val - ref) / ref if ref else 0.0

    def as_dict(self) -> dict[str, object]:
        diffs = self.start_differences
        return {
            "jobs": self.jobs,
            "start_difference_mean": statistics.fmean(diffs) if diffs else 0.0,
            "start_difference_mean_abs": self.mean_abs,
            "start_difference_median_abs": self.quantile(0.5),
            "start_difference_p90_abs": self.quantile(0.9),
            "start_difference_max_abs": self.max_abs,
            **{f"within_{t:g}s": self.within(t) for t in THRESHOLDS},
            "order_flips": self.order_flips,
            "ordered_pairs": self.ordered_pairs,
            "reference": _metrics(self.reference),
            "other": _metrics(self.other),
            "relative": {name: self.relative(name) for name in _METRIC_NAMES},
        }


_METRIC_NAMES = ("makespan", "mean_wait", "mean_bounded_slowdown", "utilisation")


def _metrics(m: Metrics) -> dict[str, float]:
    return {name: getattr(m, name) for name in _METRIC_NAMES}


def deviation(reference: dict[str, Row], other: dict[str, Row], nb_resources: int | None = None) -> Deviation:
    """Compare `other` with `reference` on the jobs both ran."""
    common = sorted(set(reference) & set(other), key=_id_key)
    if nb_resources is None:
        nb_resources = 1 + max(
            (r.resources.max() for rows in (reference, other) for r in rows.values() if r.resources), default=0
        )
    diffs = tuple(other[j].start - reference[j].start for j in common)
    flips = pairs = 0
    starts = [(reference[j].start, other[j].start) for j in common]
    for i, (ref_i, oth_i) in enumerate(starts):
        for ref_j, oth_j in starts[i + 1 :]:
            if ref_i == ref_j:
                continue
            pairs += 1
            if (ref_i < ref_j and oth_i > oth_j) or (ref_i > ref_j and oth_i < oth_j):
                flips += 1
    ref_rows = {j: reference[j] for j in common}
    oth_rows = {j: other[j] for j in common}
    return Deviation(len(common), diffs, flips, pairs, metrics(ref_rows, nb_resources),
                     metrics(oth_rows, nb_resources))


def farther_than(dev: Deviation, spread: Deviation, seconds: float = 0.0, flips: int = 0) -> list[str]:
    """The distances (mean and max abs(start difference), start-order flips, makespan) by which `dev` (a
    simulation against a real run) is farther from its reference than `spread` (a second real run against the
    same run) is, beyond a slack of `seconds` and `flips`: the issue's criterion is that there are none."""
    failed = []
    if dev.mean_abs > spread.mean_abs + seconds + 1e-9:
        failed.append(f"mean abs start difference {dev.mean_abs:.2f} s > {spread.mean_abs:.2f} s")
    if dev.max_abs > spread.max_abs + seconds + 1e-9:
        failed.append(f"max abs start difference {dev.max_abs:.1f} s > {spread.max_abs:.1f} s")
    if dev.order_flips > spread.order_flips + flips:
        failed.append(f"{dev.order_flips} start-order flips > {spread.order_flips}")
    if abs(dev.makespan_difference) > abs(spread.makespan_difference) + seconds + 1e-9:
        failed.append(f"makespan {dev.makespan_difference:+.1f} s vs {spread.makespan_difference:+.1f} s")
    return failed


def _id_key(job_id: str) -> tuple[int, int | str]:
    return (0, int(job_id)) if job_id.isascii() and job_id.isdigit() else (1, job_id)


def report(deviations: dict[str, Deviation]) -> str:
    """A Markdown table with one column per comparison (e.g. 'simulated vs real', 'real run 2 vs real')."""
    names = list(deviations)
    lines = ["| | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]

    def row(label: str, values: list[str]) -> None:
        lines.append(f"| {label} | " + " | ".join(values) + " |")

    devs = [deviations[n] for n in names]
    row("jobs compared", [str(d.jobs) for d in devs])
    row("start difference: mean (s)",
        [f"{statistics.fmean(d.start_differences):+.2f}" if d.start_differences else "0" for d in devs])
    row("start difference: mean abs (s)", [f"{d.mean_abs:.2f}" for d in devs])
    row("start difference: median abs (s)", [f"{d.quantile(0.5):.2f}" for d in devs])
    row("start difference: p90 abs (s)", [f"{d.quantile(0.9):.2f}" for d in devs])
    row("start difference: max abs (s)", [f"{d.max_abs:.2f}" for d in devs])
    for t in THRESHOLDS:
        row(f"starts within {t:g} s", [f"{100 * d.within(t):.0f}%" for d in devs])
    row("start-order flips", [f"{d.order_flips} of {d.ordered_pairs} pairs" for d in devs])
    for name, label, fmt in (
        ("makespan", "makespan (s)", "{:.1f}"), ("mean_wait", "mean waiting time (s)", "{:.2f}"),
        ("mean_bounded_slowdown", "mean bounded slowdown", "{:.3f}"), ("utilisation", "utilisation", "{:.3f}"),
    ):
        row(label, [f"{fmt.format(getattr(d.reference, name))} -> {fmt.format(getattr(d.other, name))} "
                    f"({100 * d.relative(name):+.2f}%)" for d in devs])
    return "\n".join(lines)


def compare_files(
    reference: Path | str, other: Path | str, baseline: Path | str | None = None, nb_resources: int | None = None,
    whole_seconds: bool = False,
) -> dict[str, Deviation]:
    """`other` vs `reference`, and `baseline` (a second run of the reference system) vs `reference`; with
    `whole_seconds`, every time floored first (`read_schedule`)."""
    ref = read_schedule(reference, whole_seconds)
    result = {"simulated vs real": deviation(ref, read_schedule(other, whole_seconds), nb_resources)}
    if baseline is not None:
        result["real run 2 vs real"] = deviation(ref, read_schedule(baseline, whole_seconds), nb_resources)
    return result


def write_json(deviations: dict[str, Deviation], path: Path | str) -> None:
    Path(path).write_text(json.dumps({k: v.as_dict() for k, v in deviations.items()}, indent=2) + "\n",
                          encoding="utf-8")


def plot(reference: Path | str, other: Path | str, path: Path | str, title: str = "") -> None:
    """Real vs simulated start times (one point per job) and the distribution of their differences."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ref, oth = read_schedule(reference), read_schedule(other)
    common = sorted(set(ref) & set(oth), key=_id_key)
    xs = [ref[j].start for j in common]
    ys = [oth[j].start for j in common]
    diffs = [y - x for x, y in zip(xs, ys, strict=True)]
    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    top = max(xs + ys, default=1.0)
    left.plot([0, top], [0, top], color="grey", linewidth=0.8)
    left.scatter(xs, ys, s=10)
    left.set_xlabel("real start (s)")
    left.set_ylabel("simulated start (s)")
    right.hist(diffs, bins=max(10, min(60, len(diffs) // 2 or 1)))
    right.set_xlabel("simulated - real start (s)")
    right.set_ylabel("jobs")
    if title:
        figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
