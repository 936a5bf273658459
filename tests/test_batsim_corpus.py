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

import json
from pathlib import Path

import pytest

import batsched_variants
from batsim_reference import BUILT_IN, case_info, cases, compare, run_case


def grouping(instant: float) -> str:
    return (
        f"SimGrid's wake-up order: at t={instant:g} Batsim delivered simultaneous job ends together or out of "
        "start order, which clustersim's Batsim rounds (each end alone, in start order) do not reproduce; the "
        "schedules diverge from then"
    )


NOTIFY_WITH_END = (
    "at t=10 Batsim delivered job w0!31's end in the same message as the end of the static workload (NOTIFY); "
    "clustersim's Batsim rounds deliver the NOTIFY alone, then the end; the schedules diverge from then"
)
DIFFERENT: dict[str, str] = {
    "ties_000_easy_bf": grouping(8),
    "ties_001_fcfs": grouping(1),
    "ties_002_conservative_bf": grouping(80),
    "ties_003_filler": grouping(24),
    "ties_005_fcfs": grouping(5),
    "ties_006_conservative_bf": grouping(45),
    "ties_007_filler": grouping(60),
    "ties_008_easy_bf": grouping(120),
    "ties_009_fcfs": grouping(25),
    "ties_010_conservative_bf": grouping(80),
    "ties_011_filler": grouping(12),
    "ties_012_easy_bf": grouping(20),
    "ties_014_conservative_bf": NOTIFY_WITH_END,
    "ties_018_conservative_bf": grouping(70),
    "ties_019_filler": grouping(25),
    "ties_020_easy_bf": grouping(34),
    "ties_021_fcfs": grouping(44),
    "ties_022_conservative_bf": grouping(5),
    "ties_023_filler": grouping(70),
    "ties_024_easy_bf": grouping(100),
    "ties_025_fcfs": grouping(113),
    "ties_026_conservative_bf": grouping(5),
    "ties_027_filler": grouping(100),
    "ties_029_fcfs": grouping(300),
    "ties_031_filler": grouping(105),
    "ties_032_easy_bf": grouping(78),
    "ties_033_fcfs": grouping(2),
    "ties_034_conservative_bf": grouping(5),
    "ties_035_filler": grouping(12),
    "ties_036_easy_bf": grouping(80),
    "ties_037_fcfs": grouping(6),
    "ties_039_filler": grouping(30),
    "ties_040_easy_bf": grouping(100),
    "ties_041_fcfs": grouping(58),
    "ties_043_filler": grouping(120),
    "ties_044_easy_bf": grouping(1),
    "ties_047_filler": grouping(55),
    "ties_048_easy_bf": grouping(25),
    "ties_049_fcfs": grouping(400),
    "ties_051_filler": grouping(6),
    "profiles_010_ph_conservative_bf": grouping(183),
    "profiles_012_pht_easy_bf": grouping(90),
    "profiles_014_mixed_conservative_bf": grouping(6),
    "profiles_017_pht_fcfs": grouping(3),
    "dynamic_005_submitter": grouping(51),
}
"""Cases that still differ from Batsim's outputs, with the reason."""


def _params(family: str) -> list[object]:
    params: list[object] = []
    for case in cases(family):
        reason = DIFFERENT.get(case.name)
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        params.append(pytest.param(case, id=case.name, marks=marks))
    return params


def _run(case: Path, out: Path) -> list[str]:
    variant = str(case_info(case)["variant"])
    if variant in BUILT_IN:
        run_case(case, out)
    else:
        if variant not in batsched_variants.VARIANTS:
            pytest.fail(f"no reference scheduler for batsched's {variant}")
        options_file = case / "options.json"
        options = json.loads(options_file.read_text()) if options_file.exists() else None
        with batsched_variants.serving(variant, options) as endpoint:
            run_case(case, out, external=endpoint)
    return compare(case, out)


@pytest.mark.parametrize("case", _params("ties") + _params("profiles") + _params("dynamic"))
def test_batsim_reference_case_gives_batsims_values(case: Path, tmp_path: Path) -> None:
    differences = _run(case, tmp_path)
    assert not differences, f"{len(differences)} difference(s) with Batsim, first: " + "; ".join(differences[:5])
