"""Requests beyond "N CPUs" on hand-computed cases: memory as a consumable resource, node-shaped requests,
--exclusive, select/linear, partition MaxNodes, GPUs and Slurm 22.05's defaults (each checked against real Slurm
in tests/test_slurm_sbatch_replay.py; docs/slurm.md gives the scenarios' results)."""

from __future__ import annotations

import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from clustersim.core.events import FinalState
from clustersim.errors import InputError
from clustersim.policies.registry import create_policy
from clustersim.policies.slurm.backfill import Running, will_run
from clustersim.policies.slurm.conf import parse_slurm_conf, platform_from_conf
from clustersim.policies.slurm.select import Consumables, Shape, ShapedRequest
from clustersim.runner import simulate
from clustersim.workload.job import Job
from clustersim.workload.profiles import Delay
from clustersim.workload.sbatch import parse_sbatch
from clustersim.workload.stream import Workload
from conftest import Collector
from test_slurm_policy import run, starts

MEMORY = ("SelectTypeParameters=CR_CPU_Memory\nDefMemPerCPU=100\nNodeName=n[1-2] CPUs=4 RealMemory=1000\n"
          "PartitionName=p Nodes=n[1-2] Default=YES MaxNodes=1\nPartitionName=q Nodes=n[1-2]\n")


def sbatch(job_id: int, submit: float, runtime: float, options: str) -> Job:
    """A job of the sbatch-options format, as its reader makes it."""
    parsed = parse_sbatch(options)
    return Job(str(job_id), submit, parsed.request.cpus, Delay(runtime), walltime=parsed.time_limit,
               queue=parsed.partition, extra={"sbatch": options})


def units(result: object, job_id: str) -> str:
    return str(result.outcomes[job_id].resources)  # type: ignore[attr-defined]


def test_a_job_waits_for_memory_while_cpus_are_idle() -> None:
    jobs = [sbatch(1, 0, 50, "-p q --mem=700 -t 1"), sbatch(2, 0, 50, "-p q --mem=700 -t 1"),
            sbatch(3, 1, 10, "-p q --mem=400 -t 1")]
    result = run(MEMORY, jobs)
    # 1 on n1, 2 on n2 (n1 keeps 300 MiB): 3 waits with 6 idle CPUs until 1 ends.
    assert starts(result) == {"1": 0, "2": 0, "3": 50}
    assert units(result, "1") == "0" and units(result, "2") == "4"


def test_mem_per_cpu_spreads_tasks_and_def_mem_per_cpu_fills_the_rest() -> None:
    jobs = [sbatch(1, 0, 50, "-p q --mem-per-cpu=600 -n 2 -t 1"), sbatch(2, 0, 50, "-p q -n 4 -t 1"),
            sbatch(3, 0, 50, "-p q -n 1 -t 1")]
    result = run(MEMORY, jobs)
    # 1: 600 MiB per task, one task per node. 2: 4 x 100 MiB on n1 would leave it 0 MiB: 3 CPUs on n1 are
    # left with 400 MiB, so 2 takes n1's 3 CPUs and one of n2's. 3 (100 MiB) still fits n2 (300 MiB left).
    assert units(result, "1") == "0 4"
    assert units(result, "2") == "1-3 5"
    assert starts(result) == {"1": 0, "2": 0, "3": 0}


def test_more_memory_than_any_node_or_more_nodes_than_max_nodes_is_rejected() -> None:
    jobs = [sbatch(1, 0, 10, "--mem=2000 -t 1"), sbatch(2, 0, 10, "-n 5 -t 1"),
            sbatch(3, 0, 10, "--mem-per-cpu=600 -n 2 -t 1"), sbatch(4, 0, 10, "-p q -n 5 -t 1")]
    result = run(MEMORY, jobs)
    # 2 and 3 need two nodes where MaxNodes is 1; in q (no MaxNodes) 5 CPUs span the two nodes.
    assert {k: o.state for k, o in result.outcomes.items()} == {
        "1": FinalState.REJECTED, "2": FinalState.REJECTED, "3": FinalState.REJECTED,
        "4": FinalState.COMPLETED_SUCCESSFULLY}


