"""The fast backfill pass gives the schedules the straightforward one gave.

tests/golden/slurm_*.csv were written by the model before the backfill pass was made incremental (will-run
results cached while no job starts or ends, CPU totals kept per batch, cycles that cannot start anything
skipped): every start and every CPU of real-trace excerpts and of a multi-partition multifactor case must stay
the same. `CLUSTERSIM_REGOLD=1` rewrites them (only when a change of behaviour is intended).
"""

from __future__ import annotations

import itertools
import math
import os
import random
from pathlib import Path

import pytest

from clustersim.policies.registry import create_policy
from clustersim.policies.slurm.conf import parse_slurm_conf, platform_from_conf
from clustersim.runner import simulate
from clustersim.workload.job import Job
from clustersim.workload.profiles import Delay
from clustersim.workload.stream import Workload
from clustersim.workload.swf import read_swf
from conftest import Collector

GOLDEN = Path(__file__).parent / "golden"
TRACES = Path(__file__).resolve().parents[1] / ".." / "shared" / "traces"
BASE = "SchedulerType=sched/backfill\nSelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n"


def swf_jobs(name: str, count: int, limit: int) -> list[Job]:
    jobs = itertools.islice(read_swf(TRACES / name).jobs, count)
    return [job for job in jobs if job.nb_res <= limit]


def mixed_jobs(count: int = 400, seed: int = 5) -> list[Job]:
    """Two overlapping partitions of different tiers, users, jobs without limits, overruns."""
    rng = random.Random(seed)
    jobs = []
    for i in range(count):
        runtime = float(rng.randint(20, 4000))
        cpus = rng.choice([1, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32])
        walltime = None if rng.random() < 0.1 else 60.0 * math.ceil(runtime * rng.uniform(0.8, 3) / 60)
        queue = rng.choice(["big", "big", "small", ""])
        jobs.append(Job(str(i + 1), round(i * 37.3 + rng.uniform(0, 20), 1), cpus, Delay(runtime),
                        walltime=walltime, user=f"u{rng.randint(1, 5)}", queue=queue))
    return jobs


MIXED_CONF = BASE + (
    "PriorityType=priority/multifactor\nPriorityWeightJobSize=1000\nPriorityWeightPartition=100\n"
    "NodeName=n[1-6] CPUs=4\nNodeName=m[1-4] CPUs=8\n"
    "PartitionName=big Nodes=n[1-6],m[1-4] Default=YES MaxTime=180 PriorityJobFactor=1\n"
    "PartitionName=small Nodes=n[3-6] MaxTime=60 PriorityJobFactor=10 PriorityTier=2\n"
)

CASES = {
    "kth": (BASE + "NodeName=n[1-100] CPUs=1\nPartitionName=main Nodes=ALL Default=YES\n",
            lambda: swf_jobs("KTH-SP2-1996-2.1-cln.swf.gz", 500, 100)),
    "hpc2n": (BASE + "NodeName=n[1-120] CPUs=2\nPartitionName=main Nodes=ALL Default=YES\n",
              lambda: swf_jobs("HPC2N-2002-2.2-cln.swf.gz", 700, 240)),
    "mixed": (MIXED_CONF, mixed_jobs),
}


def schedule_rows(conf_text: str, jobs: list[Job]) -> str:
    conf = parse_slurm_conf(conf_text, source="slurm.conf")
    collector = Collector()
    policy = create_policy("slurm", conf=conf, clock_origin=1_700_000_000.25, epilog_delay=0.0,
                           sched_latency=0.5, submit_latency=0.5)
    simulate(platform_from_conf(conf), Workload.from_jobs(jobs), policy, extra_sinks=[collector])
    lines = ["job,state,start,finish,cpus"]
    for key, outcome in sorted(collector.outcomes.items(), key=lambda item: int(item[0])):
        lines.append(f"{key},{outcome.state.name},{outcome.start},{outcome.finish},{outcome.resources}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_fast_backfill_pass_keeps_every_start_and_cpu(case: str) -> None:
    conf_text, jobs = CASES[case]
    rows = schedule_rows(conf_text, jobs())
    golden = GOLDEN / f"slurm_{case}.csv"
    if os.environ.get("CLUSTERSIM_REGOLD") == "1":
        golden.write_text(rows)
    assert rows == golden.read_text()
