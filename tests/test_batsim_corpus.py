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


def _ends(jobs: str) -> str:
    return ", ".join(f"w0!{job}" for job in jobs.split())


ARITHMETIC = "; SimGrid's arithmetic, run without SimGrid, groups them as Batsim (benchmarks/batsim_solver_steps.py)"
"""For the ties cases: the skeleton of Batsim's actors on SimGrid's solver steps in plain Python gives Batsim's
messages (docs/batsim-protocol.md, point 8), so the fast model could, by running them instead of counting."""


def counted(instant: float, batsim: str, first: str, later: str = "", arithmetic: str = ARITHMETIC) -> str:
    """A tie the fast model's whole-message count misses and SimGrid's clock decides as Batsim did; `later`: an
    exact tie that SimGrid's clock then decides otherwise than Batsim's run."""
    outcome = (f"then {later}, so not identical with --platform-model simgrid either" if later else
               "identical with --platform-model simgrid (test_batsim_network_corpus.py)")
    return (
        f"the fast model counts whole messages: at t={instant:g} Batsim sent the ends of {_ends(batsim)} in one "
        f"message, clustersim {_ends(first)} first; Batsim's actors in SimGrid group them as Batsim; {outcome}"
        f"{arithmetic}"
    )


def solver_step(instant: float, batsim: str, first: str, where: str) -> str:
    """A tie that SimGrid's solver decides: a sleep ends in a step of its own, shorter than the clock's resolution,
    just before the server receives a message, so at the same clock value; Batsim's server sees its end."""
    return (
        f"the fast model counts whole messages: at t={instant:g} Batsim sent the ends of {_ends(batsim)} in one "
        f"message, clustersim {_ends(first)} first; SimGrid 3.32 ends {where}, in a solver step of its own just "
        "before (shorter than the clock's resolution), so Batsim's server saw it; the count puts both at one "
        "message and holds the sleep's end; identical with --platform-model simgrid "
        f"(test_batsim_network_corpus.py){ARITHMETIC}"
    )


DIFFERENT: dict[str, str] = {
    "ties_000_easy_bf": counted(8, "12 29", "12"),
    "ties_011_filler": counted(28, "61 74", "61"),
    "ties_035_filler": counted(12, "1 34 36", "1 34"),
    "profiles_010_ph_conservative_bf": counted(183, "10 31", "10", arithmetic=" (both ends from compute hosts, 0.8 ns "
                                                                             "messages each: a tie of the count "
                                                                             "per route too)"),
    "ties_026_conservative_bf": counted(5, "2 25 26", "2"),
    "ties_051_filler": counted(6, "44 32 56", "44"),
    "ties_001_fcfs": solver_step(1, "1 10 11", "1", "w0!10's sleep at 1.000000048, when the server receives w0!1's "
                                                    "end"),
    "ties_006_conservative_bf": solver_step(45, "17 19", "17", "w0!19's sleep at 45.000000096, when the server "
                                                               "receives w0!17's end"),
    "ties_024_easy_bf": solver_step(380, "58 21", "58", "w0!21's sleep at 380.00000019999857, when the server "
                                                        "receives w0!58's end"),
    "ties_030_conservative_bf": solver_step(42, "31 61", "31", "w0!61's sleep at 42.00000009600001, one message "
                                                               "after the server receives w0!31's end "
                                                               "(42.00000008800001), as the ready signal arrives"),
    "ties_031_filler": solver_step(105, "34 45", "34", "w0!45's sleep at 105.00000008800001, when the server "
                                                       "receives w0!34's end"),
    "ties_033_fcfs": solver_step(2, "10 11", "10", "w0!11's sleep at 2.0000000480000004, when the server receives "
                                                   "w0!10's end"),
    "ties_034_conservative_bf": solver_step(5, "1 11 12", "1", "w0!11's sleep at 5.000000048, when the server "
                                                               "receives w0!1's end"),
    "ties_037_fcfs": solver_step(6, "22 3", "22", "w0!3's sleep at 6.000000064, when the server receives w0!22's "
                                                  "end"),
    "ties_039_filler": solver_step(60, "32 3", "32", "w0!3's sleep at 60.000000056000005, when the server receives "
                                                     "w0!32's end"),
    "ties_041_fcfs": solver_step(58, "21 20 22", "21", "w0!20's and w0!22's sleeps at 58.000000160000006, when the "
                                                       "server receives w0!21's end"),
    "ties_044_easy_bf": solver_step(4, "18 19", "18", "w0!19's sleep at 4.0000000720000015, when the server "
                                                      "receives w0!18's end"),
    "ties_047_filler": solver_step(190, "17 46", "17", "w0!46's sleep at 190.00000015200007, when the server "
                                                       "receives w0!17's end"),
    "ties_048_easy_bf": solver_step(27, "36 3", "36", "w0!3's sleep at 27.00000011200002, when the server "
                                                      "receives w0!36's end"),
    "ties_029_fcfs": (
        "the fast model does not shift times: from t=560 batsched answers with Batsim's `now` rounded up to the "
        "microsecond (SimGrid's 560.0000005039984 sent as 560.000001) and Batsim's request-reply actor waits until "
        "that timestamp to send the decisions (protocol.cpp, send_message_at_time), so at t=610.000001 Batsim sent "
        "w0!8's end alone, then w0!17's with w0!9's; clustersim's whole-second times send w0!17's first, then w0!8's "
        "with w0!9's; identical with --platform-model simgrid (test_batsim_network_corpus.py)" + ARITHMETIC
    ),
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
