"""`clustersim serve-k8s` (the API facade) and `clustersim run-k8s` (the built-in kube policy, in process)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from clustersim.exit_codes import EXIT_DEADLOCK

if TYPE_CHECKING:
    from clustersim.records.metrics import ScheduleMetrics


def add_kubernetes_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = commands.add_parser(
        "serve-k8s", help="serve a simulated cluster through the Kubernetes API for a real scheduler",
        description="Serve the Kubernetes API (JSON) on loopback for an external scheduler, simulate the pods it "
        "binds, and write jobs.csv, schedule.csv and pods.csv when every pod has completed. Exits 8 on a deadlock. "
        "See docs/kubernetes.md.",
    )
    _inputs(serve)
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default: loopback)")
    serve.add_argument("--port", type=int, default=8001, help="port (default 8001; 0 picks a free one)")
    serve.add_argument("--keep-serving", action="store_true", help="stay up after the run, until interrupted")
    times = serve.add_argument_group("time control (wall-clock seconds unless said otherwise)")
    times.add_argument("--timeout", type=float, default=5.0,
                       help="longest wait at one instant for pods neither bound nor reported (0: no limit)")
    times.add_argument("--min-delay", type=float, default=0.0, help="shortest wait at every instant")
    times.add_argument("--base-timestep", type=float, default=1.0, help="simulated step after a timeout")
    times.add_argument("--max-timestep", type=float, default=20.0, help="largest simulated step")
    times.add_argument("--backoff-multiplier", type=float, default=2.0, help="step growth while nothing is bound")
    times.add_argument("--no-fast-forward", dest="fast_forward", action="store_false",
                       help="step through time by the timestep even when nothing is left to decide")
    times.add_argument("--deadlock-timeout", type=float, default=60.0,
                       help="give up (exit 8) when pods wait, none runs, and the scheduler is silent this long")
    serve.set_defaults(handler=_serve)

    run = commands.add_parser(
        "run-k8s", help="simulate pods under the built-in kube-scheduler-like policy",
        description="Simulate a pod workload (Batsim JSON with cpu/memory, SWF, or Kubernetes manifests) under the "
        "built-in kube policy; writes jobs.csv, schedule.csv and pods.csv.",
    )
    _inputs(run)
    run.add_argument("--policy-option", action="append", metavar="KEY=VALUE",
                     help="an option of the kube policy, e.g. strategy=MostAllocated, seed=1")
    run.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    run.set_defaults(handler=_run)


def _inputs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-p", "--platform", type=Path, required=True,
                        help="cluster YAML/JSON, Batsim/SimGrid XML (core, memory) or Node manifests")
    parser.add_argument("-w", "--workload", type=Path, required=True,
                        help="Batsim JSON (cpu, memory, scheduler), SWF, or Pod/Job manifests")
    parser.add_argument("--schedule", type=Path, help="manifests: YAML mapping of pod/Job names to arrival times")
    parser.add_argument("-o", "--output", type=Path, default=Path("clustersim-k8s"), help="output directory")


def _serve(args: argparse.Namespace) -> int:
    from clustersim.errors import InputError
    from clustersim.kubernetes.session import KubeSession
    from clustersim.kubernetes.sources import load_kube_platform, load_pod_workload
    from clustersim.kubernetes.timecontrol import DeadlockError, TimeControl

    try:
        control = TimeControl(args.timeout, args.min_delay, args.base_timestep, args.max_timestep,
                              args.backoff_multiplier, args.fast_forward, args.deadlock_timeout)
    except ValueError as error:
        raise InputError("options", str(error)) from None
    platform = load_kube_platform(args.platform)
    pods = load_pod_workload(args.workload, schedule=args.schedule)
    session = KubeSession(platform, pods, args.output, control, args.host, args.port).start()
    print(f"serving the Kubernetes API at {session.url}; kubeconfig: {session.kubeconfig}", file=sys.stderr,
          flush=True)
    try:
        try:
            result = session.wait()
        except DeadlockError as error:
            print(f"clustersim: error: {error}; outputs written so far are kept (partial: extra_metrics.csv says so)",
                  file=sys.stderr)
            return EXIT_DEADLOCK
        m = result.metrics
        print(f"{m.nb_jobs} pods{_pending(m)}, {session.facade.nb_bindings} bindings: makespan {m.makespan:g} s, "
              f"mean wait {m.mean('waiting'):.6g} s; {result.wall_seconds:.2f} s of wall time; outputs in "
              f"{args.output}/",
              file=sys.stderr, flush=True)
        if args.keep_serving:
            print("--keep-serving: still serving; interrupt (Ctrl-C) to stop", file=sys.stderr, flush=True)
            while True:
                time.sleep(3600)
        return 4 if result.summary.unfinished else 0
    finally:
        session.stop()


def _run(args: argparse.Namespace) -> int:
    from clustersim.core.interface import DecisionProcess
    from clustersim.kubernetes.controller import JobController
    from clustersim.kubernetes.records import PodsCsvWriter
    from clustersim.kubernetes.sources import load_kube_platform, load_pod_workload
    from clustersim.policies.registry import create_policy, parse_policy_options
    from clustersim.runner import simulate

    platform = load_kube_platform(args.platform)
    pods = load_pod_workload(args.workload, schedule=args.schedule)
    process: DecisionProcess = create_policy("kube", **parse_policy_options(args.policy_option))
    if pods.held:
        process = JobController(process, pods.held)
    args.output.mkdir(parents=True, exist_ok=True)
    result = simulate(platform, pods.workload, process, args.output,
                      extra_sinks=[PodsCsvWriter(args.output / "pods.csv", platform)], report_pending=True)
    m = result.metrics
    if not args.quiet:
        print(f"{m.nb_jobs} pods{_pending(m)}: makespan {m.makespan:g} s, mean wait {m.mean('waiting'):.6g} s; "
              f"outputs in {args.output}/", file=sys.stderr)
    return 4 if result.summary.unfinished else 0


def _pending(metrics: ScheduleMetrics) -> str:
    """How many pods never started (still Pending, with no node: listed in jobs.csv and pods.csv too)."""
    return f" ({metrics.nb_pending} Pending, never started)" if metrics.nb_pending else ""