def test_an_explicit_node_count_above_max_nodes_waits_forever() -> None:
    result = run(MEMORY, [sbatch(1, 0, 10, "-N 2 -t 1"), sbatch(2, 5, 10, "-N 2 -p q -t 1")])
    assert "1" not in result.outcomes  # pending with reason PartitionNodeLimit, as Slurm keeps it
    assert starts(result) == {"2": 5}


def test_node_shaped_requests() -> None:
    jobs = [sbatch(1, 0, 50, "-p q -N 2 --ntasks-per-node=1 --cpus-per-task=2 -t 1"),
            sbatch(2, 1, 50, "-p q -N 2 -n 3 -t 1"), sbatch(3, 2, 10, "-p q --exclusive -t 1")]
    result = run(MEMORY, jobs)
    assert units(result, "1") == "0-1 4-5"  # two CPUs on each node
    assert units(result, "2") == "2-3 6"  # the first node keeps one task for the second
    # An idle node once 2 ends at 51; the pass at 50 (1's end) makes the next one wait batch_sched_delay.
    assert starts(result)["3"] == 53


def test_select_linear_gives_whole_nodes() -> None:
    conf = "SelectType=select/linear\nNodeName=n[1-3] CPUs=2\nPartitionName=p Nodes=n[1-3] Default=YES\n"
    jobs = [sbatch(1, 0, 30, "-n 1 -t 1"), sbatch(2, 0, 30, "-n 3 -t 1"), sbatch(3, 1, 20, "-n 1 -t 1")]
    result = run(conf, jobs)
    assert starts(result) == {"1": 0, "2": 0, "3": 30}
    assert units(result, "2") == "2-4"  # the CPUs it asked, on n2 and n3 (it holds all four)


def test_slurm_22_05_allocates_whole_nodes_when_the_conf_names_no_select_type() -> None:
    conf = parse_slurm_conf("NodeName=n[1-2] CPUs=2\nPartitionName=p Nodes=n[1-2] Default=YES\n")
    collector = Collector()
    jobs = [sbatch(1, 0, 30, "-n 1 -t 1"), sbatch(2, 0, 30, "-n 1 -t 1"), sbatch(3, 0, 30, "-n 1 -t 1")]
    simulate(platform_from_conf(conf), Workload.from_jobs(jobs), create_policy("slurm", conf=conf),
             extra_sinks=[collector])
    assert {k: o.start for k, o in collector.outcomes.items()} == {"1": 0, "2": 0, "3": 30}  # one job per node


def test_cons_tres_consumes_memory_when_the_conf_names_no_parameters() -> None:
    # Slurm 22.05 behaves as with CR_Core_Memory: without DefMemPerCPU a job takes all of its node's memory.
    conf = "SelectType=select/cons_tres\nNodeName=n[1-2] CPUs=2\nPartitionName=p Nodes=n[1-2] Default=YES\n"
    parsed = parse_slurm_conf(conf)
    collector = Collector()
    jobs = [sbatch(1, 0, 30, "-n 1 -t 1"), sbatch(2, 0, 30, "-n 1 -t 1"), sbatch(3, 0, 30, "-n 1 -t 1")]
    simulate(platform_from_conf(parsed), Workload.from_jobs(jobs), create_policy("slurm", conf=parsed),
             extra_sinks=[collector])
    assert {k: str(o.resources) for k, o in collector.outcomes.items()} == {"1": "0", "2": "2", "3": "0"}


