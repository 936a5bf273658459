"""The platform models side by side: the first jobs of HPC2N as communicating parallel tasks on a 240-host
cluster with a backbone, under EASY, with the fast model and with the simgrid one.

Each job becomes `parallel_homogeneous` with `cpu` = its run time x 1 Gflop (so it lasts its run time on the
cluster's 1 Gf hosts when alone) and `com` bytes sent from each of its hosts to each other one. The cluster
is the `network` family's kind: private links of 1 Gbps and 50 us, a 10 Gbps backbone of 500 us. Each run is
a fresh subprocess (SimGrid runs one simulation per process; peak RSS is that run's own).

    python benchmarks/platform_model.py                  # 10,000 jobs, com = 100 MB
    python benchmarks/platform_model.py --jobs 2000 --com 1e6
    python benchmarks/platform_model.py --delivery batsim   # Batsim's control messages too (clustersim run's way)
    python benchmarks/platform_model.py --corpus docs/platform-model.png
        # instead: each job of the reference corpus's `network` family replayed (Batsim's starts and hosts)
        # with both models; prints how close to Batsim's execution times they come, and draws the figure
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from itertools import islice
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared"
TRACE = SHARED / "traces" / "HPC2N-2002-2.2-cln.swf.gz"
NETWORK = SHARED / "reference" / "batsim" / "network"
HOSTS = 240
PLATFORM = f"""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<zone id="AS0" routing="Full">
    <cluster id="compute" prefix="host" suffix="" radical="0-{HOSTS - 1}"
        speed="1Gf" bw="1Gbps" lat="50us" bb_bw="10Gbps" bb_lat="500us"/>
</zone>
</platform>
"""


def _prepare(directory: Path, nb_jobs: int, com: float) -> tuple[Path, Path]:
    """The platform file and the workload (HPC2N's first jobs as communicating parallel tasks)."""
    from clustersim.workload.batsim_writer import write_batsim_workload
    from clustersim.workload.profiles import ParallelHomogeneous
    from clustersim.workload.stream import Workload
    from clustersim.workload.swf import read_swf

    platform = directory / "cluster240.xml"
    platform.write_text(PLATFORM)
    jobs = []
    for job in islice(read_swf(TRACE).jobs, nb_jobs):
        runtime = job.profile.runtime(job.nb_res, 1.0)
        jobs.append(replace(job, nb_res=min(job.nb_res, HOSTS), profile=ParallelHomogeneous(runtime * 1e9, com)))
    workload = directory / "workload.json"
    write_batsim_workload(Workload.from_jobs(jobs), workload, HOSTS)
    return platform, workload


def _measure(platform: str, workload: str, model: str, delivery: str) -> dict[str, float]:
    """One run in this (fresh) process."""
    import warnings

    from clustersim.core.execution_choice import execution_model
    from clustersim.core.simulation import Delivery
    from clustersim.platform.simgrid import read_simgrid_platform
    from clustersim.policies.registry import create_policy
    from clustersim.runner import simulate
    from clustersim.workload.batsim_json import read_batsim_workload

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loaded = read_simgrid_platform(platform)
        jobs = read_batsim_workload(workload)
        execution = execution_model(model, loaded, Path(platform), jobs)
    started = time.perf_counter()
    cpu_started = time.process_time()
    with tempfile.TemporaryDirectory() as out:
        result = simulate(loaded, jobs, create_policy("easy"), out, execution=execution, delivery=Delivery(delivery))
    return {
        "jobs": result.metrics.nb_jobs,
        "wall": time.perf_counter() - started,
        "cpu": time.process_time() - cpu_started,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "makespan": result.metrics.makespan,
        "mean_wait": result.metrics.mean("waiting"),
    }


def _corpus(figure: Path) -> None:
    """Replay every `network` case with both models; compare with Batsim's execution times; draw the figure."""
    import csv

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points: dict[str, list[tuple[float, float]]] = {"fast": [], "simgrid": []}
    for case in sorted(NETWORK.iterdir()):
        with open(case / "out_jobs.csv", newline="") as rows:
            batsim = {r["job_id"]: float(r["execution_time"]) for r in csv.DictReader(rows) if r["starting_time"]}
        for model, series in points.items():
            command = [sys.executable, "-m", "clustersim.records.replay", str(case), "--model", model]
            ours = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
            series += [(batsim[job], float(ours[job][1])) for job in batsim]
    print(f"{'model':8} {'jobs':>5} {'within 1e-6':>12} {'within 1%':>10} {'max rel. error':>15}")
    for model, series in points.items():
        errors = [abs(ours - theirs) / theirs if theirs else abs(ours) for theirs, ours in series]
        exact = sum(abs(o - t) <= 1e-6 * t + 5e-7 for t, o in series)
        print(f"{model:8} {len(series):>5} {exact:>12} {sum(e <= 0.01 for e in errors):>10} {max(errors):>15.3g}")
    fig, ax = plt.subplots(figsize=(6, 5))
    for model, marker in (("fast", "x"), ("simgrid", "o")):
        xs, ys = zip(*points[model], strict=True)
        label = f"clustersim --platform-model {model}"
        ax.scatter(xs, [max(y, 1e-3) for y in ys], marker=marker, s=16, alpha=0.7, label=label)
    ax.plot([1e-3, 3e3], [1e-3, 3e3], color="grey", linewidth=0.8, label="same as Batsim")
    ax.set(xscale="log", yscale="log", xlabel="Batsim 4.2 execution time (s)", ylabel="clustersim execution time (s)",
           title="network family: 406 jobs at Batsim's starts, on its hosts")
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(figure, dpi=110)
    print(f"figure: {figure}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=10_000, help="how many of HPC2N's first jobs (default 10,000)")
    parser.add_argument("--com", type=float, default=1e8, help="bytes each host sends to each other (default 1e8)")
    parser.add_argument("--corpus", type=Path, metavar="FIGURE", help="compare with Batsim on the network family")
    parser.add_argument("--delivery", choices=("instant", "batsim"), default="instant",
                        help="instant: the core decides at each event (default); batsim: Batsim's rounds, and with "
                             "the simgrid model Batsim's control messages as SimGrid communications")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_measure(*args.child)))
        return
    if args.corpus:
        _corpus(args.corpus)
        return
    with tempfile.TemporaryDirectory() as directory:
        platform, workload = _prepare(Path(directory), args.jobs, args.com)
        print(f"{'model':8} {'jobs':>7} {'wall s':>8} {'cpu s':>8} {'peak MB':>8} {'makespan s':>12} "
              f"{'mean wait s':>12}")
        for model in ("fast", "simgrid"):
            command = [sys.executable, __file__, "--child", str(platform), str(workload), model, args.delivery]
            r = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout.splitlines()[-1])
            print(f"{model:8} {r['jobs']:>7.0f} {r['wall']:>8.2f} {r['cpu']:>8.2f} {r['rss_mb']:>8.1f} "
                  f"{r['makespan']:>12.1f} {r['mean_wait']:>12.1f}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
