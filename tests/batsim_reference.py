"""The Batsim reference corpus (../shared/reference/batsim): run a case with clustersim, compare with what the real
Batsim 4.2 + batsched 1.4 wrote, get the list of differences (empty: identical).

API: `cases(family)` lists a family's case folders; `run_case(case, out)` runs one (a built-in policy for the
batsched variants that have one, else the scheduler given); `run_variant(case, out)` runs one with the built-in
policy or the reference scheduler (tests/batsched_variants.py) of its variant; `compare(case, out)` returns the
differences, with the tolerances of the corpus's README ("How to compare"). `BUILT_IN` maps batsched variants to
policies.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Sequence
from pathlib import Path

from clustersim.cli import main

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "reference" / "batsim"

BUILT_IN = {"easy_bf": "easy", "fcfs": "fcfs", "conservative_bf": "conservative"}
"""batsched variants with a built-in equivalent."""

TIME_TOLERANCE = 1e-3
ENERGY_TOLERANCE = 1e-6

EXACT_SCHEDULE = ("nb_jobs", "nb_jobs_finished", "nb_jobs_success", "nb_jobs_killed", "nb_jobs_rejected")
TIMED_SCHEDULE = ("makespan", "mean_waiting_time", "max_waiting_time", "mean_turnaround_time",
                  "max_turnaround_time", "mean_slowdown", "max_slowdown")
ENERGY_SCHEDULE = ("nb_machine_switches", "nb_grouped_switches")
WALL_CLOCK = ("batsim_version", "scheduling_time", "simulation_time")
"""Columns that differ between any two runs (wall-clock measurements, the program's version)."""


def cases(family: str) -> list[Path]:
    return sorted(p for p in (CORPUS / family).iterdir() if (p / "case.json").is_file())


def case_info(case: Path) -> dict[str, object]:
    info: dict[str, object] = json.loads((case / "case.json").read_text())
    return info


def run_case(case: Path, out: Path, external: str | None = None, extra: Sequence[str] = ()) -> Path:
    """Run `case` into `out` the way the corpus ran it (Batsim's flags), with the built-in equivalent of its
    variant, or with the external scheduler listening at `external`. Returns the output prefix's folder."""
    info = case_info(case)
    flags = [str(flag) for flag in info["batsim_flags"]]  # type: ignore[attr-defined]
    argv = ["run", "-p", str(case / "platform.xml"), "-w", str(case / "workload.json"),
            "-e", str(out / "out"), "--host-order", "name", "-q", "--no-gantt", *flags, *extra]
    if external is not None:
        argv += ["-s", external]
    else:
        argv += ["--policy", BUILT_IN[str(info["variant"])]]
    code = main(argv)
    if code != 0:
        raise AssertionError(f"clustersim {' '.join(argv)} exited with {code}")
    return out


def run_variant(case: Path, out: Path, extra: Sequence[str] = ()) -> Path:
    """Run `case` with the built-in equivalent of its batsched variant, or with the variant's reference scheduler
    (tests/batsched_variants.py) served over the protocol."""
    import batsched_variants

    variant = str(case_info(case)["variant"])
    if variant in BUILT_IN:
        return run_case(case, out, extra=extra)
    if variant not in batsched_variants.VARIANTS:
        raise AssertionError(f"no reference scheduler for batsched's {variant}")
    options_file = case / "options.json"
    options = json.loads(options_file.read_text()) if options_file.exists() else None
    with batsched_variants.serving(variant, options) as endpoint:
        return run_case(case, out, external=endpoint, extra=extra)


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _close(a: str, b: str, tolerance: float, relative: bool = False) -> bool:
    if a == "" or b == "":
        return a == b
    x, y = float(a), float(b)
    if math.isinf(x) or math.isinf(y):
        return x == y
    scale = max(abs(x), abs(y), 1.0) if relative or max(abs(x), abs(y)) > 1e4 else 1.0
    return abs(x - y) <= tolerance * scale


def _hosts(text: str) -> set[int]:
    hosts: set[int] = set()
    for part in text.split():
        first, _, last = part.partition("-")
        hosts.update(range(int(first), int(last or first) + 1))
    return hosts


def compare_jobs(case: Path, out: Path, energy: bool = False) -> list[str]:
    """Per job, keyed on (workload_name, job_id): final_state, success, allocated_resources, times, energy."""
    expected = {(r["workload_name"], r["job_id"]): r for r in _rows(case / "out_jobs.csv")}
    got = {(r["workload_name"], r["job_id"]): r for r in _rows(out / "out_jobs.csv")}
    differences = [f"job {k[0]}!{k[1]}: missing" for k in expected if k not in got]
    differences += [f"job {k[0]}!{k[1]}: not in Batsim's out_jobs.csv" for k in got if k not in expected]
    for key in sorted(expected.keys() & got.keys()):
        want, have = expected[key], got[key]
        name = f"job {key[0]}!{key[1]}"
        for column in ("final_state", "success"):
            if want[column] != have[column]:
                differences.append(f"{name}: {column} {have[column]!r}, Batsim {want[column]!r}")
        if _hosts(want["allocated_resources"]) != _hosts(have["allocated_resources"]):
            differences.append(f"{name}: allocated_resources {have['allocated_resources']!r}, "
                               f"Batsim {want['allocated_resources']!r}")
        for column in ("starting_time", "finish_time", "execution_time", "waiting_time", "turnaround_time",
                       "stretch", "submission_time", "requested_time"):
            if not _close(have[column], want[column], TIME_TOLERANCE):
                differences.append(f"{name}: {column} {have[column]!r}, Batsim {want[column]!r}")
        if energy and not _close(have["consumed_energy"], want["consumed_energy"], ENERGY_TOLERANCE, True):
            differences.append(f"{name}: consumed_energy {have['consumed_energy']}, Batsim {want['consumed_energy']}")
    return differences


def compare_schedule(case: Path, out: Path, energy: bool = False) -> list[str]:
    """out_schedule.csv column by column: same columns in the same order, values within the README's tolerances."""
    with open(case / "out_schedule.csv", newline="") as f:
        want_header, want = list(csv.reader(f))[:2]
    with open(out / "out_schedule.csv", newline="") as f:
        have_header, have = list(csv.reader(f))[:2]
    if have_header != want_header:
        return [f"schedule.csv columns {have_header}, Batsim {want_header}"]
    differences = []
    for column, a, b in zip(want_header, have, want, strict=True):
        if column in WALL_CLOCK:
            continue
        if column in EXACT_SCHEDULE:
            same = a == b
        elif column in TIMED_SCHEDULE:
            same = _close(a, b, TIME_TOLERANCE)
        elif column == "consumed_joules":
            same = _close(a, b, ENERGY_TOLERANCE, True)
        elif column.startswith("time_") or column in ENERGY_SCHEDULE:
            same = _close(a, b, TIME_TOLERANCE) if energy or column.startswith("time_") else a == b
        else:
            same = _close(a, b, TIME_TOLERANCE)
        if not same:
            differences.append(f"schedule.csv {column}: {a}, Batsim {b}")
    return differences


def compare(case: Path, out: Path) -> list[str]:
    """Every difference between clustersim's outputs in `out` and Batsim's in `case` (empty: identical)."""
    energy = "-E" in case_info(case)["batsim_flags"]  # type: ignore[operator]
    return compare_jobs(case, out, energy) + compare_schedule(case, out, energy)