def test_select_linear_with_cpu_parameters_is_refused_as_slurmd_refuses_it() -> None:
    conf = parse_slurm_conf("SelectType=select/linear\nSelectTypeParameters=CR_Core_Memory\nNodeName=n1 CPUs=2\n")
    with pytest.raises(InputError, match="slurmd refuses it"):
        simulate(platform_from_conf(conf), Workload.from_jobs([sbatch(1, 0, 5, "-t 1")]),
                 create_policy("slurm", conf=conf))


def test_will_run_waits_for_the_memory_of_running_jobs() -> None:
    request = ShapedRequest(Shape(1, mem_per_node=600), (4,), (1000,))
    running = [Running("a", 100.0, {0: 1}, 1, 60.0, {0: 500}), Running("b", 200.0, {0: 1}, 1, 60.0, {0: 300})]
    # 200 MiB free now, 700 once a ends: the job can start at 100 on its CPU.
    assert will_run(1, 1, [2], running, 0.0, request=request, other=Consumables([200])) == (100.0, {0: 1})
    assert will_run(1, 1, [2], running, 0.0, request=request, other=Consumables([900])) == (0.0, {0: 1})


GPUS = "NodeName=n[1-2] CPUs=4 Gres=gpu:2\nPartitionName=p Nodes=n[1-2] Default=YES\n"


def test_gpus_are_consumed_per_node_and_a_one_task_gpu_job_takes_the_last_cpu() -> None:
    jobs = [sbatch(1, 0, 30, "--gpus=1 -n 1 -t 1"), sbatch(2, 4, 30, "--gres=gpu:2 -n 2 -t 1"),
            sbatch(3, 8, 20, "--gpus-per-node=1 -N 2 -t 1"), sbatch(4, 13, 10, "--gres=gpu:3 -n 1 -t 1")]
    result = run(GPUS, jobs)
    assert units(result, "1") == "3"  # n1's last CPU, as real Slurm picks it
    assert units(result, "2") == "4-5"  # n2: n1 has one GPU left
    assert starts(result)["3"] == 34  # a GPU on each node once 2 ends (at 34)
    assert units(result, "3") == "0 4"
    assert result.outcomes["4"].state is FinalState.REJECTED  # more GPUs than any node has


def test_an_array_runs_at_most_its_throttle_and_a_dependency_waits_for_every_task() -> None:
    conf = "NodeName=n[1-2] CPUs=2\nPartitionName=p Nodes=n[1-2] Default=YES\n"
    tasks = [Job(f"1_{t}", 0, 1, Delay(20), walltime=60, extra={"sbatch": "--array=0-4%2 -t 1", "array_job": "1"})
             for t in range(5)]
    jobs = [*tasks, sbatch(2, 1, 15, "-n 1 -t 1"), sbatch(3, 2, 10, "-n 2 -t 1")]
    jobs[-1].extra = {"sbatch": "-n 2 -t 1", "dependency": "afterok:1"}
    result = run(conf, jobs)
    # Two tasks at a time although CPUs are idle (job 2 takes a third one at the pass 3 s after the first);
    # the passes serving job ends come batch_sched_delay (3 s) after the pass before them.
    assert starts(result) == {"1_0": 0, "1_1": 0, "2": 3, "1_2": 21, "1_3": 21, "1_4": 41, "3": 63}


def test_a_plain_shaped_request_plans_as_the_cpu_path_does() -> None:
    """The shaped will-run test removes the same batches of running jobs as the CPU one (random cases)."""
    rng = random.Random(7)
    for _ in range(300):
        sizes = tuple(rng.randint(1, 4) for _ in range(rng.randint(1, 5)))
        free = [rng.randint(0, size) for size in sizes]
        running = []
        for k in range(rng.randint(0, 6)):
            node = rng.randrange(len(sizes))
            running.append(Running(str(k), float(rng.randint(1, 400)), {node: 1}, 1 << node))
        running.sort(key=lambda job: job.end)
        cpus = rng.randint(1, sum(sizes))
        nodes = (1 << len(sizes)) - 1
        request = ShapedRequest(Shape(cpus), sizes, None)
        plain = will_run(cpus, nodes, free, running, 0.0)
        shaped = will_run(cpus, nodes, free, running, 0.0, request=request, other=Consumables())
        assert plain == shaped


