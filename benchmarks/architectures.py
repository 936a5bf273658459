"""Wall and CPU time for one simulated day of a 10,000-machine cell under each architecture.

The cell and workloads follow the seed's example (`Workloads.scala`: 10,000 machines of 4 cores and 16 GiB, a
batch and a service job type with exponential sizes and run times), made busier so that about 60% of the
cpu is in use: batch jobs every 3 s of 100 tasks on average, service jobs every 10 s, and 40% of the cpu
prefilled with running service jobs. Think times are the paper's defaults (t_job 0.1 s batch, 1 s service,
t_task 5 ms). Each architecture runs in a fresh subprocess; the target is under 60 s of wall time each.

    python benchmarks/architectures.py                       # monolithic, mesos, omega
    python benchmarks/architectures.py --architectures omega --machines 1000 --hours 2
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from typing import Any

DEFAULT_ARCHITECTURES = ("monolithic", "mesos", "omega")


def cell_config(machines: int, hours: float) -> dict[str, Any]:
    """The benchmark's configuration, as the YAML file would give it."""
    return {
        "seed": 1,
        "duration": hours * 3600,
        "utilisation_period": 300,
        "cluster": {"machines": machines, "cpu": 4, "memory": 16},
        "schedulers": {
            "batch": {"t_job": 0.1, "t_task": 0.005},
            "service": {"t_job": 1.0, "t_task": 0.005},
        },
        "workloads": {
            "batch": {
                "interarrival": {"distribution": "exponential", "mean": 3},
                "tasks": {"distribution": "exponential", "mean": 100},
                "runtime": {"distribution": "exponential", "mean": 600},
                "cpu": 0.5,
                "memory": 1,
            },
            "service": {
                "interarrival": {"distribution": "exponential", "mean": 10},
                "tasks": {"distribution": "exponential", "mean": 20},
                "runtime": {"distribution": "exponential", "mean": 7200},
                "cpu": 1,
                "memory": 4,
            },
        },
        "initial_state": {"fill": {"workload": "service", "cpu": 0.4}},
    }


def _measure(architecture: str, machines: int, hours: float) -> dict[str, Any]:
    from clustersim.architectures import parse_config, simulate

    config = parse_config(cell_config(machines, hours), source="<benchmark>")
    started, cpu_started = time.perf_counter(), time.process_time()
    result = simulate(config, config.architectures[architecture])
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    return {
        "architecture": result.architecture, "wall": wall, "cpu": cpu, "jobs": result.jobs_submitted,
        "events": result.events, "tasks": sum(s.tasks_committed for s in result.schedulers),
        "mean_cpu": result.mean_cpu,
        "busyness": {s.scheduler: round(s.busyness, 4) for s in result.schedulers},
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--architectures", nargs="+", default=list(DEFAULT_ARCHITECTURES))
    parser.add_argument("--machines", type=int, default=10_000)
    parser.add_argument("--hours", type=float, default=24.0)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_measure(args.architectures[0], args.machines, args.hours)))
        return
    print(f"{args.machines} machines, {args.hours:g} simulated hours")
    print(f"{'architecture':<32} {'wall s':>8} {'cpu s':>8} {'jobs':>7} {'tasks':>9} {'events':>8} {'cpu use':>7}"
          f" {'rss MB':>7}  busyness")
    for architecture in args.architectures:
        cmd = [sys.executable, __file__, "--child", "--architectures", architecture, "--machines",
               str(args.machines), "--hours", str(args.hours)]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        m = json.loads(out.strip().splitlines()[-1])
        print(f"{m['architecture']:<32} {m['wall']:>8.1f} {m['cpu']:>8.1f} {m['jobs']:>7} {m['tasks']:>9} "
              f"{m['events']:>8} {m['mean_cpu']:>7.2f} {m['rss_mb']:>7.0f}  {m['busyness']}", flush=True)


if __name__ == "__main__":
    main()
