"""Every case of the Batsim reference corpus (../shared/reference/batsim: ties, profiles, dynamic; the network family
is in test_batsim_network_corpus.py, run with the simgrid platform model), run by
clustersim and compared with what the real Batsim 4.2 + batsched 1.4 wrote (tests/batsim_reference.py): per job
starting_time, finish_time, allocated_resources, final_state, and schedule.csv column by column.

batsched variants with a built-in equivalent run the built-in policy (`clustersim run`'s Batsim rounds);
`filler`, `killer`, `rejecter` and `submitter` run the reference schedulers of tests/batsched_variants.py over
the protocol.
A case that still differs is an expected failure whose reason says why (docs/batsim-protocol.md lists them);
the expected failures are strict, so a case that becomes identical must leave the list.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from batsim_reference import cases, compare, run_variant


def grouping(instant: float) -> str:
    return (
        f"SimGrid's clock rounding: at t={instant:g} a job ends exactly one inter-actor message after another; "
        "Batsim's server saw its end before calling the scheduler (SimGrid's floating-point clock put it strictly "
        "earlier), clustersim's message count makes it arrive with the message and go to the next call "
        "(docs/batsim-protocol.md); the schedules diverge from then"
    )


def drift(instant: float) -> str:
    return (
        f"Batsim's message offsets passed 0.5 µs: from t={instant:g} its times read t+0.000001 (decisions then wait "
        "for that timestamp), so jobs started then end at another instant than jobs started at whole seconds; "
        "clustersim counts the messages but does not shift times (docs/batsim-protocol.md)"
    )


WITH_SIMGRID = " (identical with --platform-model simgrid, Batsim's messages in SimGrid: test_batsim_network_corpus.py)"
MEASURED_WITH_SIMGRID = WITH_SIMGRID.replace("test_batsim_network_corpus.py", "benchmarks/batsim_corpus_simgrid.py")

DIFFERENT: dict[str, str] = {
    "profiles_010_ph_conservative_bf": grouping(183) + WITH_SIMGRID,
    "ties_034_conservative_bf": grouping(5),
    "ties_030_conservative_bf": grouping(42),
    "ties_026_conservative_bf": grouping(5),
    "ties_006_conservative_bf": grouping(45),
    "ties_000_easy_bf": grouping(8) + MEASURED_WITH_SIMGRID,
    "ties_001_fcfs": grouping(1),
    "ties_011_filler": grouping(28) + MEASURED_WITH_SIMGRID,
    "ties_024_easy_bf": grouping(380),
    "ties_029_fcfs": drift(595),
    "ties_031_filler": grouping(105),
    "ties_033_fcfs": grouping(2),
    "ties_035_filler": grouping(12) + MEASURED_WITH_SIMGRID,
    "ties_037_fcfs": grouping(6),
    "ties_039_filler": grouping(60),
    "ties_041_fcfs": grouping(58),
    "ties_044_easy_bf": grouping(4),
    "ties_047_filler": grouping(190),
    "ties_048_easy_bf": grouping(27),
    "ties_051_filler": grouping(6),
}
"""Cases that still differ from Batsim's outputs, with the reason."""


def _params(family: str) -> list[object]:
    params: list[object] = []
    for case in cases(family):
        reason = DIFFERENT.get(case.name)
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        params.append(pytest.param(case, id=case.name, marks=marks))
    return params


def end_row_earlier(instant: float, ended: str, started: str) -> str:
    return (
        f"at t={instant:g} Batsim writes {ended}'s end row before {started}'s start row although {ended}'s end "
        "reaches the scheduler after that start: its executor ended (and wrote its row, jobs_execution.cpp) "
        "before the EXECUTE_JOB reached the server, which held the end while the scheduler decided; "
        f"clustersim's message count posts {ended}'s end after that start (the messages to the scheduler and the "
        "jobs are Batsim's)"
    )


STATES_DIFFERENT: dict[str, str] = {
    **{name: reason for name, reason in DIFFERENT.items()
       if name not in ("ties_000_easy_bf", "ties_001_fcfs", "ties_037_fcfs", "ties_041_fcfs")},
    "ties_005_fcfs": end_row_earlier(35, "w0!74", "w0!9"),
    "ties_050_conservative_bf": end_row_earlier(90, "w0!12", "w0!26"),
    "profiles_019_mixed_easy_bf": end_row_earlier(20, "w0!30", "w0!25"),
    "profiles_014_mixed_conservative_bf": (
        "at t=6 the ends of w0!3 (a parallel_homogeneous_total job stopped by its walltime, SimGrid's timeout "
        "timer) and w0!14 (a computation that ends) reach the scheduler in one message; Batsim writes w0!3's row "
        "first, clustersim w0!14's (by the order in which their executors began)"
    ),
}
"""Cases whose machine_states.csv differs from Batsim's row by row: those whose jobs differ (the four cases left
out have other jobs but, by chance, the same counts of machines at every row), and four whose rows at one instant
come in another order."""

_RUNS: dict[str, Path] = {}


def _outputs(case: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The case run once for both comparisons."""
    if case.name not in _RUNS:
        _RUNS[case.name] = run_variant(case, tmp_path_factory.mktemp(case.name))
    return _RUNS[case.name]


@pytest.mark.parametrize("case", _params("ties") + _params("profiles") + _params("dynamic"))
def test_batsim_reference_case_gives_batsims_values(case: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    out = _outputs(case, tmp_path_factory)
    differences = compare(case, out)
    assert not differences, f"{len(differences)} difference(s) with Batsim, first: " + "; ".join(differences[:5])


def _states_params(family: str) -> list[object]:
    return [pytest.param(case, id=case.name,
                         marks=[pytest.mark.xfail(reason=STATES_DIFFERENT[case.name], strict=True)]
                         if case.name in STATES_DIFFERENT else [])
            for case in cases(family)]


@pytest.mark.parametrize("case", _states_params("ties") + _states_params("profiles") + _states_params("dynamic"))
def test_machine_states_are_batsims_row_by_row(case: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Batsim writes machine_states.csv without -E too: clustersim's (`-e`, Batsim's command line) has the same
    rows in the same order, times within 1e-3 s (Batsim's carry SimGrid's nanoseconds of message time)."""
    out = _outputs(case, tmp_path_factory)
    with open(case / "out_machine_states.csv", newline="") as f:
        want = list(csv.reader(f))
    with open(out / "out_machine_states.csv", newline="") as f:
        have = list(csv.reader(f))
    assert have[0] == want[0]
    assert len(have) == len(want), f"{len(have) - 1} rows, Batsim {len(want) - 1}"
    for number, (mine, theirs) in enumerate(zip(have[1:], want[1:], strict=True), start=1):
        assert abs(float(mine[0]) - float(theirs[0])) <= 1e-3 and mine[1:] == theirs[1:], (
            f"row {number}: {','.join(mine)}, Batsim {','.join(theirs)}")
