"""Two speed questions of docs/slurm.md.

1. `--accelerations`: which clock accelerations K keep real Slurm faithful on this machine. The validation trace
   of tests/test_slurm_validation.py is replayed at K=1 twice (Slurm's own run-to-run spread) and once at each
   K; each run is compared with the first K=1 run.
2. `--simulation`: how much faster than real time the `slurm` policy simulates, on the seed Slurm simulator's
   set-up (3000 jobs of 30 s to 1 h over two days, 1000 nodes of 4 CPUs; the seed reports about 31x).
3. `--repeat N`: the CI validation (tests/test_slurm_validation.py) N times at K=10: simulated vs real for each
   run, and every pair of real runs (Slurm's own spread): the figures behind the test's bounds.

    python benchmarks/slurm_speedup.py --accelerations 1 5 10 20 50 --output /tmp/slurm-speedup
    python benchmarks/slurm_speedup.py --simulation
    python benchmarks/slurm_speedup.py --repeat 6 --output /tmp/slurm-repeat
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path

from clustersim.policies.registry import create_policy
from clustersim.policies.slurm.conf import parse_slurm_conf, platform_from_conf
from clustersim.runner import simulate
from clustersim.slurm.compare import compare_files, report, write_json
from clustersim.slurm.replay import replay, simulate_replay, write_replay
from clustersim.workload.job import Job
from clustersim.workload.profiles import Delay
from clustersim.workload.stream import Workload

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_slurm_validation import CONF, trace


def accelerations(speedups: list[float], output: Path) -> None:
    conf = parse_slurm_conf(CONF, source="slurm.conf")
    runs = [("x1-run1", 1.0), ("x1-run2", 1.0)] + [(f"x{k:g}", k) for k in speedups if k != 1.0]
    walls = {}
    for name, speedup in runs:
        result = replay(trace(), conf, output / name / "cluster", speedup=speedup)
        write_replay(result, output / name)
        walls[name] = result.wall_seconds
        print(f"{name}: {result.wall_seconds:.1f} s wall, overhead {result.overhead:.2f} s", flush=True)
    reference = output / "x1-run1" / "jobs.csv"
    rows = {}
    for name, _ in runs[1:]:
        deviations = compare_files(reference, output / name / "jobs.csv")
        rows[name] = deviations["simulated vs real"]
        write_json(deviations, output / name / "vs-x1.json")
    print(report(rows))
    (output / "walls.json").write_text(json.dumps(walls, indent=2))


def seed_setup(count: int = 3000, nodes: int = 1000, span: float = 172800.0, seed: int = 3) -> tuple[str, list[Job]]:
    rng = random.Random(seed)
    conf = ("SchedulerType=sched/backfill\nSelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n"
            f"NodeName=n[1-{nodes}] CPUs=4\nPartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE\n")
    jobs = []
    for i in range(count):
        runtime = float(rng.randint(30, 3600))
        cpus = min(4 * nodes, int(2 ** rng.uniform(0, 9)))
        limit = 60.0 * math.ceil(runtime * rng.uniform(1.0, 3.0) / 60)
        jobs.append(Job(str(i + 1), round(rng.uniform(0, span)), cpus, Delay(runtime), walltime=limit))
    return conf, jobs


def simulation_speed() -> None:
    text, jobs = seed_setup()
    conf = parse_slurm_conf(text)
    started = time.perf_counter()
    result = simulate(platform_from_conf(conf), Workload.from_jobs(jobs), create_policy("slurm", conf=conf))
    wall = time.perf_counter() - started
    span = result.metrics.makespan
    print(json.dumps({
        "jobs": len(jobs), "nodes": len(conf.nodes), "simulated_seconds": span, "wall_seconds": round(wall, 2),
        "speedup": round(span / wall, 1), "decision_calls": result.summary.nb_decision_calls,
        "utilisation": round(result.metrics.utilisation, 3),
    }, indent=2))


def repeat(count: int, output: Path, speedup: float = 10.0) -> None:
    conf = parse_slurm_conf(CONF, source="slurm.conf")
    for i in range(count):
        directory = output / f"run{i}"
        result = replay(trace(), conf, directory / "cluster", speedup=speedup)
        write_replay(result, directory / "real")
        simulate_replay(directory / "real" / "jobs.csv", conf, result.ctld_start, directory / "simulated",
                        clock_origin=result.origin)
        print(f"run {i}: simulated vs real", flush=True)
        print(report(compare_files(directory / "real" / "jobs.csv", directory / "simulated" / "jobs.csv")))
    for i in range(count):
        for j in range(i + 1, count):
            print(f"real run {j} vs real run {i}")
            print(report(compare_files(output / f"run{i}" / "real" / "jobs.csv",
                                       output / f"run{j}" / "real" / "jobs.csv")))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--accelerations", nargs="*", type=float)
    parser.add_argument("--simulation", action="store_true")
    parser.add_argument("--repeat", type=int, default=0)
    parser.add_argument("--output", type=Path, default=Path("slurm-speedup"))
    args = parser.parse_args()
    if args.accelerations:
        accelerations(args.accelerations, args.output)
    if args.simulation:
        simulation_speed()
    if args.repeat:
        repeat(args.repeat, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
