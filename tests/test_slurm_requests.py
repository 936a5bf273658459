"""The requests users make, replayed into a real Slurm 22.05 on loopback and simulated from the same slurm.conf.

One short scenario (two 4-CPU nodes of different `Weight`, two partitions, 8 jobs, clock x10) checks each kind
of request the model handles beyond `sbatch -n N -t T`, against what the real slurmctld did with it:

- a partition Slurm does not have, alone or in a list (`-p nope`, `-p long,nope`): rejected at submission;
- several partitions (`-p short,long`) with a time limit above one partition's MaxTime: the job runs in the other;
- node `Weight`: the lighter node is used first;
- `--dependency=afterok:` and `afterany:`, and an SWF preceding job (submitted as `afterany`): the dependent job
  starts only after the job it names has ended.

Slurm is installed with apt-get when missing; the test is skipped only when that is impossible.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from clustersim.core.events import FinalState
from clustersim.intervals import IntervalSet
from clustersim.policies.slurm.conf import parse_slurm_conf
from clustersim.slurm.compare import read_schedule
from clustersim.slurm.replay import replay, simulate_replay, write_replay
from clustersim.workload.job import Job
from clustersim.workload.profiles import Delay

pytestmark = pytest.mark.slurm

CONF = """SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
PriorityType=priority/basic
NodeName=n1 CPUs=4 RealMemory=1000 Weight=10
NodeName=n2 CPUs=4 RealMemory=1000 Weight=1
PartitionName=short Nodes=n1 Default=YES MaxTime=1
PartitionName=long Nodes=n1,n2 MaxTime=INFINITE
"""

N1_UNITS = IntervalSet.from_ids(range(4))


def requests() -> list[Job]:
    def job(i: int, submit: float, cpus: int, runtime: float, limit: float, queue: str = "",
            **extra: str) -> Job:
        return Job(str(i), submit, cpus, Delay(runtime), walltime=limit, queue=queue, extra=extra)

    return [
        job(1, 0, 2, 40, 60, "long"),  # Weight: on n2, the lighter node
        job(2, 0, 1, 20, 60, "nope"),  # rejected
        job(3, 0, 1, 20, 60, "long,nope"),  # rejected
        job(4, 2, 4, 30, 120, "short,long"),  # 2 minutes > short's MaxTime: runs in long, n2's CPUs first
        job(5, 3, 2, 10, 60, "long", dependency="afterok:1"),  # after 1, on n2
        job(6, 3, 1, 10, 60, "long", dependency="afterany:4"),  # after 4
        job(7, 4, 1, 10, 60, "long", preceding_job="5"),  # SWF: afterany 5
        job(8, 5, 1, 10, 60),  # the default partition (short): n1 only
    ]


def test_requests_are_treated_as_real_slurm_treats_them(slurm_installed: None, tmp_path: Path) -> None:
    conf = parse_slurm_conf(CONF, source="slurm.conf")
    result = replay(requests(), conf, tmp_path / "cluster", speedup=10)
    write_replay(result, tmp_path / "real")
    assert not result.unfinished
    simulate_replay(tmp_path / "real" / "jobs.csv", conf, result.ctld_start, tmp_path / "simulated",
                    clock_origin=result.origin)
    states = {o.job.id: o.state for o in result.outcomes}
    assert states["2"] is FinalState.REJECTED and states["3"] is FinalState.REJECTED
    real = read_schedule(tmp_path / "real" / "jobs.csv")
    simulated = read_schedule(tmp_path / "simulated" / "jobs.csv")
    assert set(real) == set(simulated) == {"1", "4", "5", "6", "7", "8"}
    for rows in (real, simulated):
        assert str(rows["1"].resources) == "4-5"  # n2, the lighter node
        assert rows["8"].resources.issubset(N1_UNITS)
        assert rows["5"].start >= rows["1"].finish
        assert rows["6"].start >= rows["4"].finish
        assert rows["7"].start >= rows["5"].finish
    for job_id in real:
        assert abs(real[job_id].start - simulated[job_id].start) <= 5.0, job_id
        assert real[job_id].resources == simulated[job_id].resources, job_id  # the same CPU ids
