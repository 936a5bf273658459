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

DIFFERENT: dict[str, str] = {}
"""Cases that still differ from Batsim's outputs, with the reason (none). The ties, profiles and dynamic cases run
with the step platform model (the default for Batsim's workloads of delays and computations on their platforms):
SimGrid's solver steps, computed without SimGrid, time the computations and group every instant's job ends as
Batsim did."""


def _params(family: str) -> list[object]:
    params: list[object] = []
    for case in cases(family):
        reason = DIFFERENT.get(case.name)
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        params.append(pytest.param(case, id=case.name, marks=marks))
    return params


STATES_DIFFERENT: dict[str, str] = {
    **DIFFERENT,
}
"""Cases whose machine_states.csv differs from Batsim's row by row, with the reason (none: the built-in fcfs sends
its rejections in batsched's order, so ties_033's starts reach the server when Batsim's did)."""

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
