"""Run a case of the reference corpus's `energy` family with its batsched variant (re-written in Python) over the
Batsim protocol, and list how clustersim's outputs differ from Batsim's, energy files included."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from batsched_energy.energy_bf import EnergyBackfilling, EnergyBackfillingDichotomy
from batsched_energy.inertial_shutdown import IdleSleeper, MonitoringInertial, SubpartSleeper
from batsched_energy.replay import Message, Replay
from batsched_energy.sleeper import Sleeper
from batsched_variants import Batsched
from batsim_reference import compare, run_case
from clustersim.core.energy_meter import CONSUMED_ENERGY_COLUMNS, MACHINE_STATES_COLUMNS, PSTATE_CHANGES_COLUMNS
from test_batsim_adapter import ScriptedScheduler

__all__ = ["Message", "compare_energy_files", "energy_differences", "run_energy_case"]

VARIANTS: dict[str, type[Batsched]] = {"sleeper": Sleeper, "energy_bf": EnergyBackfilling,
                                          "energy_bf_dicho": EnergyBackfillingDichotomy,
                                          "energy_bf_idle_sleeper": IdleSleeper,
                                          "energy_bf_subpart_sleeper": SubpartSleeper,
                                          "energy_bf_monitoring_inertial": MonitoringInertial}
"""batsched's energy variants re-written so far, by batsched name."""


def served(scheduler: Batsched) -> Callable[[Message], tuple[float, list[Message]]]:
    """A batsched-like scheduler as ScriptedScheduler's answer: (now, decisions) per message."""

    def answer(message: Message) -> tuple[float, list[Message]]:
        reply = scheduler.answer(message)
        return reply["now"], reply["events"]

    return answer

ENERGY_FILES = {
    "machine_states.csv": {"time": 1e-3},
    "consumed_energy.csv": {"time": 1e-3, "energy": 1e-5, "wattmin": 1e-5, "epower": 1e-4},
    "pstate_changes.csv": {"time": 1e-3},
}
"""Batsim's energy files and the tolerance of their numeric columns (relative, but absolute for times; others are
exact). Times lag by SimGrid's few nanoseconds of message latency; energies are written with 6 significant digits;
`epower` divides by those nanoseconds when two rows share an instant, which adds a little noise."""


ENERGY_COLUMNS = {
    "machine_states.csv": MACHINE_STATES_COLUMNS.split(","),
    "consumed_energy.csv": CONSUMED_ENERGY_COLUMNS.split(","),
    "pstate_changes.csv": PSTATE_CHANGES_COLUMNS.split(","),
}


def run_energy_case(case: Path, out: Path, replay: bool = False, extra: Sequence[str] = ()) -> list[str]:
    """clustersim on `case` the way the corpus ran it (-E), driven over the protocol by its batsched variant
    re-written in Python (deciding from the messages it receives), or with `replay` (or for a variant not
    re-written) by batsched's recorded replies; `extra`: more `clustersim run` options (`--platform-model simgrid`).
    Returns the protocol's differences (a replay that diverged), empty when the run went as Batsim's."""
    info = json.loads((case / "case.json").read_text())
    options_file = case / "options.json"
    options: dict[str, Any] = json.loads(options_file.read_text()) if options_file.exists() else {}
    variant = VARIANTS.get(info["variant"])
    answer = Replay(case / "out_protocol.jsonl.gz") if replay or variant is None else None
    if variant is not None and answer is None:
        scheduler = ScriptedScheduler(served(variant(options)))
    else:
        assert answer is not None
        scheduler = ScriptedScheduler(answer)
    try:
        run_case(case, out, external=scheduler.endpoint, extra=["--timeout", "10", *extra])
    except AssertionError:
        if answer is None or answer.divergence is None:
            raise
    finally:
        scheduler.join()
    return [f"protocol: {answer.divergence}"] if answer is not None and answer.divergence else []


def _close(a: str, b: str, tolerance: float, absolute: bool) -> bool:
    if a == b:
        return True
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    return abs(x - y) <= (tolerance if absolute else max(tolerance * max(abs(x), abs(y)), 1e-3))


def _switch_done_at_same_instant(rows: list[list[str]], number: int) -> bool:
    """Whether consumed_energy.csv's row `number` is a power-state row at the instant of the row before: SimGrid
    ends a transition a few nanoseconds after what came before, so Batsim's `epower` for it is a mean over those
    nanoseconds, partly before and partly after the change: noise that no exact model gives."""
    return number > 1 and rows[number][2] == "p" and abs(float(rows[number][0]) - float(rows[number - 1][0])) < 1e-3


def compare_energy_files(case: Path, out: Path) -> list[str]:
    """Batsim's energy files row by row: the same rows in the same order, values within ENERGY_FILES."""
    differences = []
    for name, tolerances in ENERGY_FILES.items():
        with open(case / f"out_{name}", newline="") as f:
            want = list(csv.reader(f))
        with open(out / f"out_{name}", newline="") as f:
            have = list(csv.reader(f))
        if len(have) != len(want):
            differences.append(f"{name}: {len(have) - 1} rows, Batsim {len(want) - 1}")
        header = want[0]
        for number, (mine, theirs) in enumerate(zip(have, want, strict=False)):
            for column, a, b in zip(header, mine, theirs, strict=True):
                if column == "epower" and _switch_done_at_same_instant(want, number):
                    continue
                tolerance = tolerances.get(column)
                same = a == b if tolerance is None else _close(a, b, tolerance, column == "time")
                if not same:
                    differences.append(f"{name} row {number}: {column} {a}, Batsim {b} ({','.join(mine)})")
                    break
    return differences


def instant_differences(case: Path, out: Path) -> list[str]:
    """The energy files compared per instant: the same number of rows, and the same last row (the state once
    the instant is over). Weaker than `compare_energy_files`: the order of an instant's rows may differ."""
    differences = []
    for name, tolerances in ENERGY_FILES.items():
        with open(case / f"out_{name}", newline="") as f:
            want = _by_instant(list(csv.reader(f))[1:])
        with open(out / f"out_{name}", newline="") as f:
            have = _by_instant(list(csv.reader(f))[1:])
        if len(have) != len(want):
            differences.append(f"{name}: {len(have)} instants, Batsim {len(want)}")
        for mine, theirs in zip(have, want, strict=False):
            a, b = mine[-1], theirs[-1]
            for column, x, y in zip(ENERGY_COLUMNS[name], a, b, strict=True):
                if column in ("epower", "event_type"):
                    continue
                tolerance = tolerances.get(column)
                same = x == y if tolerance is None else _close(x, y, tolerance, column == "time")
                if len(mine) != len(theirs) or not same:
                    differences.append(f"{name} at t={b[0]}: {len(mine)} rows ending {','.join(a)}, Batsim "
                                       f"{len(theirs)} ending {','.join(b)}")
                    break
    return differences


def _by_instant(rows: list[list[str]]) -> list[list[list[str]]]:
    instants: list[list[list[str]]] = []
    for row in rows:
        if instants and abs(float(instants[-1][0][0]) - float(row[0])) < 1e-3:
            instants[-1].append(row)
        else:
            instants.append([row])
    return instants


def energy_differences(case: Path, out: Path) -> list[str]:
    """Every difference: jobs, schedule.csv (energy columns included) and the energy files."""
    return compare(case, out) + compare_energy_files(case, out)
