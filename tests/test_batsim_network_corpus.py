"""The `network` family of the Batsim reference corpus, run by `clustersim run` with the simgrid platform model
(each case in its own process: SimGrid runs one simulation per process) and compared with Batsim 4.2's outputs.

Batsim's control messages (the submitter's JOB_SUBMITTED, each EXECUTE_JOB of a reply, a job's JOB_COMPLETED)
are SimGrid communications to its server on the master host, which pay their routes' latencies: Batsim's starts
lag their decision instants by 1-50 ms. clustersim runs Batsim's actors in SimGrid too (core/batsim_actors.py),
so the comparison has no tolerance beyond Batsim's `%f` output (5e-7 s):

- final_state, success and allocated_resources exactly;
- starting, finish, waiting and turnaround times (and schedule.csv's makespan, waiting and turnaround metrics)
  within TIME (1e-6 s);
- execution_time within 1e-6 relative (plus the 5e-7 s of `%f`);
- stretch and slowdown, ratios of the compared times, are not compared.

The `profiles` family (computation only, so the `step` model by default, where all 20 cases give Batsim's values:
test_batsim_corpus.py) also runs here with the simgrid model, compared as test_batsim_corpus.py compares: there
Batsim's messages of unequal times (0.1 ns between the master's actors, 0.8 ns from a compute host) and
SimGrid's clock group the job ends of an instant as Batsim did, and every case gives Batsim's values.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

import clustersim.core.simgrid_execution as simgrid_model
from batsim_reference import CORPUS, cases, compare

ROOT = Path(__file__).resolve().parents[1]
TIME = 1e-6
TIMED_JOB_COLUMNS = ("starting_time", "finish_time", "waiting_time", "turnaround_time")
TIMED_SCHEDULE = ("makespan", "mean_waiting_time", "max_waiting_time", "mean_turnaround_time", "max_turnaround_time")
EXACT_SCHEDULE = ("nb_jobs", "nb_jobs_finished", "nb_jobs_success", "nb_jobs_killed", "nb_jobs_rejected")

@pytest.fixture(scope="module", autouse=True)
def simgrid_installed() -> None:
    simgrid_model.ensure_simgrid()


def _params(family: str) -> list[object]:
    return [pytest.param(case, id=case.name) for case in cases(family)]


def _run(case: Path, out: Path) -> None:
    """`clustersim run` on the case as the corpus ran it (batsim_reference.run_variant), in its own process."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT / "tests")]))
    code = (f"import pathlib, batsim_reference; batsim_reference.run_variant(pathlib.Path({str(case)!r}), "
            f"pathlib.Path({str(out)!r}), extra=['--platform-model', 'simgrid'])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600,
                          check=False, cwd=ROOT / "tests")
    assert done.returncode == 0, done.stderr


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def differences(case: Path, out: Path) -> tuple[list[str], int, int]:
    """What differs from Batsim; and how many execution times were compared, how many within 1e-6."""
    found: list[str] = []
    want = {r["job_id"]: r for r in _rows(case / "out_jobs.csv")}
    have = {r["job_id"]: r for r in _rows(out / "out_jobs.csv")}
    if want.keys() != have.keys():
        return [f"jobs {sorted(have)}, Batsim {sorted(want)}"], 0, 0
    compared = exact = 0
    for key, batsim in want.items():
        ours = have[key]
        for column in ("final_state", "success", "allocated_resources"):
            if ours[column] != batsim[column]:
                found.append(f"job {key}: {column} {ours[column]!r}, Batsim {batsim[column]!r}")
        if not batsim["starting_time"]:
            continue
        for column in TIMED_JOB_COLUMNS:
            if abs(float(ours[column]) - float(batsim[column])) > TIME:
                found.append(f"job {key}: {column} {ours[column]}, Batsim {batsim[column]}")
        execution, expected = float(ours["execution_time"]), float(batsim["execution_time"])
        error = abs(execution - expected)
        within = error <= 1e-6 * expected + 5e-7  # Batsim writes %f: 5e-7 s of rounding
        if not within:
            found.append(f"job {key}: execution_time {execution}, Batsim {expected}")
        compared += 1
        exact += within
    (want_schedule,), (have_schedule,) = _rows(case / "out_schedule.csv"), _rows(out / "out_schedule.csv")
    for column in EXACT_SCHEDULE:
        if have_schedule[column] != want_schedule[column]:
            found.append(f"schedule.csv {column}: {have_schedule[column]}, Batsim {want_schedule[column]}")
    for column in TIMED_SCHEDULE:
        if abs(float(have_schedule[column]) - float(want_schedule[column])) > TIME:
            found.append(f"schedule.csv {column}: {have_schedule[column]}, Batsim {want_schedule[column]}")
    return found, compared, exact


@pytest.mark.parametrize("case", _params("network"))
def test_network_case_gives_batsims_values(case: Path, tmp_path: Path) -> None:
    _run(case, tmp_path)
    found, compared, exact = differences(case, tmp_path)
    assert not found, f"{len(found)} difference(s) with Batsim, first: " + "; ".join(found[:5])
    assert compared == exact > 0


@pytest.mark.parametrize("case", _params("profiles"))
def test_profiles_case_with_the_simgrid_model_gives_batsims_values(case: Path, tmp_path: Path) -> None:
    _run(case, tmp_path)
    differences = compare(case, tmp_path)
    assert not differences, f"{len(differences)} difference(s) with Batsim, first: " + "; ".join(differences[:5])


@pytest.mark.parametrize("case", [pytest.param(CORPUS / name.split("_")[0] / name, id=name) for name in (
    "ties_052_killer",  # KILL_JOB (timestamped after now: waiters), CALL_ME_LATER
    "ties_053_killer",  # a KILL_JOB at the reply's `now`: the killed job's end goes with the held submissions
    "ties_056_rejecter",  # REJECT_JOB
    "ties_045_fcfs",
    "ties_029_fcfs",  # SimGrid's clock rounded up to the microsecond: decisions are sent at their timestamp
    "ties_000_easy_bf",  # ties that the fast model's whole-message count misses and SimGrid's clock decides
    "ties_011_filler",
    "ties_035_filler",
    "ties_026_conservative_bf",  # ...and ties that SimGrid's solver decides in a step shorter than the clock's
    "ties_051_filler",  # resolution (core/batsim_actors.py, ServerMailbox)
    "ties_001_fcfs",
    "ties_006_conservative_bf",
    "ties_024_easy_bf",
    "ties_030_conservative_bf",
    "ties_031_filler",
    "ties_033_fcfs",
    "ties_034_conservative_bf",
    "ties_037_fcfs",
    "ties_039_filler",
    "ties_041_fcfs",
    "ties_044_easy_bf",
    "ties_047_filler",
    "ties_048_easy_bf",
    "dynamic_001_submitter",  # EXECUTE_JOB and NOTIFY at the reply's `now`, with submissions at that instant
    "dynamic_004_submitter",
)])
def test_other_decisions_with_the_simgrid_model_give_batsims_values(case: Path, tmp_path: Path) -> None:
    """Batsim's actors with decisions other than starts, from the reference schedulers over the protocol."""
    _run(case, tmp_path)
    differences = compare(case, tmp_path)
    assert not differences, f"{len(differences)} difference(s) with Batsim, first: " + "; ".join(differences[:5])
