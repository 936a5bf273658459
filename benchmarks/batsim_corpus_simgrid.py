"""The Batsim reference corpus run with `--platform-model simgrid`, where Batsim's own control messages are
SimGrid communications (core/batsim_actors.py): how many cases of each family give Batsim's values.

Each case runs in its own process (SimGrid runs one simulation per process), as tests/test_batsim_corpus.py runs
it (the built-in equivalent of its batsched variant, or the reference scheduler of tests/batsched_variants.py
over the protocol), and is compared as that test compares (tests/batsim_reference.py).

    python benchmarks/batsim_corpus_simgrid.py                    # ties, profiles, dynamic
    python benchmarks/batsim_corpus_simgrid.py --families ties --model fast
    python benchmarks/batsim_corpus_simgrid.py --families energy    # batsched's energy variants in Python, -E

An energy case is identical when its jobs, schedule.csv and energy files are Batsim's row by row (as
tests/test_batsim_energy_reference.py compares them); the count of its jobs and schedule.csv alone follows.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD = r"""
import json, pathlib, sys
import batsched_variants
from batsim_reference import BUILT_IN, case_info, compare, run_case
case, out, extra = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), json.loads(sys.argv[3])
variant = str(case_info(case)["variant"])
if case.parent.name == "energy":
    from batsched_energy.cases import compare_energy_files, run_energy_case
    protocol = run_energy_case(case, out, extra=extra)
    files = [f"energy files: {difference}" for difference in compare_energy_files(case, out)]
    print(json.dumps(protocol + compare(case, out) + files))
    sys.exit()
if variant in BUILT_IN:
    run_case(case, out, extra=extra)
else:
    options_file = case / "options.json"
    options = json.loads(options_file.read_text()) if options_file.exists() else None
    with batsched_variants.serving(variant, options) as endpoint:
        run_case(case, out, external=endpoint, extra=extra)
print(json.dumps(compare(case, out)))
"""


def run(case: Path, model: str) -> list[str]:
    """The differences of one case with Batsim's outputs (a failed run is one difference)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT / "tests")]))
    with tempfile.TemporaryDirectory() as out:
        done = subprocess.run([sys.executable, "-c", CHILD, str(case), out, json.dumps(["--platform-model", model])],
                              capture_output=True, text=True, env=env, cwd=ROOT / "tests", check=False)
    if done.returncode != 0:
        return [f"the run failed: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}"]
    differences: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return differences


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--families", default="ties,profiles,dynamic", help="comma-separated (default: %(default)s)")
    parser.add_argument("--model", choices=("fast", "simgrid"), default="simgrid")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "tests"))
    from batsim_reference import case_info, cases

    for family in args.families.split(","):
        family_cases = cases(family)
        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(lambda case: run(case, args.model), family_cases))
        by_variant: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
        for case, differences in zip(family_cases, results, strict=True):
            counts = by_variant[str(case_info(case)["variant"])]
            counts[0] += not differences
            counts[1] += 1
            if differences:
                print(f"  {case.name}: {len(differences)} difference(s), first: {differences[0]}")
        identical = sum(not differences for differences in results)
        variants = ", ".join(f"{name} {ok}/{total}" for name, (ok, total) in by_variant.items())
        jobs = sum(not [d for d in differences if not d.startswith("energy files:")] for differences in results)
        also = f"; jobs and schedule.csv {jobs}/{len(family_cases)}" if family == "energy" else ""
        print(f"{family}: {identical}/{len(family_cases)} identical ({variants}){also}", flush=True)


if __name__ == "__main__":
    main()
