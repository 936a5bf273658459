"""Throughput of a campaign of short runs: the local process pool against running the runs one by one.

The campaign is the embedded example (201 jobs on 32 hosts) under 4 policies x 5 load scales x 10 seeds
(uniform walltime model) = 200 runs of about 20 ms of CPU each, the case where per-run overheads matter most.
Each measurement runs in a fresh process, from an empty campaign directory, and includes everything a user
waits for: planning, executing, writing every run's outputs and markers, and the results and summary tables.

- `sequential`: the runs executed one after the other in one process (`execute.execute` in a loop);
- `local N`: `clustersim sweep`'s local backend with N worker processes (N = 1 shows the pool's overhead);
- `cli` (with --cli): one `clustersim run --config` process per run, as a shell loop would do.

    python benchmarks/campaign.py                 # sequential, local 1, local <all cores>
    python benchmarks/campaign.py --runs 40 --cli

On a machine shared with other work the pool only gets its share of the cores, and Linux shares them between
sessions (autogroups), not processes. To measure what the pool itself can do, give the benchmark its own
session with priority (as root): `setsid bash -c 'echo -20 > /proc/self/autogroup; exec python ...'`.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from importlib import resources
from pathlib import Path

import yaml

POLICIES = ["fcfs", "easy", "sjf", "conservative"]
LOAD_SCALES = [0.8, 1.0, 1.2, 1.5, 2.0]


def _write_experiment(path: Path, runs: int) -> None:
    examples = Path(str(resources.files("clustersim") / "examples"))
    seeds = max(1, -(-runs // (len(POLICIES) * len(LOAD_SCALES))))
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
    path.write_text(yaml.safe_dump(document, sort_keys=False))


def _cpu_seconds() -> float:
    """CPU time of this process and of its finished children (pool workers are joined at shutdown)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _child(mode: str, experiment_file: Path, runs: int, out: Path) -> None:
    """One measurement in this fresh process; prints wall and CPU seconds as JSON."""
    from clustersim.experiments import LocalBackend, load_experiment, run_campaign
    from clustersim.experiments.campaign import write_tables
    from clustersim.experiments.execute import RunTask, execute
    from clustersim.experiments.results import RUNS_DIR, Manifest

    experiment = load_experiment(experiment_file, strict=True)
    experiment.runs = experiment.runs[:runs]
    cpu, started = _cpu_seconds(), time.perf_counter()
    if mode == "sequential":
        out.mkdir(parents=True)
        runs_axes = [(r.name, dict(r.axes)) for r in experiment.runs]
        Manifest(experiment.name, experiment.axes, experiment.aggregate_over, runs_axes).write(out)
        for run in experiment.runs:
            record = execute(RunTask(run.name, str(out / RUNS_DIR / run.name), run.config))
            assert record.status == "ok", record
        write_tables(out)
    elif mode == "cli":
        for run in experiment.runs:
            config = out.parent / "sequential" / RUNS_DIR / run.name / "config.yaml"
            command = [sys.executable, "-m", "clustersim.cli", "run", "--config", str(config),
                       "-o", str(out / run.name), "--no-gantt", "-q"]
            subprocess.run(command, check=True)
    else:
        result = run_campaign(experiment, out, LocalBackend(int(mode)), progress=False)
        assert result.ok == len(experiment.runs), result.failed[:3]
    print(json.dumps({"wall": time.perf_counter() - started, "cpu": _cpu_seconds() - cpu}))


def _measure(mode: str, experiment_file: Path, runs: int, out: Path) -> dict[str, float]:
    command = [sys.executable, __file__, "--child", mode, str(experiment_file), str(runs), str(out)]
    printed = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(printed.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    from clustersim.experiments.backends import machine_workers

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=200, help="number of runs")
    parser.add_argument("--workers", type=int, default=machine_workers(), help="processes of the local pool")
    parser.add_argument("--cli", action="store_true", help="also time one `clustersim run` process per run")
    parser.add_argument("--scratch", type=Path, help="where to write the campaigns (default: the temporary directory)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(dir=args.scratch) as scratch:
        root = Path(scratch)
        experiment_file = root / "experiment.yaml"
        _write_experiment(experiment_file, args.runs)
        print(f"{args.runs} runs of the embedded example (201 jobs, 32 hosts); {machine_workers()} usable cores; "
              f"load average before: {os.getloadavg()[0]:.2f}")
        modes = ["sequential", *dict.fromkeys(["1", str(args.workers)])] + (["cli"] if args.cli else [])
        sequential = 0.0
        for mode in modes:
            figures = _measure(mode, experiment_file, args.runs, root / mode)
            wall, cpu = figures["wall"], figures["cpu"]
            label = {"sequential": "sequential, 1 process", "cli": "clustersim run per run"}.get(
                mode, f"local backend, {mode} proc"
            )
            rate, cpu_ms = args.runs / wall, 1000 * cpu / args.runs
            line = f"{label:<24} {wall:>7.2f} s {rate:>7.1f} runs/s {cpu_ms:>6.1f} CPU ms/run"
            if mode == "sequential":
                sequential = wall
            else:
                line += f"   speed-up {sequential / wall:.2f}x"
                if mode != "cli":
                    table = (root / mode / "results.csv").read_bytes()
                    same = table == (root / "sequential" / "results.csv").read_bytes()
                    line += f" (ideal {mode}x), same results table: {same}"
            print(line, flush=True)
        print(f"load average after: {os.getloadavg()[0]:.2f} (other work on the machine takes its share of the cores)")


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--child":
        _child(sys.argv[2], Path(sys.argv[3]), int(sys.argv[4]), Path(sys.argv[5]))
    else:
        main()