GRES = ("SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\nGresTypes=gpu,bw\n"
        "NodeName=n[1-4] CPUs=4 Gres=gpu:2,bw:100\nPartitionName=p Nodes=n[1-4] Default=YES\n")


@pytest.mark.parametrize(("options", "expected"), [
    # CPU ids (4 per node: n1 0-3, n2 4-7, ...) that real Slurm 22.05 gave each job, submitted in turn to this
    # cluster (runs of docs/slurm.md, "GRES": one group per line, the jobs all running at once).
    (["--gpus=3 -N 2"], ["0 4"]),  # GPUs per job: 2 on n1, 1 on n2
    (["--gpus=5 -n 4"], ["0-1 4 8"]),  # nodes until 5 GPUs; tasks dealt in turn
    (["--gpus=5 -n 3"], ["0 4 8"]),
    (["--gpus=2 -n 4"], ["0-3"]),  # one node has the CPUs and the GPUs: the best fit
    (["--gpus=2 -N 2"], ["0 4"]),
    (["--gpus=1 -n 1", "--gpus=4 -n 2"], ["3", "4 8"]),
    (["--gpus=1 -n 1", "--gpus=3 -n 3"], ["3", "4-5 8"]),  # n1 (one GPU left) weighs more: n2 and n3
    (["--gpus=1 -n 1", "--gpus=1 -n 1", "--gpus=3 -n 2"], ["3", "2", "4 8"]),
    (["--gpus-per-task=1 -n 3"], ["2-3 6"]),  # the highest CPUs of the tasks a node's GPUs allow
    (["--gpus-per-task=2 -n 2"], ["3 7"]),
    (["--gpus-per-task=1 -n 5"], ["2-3 6-7 10"]),
    (["--gpus=1 -n 1", "--gpus-per-task=1 -n 3"], ["3", "6-7 10"]),
    (["-N 1-3 -n 2"], ["0 4"]),  # no more nodes than tasks
    (["-N 2-4 -n 8"], ["0-2 4-6 8 12"]),  # all 4 nodes; 8 tasks dealt 3, 3, 1, 1
    (["-N 1-2 -n 6"], ["0-5"]),  # 4 on n1, 2 on n2
    (["--exclusive -N 2", "-N 2-4"], ["0 4", "8 12"]),  # as many nodes as are free, 2 at least
    (["--gres=bw:60 -n 1", "--gres=bw:60 -n 1"], ["3", "7"]),  # a count per node: n1 has 40 left
    (["--gres=gpu:1,bw:50 -n 1"] * 3, ["3", "2", "7"]),
    (["--gres=bw:30 -N 2"], ["0 4"]),
    (["--gres=bw:100 -n 1", "-n 4 --gres=bw:10"], ["3", "4-7"]),
    (["--gres=bw:10 -n 2"], ["0-1"]),
])
def test_gres_and_node_ranges_as_real_slurm_allocates_them(options: list[str], expected: list[str]) -> None:
    jobs = [sbatch(i + 1, 1.5 * i, 100, f"{text} -t 5") for i, text in enumerate(options)]
    result = run(GRES, jobs)
    assert [units(result, str(i + 1)) for i in range(len(jobs))] == expected


def test_a_node_range_without_tasks_takes_every_free_node_up_to_its_maximum() -> None:
    """`-N 2-3` alone: one task on each of 3 nodes (real Slurm: NumNodes=3 NumCPUs=3); the job reports the 2
    CPUs its minimum asks for (the core's count) while it holds 3 nodes."""
    jobs = [sbatch(1, 0, 100, "-N 2-3 -t 5"), sbatch(2, 2, 100, "--exclusive -N 2 -t 5")]
    result = run(GRES, jobs)
    assert units(result, "1") == "4 8"  # n1 (CPU 0, not reported), n2, n3
    assert starts(result)["2"] == 100  # only n4 is idle until job 1 ends


