"""The reference corpus's `energy` family (Batsim 4.2 with -E, batsched 1.4's energy variants): per job, the
schedule and the energy files, value for value.

batsched's `sleeper` runs re-written in Python over the protocol (tests/batsched_energy/sleeper.py); the variants
built on batsched's time-slice Schedule (energy_bf and its derivatives) answer with batsched's recorded replies
(tests/batsched_energy/replay.py). Cases that differ are marked with the exact reason (also in docs/energy.md).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from batsched_energy.cases import (
    VARIANTS,
    compare_energy_files,
    instant_differences,
    run_energy_case,
)
from batsim_reference import case_info, cases, compare, run_case
from test_batsim_adapter import ScriptedScheduler

CASES = cases("energy")

NANOSECOND_ORDER = (
    "a job's end and a machine's transition end fall on one instant; in Batsim, SimGrid puts them a few "
    "nanoseconds apart, so its rows for that instant (and the wattmin between them) come in an order that "
    "clustersim, with exact times, gives otherwise"
)
ROW_ORDER = {
    "energy_000_energy_bf": NANOSECOND_ORDER,
    "energy_001_energy_bf_idle_sleeper": NANOSECOND_ORDER,
    "energy_016_energy_bf_subpart_sleeper": NANOSECOND_ORDER,
    "energy_017_energy_bf_dicho": NANOSECOND_ORDER,
}
"""Cases whose energy files differ even per instant (the rest differ at most in the order of an instant's rows)."""

WALLTIME_RACE = {
    "energy_019_energy_bf_monitoring_inertial": (
        "job w0!22 (parallel_homogeneous, 50 s of computation, walltime 50 s) ends COMPLETED_WALLTIME_REACHED in "
        "Batsim: SimGrid's walltime timer fired a few nanoseconds before the computation ended (elsewhere, as in "
        "energy_012's w0!24, the computation wins); clustersim ends it successfully"
    ),
}
IDENTICAL = {"energy_002_sleeper", "energy_005_sleeper", "energy_007_energy_bf_dicho", "energy_012_sleeper",
             "energy_015_sleeper"}
"""Cases whose every output (jobs, schedule.csv, the three energy files row by row) is Batsim's."""


def _marked(reasons: dict[str, str], default: str | None = None) -> list[object]:
    params: list[object] = []
    for case in CASES:
        reason = reasons.get(case.name, default if case.name not in IDENTICAL else None)
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        params.append(pytest.param(case, id=case.name, marks=marks))
    return params


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every case run once: the folder of its outputs, by case name."""
    done: dict[str, Path] = {}
    for case in CASES:
        out = tmp_path_factory.mktemp(case.name)
        assert run_energy_case(case, out) == [], f"{case.name}: the replay diverged from Batsim's messages"
        done[case.name] = out
    return done


@pytest.mark.parametrize("case", _marked(WALLTIME_RACE))
def test_jobs_and_schedule_are_batsims(case: Path, outputs: dict[str, Path]) -> None:
    """Per job: start, finish, hosts, final state, consumed_energy (1e-6); schedule.csv column by column."""
    assert compare(case, outputs[case.name]) == []


@pytest.mark.parametrize("case", _marked({**ROW_ORDER, **WALLTIME_RACE}))
def test_energy_files_are_batsims_per_instant(case: Path, outputs: dict[str, Path]) -> None:
    """machine_states.csv, consumed_energy.csv, pstate_changes.csv: the same rows at each instant, the same state
    once each instant is over."""
    assert instant_differences(case, outputs[case.name]) == []


@pytest.mark.parametrize("case", _marked(ROW_ORDER, default=(
    "the events of an instant reach batsched grouped otherwise than in Batsim (the replay answers once Batsim's "
    "message is complete), so the rows within an instant come in another order"
)))
def test_energy_files_are_batsims_row_by_row(case: Path, outputs: dict[str, Path]) -> None:
    assert compare_energy_files(case, outputs[case.name]) == []


@pytest.mark.parametrize("case", [c for c in CASES if case_info(c)["variant"] in VARIANTS], ids=lambda c: c.name)
def test_the_python_sleeper_decides_as_batsched(case: Path, tmp_path: Path) -> None:
    """The re-written sleeper, run over the protocol, makes batsched's decisions at batsched's instants (in
    energy_012 and energy_015 one reply of batsched's is split in two, for the nanosecond reason above)."""
    with gzip.open(case / "out_protocol.jsonl.gz", "rt") as f:
        transcript = [json.loads(line) for line in f]
    expected = [d for m in transcript if m["dir"] == "sched->batsim" for d in _decisions(m["msg"])]
    options = json.loads((case / "options.json").read_text())
    sleeper = VARIANTS[str(case_info(case)["variant"])](options)
    replies: list[dict[str, object]] = []

    def answer(message: dict[str, object]) -> tuple[float, list[dict[str, object]]]:
        reply = sleeper.answer(message)
        replies.append(reply)
        return reply["now"], reply["events"]

    scheduler = ScriptedScheduler(answer)
    try:
        run_case(case, tmp_path, external=scheduler.endpoint)
    finally:
        scheduler.join()
    assert [d for m in replies for d in _decisions(m)] == expected


def _decisions(message: dict[str, object]) -> list[tuple[float, str, str]]:
    """A reply's decisions: (instant to the millisecond, type, data)."""
    events = message["events"]
    assert isinstance(events, list)
    return [(round(float(e["timestamp"]), 3), e["type"], json.dumps(e["data"], sort_keys=True)) for e in events]
