"""sbatch-options workloads replayed into a real Slurm 22.05 on loopback, and simulated from the same slurm.conf.

One short scenario per kind of request (2-4 nodes, 4-11 jobs, clock x10, about 10 s of wall time each), each
job submitted with exactly the options its CSV row or job script gives (tests/data/slurm_requests/, examples/):

- memory: CR_CPU_Memory with DefMemPerCPU, `--mem`, `--mem-per-cpu`, partition MaxNodes, `-N`,
  `--ntasks-per-node`, `--cpus-per-task`, `--exclusive`, a dependency (examples/requests.csv);
- default memory: CR_Core_Memory without DefMemPerCPU (a job naming no memory takes all of its node's);
- select/linear, Slurm 22.05's default SelectType (the scenario's slurm.conf names none): whole nodes;
- job arrays with `%` throttling, and a dependency on a whole array;
- GPUs: `--gpus`, `--gres=gpu:N`, `--gpus-per-node` (gres.conf with empty files for devices);
- GPUs spread over nodes: `--gpus=N` over several nodes, `--gpus-per-task`, `-N MIN-MAX`;
- typed GPUs (`Gres=gpu:a100:1,gpu:v100:1`): `--gres=gpu:TYPE:N`, `--gpus=TYPE:N`, `--gpus-per-node=TYPE:N`, an
  untyped request taking a node's first type, a type no node has and more of a type than any node has (rejected);
- memory per GPU (CR_CPU_Memory): `--mem-per-gpu` with GPUs per node, two jobs sharing a node's memory, one
  asking more than a node has (rejected);
- CPUs per GPU: `--cpus-per-gpu` with `--gres=gpu:N`, `--gpus=N`, and DefCpuPerGPU/DefMemPerGPU (global, and a
  partition's own winning) with `--gres`, `--gpus-per-task` and `-c` (which DefCpuPerGPU leaves alone); more CPUs
  per GPU than a node has (rejected);
- job scripts (examples/job-scripts): `#SBATCH` lines, a counted GRES (`--gres=bw:60`, `Gres=bw:100`) next to
  GPUs, a node range, a dependency, a GRES no node has (rejected).

For each: the jobs Slurm rejects at submission are those the model rejects, the same jobs never start, and
every job starts within one of slurmctld's loop periods of Slurm's start (`SLACK`; usually under 1 s, docs/slurm.md)
on the same nodes, with the same CPU ids unless it holds whole nodes (the model then reports only the CPUs asked).
Slurm is installed with apt-get when missing; the test is skipped only when that is impossible.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from clustersim.core.events import FinalState
from clustersim.policies.registry import create_policy
from clustersim.policies.slurm.conf import SlurmConf, platform_from_conf, read_slurm_conf
from clustersim.runner import simulate
from clustersim.slurm.compare import Row, read_schedule
from clustersim.slurm.replay import replay, simulate_replay, write_replay
from clustersim.workload.load import load_workload
from conftest import Collector

pytestmark = pytest.mark.slurm

ROOT = Path(__file__).resolve().parent.parent
REQUEST_SCENARIOS = {
    **{d.name: (d / "slurm.conf", d / "jobs.csv") for d in sorted((ROOT / "tests/data/slurm_requests").iterdir())},
    "memory": (ROOT / "examples/requests.conf", ROOT / "examples/requests.csv"),
    "job-scripts": (ROOT / "examples/gres.conf", ROOT / "examples/job-scripts"),
}
"""name -> (slurm.conf, workload): one scenario per kind of request (benchmarks/slurm_validation.py records the
same ones for the validation report)."""


@dataclass(frozen=True)
class Scenario:
    """What real Slurm does with a scenario's jobs, as measured."""

    rejected: frozenset[str] = frozenset()
    never: frozenset[str] = frozenset()
    """Jobs that stay pending for ever (PartitionNodeLimit)."""
    whole_nodes: frozenset[str] = frozenset()
    more_cpus: frozenset[str] = frozenset()
    """Jobs DefCpuPerGPU gives more CPUs than the workload's count: the model holds them all and reports that
    count of them (the core checks it), a subset of Slurm's CPU ids."""