@pytest.mark.parametrize("options", ["--gpus=4 -n 1", "--gres=bw:150 -n 1", "--gres=gpux:1 -n 1", "-N 5-6"])
def test_gres_no_node_has_is_rejected_at_submission(options: str) -> None:
    result = run(GRES, [sbatch(1, 0, 10, f"{options} -t 1")])
    assert result.outcomes["1"].state is FinalState.REJECTED


def test_gres_types_must_declare_the_nodes_gres() -> None:
    with pytest.raises(InputError, match="Gres= names bw not in GresTypes=gpu"):
        parse_slurm_conf("GresTypes=gpu\nNodeName=n1 CPUs=4 Gres=gpu:1,bw:10\n")


TYPED = ("GresTypes=gpu\nNodeName=n1 CPUs=4 Gres=gpu:a100:2\nNodeName=n2 CPUs=4 Gres=gpu:v100:2\n"
         "NodeName=n3 CPUs=4 Gres=gpu:a100:1,gpu:v100:1\nPartitionName=p Nodes=n[1-3] Default=YES\n")


def test_typed_gpus_are_told_apart_and_an_untyped_request_takes_the_first_type() -> None:
    """The scenario gpus-typed (tests/data/slurm_requests), worked out by hand; real Slurm 22.05 ran the same."""
    jobs = [sbatch(1, 0, 50, "--gres=gpu:v100:2 -n 1 -t 1"), sbatch(2, 2, 30, "--gpus=a100:2 -n 1 -t 5"),
            sbatch(3, 4, 20, "--gres=gpu:1 -n 1 -t 1"), sbatch(4, 6, 10, "--gres=gpu:a100:1 -n 1 -t 1"),
            sbatch(5, 8, 10, "--gpus-per-node=v100:1 -n 1 -t 1"), sbatch(6, 9, 10, "--gres=gpu:k80:1 -n 1 -t 1"),
            sbatch(7, 10, 10, "--gres=gpu:a100:3 -n 1 -t 1"), sbatch(8, 12, 10, "--gpus=v100:3 -n 2 -t 1")]
    result = run(TYPED, jobs)
    got = {key: (outcome.start, str(outcome.resources)) for key, outcome in result.outcomes.items()
           if outcome.state is not FinalState.REJECTED}
    # (passes 3 s apart: 2 and 3 start at the pass after their submission.) 1: only n2 has v100s (its last CPU,
    # 7); 2: only n1 has two a100s; 3 (any GPU): n3, the only node with one free, where it takes the a100 (the
    # first type), so 4 (an a100) waits for 3 to end (at 26) although n3's v100 is free; 5 (a v100) may not
    # start on n3 before 4, reserved there, so both start at 26; 8: three v100s over two nodes, n2's two and
    # n3's one, once 1 is done (at 50). Types not told apart, 4 would start at 6 on n3.
    assert got == {"1": (0, "7"), "2": (3, "3"), "3": (6, "11"), "4": (26, "11"), "5": (26, "10"), "8": (50, "4 8")}
    assert {key for key, outcome in result.outcomes.items() if outcome.state is FinalState.REJECTED} == {"6", "7"}


