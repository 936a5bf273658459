"""Run a case of the reference corpus's `energy` family with its batsched variant re-written in Python, over the
Batsim protocol, and list how clustersim's outputs differ from Batsim's."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from batsched_energy.framework import Batsched, parse_intervals
from batsched_energy.sleeper import Sleeper
from clustersim.cli import main
from test_batsim_adapter import ScriptedScheduler

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "reference" / "batsim" / "energy"

VARIANTS: dict[str, type[Batsched]] = {"sleeper": Sleeper}


def rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def run_case(case: Path, out: Path) -> None:
    """clustersim on the case's platform and workload, energy on, driven by the case's variant."""
    variant = json.loads((case / "case.json").read_text())["variant"]
    options_file = case / "options.json"
    options: dict[str, Any] = json.loads(options_file.read_text()) if options_file.exists() else {}
    scheduler = ScriptedScheduler(VARIANTS[variant](options))
    try:
        code = main(["run", "-p", str(case / "platform.xml"), "-w", str(case / "workload.json"), "--energy",
                     "--external", scheduler.endpoint, "-o", str(out), "-q", "--no-gantt"])
    finally:
        scheduler.join()
    assert code == 0


def _close(a: str, b: str, absolute: float = 1e-3, relative: float = 0.0) -> bool:
    if a == "" or b == "":
        return a == b
    x, y = float(a), float(b)
    return abs(x - y) <= max(absolute, relative * max(abs(x), abs(y)))


def job_differences(case: Path, out: Path) -> list[str]:
    """Per job: starting_time, finish_time, allocated_resources, final_state, consumed_energy."""
    expected = {(r["workload_name"], r["job_id"]): r for r in rows(case / "out_jobs.csv")}
    got = {("w0", r["job_id"].split("!")[-1]): r for r in rows(out / "jobs.csv")}
    found = []
    for key, want in sorted(expected.items(), key=lambda kv: (kv[0][0], int(kv[0][1]))):
        have = got.get(key)
        if have is None:
            found.append(f"job {key}: missing")
            continue
        for column in ("starting_time", "finish_time"):
            if not _close(have[column], want[column]):
                found.append(f"job {key[1]}: {column} {have[column]} != {want[column]}")
        if parse_intervals(have["allocated_resources"]) != parse_intervals(want["allocated_resources"]):
            found.append(f"job {key[1]}: allocated_resources {have['allocated_resources']} != "
                         f"{want['allocated_resources']}")
        if have["final_state"] != want["final_state"]:
            found.append(f"job {key[1]}: final_state {have['final_state']} != {want['final_state']}")
        if not _close(have["consumed_energy"], want["consumed_energy"], absolute=1e-6, relative=1e-6):
            found.append(f"job {key[1]}: consumed_energy {have['consumed_energy']} != {want['consumed_energy']}")
    return found


def total_energy(case: Path, out: Path) -> tuple[float, float]:
    """consumed_joules: (clustersim, Batsim)."""
    return (float(rows(out / "schedule.csv")[0]["consumed_joules"]),
            float(rows(case / "out_schedule.csv")[0]["consumed_joules"]))
