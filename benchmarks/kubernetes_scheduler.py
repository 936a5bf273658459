"""The real kube-scheduler (built from the repository's Go module) against the facade: wall time, CPU shares,
makespan and mean wait, and the built-in `kube` policy's figures on the same workload.

    python benchmarks/kubernetes_scheduler.py sim burst            # Batkube's burst, simulation build
    python benchmarks/kubernetes_scheduler.py plain spaced         # upstream command, 1 s backoff (the docs')
    python benchmarks/kubernetes_scheduler.py sim saturated 5000 100    # seeded heterogeneous pods, 8 cpu nodes
    python benchmarks/kubernetes_scheduler.py sim burst --runs 10  # repeat: are the runs identical?
        # (each run prints the sha256 of its jobs.csv, pods.csv and schedule.csv: same digest, same bytes)
    python benchmarks/kubernetes_scheduler.py sim saturated 400 10 --seeds 1,2,3,4,5 --runs 2
        # the built-in `kube` policy against the real scheduler: mean over seeds (and runs), and the differences
    python benchmarks/kubernetes_scheduler.py sim saturated 20000 1000 --wall-limit 600
        # stop after 600 s of wall time: how far simulated time got, and how many pods were bound
    python benchmarks/kubernetes_scheduler.py sim saturated 1000 20 --debug 20
        # the scheduler's scheduling attempts (its /metrics), and a 20 s CPU profile (go tool pprof) from 3 s in
    python benchmarks/kubernetes_scheduler.py sim saturated 1000 20 --no-keep-failures
        # every attempt through the filters and the preemption dry run (the build's --keep-failures=false)
    python benchmarks/kubernetes_scheduler.py sim saturated 1000 20 --option=--preemption-without-victims=false
        # upstream's preemption dry run on every miss (any flag of the build, repeatable)
    python benchmarks/kubernetes_scheduler.py sim saturated 1000 20 --binary OTHER/bin/kube-scheduler-sim
        # another build of the simulation scheduler (e.g. main's), to compare on the same machine
    python benchmarks/kubernetes_scheduler.py sim saturated 5000 100 --instants
        # each instant timed end to end: the facade's wait for the scheduler, the scheduler's CPU and its threads'
        # wait for a core meanwhile; and the requeues a node-fit queueing hint would leave (requeue_bound)

The facade's CPU is this process's (it runs in it); the scheduler's is its process's. Their sum over the wall
time says who is busy: on 2 cores, a facade share well below half means it is not the bottleneck.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import hashlib
import itertools
import re
import shutil
import socket
import ssl
import statistics
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path

from clustersim.core.decisions import Decision
from clustersim.core.events import Event
from clustersim.core.state import ClusterView
from clustersim.kubernetes import KubeSession, PodWorkload, TimeControl, batkube_platform, batkube_pods
from clustersim.kubernetes.facade import KubeFacade
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


def debug_flags(port: int) -> list[str]:
    """kube-scheduler's own secure port, serving /metrics and /debug/pprof to anyone (loopback only)."""
    return [f"--secure-port={port}", "--bind-address=127.0.0.1", "--authentication-skip-lookup=true",
            "--authentication-tolerate-lookup-failure=true",
            "--authorization-always-allow-paths=/healthz,/metrics,/debug/pprof,/debug/pprof/*"]


def fetch(url: str, timeout: float) -> bytes:
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE  # its self-signed certificate
    with urllib.request.urlopen(url, timeout=timeout, context=context) as answer:
        return bytes(answer.read())


Instant = tuple[float, float, float, float]
"""An instant's start and end (wall clock), and the scheduler's CPU and run-queue wait in it (seconds)."""


