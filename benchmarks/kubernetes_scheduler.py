"""The real kube-scheduler (built from the repository's Go module) against the facade: wall time, CPU shares,
makespan and mean wait, and the built-in `kube` policy's figures on the same workload.

    python benchmarks/kubernetes_scheduler.py sim burst            # Batkube's burst, simulation build
    python benchmarks/kubernetes_scheduler.py plain spaced         # upstream command, 1 s backoff (the docs')
    python benchmarks/kubernetes_scheduler.py sim saturated 5000 100    # seeded heterogeneous pods, 8 cpu nodes
    python benchmarks/kubernetes_scheduler.py sim burst --runs 10  # repeat: are the runs identical?
    python benchmarks/kubernetes_scheduler.py sim saturated 400 10 --seeds 1,2,3,4,5 --runs 2
        # the built-in `kube` policy against the real scheduler: mean over seeds (and runs), and the differences

The facade's CPU is this process's (it runs in it); the scheduler's is its process's. Their sum over the wall
time says who is busy: on 2 cores, a facade share well below half means it is not the bottleneck.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
import time
from pathlib import Path

from clustersim.kubernetes import KubeSession, PodWorkload, TimeControl, batkube_platform, batkube_pods
from clustersim.kubernetes.kube_scheduler import FAST_BACKOFF, PLAIN, SIMULATION, KubeScheduler, build, write_config
from clustersim.kubernetes.synthetic import saturated
from clustersim.platform.model import Platform
from clustersim.policies.registry import create_policy
from clustersim.runner import simulate
from clustersim.workload.job import Job
from clustersim.workload.stream import Workload


def inputs(kind: str, count: int, nodes: int, seed: int = 1) -> tuple[Platform, list[Job]]:
    if kind == "saturated":  # a group of nodes/2 pods every 10 s: twice what the nodes can run
        return saturated(count, nodes, seed)
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
    parser.add_argument("--seeds", default="1", help="saturated: comma-separated workload seeds (default 1)")
    args = parser.parse_args()
    started = time.perf_counter()
    binary = build(SIMULATION if args.build == "sim" else PLAIN)
    print(f"build (cached after the first): {time.perf_counter() - started:.1f} s")
    extra = FAST_BACKOFF if args.build == "plain" else ""
    seeds = [int(seed) for seed in args.seeds.split(",")] if args.workload == "saturated" else [1]
    real: list[tuple[float, float]] = []
    for seed in seeds:
        platform, pods = inputs(args.workload, args.count, args.nodes, seed)
        outcomes = []
        for run in range(args.runs):
            with tempfile.TemporaryDirectory() as out:
                r = run_once(binary, platform, pods, extra, Path(out))
            outcomes.append((r["makespan"], r["mean_wait"]))
            share = r["facade_cpu"] / r["wall"]
            print(f"seed {seed} run {run + 1}: {r['wall']:.2f} s wall; facade CPU {r['facade_cpu']:.2f} s ({share:.0%} "
                  f"of a core), scheduler CPU {r['scheduler_cpu']:.2f} s; makespan {r['makespan']:g} s, mean wait "
                  f"{r['mean_wait']:.6g} s, {r['bindings']:g} bindings", flush=True)
        if args.runs > 1:
            print(f"{len(set(outcomes))} distinct (makespan, mean wait) over {args.runs} runs: {sorted(set(outcomes))}")
        real += outcomes
    if args.workload == "saturated":
        makespan, wait = (statistics.fmean(values) for values in zip(*real, strict=True))
        print(f"kube-scheduler ({args.build}), mean of {len(real)} runs: makespan {makespan:.1f} s, mean wait "
              f"{wait:.2f} s")
        for options in ({}, {"initial_backoff": 1, "max_backoff": 10}, {"drain": "false"}):
            built_in = []
            for seed in seeds:
                platform, pods = inputs(args.workload, args.count, args.nodes, seed)
                m = simulate(platform, Workload.from_jobs(pods), create_policy("kube", **options)).metrics
                built_in.append((m.makespan, m.mean("waiting")))
            ours, our_wait = (statistics.fmean(values) for values in zip(*built_in, strict=True))
            print(f"built-in kube policy {options or '(defaults)'}: makespan {ours:.1f} s ({ours / makespan - 1:+.1%}),"
                  f" mean wait {our_wait:.2f} s ({our_wait / wait - 1:+.1%})")


if __name__ == "__main__":
    main()
