"""The `slurm` policy's queue is kept in order as jobs come and go (docs/slurm.md, "Speed on real traces").

A submission puts a job's entries in place by bisection and a start takes them out, instead of sorting the whole
queue again after every change. At every call, the kept queue must be what the plain sort gives: the runnable
pending jobs' entries in Slurm's order (partition tier, priority, submit time, job id, array task; ties in the
order the jobs were queued and their partitions named), and every entry's backfill candidate with it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clustersim.core.decisions import Decision
from clustersim.core.events import Event
from clustersim.core.simulation import Simulation
from clustersim.core.state import ClusterView
from clustersim.policies.base import Policy
from clustersim.policies.registry import create_policy
from clustersim.policies.slurm.conf import parse_slurm_conf, platform_from_conf
from clustersim.policies.slurm.policy import Slurm, SlurmModel
from clustersim.workload.job import Job
from clustersim.workload.stream import Workload
from conftest import Collector
from test_slurm_quiet_calls import CONFS, jobs_of


def plain_queue(model: SlurmModel) -> list[tuple[str, str]]:
    """The queue sorted from scratch, as the policy did before keeping it (a stable sort of the pending jobs in
    the order they were queued, each with its partitions in the order it names them)."""
    entries = [
        (info, part)
        for info in model._pending.values() if info.runnable
        for part in info.partitions if part.index not in info.too_long
    ]
    entries.sort(key=lambda e: (-e[1].conf.priority_tier, -e[0].priorities[e[1].index], e[0].submit,
                                e[0].job_id, e[0].task))
    return [(info.job.key, part.conf.name) for info, part in entries]


class Checked(Policy):
    """The slurm policy, its kept queue compared with the plain sort after every call."""

    def __init__(self, inner: Slurm) -> None:
        self.inner = inner
        self.checks = 0

    def begin(self, view: ClusterView) -> None:
        self.inner.begin(view)

    def decide(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        yield from self.inner.decide(now, events, view)
        inner = self.inner.model
        entries = inner._entries
        if entries is None:  # to be sorted at the next pass: nothing kept to compare
            return
        self.checks += 1
        assert [(info.job.key, part.conf.name) for info, part in entries] == plain_queue(inner)
        assert inner._candidates == [inner._candidate(info, part) for info, part in entries]
        assert all(inner._by_candidate[id(c)] == entry for c, entry in zip(inner._candidates, entries, strict=True))
        assert inner._order == sorted(inner._order)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from(sorted(CONFS)), st.booleans())
def test_kept_queue_is_the_plain_sort(seed: int, name: str, quiet: bool) -> None:
    """Bursts of submissions, several partitions per job (tiers and partition priorities), dependencies,
    multifactor priorities recalculated every 2 s, with and without quiet calls."""
    conf = parse_slurm_conf(CONFS[name], source="slurm.conf")
    jobs = jobs_of(seed, [p.name for p in conf.partitions], max(node.cpus for node in conf.nodes) * 2)
    policy = create_policy("slurm", conf=conf)
    assert isinstance(policy, Slurm)
    checked = Checked(policy)
    simulation = Simulation(platform_from_conf(conf), Workload.from_jobs(jobs), checked, [Collector()])
    simulation.view.quiet_calls = quiet
    simulation.run()
    assert checked.checks > 0


def test_same_key_jobs_keep_their_queued_order() -> None:
    """Jobs equal in every sorted field but their job ids differ; two entries of one job in partitions of the
    same tier and priority keep the order the job names them in."""
    conf = parse_slurm_conf(CONFS["one partition"].replace(
        "PartitionName=main Nodes=ALL Default=YES\n",
        "PartitionName=main Nodes=ALL Default=YES\nPartitionName=other Nodes=ALL\n"), source="slurm.conf")
    from clustersim.workload.profiles import Delay

    jobs = [Job("1", 0.0, 32, Delay(5000.0), walltime=6000.0)]
    jobs += [Job(str(i), 10.0, 8, Delay(100.0), walltime=600.0, queue=queue)
             for i, queue in ((2, "other,main"), (3, "main,other"), (4, "main"))]
    policy = create_policy("slurm", conf=conf)
    assert isinstance(policy, Slurm)
    checked = Checked(policy)
    Simulation(platform_from_conf(conf), Workload.from_jobs(jobs), checked, [Collector()]).run()
    assert checked.checks > 0


def test_a_throttled_array_lets_its_next_task_in_when_one_ends() -> None:
    """With an array throttled, a task's end changes which tasks are queued (not only a submission or start):
    the queue is sorted again then (no dependency on the array forces it here)."""
    from clustersim.workload.profiles import Delay

    conf = parse_slurm_conf("NodeName=n[1-2] CPUs=2\nPartitionName=p Nodes=n[1-2] Default=YES\n",
                            source="slurm.conf")
    jobs = [Job(f"1_{t}", 0, 1, Delay(20), walltime=60, extra={"sbatch": "--array=0-4%2 -t 1", "array_job": "1"})
            for t in range(5)]
    jobs.append(Job("2", 1, 1, Delay(15), walltime=60, extra={"sbatch": "-n 1 -t 1"}))
    collector = Collector()
    Simulation(platform_from_conf(conf), Workload.from_jobs(jobs), create_policy("slurm", conf=conf),
               [collector]).run()
    starts = {key.rpartition("!")[2]: o.start for key, o in collector.outcomes.items()}
    # The next two tasks at the pass after the first two end (20 s + sched_latency), as with the plain sort.
    assert starts == pytest.approx({"1_0": 0, "1_1": 0, "1_2": 20.63, "1_3": 20.63, "2": 41.26, "1_4": 41.26})
