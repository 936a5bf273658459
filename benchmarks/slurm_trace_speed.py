"""CPU time of the `slurm` policy on real traces (docs/slurm.md, "Speed on real traces").

The platform is a slurm.conf of N nodes (CPUs per node given) with Slurm's defaults (sched/backfill,
select/cons_tres CR_CPU, priority/basic); the trace's jobs ask for their allocated processors and requested
times. Prints the CPU seconds of the simulation (process time, reading the trace included), the jobs, the
simulated span, the calls of the decision process and a digest of jobs.csv (two versions of the model agree
when it does), and, for the runs issue #16 sets a target for, that target next to the figure. `--compare easy`
runs the `easy` policy on the same input for scale.

    python benchmarks/slurm_trace_speed.py ../shared/traces/KTH-SP2-1996-2.1-cln.swf.gz --nodes 100
    python benchmarks/slurm_trace_speed.py ../shared/traces/HPC2N-2002-2.2-cln.swf.gz --nodes 120 --cpus 2
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import sys
import tempfile
import time
from pathlib import Path

from clustersim.policies.registry import create_policy
from clustersim.policies.slurm.conf import parse_slurm_conf, platform_from_conf
from clustersim.runner import simulate
from clustersim.workload.stream import Workload
from clustersim.workload.swf import read_swf

TARGETS = {
    ("KTH-SP2-1996-2.1-cln.swf.gz", 100, 1, None): 15.0,
    ("HPC2N-2002-2.2-cln.swf.gz", 120, 2, None): 60.0,
}
"""Issue #16's CPU-second targets by (trace file, nodes, CPUs per node, jobs): KTH-SP2 on 100 nodes in 15 s,
the whole HPC2N trace in a minute."""


def conf_text(nodes: int, cpus: int) -> str:
    return ("SchedulerType=sched/backfill\nSelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n"
            f"NodeName=n[1-{nodes}] CPUs={cpus}\nPartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE\n")


def run(trace: str, nodes: int, cpus: int, jobs: int | None, policy: str,
        options: dict[str, str] | None = None) -> dict[str, object]:
    conf = parse_slurm_conf(conf_text(nodes, cpus), source="slurm.conf")
    platform = platform_from_conf(conf)
    started = time.process_time()
    workload = read_swf(trace)
    selected = [job for job in itertools.islice(workload.jobs, jobs) if job.nb_res <= nodes * cpus]
    process = create_policy("slurm", conf=conf, **(options or {})) if policy == "slurm" else create_policy(policy)
    with tempfile.TemporaryDirectory() as out:
        result = simulate(platform, Workload.from_jobs(selected), process, out)
        cpu = time.process_time() - started
        digest = hashlib.sha256((Path(out) / "jobs.csv").read_bytes()).hexdigest()[:16]
    figures: dict[str, object] = {
        "policy": policy, "trace": trace, "jobs": len(selected), "nodes": nodes, "cpus_per_node": cpus,
        "cpu_seconds": round(cpu, 2)}
    target = TARGETS.get((Path(trace).name, nodes, cpus, jobs)) if policy == "slurm" else None
    if target is not None:
        figures.update(target_cpu_seconds=target, target_met=cpu <= target)
    figures.update(makespan=result.metrics.makespan, mean_wait=round(result.metrics.mean("waiting"), 3),
                   decision_calls=result.summary.nb_decision_calls, jobs_csv_sha256=digest)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trace")
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--cpus", type=int, default=1, help="CPUs per node")
    parser.add_argument("--jobs", type=int, default=None, help="only the first JOBS records")
    parser.add_argument("--compare", nargs="*", default=[], help="other policies to time on the same input")
    parser.add_argument("--policy-option", action="append", default=[], metavar="KEY=VALUE",
                        help="a slurm policy option (e.g. epilog_delay=0, to compare digests across versions)")
    args = parser.parse_args()
    options = dict(item.partition("=")[::2] for item in args.policy_option)
    for policy in ["slurm", *args.compare]:
        print(json.dumps(run(args.trace, args.nodes, args.cpus, args.jobs, policy, options)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