def test_memory_per_gpu_is_held_on_each_node_for_its_gpus() -> None:
    """The scenario gpus-memory, worked out by hand; real Slurm 22.05 ran the same."""
    conf = ("SelectTypeParameters=CR_CPU_Memory\nGresTypes=gpu\nNodeName=n[1-2] CPUs=4 RealMemory=1000 Gres=gpu:2\n"
            "PartitionName=p Nodes=n[1-2] Default=YES\n")
    jobs = [sbatch(1, 0, 30, "--gres=gpu:1 --mem-per-gpu=600 -n 1 -t 1"),
            sbatch(2, 2, 30, "--gres=gpu:1 --mem-per-gpu=300 -n 1 -t 1"),
            sbatch(3, 4, 30, "--gres=gpu:1 --mem-per-gpu=800 -n 1 -t 1"),
            sbatch(4, 6, 10, "--gres=gpu:2 --mem-per-gpu=600 -n 1 -t 1"),
            sbatch(5, 8, 10, "--gres=gpu:1 --mem-per-gpu=300 -n 1 -t 1")]
    result = run(conf, jobs)
    # 1 holds 600 MiB of n1, 2 the 300 of n1's 400 left (with its second GPU), 3 800 MiB of n2; 4 would hold
    # 1200 MiB of a 1000-MiB node: rejected. 5 finds a GPU on n2 but 200 MiB: it waits for 1's end (30), on n1.
    assert {key: (o.start, str(o.resources)) for key, o in result.outcomes.items()
            if o.state is not FinalState.REJECTED} == {"1": (0, "3"), "2": (3, "2"), "3": (6, "7"), "5": (30, "3")}
    assert result.outcomes["4"].state is FinalState.REJECTED


def test_a_node_gives_a_gres_with_types_or_without() -> None:
    conf = parse_slurm_conf("NodeName=n1 CPUs=4 Gres=gpu:a100:2,gpu:v100:1,bw:10\n")
    assert conf.nodes[0].gres == (("gpu", 3), ("bw", 10))
    assert conf.nodes[0].gres_types == (("gpu:a100", 2), ("gpu:v100", 1))
    with pytest.raises(InputError, match="gives gpu both with and without a type"):
        parse_slurm_conf("NodeName=n1 CPUs=4 Gres=gpu:1,gpu:a100:1\n")


@settings(max_examples=300, deadline=None)
@given(
    nodes=st.lists(st.tuples(st.integers(1, 4), st.integers(0, 4), st.integers(0, 3), st.integers(0, 100)),
                   min_size=1, max_size=5),
    options=st.sampled_from(["--gpus=3 -n 2", "--gpus=2 -N 2", "--gpus=5 -n 4", "--gpus-per-task=1 -n 3",
                             "-N 2-4 -n 6", "-N 1-3", "-N 2-3 -n 3", "--gres=bw:30 -n 2", "--gres=gpu:1,bw:20 -N 2",
                             "--gpus=2 -N 1-3 -n 3", "-n 5", "-N 2 -n 3 --exclusive", "--gpus=3 --cpus-per-gpu=2 -n 2",
                             "--gres=gpu:1 --cpus-per-gpu=2 -N 2", "--gpus-per-task=1 --cpus-per-gpu=2 -n 2",
                             "--gpus=4 --cpus-per-gpu=1 -n 3"]),
)
@example(nodes=[(1, 1, 1, 0)] * 3, options="--gpus=2 -N 1-3 -n 3")  # three tasks need three nodes, two GPUs: no fit
def test_a_gres_or_node_range_allocation_fits_what_is_free(
        nodes: list[tuple[int, int, int, int]], options: str) -> None:
    """Whatever the free CPUs and GRES: the CPUs and GRES a job gets are free, it gets its tasks on a number of
    nodes within its range, every node of a `--gpus` job holds one GPU at least, and each node has at least
    `--cpus-per-gpu` CPUs of the job for each GPU it holds."""
    sizes = tuple(size for size, _, _, _ in nodes)
    free = [min(cpus, size) for size, cpus, _, _ in nodes]
    other = Consumables(None, {"gpu": [gpus for _, _, gpus, _ in nodes], "bw": [bw for _, _, _, bw in nodes]})
    request = parse_sbatch(options).request
    shape = Shape(request.ntasks, request.cpus_per_task, request.nodes, request.ntasks_per_node, request.exclusive,
                  max_nodes=request.max_nodes, per_node_tasks=request.per_node_tasks, gres=request.gres,
                  gpus=request.gpus, gpus_per_task=request.gpus_per_task, cpus_per_gpu=request.cpus_per_gpu)
    allocation = ShapedRequest(shape, sizes, None).select((1 << len(nodes)) - 1, free, other)
    if allocation is None:
        return
    assert all(0 < cpus <= free[node] for node, cpus in allocation.items())
    low = request.nodes or 1
    assert low <= len(allocation) <= (request.max_nodes or request.nodes or len(nodes))
    if not request.exclusive:
        total = sum(allocation.values())
        assert total == request.cpus if not (request.per_node_tasks or request.cpus_per_gpu) else total >= request.cpus
    _, held = ShapedRequest(shape, sizes, None).holds(allocation, other)
    for name, counts in held.items():
        assert all(0 < count <= other.gres[name][node] for node, count in counts.items()), name
        if name == "gpu":  # each node's CPUs serve its GPUs
            assert all(count * request.cpus_per_gpu <= allocation[node] for node, count in counts.items())
    if request.gpus:
        assert sum(held["gpu"].values()) == request.gpus and set(held["gpu"]) == set(allocation)


