"""Quiet calls left out change nothing (`ClusterView.quiet_calls`, docs/slurm.md "Speed on real traces").

With instant delivery the `slurm` policy does not ask the core for the calls at which it would start, kill and
change nothing (the periodic passes and cycles while nothing happens): it goes through them when next called.
Every start, end and CPU must be what the model gives when it is called at each of them, and far fewer calls
must be made.
"""

from __future__ import annotations

import math
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from clustersim.core.simulation import Simulation
from clustersim.policies.registry import create_policy
from clustersim.policies.slurm.conf import parse_slurm_conf, platform_from_conf
from clustersim.workload.job import Job
from clustersim.workload.profiles import Delay
from clustersim.workload.stream import Workload
from conftest import Collector

BASE = "SchedulerType=sched/backfill\nSelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n"
CONFS = {
    "one partition": BASE + "NodeName=n[1-8] CPUs=4\nPartitionName=main Nodes=ALL Default=YES\n",
    "limits and kills": BASE + (
        "OverTimeLimit=1\nKillWait=40\nNodeName=n[1-6] CPUs=2\n"
        "PartitionName=main Nodes=ALL Default=YES MaxTime=30\n"),
    "partitions, multifactor with accounting": BASE + (
        "AccountingStorageType=accounting_storage/slurmdbd\nPriorityType=priority/multifactor\n"
        "PriorityWeightAge=1000\nPriorityWeightFairshare=500\nPriorityWeightJobSize=200\nPriorityCalcPeriod=2\n"
        "SchedulerParameters=bf_continue,bf_window=90,bf_resolution=30\n"
        "NodeName=n[1-4] CPUs=4\nNodeName=m[1-4] CPUs=8\n"
        "PartitionName=a Nodes=n[1-4],m[1-4] Default=YES MaxTime=120\n"
        "PartitionName=b Nodes=m[1-4] MaxTime=60 PriorityTier=2\n"),
    "builtin, short intervals": (
        "SchedulerType=sched/builtin\nSchedulerParameters=sched_interval=20,default_queue_depth=3\n"
        "SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n"
        "NodeName=n[1-5] CPUs=4\nPartitionName=main Nodes=ALL Default=YES\n"),
}


def jobs_of(seed: int, partitions: list[str], cpus: int) -> list[Job]:
    """Bursts and gaps of jobs with whole-second or fractional submit times, overruns, jobs without limits,
    several partitions per job and dependencies."""
    rng = random.Random(seed)
    jobs = []
    t = 0.0
    for i in range(rng.randint(10, 60)):
        t += rng.choice([0.0, 0.0, 1.0, 7.0, 30.0, 61.0, 600.0, 3000.0]) + rng.choice([0.0, 0.0, 0.25, 0.5])
        runtime = float(rng.randint(1, 5000))
        walltime = None if rng.random() < 0.15 else 60.0 * math.ceil(runtime * rng.uniform(0.5, 3) / 60)
        queue = rng.choice(["", *partitions, ",".join(partitions)])
        extra = {"dependency": f"afterany:{rng.randint(1, i)}"} if i and rng.random() < 0.1 else {}
        jobs.append(Job(str(i + 1), t, rng.randint(1, cpus), Delay(runtime), walltime=walltime,
                        user=f"u{rng.randint(1, 3)}", queue=queue, extra=extra))
    return jobs


def run(conf_text: str, jobs: list[Job], quiet: bool, **options: object) -> tuple[dict[str, object], int]:
    conf = parse_slurm_conf(conf_text, source="slurm.conf")
    collector = Collector()
    policy = create_policy("slurm", conf=conf, **options)
    simulation = Simulation(platform_from_conf(conf), Workload.from_jobs(jobs), policy, [collector])
    simulation.view.quiet_calls = quiet
    summary = simulation.run()
    outcomes = {key: (o.state, o.start, o.finish, str(o.resources)) for key, o in collector.outcomes.items()}
    return outcomes, summary.nb_decision_calls


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from(sorted(CONFS)), st.sampled_from([0.0, 1_700_000_000.25, 0.6]),
       st.sampled_from([0.0, 2.5]))
def test_quiet_calls_left_out_change_no_start_end_or_cpu(seed: int, name: str, origin: float, epilog: float) -> None:
    conf_text = CONFS[name]
    conf = parse_slurm_conf(conf_text, source="slurm.conf")
    jobs = jobs_of(seed, [p.name for p in conf.partitions], max(node.cpus for node in conf.nodes) * 2)
    options = {"clock_origin": origin, "epilog_delay": epilog}
    called, _ = run(conf_text, jobs, quiet=False, **options)
    quiet, _ = run(conf_text, jobs, quiet=True, **options)
    assert quiet == called


def test_quiet_calls_are_most_calls_while_jobs_wait() -> None:
    """Long jobs holding the cluster while others wait: the periodic passes and cycles in between are left out."""
    jobs = [Job(str(i + 1), float(i), 32, Delay(20000.0), walltime=30000.0) for i in range(10)]
    called, calls = run(CONFS["one partition"], jobs, quiet=False)
    quiet, quiet_calls = run(CONFS["one partition"], jobs, quiet=True)
    assert quiet == called
    # 10 jobs one after the other: 200,000 s of passes every 60 s (3,300 calls) and cycles; a few dozen remain.
    assert calls > 3000
    assert quiet_calls < 100
