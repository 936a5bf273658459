"""Throughput of a campaign of short runs: the local process pool against running the runs one by one.

The campaign is the embedded example (201 jobs on 32 hosts) under 4 policies x 5 load scales x 10 seeds
(uniform walltime model) = 200 runs of a few tens of milliseconds each, the case where per-run overheads
matter most. Each measurement starts from an empty campaign directory and includes everything a user waits
for: planning, executing, writing every run's outputs and markers, and the results and summary tables.

- `sequential`: the same runs executed one after the other in this process (`execute.execute` in a loop);
- `local N`: `clustersim sweep`'s local backend with N worker processes (N = 1 shows the pool's overhead);
- `cli` (with --cli): one `clustersim run --config` process per run, as a shell loop would do.

    python benchmarks/campaign.py                 # sequential, local 1, local <all cores>
    python benchmarks/campaign.py --runs 40 --cli
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from importlib import resources
from pathlib import Path

import yaml

from clustersim.experiments import LocalBackend, load_experiment, run_campaign
from clustersim.experiments.backends import machine_workers
from clustersim.experiments.campaign import write_tables
from clustersim.experiments.execute import RunTask, execute
from clustersim.experiments.results import RUNS_DIR, Manifest
from clustersim.experiments.spec import Experiment

POLICIES = ["fcfs", "easy", "sjf", "conservative"]
LOAD_SCALES = [0.8, 1.0, 1.2, 1.5, 2.0]


def _experiment(folder: Path, runs: int) -> Experiment:
    examples = Path(str(resources.files("clustersim") / "examples"))
    seeds = max(1, runs // (len(POLICIES) * len(LOAD_SCALES)))
    document = {
        "name": "benchmark",
        "base": {
            "workload": str(examples / "workload.json"),
            "platform": str(examples / "platform.yaml"),
            "walltime": "uniform",
            "walltime_factor": 3,
        },
        "axes": {"policy": POLICIES, "load_scale": LOAD_SCALES, "seed": list(range(1, seeds + 1))},
    }
    path = folder / "experiment.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    experiment = load_experiment(path, strict=True)
    experiment.runs = experiment.runs[:runs]
    return experiment


def _sequential(experiment: Experiment, out: Path) -> None:
    out.mkdir(parents=True)
    Manifest(experiment.name, experiment.axes, experiment.aggregate_over,
             [(r.name, dict(r.axes)) for r in experiment.runs]).write(out)
    for run in experiment.runs:
        record = execute(RunTask(run.name, str(out / RUNS_DIR / run.name), run.config))
        assert record.status == "ok", record
    write_tables(out)


def _cli(experiment: Experiment, out: Path, reference: Path) -> None:
    for run in experiment.runs:
        config = reference / RUNS_DIR / run.name / "config.yaml"
        command = [sys.executable, "-m", "clustersim.cli", "run", "--config", str(config),
                   "-o", str(out / run.name), "--no-gantt", "-q"]
        subprocess.run(command, check=True)


def _cpu_seconds() -> float:
    """CPU time of this process and of its finished children (pool workers are joined at shutdown)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _timed(label: str, runs: int, action: object) -> float:
    assert callable(action)
    cpu = _cpu_seconds()
    started = time.perf_counter()
    action()
    seconds = time.perf_counter() - started
    cpu = _cpu_seconds() - cpu
    print(f"{label:<22} {runs:>5} runs {seconds:>8.2f} s {runs / seconds:>9.1f} runs/s "
          f"({cpu:.2f} CPU s, {1000 * cpu / runs:.1f} CPU ms/run)", flush=True)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=200, help="number of runs (a multiple of 20 is exact)")
    parser.add_argument("--workers", type=int, default=machine_workers(), help="processes of the local pool")
    parser.add_argument("--cli", action="store_true", help="also time one `clustersim run` process per run")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        experiment = _experiment(root, args.runs)
        runs = len(experiment.runs)
        print(f"{runs} runs of the embedded example (201 jobs, 32 hosts); {machine_workers()} usable cores; "
              f"load average before: {os.getloadavg()[0]:.2f}")
        sequential = _timed("sequential (1 process)", runs, lambda: _sequential(experiment, root / "seq"))
        for workers in dict.fromkeys([1, args.workers]):
            out = root / f"local{workers}"
            seconds = _timed(
                f"local backend, {workers} proc", runs,
                lambda out=out, workers=workers: run_campaign(experiment, out, LocalBackend(workers), progress=False),
            )
            same = (out / "results.csv").read_bytes() == (root / "seq" / "results.csv").read_bytes()
            print(f"{'':<22} speed-up vs sequential: {sequential / seconds:.2f}x "
                  f"(ideal {workers}x); same results table: {same}")
        print(f"load average after: {os.getloadavg()[0]:.2f} (other processes competing for the cores make the "
              "speed-up smaller than the pool can give)")
        if args.cli:
            cli = _timed("cli, 1 process per run", runs, lambda: _cli(experiment, root / "cli", root / "seq"))
            print(f"{'':<22} local backend is {cli / seconds:.1f}x faster than a loop of `clustersim run`")


if __name__ == "__main__":
    main()
