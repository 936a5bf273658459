"""Energy against Batsim 4.2 on the reference corpus's `energy` family (20 cases, batsched 1.4's energy variants).

Each case runs as the test suite runs it (tests/batsched_energy): batsched's variant re-written in Python and
deciding over the protocol (the `scheduler` column would say `replayed` for a variant answered with batsched's
recorded replies; none is left).
Prints, per case, clustersim's total energy (schedule.csv's consumed_joules) next to Batsim's, and how many
differences the full comparison finds (jobs, schedule.csv, the energy files row by row; see docs/energy.md for the
cases that differ and why).

    python benchmarks/batsim_energy.py
"""

from __future__ import annotations

import csv
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from batsched_energy.cases import VARIANTS, energy_differences, run_energy_case
from batsim_reference import case_info, cases


def _joules(path: Path) -> float:
    with open(path, newline="") as f:
        return float(next(csv.DictReader(f))["consumed_joules"])


def main() -> int:
    print(f"{'case':42} {'variant':30} {'scheduler':9} {'clustersim J':>14} {'Batsim J':>14} {'gap':>9} differences")
    identical = 0
    for case in cases("energy"):
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder)
            protocol = run_energy_case(case, out)
            differences = protocol + energy_differences(case, out)
            ours, theirs = _joules(out / "out_schedule.csv"), _joules(case / "out_schedule.csv")
        identical += not differences
        variant = str(case_info(case)["variant"])
        scheduler = "python" if variant in VARIANTS else "replayed"
        print(f"{case.name:42} {variant:30} {scheduler:9} {ours:14.1f} {theirs:14.1f} "
              f"{(ours / theirs - 1) * 100:+8.5f}% {len(differences)}")
    print(f"identical cases: {identical} / {len(cases('energy'))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
