"""Validation on whole-second records: two real runs of a scenario, the model's simulation of each, and the
issue's criterion (the simulation of a run no farther from that run than the other real run is).

A scenario directory holds what a user of a real Slurm has: `slurm.conf`, and for each real run N `realN.csv`
(the replay's jobs.csv with every time in whole seconds, as `sacct`/`scontrol` give them) and `replayN.json`
(the replay's clock acceleration, clock origin, slurmctld's start and measured per-job overhead).
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass
from pathlib import Path

from clustersim.errors import InputError
from clustersim.policies.slurm.conf import parse_slurm_conf
from clustersim.policies.slurm.policy import EPILOG_DELAY
from clustersim.slurm.compare import Deviation, deviation, farther_than, read_schedule
from clustersim.slurm.replay import simulate_replay

EPILOG_SHARE = 0.1
"""The epilog delay of an accelerated replay, as a share of its measured per-job overhead (docs/slurm.md)."""


def whole_second_records(jobs_csv: Path, output: Path) -> None:
    """Rewrite a replay's jobs.csv with Slurm's whole-second times (what `scontrol`/`sacct` show): the start and
    end it recorded (`slurm_start`, `slurm_end`), and the submit second (`eligible` when the job had no
    dependency and is not an array's task, else the floored submit time: a throttled task becomes eligible when
    it may start, long after the array's submission)."""
    with open(jobs_csv, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        fields = list(reader.fieldnames or [])
        rows = list(reader)
    for row in rows:
        if not row["starting_time"] or float(row["starting_time"]) < 0:
            continue
        meta = dict(item.partition("=")[::2] for item in row["metadata"].split(";") if "=" in item)
        if meta.get("eligible") and not any(meta.get(key) for key in ("dependency", "preceding_job", "array_job")):
            submit = float(meta["eligible"])
        else:
            submit = float(math.floor(float(row["submission_time"]) + 1e-6))
        start = float(meta.get("slurm_start") or math.floor(float(row["starting_time"]) + 1e-6))
        end = float(meta.get("slurm_end") or math.floor(float(row["finish_time"]) + 1e-6))
        turnaround = end - submit
        row.update(submission_time=f"{submit:g}", starting_time=f"{start:g}", finish_time=f"{end:g}",
                   execution_time=f"{end - start:g}", waiting_time=f"{start - submit:g}",
                   turnaround_time=f"{turnaround:g}",
                   stretch=f"{turnaround / (end - start):g}" if end > start else "-1",
                   metadata=";".join(f"{k}={v}" for k, v in meta.items() if k != "times") + ";times=whole-seconds")
    output.parent.mkdir(parents=True, exist_ok=True)
    with open(output, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def replay_options(replay_json: Path) -> dict[str, float]:
    """The `slurm` policy options that place a replay's simulation on its clock: slurmctld's start, the clock
    origin, and the epilog delay at its acceleration (a share of the per-job overhead it measured, at least
    the unaccelerated default)."""
    info = json.loads(replay_json.read_text(encoding="utf-8"))
    try:
        return {"ctld_start": float(info["ctld_start"]), "clock_origin": float(info["origin_epoch"]),
                "epilog_delay": round(EPILOG_DELAY + EPILOG_SHARE * float(info["overhead"]), 3)}
    except (KeyError, TypeError, ValueError) as error:
        raise InputError(str(replay_json), f"not a replay.json written by slurm-replay: {error}") from None


@dataclass(frozen=True)
class Verdict:
    """A scenario seen from one of its real runs: the simulation of that run against it, the other real run
    against it, and the distances by which the simulation is farther (none: the target is met)."""

    name: str
    reference: int
    """The real run simulated and compared with (1 or 2); the other one gives the spread."""
    simulated: Deviation
    spread: Deviation
    farther: list[str]

    @property
    def met(self) -> bool:
        return not self.farther


def evaluate(directory: Path, output: Path, name: str = "", reference: int = 1) -> Verdict:
    """Simulate a scenario's real run `reference` (1 or 2; whole seconds in, whole seconds out) and judge it
    against the other run's distance to that run."""
    conf = parse_slurm_conf((directory / "slurm.conf").read_text(encoding="utf-8"),
                            source=str(directory / "slurm.conf"))
    other = 3 - reference
    options = replay_options(directory / f"replay{reference}.json")
    simulate_replay(directory / f"real{reference}.csv", conf, options["ctld_start"], output,
                    clock_origin=options["clock_origin"], epilog_delay=options["epilog_delay"])
    cpus = sum(node.cpus for node in conf.nodes)
    real = read_schedule(directory / f"real{reference}.csv", whole_seconds=True)
    simulated = deviation(real, read_schedule(output / "jobs.csv", whole_seconds=True), cpus)
    spread = deviation(real, read_schedule(directory / f"real{other}.csv", whole_seconds=True), cpus)
    return Verdict(name or directory.name, reference, simulated, spread, farther_than(simulated, spread))


def scenario_directories(root: Path) -> list[Path]:
    """Every recorded scenario (a directory with slurm.conf and two real runs) under root, sorted."""
    return sorted(p.parent for p in root.glob("**/real2.csv") if (p.parent / "real1.csv").exists())
