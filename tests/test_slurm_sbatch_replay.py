"""sbatch-options workloads replayed into a real Slurm 22.05 on loopback, and simulated from the same slurm.conf.

One short scenario per kind of request (2-3 nodes, 4-11 jobs, clock x10, about 10 s of wall time each), each
job submitted with exactly the options its CSV row gives:

- memory: CR_CPU_Memory with DefMemPerCPU, `--mem`, `--mem-per-cpu`, partition MaxNodes, `-N`,
  `--ntasks-per-node`, `--cpus-per-task`, `--exclusive`, a dependency (examples/requests.csv);
- default memory: CR_Core_Memory without DefMemPerCPU (a job naming no memory takes all of its node's);
- select/linear, Slurm 22.05's default SelectType (the scenario's slurm.conf names none): whole nodes;
- job arrays with `%` throttling, and a dependency on a whole array;
- GPUs: `--gpus`, `--gres=gpu:N`, `--gpus-per-node` (gres.conf with empty files for devices).

For each: the jobs Slurm rejects at submission are those the model rejects, the same jobs never start, and
every job starts within 5 s of Slurm's start (measured: under 1 s, docs/slurm.md) on the
same nodes, with the same CPU ids unless it holds whole nodes (the model then reports only the CPUs asked).
Slurm is installed with apt-get when missing; the test is skipped only when that is impossible.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from clustersim.core.events import FinalState
from clustersim.policies.registry import create_policy
from clustersim.policies.slurm.conf import SlurmConf, parse_slurm_conf, platform_from_conf, read_slurm_conf
from clustersim.runner import simulate
from clustersim.slurm.compare import Row, read_schedule
from clustersim.slurm.replay import replay, simulate_replay, write_replay
from clustersim.workload.load import load_workload
from conftest import Collector

pytestmark = pytest.mark.slurm

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@dataclass(frozen=True)
class Scenario:
    conf: str
    jobs: str | Path
    """An sbatch-options CSV, or a directory of job scripts."""
    rejected: frozenset[str] = frozenset()
    never: frozenset[str] = frozenset()
    """Jobs that stay pending for ever (PartitionNodeLimit)."""
    whole_nodes: frozenset[str] = frozenset()


SCENARIOS = {
    "memory": Scenario((EXAMPLES / "requests.conf").read_text(encoding="utf-8"),
                       (EXAMPLES / "requests.csv").read_text(encoding="utf-8"),
                       rejected=frozenset({"5", "7"}), never=frozenset({"6"}), whole_nodes=frozenset({"8"})),
    "default-memory": Scenario(
        "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core_Memory\nNodeName=n[1-2] CPUs=4 RealMemory=1000\n"
        "PartitionName=p Nodes=n[1-2] Default=YES MaxTime=INFINITE\n",
        "id,submit,duration,sbatch\n1,0,30,-n 1 -t 1\n2,1,30,-n 1 -t 1\n3,2,20,-n 1 --mem=100 -t 1\n"
        "4,3,20,-n 2 --mem-per-cpu=200 -t 1\n"),
    "linear": Scenario(
        "NodeName=n[1-3] CPUs=2 RealMemory=1000\n"
        "PartitionName=p Nodes=n[1-3] Default=YES MaxTime=INFINITE\n",
        "id,submit,duration,sbatch\n1,0,30,-n 1 -t 1\n2,0,40,-n 3 -t 1\n3,1,20,-n 1 -t 1\n4,2,20,-N 2 -t 1\n"
        "5,3,10,-n 1 --exclusive -t 1\n", whole_nodes=frozenset({"1", "2", "3", "4", "5"})),
    "array": Scenario(
        "SelectType=select/cons_tres\nNodeName=n[1-2] CPUs=2 RealMemory=1000\n"
        "PartitionName=p Nodes=n[1-2] Default=YES MaxTime=INFINITE\n",
        "id,submit,duration,sbatch\n1,0,20,--array=0-4%2 -n 1 -t 1\n2,1,15,-n 1 -t 1\n"
        "3,2,10,-n 2 -t 1 --dependency=afterok:1\n"),
    "gpus": Scenario(
        "SelectType=select/cons_tres\nGresTypes=gpu\nNodeName=n[1-2] CPUs=4 RealMemory=1000 Gres=gpu:2\n"
        "PartitionName=p Nodes=n[1-2] Default=YES MaxTime=INFINITE\n",
        "id,submit,duration,sbatch\n1,0,30,--gpus=1 -n 1 -t 1\n2,4,30,--gres=gpu:2 -n 2 -t 1\n"
        "3,8,20,--gpus-per-node=1 -N 2 -t 1\n4,12,10,-n 2 -t 1\n5,13,10,--gres=gpu:3 -n 1 -t 1\n"
        "6,16,10,--gpus=1 -n 1 -t 1\n", rejected=frozenset({"5"})),
    "gpus-spread": Scenario(
        "SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\nGresTypes=gpu\n"
        "NodeName=n[1-4] CPUs=4 RealMemory=1000 Gres=gpu:2\n"
        "PartitionName=p Nodes=n[1-4] Default=YES MaxTime=INFINITE\n",
        "id,submit,duration,sbatch\n1,0,60,--gpus=3 -N 2 -n 2 -t 2\n2,4,66,--gpus=1 -n 1 -t 2\n"
        "3,8,72,--gpus=4 -n 2 -t 2\n4,12,40,-N 2-4 -n 6 -t 1\n5,16,30,--gpus-per-task=1 -n 2 -t 1\n"
        "6,20,10,--gpus=4 -n 1 -t 1\n7,24,20,--gres=gpu:1 -N 2 -t 1\n", rejected=frozenset({"6"})),
    "job-scripts": Scenario((EXAMPLES / "gres.conf").read_text(encoding="utf-8"), EXAMPLES / "job-scripts",
                            rejected=frozenset({"08-too-much"})),
}


def nodes_of(conf: SlurmConf, row: Row) -> set[int]:
    bounds = []
    total = 0
    for node in conf.nodes:
        total += node.cpus
        bounds.append(total)
    return {next(i for i, bound in enumerate(bounds) if unit < bound) for unit in row.resources}


def model_states(conf: SlurmConf, workload: Path) -> dict[str, FinalState | None]:
    """The model on the workload as written: which jobs it rejects, runs, or leaves pending (None)."""
    collector = Collector()
    jobs = list(load_workload(workload).jobs)
    simulate(platform_from_conf(conf), load_workload(workload), create_policy("slurm", conf=conf),
             extra_sinks=[collector])
    return {job.id: (collector.outcomes[job.id].state if job.id in collector.outcomes else None) for job in jobs}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_sbatch_requests_as_real_slurm_treats_them(slurm_installed: None, tmp_path: Path, name: str) -> None:
    scenario = SCENARIOS[name]
    (tmp_path / "slurm.conf").write_text(scenario.conf, encoding="utf-8")
    workload = scenario.jobs if isinstance(scenario.jobs, Path) else tmp_path / "jobs.csv"
    if not isinstance(scenario.jobs, Path):
        workload.write_text(scenario.jobs, encoding="utf-8")
    conf = read_slurm_conf(tmp_path / "slurm.conf")
    result = replay(list(load_workload(workload).jobs), conf, tmp_path / "cluster", speedup=10)
    write_replay(result, tmp_path / "real")
    real_rejected = {o.job.id for o in result.outcomes if o.state is FinalState.REJECTED}
    assert (real_rejected, set(result.unfinished)) == (scenario.rejected, scenario.never)
    states = model_states(conf, workload)
    assert {k for k, s in states.items() if s is FinalState.REJECTED} == scenario.rejected
    assert {k for k, s in states.items() if s is None} == scenario.never
    simulate_replay(tmp_path / "real" / "jobs.csv", conf, result.ctld_start, tmp_path / "simulated",
                    clock_origin=result.origin)
    real = read_schedule(tmp_path / "real" / "jobs.csv")
    simulated = read_schedule(tmp_path / "simulated" / "jobs.csv")
    assert set(real) == set(simulated)
    for job_id in real:
        assert abs(real[job_id].start - simulated[job_id].start) <= 5.0, job_id
        assert nodes_of(conf, real[job_id]) == nodes_of(conf, simulated[job_id]), job_id
        if job_id in scenario.whole_nodes:
            assert simulated[job_id].resources.issubset(real[job_id].resources), job_id
        else:
            assert real[job_id].resources == simulated[job_id].resources, job_id


def test_the_scenarios_parse() -> None:
    """Without Slurm: every scenario's files are valid (the replayed test needs root and apt)."""
    for scenario in SCENARIOS.values():
        parse_slurm_conf(scenario.conf)
        assert isinstance(scenario.jobs, Path) or scenario.jobs.startswith("id,submit,duration,sbatch\n")
        if isinstance(scenario.jobs, Path):
            assert load_workload(scenario.jobs).jobs