SCENARIOS = {
    "memory": Scenario(rejected=frozenset({"5", "7"}), never=frozenset({"6"}), whole_nodes=frozenset({"8"})),
    "default-memory": Scenario(),
    "linear": Scenario(whole_nodes=frozenset({"1", "2", "3", "4", "5"})),
    "array": Scenario(),
    "gpus": Scenario(rejected=frozenset({"5"})),
    "gpus-spread": Scenario(rejected=frozenset({"6"})),
    "gpus-typed": Scenario(rejected=frozenset({"6", "7"})),
    "gpus-memory": Scenario(rejected=frozenset({"4"})),
    "gpus-cpus": Scenario(rejected=frozenset({"5"}), more_cpus=frozenset({"4", "6"})),
    "job-scripts": Scenario(rejected=frozenset({"08-too-much"})),
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


SPEEDUP = 10
SLACK = 1.1 * SPEEDUP
"""How far a start may be from Slurm's: one pass of slurmctld's loop (a wall second, 0.97-1.08 s measured) at the
replay's speed."""
ATTEMPTS = 3
"""Real runs a scenario may take for one of them to agree with the model. Which pass starts a job is a race in
Slurm itself: job 8 of `memory` starts 10.0 s later in about one real run of four, the model's start being the
other runs'; and once in many runs a backfill pass started job 9 of `memory` before slurmctld had heard that job 1
had ended (its limit then kept job 8 far away), 20 s before the model and the other runs. Every run must reject and
leave pending exactly the jobs the model does."""


def first_difference(conf: SlurmConf, scenario: Scenario, real: dict[str, Row], simulated: dict[str, Row]) -> str:
    """The first job whose start, nodes or CPUs differ between a real run and its simulation ('' when none)."""
    if set(real) != set(simulated):
        return f"jobs {sorted(set(real) ^ set(simulated))} ran in only one of them"
    for job_id, ours in simulated.items():
        theirs = real[job_id]
        if abs(theirs.start - ours.start) > SLACK:
            return f"job {job_id} started at {theirs.start:.3f} in Slurm, {ours.start:.3f} here"
        if nodes_of(conf, theirs) != nodes_of(conf, ours):
            return f"job {job_id} ran on other nodes ({theirs.resources} in Slurm, {ours.resources} here)"
        if job_id in scenario.whole_nodes | scenario.more_cpus:
            same = ours.resources.issubset(theirs.resources)
        else:
            same = ours.resources == theirs.resources
        if not same:
            return f"job {job_id} ran on other CPUs ({theirs.resources} in Slurm, {ours.resources} here)"
    return ""


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_sbatch_requests_as_real_slurm_treats_them(slurm_installed: None, tmp_path: Path, name: str) -> None:
    scenario = SCENARIOS[name]
    conf_path, workload = REQUEST_SCENARIOS[name]
    conf = read_slurm_conf(conf_path)
    states = model_states(conf, workload)
    assert {k for k, s in states.items() if s is FinalState.REJECTED} == scenario.rejected
    assert {k for k, s in states.items() if s is None} == scenario.never
    differences = []
    for attempt in range(1, ATTEMPTS + 1):
        run = tmp_path / f"run{attempt}"
        result = replay(list(load_workload(workload).jobs), conf, run / "cluster", speedup=SPEEDUP)
        write_replay(result, run / "real")
        real_rejected = {o.job.id for o in result.outcomes if o.state is FinalState.REJECTED}
        assert (real_rejected, set(result.unfinished)) == (scenario.rejected, scenario.never)
        simulate_replay(run / "real" / "jobs.csv", conf, result.ctld_start, run / "simulated",
                        clock_origin=result.origin)
        difference = first_difference(conf, scenario, read_schedule(run / "real" / "jobs.csv"),
                                      read_schedule(run / "simulated" / "jobs.csv"))
        if not difference:
            return
        differences.append(f"run {attempt}: {difference}")
    pytest.fail("; ".join(differences))


def test_the_scenarios_parse() -> None:
    """Without Slurm: every scenario's files are valid, and each has its expectations here."""
    assert set(SCENARIOS) == set(REQUEST_SCENARIOS)
    for conf, workload in REQUEST_SCENARIOS.values():
        read_slurm_conf(conf)
        assert list(load_workload(workload).jobs)
