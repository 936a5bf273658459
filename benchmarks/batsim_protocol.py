"""Speed of a run driven over the Batsim protocol by the reference external EASY scheduler.

For the first 10,000 jobs of HPC2N and for the whole trace, it starts `python -m clustersim.protocols.batsim.easy`
in its own process, runs clustersim against it over ZeroMQ (tcp on localhost), and prints the wall time, the
messages exchanged per second, and how the wall time splits between the simulator (core, adapter, encoding
and decoding of messages) and the wait for answers (the decision process, including the transport). The
in-process `easy` run of the same jobs is given for comparison, and both jobs.csv are checked to be identical.

    python benchmarks/batsim_protocol.py                       # first 10,000 jobs, then the whole trace
    python benchmarks/batsim_protocol.py --limits 10000        # only the first 10,000 jobs
    python benchmarks/batsim_protocol.py --delivery instant    # one message per instant, not Batsim's rounds

For comparison, Batsim 4.2 with its C++ EASY scheduler needs about 3.7 s for the first 10,000 HPC2N jobs and
650 s for the whole trace on this kind of machine.
"""

from __future__ import annotations

import argparse
import filecmp
import subprocess
import sys
import tempfile
import time
from itertools import islice
from pathlib import Path

TRACE = Path(__file__).resolve().parents[2] / "shared" / "traces" / "HPC2N-2002-2.2-cln.swf.gz"


def _start_easy() -> tuple[subprocess.Popen[str], str]:
    """The reference scheduler on a free port; its first stderr line says where it listens."""
    process = subprocess.Popen(
        [sys.executable, "-m", "clustersim.protocols.batsim.easy", "-s", "tcp://127.0.0.1:*"],
        stderr=subprocess.PIPE, text=True,
    )
    assert process.stderr is not None
    line = process.stderr.readline()
    if not line.startswith("listening on "):
        process.kill()
        raise RuntimeError(f"the scheduler did not start: {line}{process.stderr.read()}")
    return process, line.removeprefix("listening on ").strip()


def measure(trace: Path, limit: int | None, out: Path, delivery: str = "batsim") -> dict[str, float]:
    from clustersim.core.simulation import Delivery
    from clustersim.platform.swf_header import platform_from_swf_header
    from clustersim.policies.registry import create_policy
    from clustersim.protocols.batsim.adapter import ExternalScheduler
    from clustersim.runner import simulate
    from clustersim.workload.stream import Workload
    from clustersim.workload.swf import read_swf

    def workload() -> Workload:
        w = read_swf(trace)
        if limit is not None:
            w.jobs = islice(w.jobs, limit)
        return w

    platform = platform_from_swf_header(workload().header)
    started = time.perf_counter()
    simulate(platform, workload(), create_policy("easy"), out / "in-process", delivery=Delivery(delivery))
    in_process_wall = time.perf_counter() - started

    process, endpoint = _start_easy()
    try:
        scheduler = ExternalScheduler(endpoint, workloads={"w0": str(trace)})
        started = time.perf_counter()
        result = simulate(platform, workload(), scheduler, out / "external", delivery=Delivery(delivery))
        wall = time.perf_counter() - started
        process.wait(timeout=30)
    finally:
        process.kill()
    assert scheduler.connection is not None
    waiting = scheduler.connection.waiting_seconds
    same = filecmp.cmp(out / "in-process" / "jobs.csv", out / "external" / "jobs.csv", shallow=False)
    return {
        "jobs": result.metrics.nb_jobs,
        "in_process_wall": in_process_wall,
        "wall": wall,
        "messages": scheduler.connection.nb_exchanges,
        "waiting": waiting,
        "simulator": wall - waiting,
        "identical": float(same),
        "megabytes": (scheduler.connection.bytes_sent + scheduler.connection.bytes_received) / 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trace", type=Path, default=TRACE)
    parser.add_argument(
        "--limits", nargs="+", type=int, default=[10_000, 0], help="numbers of jobs (0: the whole trace)"
    )
    parser.add_argument("--delivery", choices=("batsim", "instant"), default="batsim",
                        help="how an instant's events reach the scheduler (default: Batsim's rounds)")
    args = parser.parse_args()
    print(
        f"{'jobs':>8} {'in-proc s':>9} {'wall s':>8} {'messages':>9} {'msg/s':>8} {'MB':>7} "
        f"{'simulator':>10} {'scheduler':>10} {'same jobs.csv':>13}"
    )
    for limit in args.limits:
        with tempfile.TemporaryDirectory() as out:
            r = measure(args.trace, limit or None, Path(out), args.delivery)
        print(
            f"{r['jobs']:>8.0f} {r['in_process_wall']:>9.2f} {r['wall']:>8.2f} {r['messages']:>9.0f} "
            f"{r['messages'] / r['wall']:>8.0f} {r['megabytes']:>7.1f} "
            f"{r['simulator'] / r['wall']:>9.0%} {r['waiting'] / r['wall']:>10.0%} "
            f"{'yes' if r['identical'] else 'NO':>13}",
            flush=True,
        )


if __name__ == "__main__":
    main()