CPUS_PER_GPU = ("SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU_Memory\nDefMemPerCPU=100\n"
                "DefCpuPerGPU=1\nGresTypes=gpu\nNodeName=n[1-2] CPUs=8 RealMemory=4000 Gres=gpu:4\n"
                "PartitionName=p Nodes=n[1-2] Default=YES DefCpuPerGPU=3 DefMemPerGPU=1500\n"
                "PartitionName=q Nodes=n[1-2]\n")


def test_cpus_per_gpu_and_the_partition_defaults_per_gpu() -> None:
    """Worked out by hand (the scenario gpus-cpus runs the same requests on real Slurm 22.05)."""
    jobs = [sbatch(1, 0, 30, "-p q --gres=gpu:2 --cpus-per-gpu=3 -n 4 -t 1"),
            sbatch(2, 2, 40, "-p q --gpus=3 --cpus-per-gpu=2 -n 1 -t 1"),
            sbatch(3, 4, 20, "-p p --gres=gpu:1 -n 1 -t 1"),
            sbatch(4, 5, 20, "-p p --gres=gpu:1 -c 2 -n 1 -t 1"),
            sbatch(5, 6, 20, "-p p --gres=gpu:1 -c 3 -n 1 -t 1"),
            sbatch(6, 7, 20, "-p q --gres=gpu:4 --cpus-per-gpu=3 -n 1 -t 1")]
    result = run(CPUS_PER_GPU, jobs)
    # 1: 4 tasks but 2 GPUs x 3 CPUs: 6 CPUs of n1, the lowest (its tasks per node are not known).
    # 2: n1's 2 free CPUs serve one GPU, n2's 8 serve 4: n2 alone, 3 GPUs x 2 CPUs, the highest (one task).
    # 3: p's DefCpuPerGPU=3 (it wins over the global 1): no node has 3 CPUs free until 1 ends (30); it holds
    #    n1's 5-7 and 1500 MiB (p's DefMemPerGPU, over DefMemPerCPU) and shows the 1 CPU it asked.
    # 4: -c 2 leaves DefCpuPerGPU alone: 2 CPUs, the highest left on n1 (3-4), 1500 MiB.
    # 5: n1 still has 3 CPUs and 2 GPUs free but 1000 MiB: it waits for 2's end (43), on n2 (13-15).
    # 6: 4 GPUs x 3 CPUs > 8 CPUs: rejected at submission.
    assert {key: (o.start, str(o.resources)) for key, o in result.outcomes.items()
            if o.state is not FinalState.REJECTED} == {"1": (0, "0-5"), "2": (3, "10-15"), "3": (30, "5"),
                                                        "4": (30, "3-4"), "5": (43, "13-15")}
    assert result.outcomes["6"].state is FinalState.REJECTED


