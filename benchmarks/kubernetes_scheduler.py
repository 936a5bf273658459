"""The real kube-scheduler (built from the repository's Go module) against the facade: wall time, CPU shares,
makespan and mean wait, and the built-in `kube` policy's figures on the same workload.

    python benchmarks/kubernetes_scheduler.py sim burst            # Batkube's burst, simulation build
    python benchmarks/kubernetes_scheduler.py plain spaced         # upstream command, 1 s backoff (the docs')
    python benchmarks/kubernetes_scheduler.py sim saturated 5000 100    # seeded heterogeneous pods, 8 cpu nodes
    python benchmarks/kubernetes_scheduler.py sim burst --runs 10  # repeat: are the runs identical?

The facade's CPU is this process's (it runs in it); the scheduler's is its process's. Their sum over the wall
time says who is busy: on 2 cores, a facade share well below half means it is not the bottleneck.
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
import time
from pathlib import Path

from clustersim.kubernetes import KubeSession, PodWorkload, TimeControl, batkube_platform, batkube_pods
from clustersim.kubernetes.kube_scheduler import FAST_BACKOFF, PLAIN, SIMULATION, KubeScheduler, build, write_config
from clustersim.kubernetes.synthetic import saturated_pods
from clustersim.platform.model import Platform
from clustersim.policies.registry import create_policy
from clustersim.runner import simulate
from clustersim.workload.job import Job
from clustersim.workload.stream import Workload

GIB = 2**30


def inputs(kind: str, count: int, nodes: int) -> tuple[Platform, list[Job]]:
    if kind == "saturated":  # a group of nodes/2 pods every 10 s: twice what the nodes can run
        return batkube_platform(nodes, cores=8, memory=32 * GIB), saturated_pods(count, group=max(nodes // 2, 1))
    return batkube_platform(), batkube_pods(kind)


def run_once(binary: Path, platform: Platform, pods: list[Job], extra: str, out: Path) -> dict[str, float]:
    session = KubeSession(platform, PodWorkload(Workload.from_jobs(pods)), out,
                          TimeControl(deadlock_timeout=120), port=0)
    config = write_config(out / "scheduler.yaml", session.kubeconfig, extra)
    wall, cpu = time.perf_counter(), time.process_time()
    with session, KubeScheduler(binary, config, out / "scheduler.log") as scheduler:
        while True:
            with contextlib.suppress(TimeoutError):
                result = session.wait(0.5)
                break
            if not scheduler.running:
                raise SystemExit(f"kube-scheduler died: see {out / 'scheduler.log'}")
        scheduler_cpu = scheduler.cpu_seconds()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    m = result.metrics
    return {"wall": wall, "facade_cpu": cpu, "scheduler_cpu": scheduler_cpu, "makespan": m.makespan,
            "mean_wait": m.mean("waiting"), "bindings": session.facade.nb_bindings}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build", choices=["sim", "plain"])
    parser.add_argument("workload", choices=["burst", "spaced", "saturated"])
    parser.add_argument("count", nargs="?", type=int, default=5000, help="saturated: pods")
    parser.add_argument("nodes", nargs="?", type=int, default=100, help="saturated: nodes of 8 cpu, 32Gi")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    started = time.perf_counter()
    binary = build(SIMULATION if args.build == "sim" else PLAIN)
    print(f"build (cached after the first): {time.perf_counter() - started:.1f} s")
    platform, pods = inputs(args.workload, args.count, args.nodes)
    extra = FAST_BACKOFF if args.build == "plain" else ""
    outcomes = []
    for run in range(args.runs):
        with tempfile.TemporaryDirectory() as out:
            r = run_once(binary, platform, pods, extra, Path(out))
        outcomes.append((r["makespan"], r["mean_wait"]))
        share = r["facade_cpu"] / r["wall"]
        print(f"run {run + 1}: {r['wall']:.2f} s wall; facade CPU {r['facade_cpu']:.2f} s ({share:.0%} of a core), "
              f"scheduler CPU {r['scheduler_cpu']:.2f} s; makespan {r['makespan']:g} s, mean wait "
              f"{r['mean_wait']:.6g} s, {r['bindings']:g} bindings", flush=True)
    if args.runs > 1:
        print(f"{len(set(outcomes))} distinct (makespan, mean wait) over {args.runs} runs: {sorted(set(outcomes))}")
    if args.workload == "saturated":
        for options in ({"initial_backoff": 0, "max_backoff": 0}, {}):
            fresh = inputs(args.workload, args.count, args.nodes)[1]
            result = simulate(platform, Workload.from_jobs(fresh), create_policy("kube", **options))
            m = result.metrics
            print(f"built-in kube policy {options or '(defaults)'}: makespan {m.makespan:g} s, mean wait "
                  f"{m.mean('waiting'):.6g} s")


if __name__ == "__main__":
    main()
