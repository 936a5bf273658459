"""The `energy` family of the Batsim reference corpus with the simgrid platform model: batsched's energy variants
(re-written in Python, tests/batsched_energy) drive `clustersim run -E --platform-model simgrid` over the protocol,
each case in its own process (SimGrid runs one simulation per process), compared as
test_batsim_energy_reference.py compares the default (step) model's runs: jobs, schedule.csv and the energy files
row by row.

Batsim's actors run in SimGrid (core/batsim_actors.py), a switching actor per machine among them: a job's
walltime is SimGrid's timeout, so `energy_019`'s walltime race (the fast model's documented difference) is
Batsim's here. The energy files' rows are written by the actors that write them in Batsim, with the values of
SimGrid's energy plugin read as Batsim reads them. Every case gives Batsim's values.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import clustersim.core.simgrid_execution as simgrid_model
from batsim_reference import cases

ROOT = Path(__file__).resolve().parents[1]
CHILD = """
import json, pathlib, sys
from batsched_energy.cases import energy_differences, run_energy_case
case, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
protocol = run_energy_case(case, out, extra=["--platform-model", "simgrid"])
print(json.dumps(protocol + energy_differences(case, out)))
"""


DIFFERENT: dict[str, str] = {}
"""Cases whose outputs differ from Batsim's, with the reason (strict expected failures): none. The six exact ties at
one SimGrid clock value and energy_011's one-ulp `epower` were Batsim's energy reads: its actors read SimGrid's
energy plugin before they write a consumed_energy.csv row, a simcall per machine not yet brought up to date, so
the switching actors woken at that clock value set their power states first; the simgrid model now reads the
plugin the same way, in the same actors (core/batsim_actors.py)."""


@pytest.fixture(scope="module", autouse=True)
def simgrid_installed() -> None:
    simgrid_model.ensure_simgrid()


def _params() -> list[object]:
    return [pytest.param(case, id=case.name,
                         marks=[pytest.mark.xfail(reason=DIFFERENT[case.name], strict=True)]
                         if case.name in DIFFERENT else [])
            for case in cases("energy")]


@pytest.mark.parametrize("case", _params())
def test_energy_case_with_the_simgrid_model_gives_batsims_values(case: Path, tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT / "tests")]))
    done = subprocess.run([sys.executable, "-c", CHILD, str(case), str(tmp_path)], capture_output=True, text=True,
                          env=env, timeout=600, check=False, cwd=ROOT / "tests")
    assert done.returncode == 0, done.stderr[-3000:]
    differences: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    assert not differences, f"{len(differences)} difference(s) with Batsim, first: " + "; ".join(differences[:5])


def test_energy_rows_add_and_divide_as_cs_long_double() -> None:
    """Batsim sums the machines' energies and divides for `epower` in x86-64's `long double` (64-bit significand);
    the simgrid model does the same in exact integers (units of 2**-1074)."""
    one = simgrid_model._scaled(1.0)
    assert simgrid_model._extended(one + simgrid_model._scaled(2.0**-63)) == one + simgrid_model._scaled(2.0**-63)
    assert simgrid_model._extended(one + simgrid_model._scaled(2.0**-64)) == one  # a tie: to even
    assert simgrid_model._extended(one + simgrid_model._scaled(3 * 2.0**-65)) == one + simgrid_model._scaled(2.0**-63)
    assert simgrid_model._double(one + simgrid_model._scaled(2.0**-63)) == 1.0
    assert simgrid_model._quotient(one, simgrid_model._scaled(3.0)) == 1 / 3
    # 1 + 2**-53 + 2**-70: rounded to 64 bits it is 1 + 2**-53, a tie that the cast to double takes to even (1.0);
    # rounded straight to a double it would be 1 + 2**-52
    above_a_tie = one + (1 << (simgrid_model._SCALE - 53)) + (1 << (simgrid_model._SCALE - 70))
    assert simgrid_model._quotient(above_a_tie, one) == 1.0
    assert simgrid_model._quotient(-above_a_tie, one) == -1.0