@pytest.mark.parametrize(("options", "cpus", "gpus"), [
    ("--gpus=3 --cpus-per-gpu=2 -N 2", {0: 4, 1: 2}, {0: 2, 1: 1}),  # measured on Slurm 22.05
    ("--gpus=5 --cpus-per-gpu=1 -n 2", {0: 4, 1: 1}, {0: 4, 1: 1}),  # measured without -n
    ("--gpus=5 --cpus-per-gpu=3 -n 2", None, None),  # 8 CPUs serve 2 GPUs a node: measured, rejected
    ("--gpus-per-task=2 --cpus-per-gpu=1 -n 3", {0: 4, 1: 2}, {0: 4, 1: 2}),  # CPUs/Task=2: measured
    ("--gres=gpu:1 --cpus-per-gpu=3 -N 2", {0: 3, 1: 3}, {0: 1, 1: 1}),  # measured
    ("--gres=gpu:1 --cpus-per-gpu=2 -n 4", {0: 4}, {0: 1}),  # the tasks need more: measured
])
def test_cpus_per_gpu_on_idle_nodes(options: str, cpus: dict[int, int] | None, gpus: dict[int, int] | None) -> None:
    """Each node gets the CPUs of its tasks, and at least `--cpus-per-gpu` for each GPU it holds."""
    request = parse_sbatch(options).request
    shape = Shape(request.ntasks, request.cpus_per_task, request.nodes, per_node_tasks=request.per_node_tasks,
                  gres=request.gres, gpus=request.gpus, gpus_per_task=request.gpus_per_task,
                  cpus_per_gpu=request.cpus_per_gpu)
    shaped = ShapedRequest(shape, (8, 8), None)
    other = Consumables(None, {"gpu": [4, 4]})
    allocation = shaped.select(0b11, [8, 8], other)
    assert allocation == cpus
    if allocation is not None:
        assert shaped.holds(allocation, other)[1]["gpu"] == gpus
        assert sum(allocation.values()) == request.cpus or request.per_node_tasks


def test_the_per_gpu_defaults_are_read_per_partition() -> None:
    conf = parse_slurm_conf(CPUS_PER_GPU)
    assert [(p.def_cpu_per_gpu, p.def_mem_per_gpu) for p in conf.partitions] == [(3, 1500), (1, None)]
    with pytest.raises(InputError, match=r"line 2, field 'DefMemPerGPU'.*'DefMemPerGPU=lots' is not a positive"):
        parse_slurm_conf("NodeName=n1 CPUs=4\nPartitionName=p Nodes=n1 DefMemPerGPU=lots\n")
    with pytest.raises(InputError, match=r"field 'DefCpuPerGPU'.*'DefCpuPerGPU=0' is not a positive"):
        parse_slurm_conf("DefCpuPerGPU=0\nNodeName=n1 CPUs=4\n")


@pytest.mark.parametrize(("options", "cpus"), [
    ("-p q --gres=gpu:1 --cpus-per-gpu=3 -t 1", "0-2"),  # no task count: the lowest CPUs (measured)
    ("-p q --gres=gpu:1 --cpus-per-gpu=3 -n 1 -t 1", "5-7"),  # one task known: the highest (measured)
    ("-p p --gres=gpu:2 -n 1 -t 1", "2"),  # p's DefCpuPerGPU=3: holds 6, the highest (2-7, measured); shows 1
    ("-p q --gpus-per-task=1 --cpus-per-gpu=2 -n 2 -t 1", "4-7"),  # 4 tasks' cores offered (measured)
])
def test_the_cpu_ids_of_a_gpu_job_on_an_idle_node(options: str, cpus: str) -> None:
    result = run(CPUS_PER_GPU, [sbatch(1, 0, 10, options)])
    assert units(result, "1") == cpus
