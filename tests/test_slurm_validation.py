"""Validation against a real Slurm 22.05 on loopback: the `slurm` policy must be as close to a real run as
another real run is.

A trace of 30 jobs (a burst, then one job every 8 s) is replayed twice into slurmctld and four slurmd (4 CPUs
each) on 127.0.0.1 with the clock accelerated 10 times. Each run is kept as users have it (whole seconds, as
`scontrol` gives them) and simulated from the same slurm.conf with the submit and run times Slurm recorded.
The bound is relative, measured in the same test: the simulation of a run must be no farther from that run
than the other real run is (mean and max abs(start difference), start-order flips, makespan), give or take
batch_sched_delay (3 s) and 2 flips, for at least one of the two runs. A loaded machine slows both real runs
alike, so the bound moves with them instead of failing on wall-clock-sensitive fixed numbers.

Slurm is installed with apt-get when missing; the test is skipped only when that is impossible. Deselect with
`-m "not slurm"`.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from clustersim._io.system import alive
from clustersim.policies.slurm.conf import parse_slurm_conf
from clustersim.slurm.cluster import LoopbackCluster
from clustersim.slurm.compare import farther_than
from clustersim.slurm.replay import replay, write_replay
from clustersim.slurm.validation import evaluate, whole_second_records
from clustersim.workload.job import Job
from clustersim.workload.profiles import Delay

pytestmark = pytest.mark.slurm

CONF = """SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
PriorityType=priority/basic
NodeName=n[1-4] CPUs=4 RealMemory=4000
PartitionName=main Nodes=n[1-4] Default=YES MaxTime=INFINITE
"""
SLACK_SECONDS = 3.0
"""batch_sched_delay: wherever the background loop's tick cuts the burst, the jobs after the cut wait for it."""
SLACK_FLIPS = 2


def trace(count: int = 30, seed: int = 7) -> list[Job]:
    rng = random.Random(seed)
    jobs = []
    for i in range(count):
        runtime = float(rng.randint(10, 60))
        limit = 60.0 * math.ceil(runtime * rng.uniform(1.2, 3.0) / 60)
        submit = 0.0 if i < count // 2 else 8.0 * (i - count // 2 + 1)
        jobs.append(Job(str(i + 1), submit, rng.choice((1, 2, 3, 4, 6, 8)), Delay(runtime), walltime=limit))
    return jobs


def test_the_simulation_is_as_close_to_a_real_run_as_another_real_run(slurm_installed: None, tmp_path: Path) -> None:
    conf = parse_slurm_conf(CONF, source="slurm.conf")
    scenario = tmp_path / "scenario"
    scenario.mkdir()
    (scenario / "slurm.conf").write_text(CONF)
    for number in (1, 2):
        result = replay(trace(), conf, tmp_path / f"cluster{number}", speedup=10)
        assert not result.unfinished and len(result.outcomes) == 30
        write_replay(result, tmp_path / f"run{number}")
        whole_second_records(tmp_path / f"run{number}" / "jobs.csv", scenario / f"real{number}.csv")
        (scenario / f"replay{number}.json").write_text((tmp_path / f"run{number}" / "replay.json").read_text())
    reports = []
    for reference in (1, 2):
        verdict = evaluate(scenario, tmp_path / f"simulated{reference}", "ci", reference)
        assert verdict.simulated.jobs == 30
        failed = farther_than(verdict.simulated, verdict.spread, SLACK_SECONDS, SLACK_FLIPS)
        if not failed:
            return
        reports.append(f"run {reference}: {'; '.join(failed)}")
    pytest.fail("the simulation is farther from both real runs than they are from each other: " + " | ".join(reports))


def test_the_daemons_are_stopped_even_when_the_run_fails(slurm_installed: None, tmp_path: Path) -> None:
    conf = parse_slurm_conf(CONF, source="slurm.conf")
    cluster = LoopbackCluster(conf, tmp_path, speedup=10)
    with pytest.raises(RuntimeError, match="boom"), cluster:
        cluster.run("sbatch", "-n", "1", "-t", "1", "-o", "/dev/null", "--wrap", "sleep 30")
        assert cluster.pids and all(alive(pid) for pid in cluster.pids.values())
        raise RuntimeError("boom")
    assert not any(alive(pid) for pid in cluster.pids.values())
    assert cluster.stray_pids() == []