def time_instants(facade: KubeFacade, scheduler: KubeScheduler, record: list[Instant]) -> None:
    """Time each instant end to end: its start and end (the facade's `decide`, which publishes the instant and
    waits until the scheduler is done with it), the scheduler's CPU and its threads' run-queue wait in between."""
    decide = facade.decide

    def timed(now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        start, (cpu, queued) = time.perf_counter(), scheduler.schedstat()
        yield from decide(now, events, view)
        end_cpu, end_queued = scheduler.schedstat()
        record.append((start, time.perf_counter(), end_cpu - cpu, end_queued - queued))

    facade.decide = timed  # type: ignore[method-assign]


def instants_report(record: list[Instant]) -> str:
    """Where the wall time goes: in the instants (the scheduler's CPU, its wait for a core) or between them."""
    spans = sorted(end - start for start, end, _, _ in record)
    floor = sorted(end - start for start, end, cpu, _ in record if cpu < 0.002)  # nothing to schedule
    between = sum(later[0] - earlier[1] for earlier, later in itertools.pairwise(record))
    return (f"{len(record)} instants: {sum(spans):.1f} s in them (scheduler CPU {sum(r[2] for r in record):.1f} s, "
            f"its threads' run-queue wait {sum(r[3] for r in record):.1f} s), {between:.1f} s between them; one "
            f"instant {1000 * spans[len(spans) // 2]:.1f} ms (median), {1000 * spans[9 * len(spans) // 10]:.1f} ms "
            f"(p90); {len(floor)} with under 2 ms of scheduler CPU: "
            f"{1000 * floor[len(floor) // 2] if floor else 0:.1f} ms (median), the handshake's floor")


def requeue_bound(pods_csv: Path, platform: Platform) -> tuple[int, int]:
    """From a saturated run's pods.csv: kube-scheduler's AssignedPodDelete requeues, one per pod waiting through
    an instant with a completion (NodeResourcesFit's queueing hint answers Queue for every deleted assigned pod;
    the pods rejected only by NodeResourcesFit), and how many would remain if the hint answered Queue only when
    a node freed at that instant can hold the pod's cpu and memory (an upper bound: all of the instant's
    completions counted as done, none of its bindings)."""
    rows = [row for row in csv.DictReader(pods_csv.open()) if row["node"]]
    pods = [(int(r["cpu_m"]), int(r["memory"]), float(r["submission_time"]), float(r["starting_time"]),
             float(r["finish_time"]), r["node"]) for r in rows]
    capacity = {node.name: (node.cores * 1000, node.memory) for node in platform.nodes}
    on_node: dict[str, list[tuple[int, int, float, float, float, str]]] = {}
    freed: dict[float, set[str]] = {}
    for pod in pods:
        on_node.setdefault(pod[5], []).append(pod)
        freed.setdefault(pod[4], set()).add(pod[5])
    last_start = max(pod[3] for pod in pods)
    upstream = bounded = 0
    for t in sorted(instant for instant in freed if instant <= last_start):
        waiting = [pod for pod in pods if pod[2] < t <= pod[3]]
        rooms = []
        for name in freed[t]:
            running = [pod for pod in on_node[name] if pod[3] < t < pod[4]]
            cpu, memory = capacity[name]
            rooms.append((cpu - sum(pod[0] for pod in running), memory - sum(pod[1] for pod in running)))
        upstream += len(waiting)
        bounded += sum(any(pod[0] <= cpu and pod[1] <= memory for cpu, memory in rooms) for pod in waiting)
    return upstream, bounded


def files_digest(out: Path) -> str:
    """The sha256 of a run's jobs.csv, pods.csv and schedule.csv (each one's name and bytes, in that order): two
    runs with the same digest wrote byte-identical files."""
    digest = hashlib.sha256()
    for name in ("jobs.csv", "pods.csv", "schedule.csv"):
        digest.update(name.encode() + b"\0" + (out / name).read_bytes())
    return digest.hexdigest()


def run_once(binary: Path, platform: Platform, pods: list[Job], extra: str, out: Path,
             wall_limit: float = 0, debug: float = 0, *options: str, timing: bool = False) -> dict[str, float]:
    session = KubeSession(platform, PodWorkload(Workload.from_jobs(pods)), out,
                          TimeControl(deadlock_timeout=120), port=0)
    config = write_config(out / "scheduler.yaml", session.kubeconfig, extra)
    args, port = list(options), 0
    if debug:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        args += debug_flags(port)
    wall, cpu = time.perf_counter(), time.process_time()
    result, stats = None, {}
    instants: list[Instant] = []
    with session, KubeScheduler(binary, config, out / "scheduler.log", *args) as scheduler:
        if timing:
            time_instants(session.facade, scheduler, instants)
        if debug:
            def profile() -> None:
                time.sleep(3)
                with contextlib.suppress(OSError):
                    (out / "cpu.pprof").write_bytes(fetch(
                        f"https://127.0.0.1:{port}/debug/pprof/profile?seconds={debug:g}", debug + 30))
            profiler = threading.Thread(target=profile, daemon=True)
            profiler.start()
        while wall_limit <= 0 or time.perf_counter() - wall < wall_limit:
            with contextlib.suppress(TimeoutError):
                result = session.wait(0.5)
                break
            if not scheduler.running:
                raise SystemExit(f"kube-scheduler died: see {out / 'scheduler.log'}")
        if debug:
            profiler.join()
            metrics = fetch(f"https://127.0.0.1:{port}/metrics", 30).decode()
            for outcome in ("scheduled", "unschedulable", "error"):
                found = re.search(rf'^scheduler_schedule_attempts_total{{.*result="{outcome}"}} (\S+)$', metrics, re.M)
                stats[f"attempts {outcome}"] = float(found[1]) if found else 0.0
            for event, queue, count in re.findall(  # which events sent pods back, and to which queue
                    r'^scheduler_queue_incoming_pods_total{event="([^"]+)",queue="([^"]+)"} (\S+)$', metrics, re.M):
                stats[f"incoming {queue} {event}"] = float(count)
            (out / "metrics.txt").write_text(metrics)
        scheduler_cpu = scheduler.cpu_seconds()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    common = {"wall": wall, "facade_cpu": cpu, "scheduler_cpu": scheduler_cpu,
              "bindings": session.facade.nb_bindings, **stats}
    if timing:
        print(instants_report(instants))
        if (out / "pods.csv").exists() and platform.name == "saturated":
            upstream, bounded = requeue_bound(out / "pods.csv", platform)
            print(f"AssignedPodDelete requeues: {upstream} (model of upstream's hint), {bounded} "
                  f"({bounded / max(upstream, 1):.1%}) with a hint that requeues only pods a freed node can hold")
    if result is None:  # stopped at the wall limit
        return {**common, "reached": session.facade.now()}
    m = result.metrics
    return {**common, "makespan": m.makespan, "mean_wait": m.mean("waiting")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build", choices=["sim", "plain"])
    parser.add_argument("workload", choices=["burst", "spaced", "saturated"])
    parser.add_argument("count", nargs="?", type=int, default=5000, help="saturated: pods")
    parser.add_argument("nodes", nargs="?", type=int, default=100, help="saturated: nodes of 8 cpu, 32Gi")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--seeds", default="1", help="saturated: comma-separated workload seeds (default 1)")
    parser.add_argument("--wall-limit", type=float, default=0, help="stop a run after this many seconds of wall "
                        "time and say how far it got (default: no limit)")
    parser.add_argument("--debug", type=float, default=0, metavar="SECONDS",
                        help="count the scheduler's attempts and keep a CPU profile of SECONDS (cpu.pprof, in a "
                        "directory kept and named)")
    parser.add_argument("--binary", type=Path, help="run this kube-scheduler binary (for instance another "
                        "branch's build, to compare) instead of building the repository's")
    parser.add_argument("--option", action="append", default=[], help="one more flag for the scheduler, e.g. "
                        "--option=--preemption-without-victims=false (repeatable)")
    parser.add_argument("--instants", action="store_true", help="time each instant end to end and, saturated, "
                        "count the requeues a node-fit queueing hint would leave")
    parser.add_argument("--no-keep-failures", action="store_true", help="sim: run every attempt's filters and "
                        "preemption dry run, even for a failure the build has answered before (the build's "
                        "--keep-failures=false)")
    args = parser.parse_args()
    started = time.perf_counter()
    binary = args.binary or build(SIMULATION if args.build == "sim" else PLAIN)
    print(f"build (cached after the first): {time.perf_counter() - started:.1f} s")
    extra = FAST_BACKOFF if args.build == "plain" else ""
    seeds = [int(seed) for seed in args.seeds.split(",")] if args.workload == "saturated" else [1]
    real: list[tuple[float, float]] = []
    for seed in seeds:
        platform, pods = inputs(args.workload, args.count, args.nodes, seed)
        outcomes, digests = [], set()
        for run in range(args.runs):
            with tempfile.TemporaryDirectory() as out:
                r = run_once(binary, platform, pods, extra, Path(out), args.wall_limit, args.debug,
                             *(["--keep-failures=false"] if args.no_keep_failures else []), *args.option,
                             timing=args.instants)
                digest = "" if "reached" in r else files_digest(Path(out))
                if args.debug:
                    kept = Path(tempfile.mkdtemp(prefix="kube-scheduler-profile-"))
                    shutil.copytree(out, kept, dirs_exist_ok=True)
                    print(f"profile and logs in {kept}: go tool pprof -top {binary} {kept / 'cpu.pprof'}")
            share = r["facade_cpu"] / r["wall"]
            cpu = (f"{r['wall']:.2f} s wall; facade CPU {r['facade_cpu']:.2f} s ({share:.0%} of a core), scheduler "
                   f"CPU {r['scheduler_cpu']:.2f} s")
            attempts = "".join(f", {r[k]:g} {k}" for k in sorted(r) if k.startswith(("attempts", "incoming")))
            if "reached" in r:
                print(f"seed {seed} run {run + 1}: stopped at the wall limit, {cpu}; simulated time "
                      f"{r['reached']:g} s reached (last submission at {max(pod.submit_time for pod in pods):g} s), "
                      f"{r['bindings']:g} of {len(pods)} pods bound{attempts}", flush=True)
                continue
            outcomes.append((r["makespan"], r["mean_wait"]))
            digests.add(digest)
            print(f"seed {seed} run {run + 1}: {cpu}; makespan {r['makespan']:g} s, mean wait {r['mean_wait']:.6g} s, "
                  f"{r['bindings']:g} bindings{attempts}; files sha256 {digest}", flush=True)
        if args.runs > 1:
            print(f"{len(set(outcomes))} distinct (makespan, mean wait) over {args.runs} runs: "
                  f"{sorted(set(outcomes))}; {len(digests)} distinct sets of files")
        real += outcomes
    if args.workload == "saturated":
        makespan, wait = (statistics.fmean(values) for values in zip(*real, strict=True)) if real else (0.0, 0.0)
        if real:
            print(f"kube-scheduler ({args.build}), mean of {len(real)} runs: makespan {makespan:.1f} s, mean wait "
                  f"{wait:.2f} s")
        for options in ({}, {"initial_backoff": 1, "max_backoff": 10}, {"drain": "false"}):
            built_in = []
            for seed in seeds:
                platform, pods = inputs(args.workload, args.count, args.nodes, seed)
                m = simulate(platform, Workload.from_jobs(pods), create_policy("kube", **options)).metrics
                built_in.append((m.makespan, m.mean("waiting")))
            ours, our_wait = (statistics.fmean(values) for values in zip(*built_in, strict=True))
            versus = (f" ({ours / makespan - 1:+.1%})", f" ({our_wait / wait - 1:+.1%})") if real else ("", "")
            print(f"built-in kube policy {options or '(defaults)'}: makespan {ours:.1f} s{versus[0]}, mean wait "
                  f"{our_wait:.2f} s{versus[1]}", flush=True)


if __name__ == "__main__":
    main()
