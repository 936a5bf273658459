"""Replay real SWF traces under built-in policies and print speed and memory figures.

Each measurement runs in a fresh subprocess so peak RSS is that run's own. For each trace it prints the time
needed only to read (stream) the trace, then for each policy: jobs, wall seconds, CPU seconds (steadier than
wall time on a busy machine), jobs per second and peak RSS, next to the same figures for the first 10,000
jobs only (memory must not grow with the trace).

    python benchmarks/replay.py                      # HPC2N, KTH-SP2 and CEA-Curie under fcfs and easy
    python benchmarks/replay.py --traces HPC2N-2002-2.2-cln.swf.gz --policies easy
    python benchmarks/replay.py --delivery instant   # one decision call per instant instead of Batsim's rounds
    python benchmarks/replay.py --energy             # also with energy and Batsim's trace files, and the overhead
    python benchmarks/replay.py --energy --power-off idle-timeout:600   # ... under a power policy, both runs
    PYTHONPATH=$(python tests/compiled_build.py) python benchmarks/replay.py   # the mypyc-compiled modules
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

TRACES_DIR = Path(__file__).resolve().parents[2] / "shared" / "traces"
DEFAULT_TRACES = ["HPC2N-2002-2.2-cln.swf.gz", "KTH-SP2-1996-2.1-cln.swf.gz", "CEA-Curie-2011-2.1-cln.swf.gz"]


def _measure(trace: str, policy: str, limit: int | None, delivery: str, energy: bool = False,
             power_off: str = "") -> dict[str, float]:
    """One measurement, in this (fresh) process: 'read' streams the trace only, others simulate it. With `energy`
    or a `power_off` policy every host draws 100 W idle / 200 W busy / 10 W asleep (benchmarks/energy.py's
    model); `energy` accounts for it and writes Batsim's trace files, as `clustersim run --energy` does."""
    from clustersim.core.interface import DecisionProcess
    from clustersim.core.simulation import Delivery
    from clustersim.platform.model import Platform
    from clustersim.platform.power_model import PowerModel, SleepState, Transition
    from clustersim.platform.swf_header import platform_from_swf_header
    from clustersim.policies.power.powered import PoweredProcess
    from clustersim.policies.power.switch_policies import create_power_off, create_power_on
    from clustersim.policies.registry import create_policy
    from clustersim.runner import simulate
    from clustersim.workload.swf import read_swf

    workload = read_swf(trace)
    if limit is not None:
        workload.jobs = islice(workload.jobs, limit)
    started = time.perf_counter()
    cpu_started = time.process_time()
    if policy == "read":
        jobs = sum(1 for _ in workload.jobs)
    else:
        platform = platform_from_swf_header(workload.header)
        process: DecisionProcess = create_policy(policy)
        if energy or power_off:
            power = PowerModel(100.0, 200.0, (SleepState(10.0, Transition(5.0, 250.0), Transition(10.0, 1000.0)),))
            platform = Platform([replace(node, power=power) for node in platform.nodes], platform.unit, platform.name)
        if power_off:
            process = PoweredProcess(process, create_power_off(power_off), create_power_on("on-demand"))
        with tempfile.TemporaryDirectory() as out:
            result = simulate(platform, workload, process, out, delivery=Delivery(delivery), energy=energy,
                              power=bool(power_off))
        jobs = result.metrics.nb_jobs
    wall = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"jobs": jobs, "wall": wall, "cpu": cpu, "rss_mb": rss}


def _run_child(trace: Path, policy: str, limit: int | None, delivery: str, energy: bool = False,
               power_off: str = "") -> dict[str, float]:
    cmd = [sys.executable, __file__, "--child", str(trace), policy, str(limit or 0), delivery, str(int(energy)),
           power_off]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--traces", nargs="+", default=DEFAULT_TRACES, help="trace file names in shared/traces")
    parser.add_argument("--policies", nargs="+", default=["fcfs", "easy"])
    parser.add_argument("--traces-dir", type=Path, default=TRACES_DIR)
    parser.add_argument("--delivery", choices=("batsim", "instant"), default="batsim",
                        help="how an instant's events reach the policy (default: Batsim's rounds, as clustersim run)")
    parser.add_argument("--energy", action="store_true",
                        help="also run each policy with energy and Batsim's trace files (machine_states.csv, "
                        "consumed_energy.csv, pstate_changes.csv) on powered hosts, and print the overhead")
    parser.add_argument("--power-off", metavar="POLICY",
                        help="with --energy: both runs keep node power states under this power-off policy "
                        "(e.g. idle-timeout:600); the run without energy keeps them without accounting")
    # --child TRACE POLICY LIMIT DELIVERY [ENERGY [POWER_OFF]]: one measurement in this process
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        trace, policy, limit, delivery, energy, power_off = [*args.child, "0", ""][:6]
        print(json.dumps(_measure(trace, policy, int(limit) or None, delivery, energy == "1", power_off)))
        return
    power_off = args.power_off or ""
    print(f"{'trace':34} {'policy':6} {'jobs':>8} {'wall s':>8} {'cpu s':>8} {'jobs/s':>9} {'peak MB':>8}")
    for name in args.traces:
        trace = args.traces_dir / name
        read = _run_child(trace, "read", None, args.delivery)
        print(f"{name:34} {'read':6} {read['jobs']:>8.0f} {read['wall']:>8.2f} {read['cpu']:>8.2f} "
              f"{read['jobs'] / read['wall']:>9.0f} {read['rss_mb']:>8.1f}")
        for policy in args.policies:
            r = _run_child(trace, policy, None, args.delivery, power_off=power_off)
            first = _run_child(trace, policy, 10_000, args.delivery, power_off=power_off)
            print(f"{name:34} {policy:6} {r['jobs']:>8.0f} {r['wall']:>8.2f} {r['cpu']:>8.2f} "
                  f"{r['jobs'] / r['wall']:>9.0f} "
                  f"{r['rss_mb']:>8.1f}   (first 10,000 jobs: {first['wall']:.2f} s, {first['rss_mb']:.1f} MB)")
            if args.energy:
                e = _run_child(trace, policy, None, args.delivery, True, power_off)
                print(f"{name:34} {'+energy':6} {e['jobs']:>8.0f} {e['wall']:>8.2f} {e['cpu']:>8.2f} "
                      f"{e['jobs'] / e['wall']:>9.0f} {e['rss_mb']:>8.1f}   ({100 * (e['cpu'] / r['cpu'] - 1):+.0f}% "
                      f"CPU over {policy}{' under ' + power_off if power_off else ''})")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
