"""The sbatch-options CSV workload format: options read as sbatch reads them, errors naming file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from clustersim.errors import InputError
from clustersim.slurm.replay import sbatch_arguments
from clustersim.workload.load import load_workload, workload_format
from clustersim.workload.sbatch import SbatchRequest, parse_sbatch

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_options_become_the_request_partition_limit_and_dependency() -> None:
    options = parse_sbatch("-p q -N 2 --ntasks-per-node 2 -c2 --mem=1G -t 1:30 --dependency=afterok:3")
    assert options.request == SbatchRequest(ntasks=4, cpus_per_task=2, nodes=2, ntasks_per_node=2, mem=1024,
                                           per_node_tasks=True)
    assert options.request.cpus == 8
    assert (options.partition, options.time_limit, options.dependency) == ("q", 90.0, "afterok:3")
    assert options.arguments == ("-p", "q", "-N", "2", "--ntasks-per-node", "2", "-c2", "--mem=1G", "-t", "1:30")


@pytest.mark.parametrize(("text", "request_"), [
    ("", SbatchRequest()),
    ("-N 3", SbatchRequest(ntasks=3, nodes=3, per_node_tasks=True)),  # one task per node, as sbatch counts them
    ("-n 4 --exclusive", SbatchRequest(ntasks=4, exclusive=True)),
    ("--mem-per-cpu=512K", SbatchRequest(mem_per_cpu=1)),  # whole MiB, rounded up
    ("--mem=0", SbatchRequest(mem=0)),  # all of each node's memory
    ("--gres=gpu:a100:2 -N 2", SbatchRequest(ntasks=2, nodes=2, per_node_tasks=True, gres=(("gpu:a100", 2),))),
    ("--gres=gpu:a100:1,gpu:v100:2", SbatchRequest(gres=(("gpu:a100", 1), ("gpu:v100", 2)))),
    ("--gpus-per-node=v100:2", SbatchRequest(gres=(("gpu:v100", 2),))),
    ("--gpus-per-node=1 --gres=bandwidth:10", SbatchRequest(gres=(("bandwidth", 10), ("gpu", 1)))),
    ("--gres=gpu,bw:50", SbatchRequest(gres=(("gpu", 1), ("bw", 50)))),
    ("--gpus=3 -n 2", SbatchRequest(ntasks=2, gpus=3)),  # GPUs per job, spread over the nodes as needed
    ("-G a100:2 -N 2", SbatchRequest(ntasks=2, nodes=2, per_node_tasks=True, gpus=2, gpu_type="a100")),
    ("--gpus-per-task=v100:1 -n 2", SbatchRequest(ntasks=2, gpus_per_task=1, gpu_type="v100")),
    ("--gres=gpu:a100:1,gpu:v100:2 --mem-per-gpu=1G", SbatchRequest(gres=(("gpu:a100", 1), ("gpu:v100", 2)), mem=3072)),
    ("--gpus-per-task=2 -n 3", SbatchRequest(ntasks=3, gpus_per_task=2)),
    ("-N 2-4", SbatchRequest(ntasks=2, nodes=2, max_nodes=4, per_node_tasks=True)),  # a task per node it gets
    ("-N 1-3 -n 5", SbatchRequest(ntasks=5, nodes=1, max_nodes=3)),
    ("-N 2-2", SbatchRequest(ntasks=2, nodes=2, per_node_tasks=True)),
    ("--gres=gpu:2 --cpus-per-gpu=3 -n 4", SbatchRequest(ntasks=4, gres=(("gpu", 2),), cpus_per_gpu=3)),
    ("--gpus-per-task=1 --cpus-per-gpu=2 -n 2", SbatchRequest(ntasks=2, gpus_per_task=1, cpus_per_gpu=2)),
])
def test_requests_as_sbatch_derives_them(text: str, request_: SbatchRequest) -> None:
    assert parse_sbatch(text).request == request_


@pytest.mark.parametrize(("text", "cpus"), [
    ("--gres=gpu:2 --cpus-per-gpu=3 -n 4", 6),  # measured on Slurm 22.05: 2 GPUs x 3 CPUs over 4 tasks
    ("--gres=gpu:1 --cpus-per-gpu=2 -n 4", 4),  # the tasks need more (measured)
    ("--gres=gpu:1 --cpus-per-gpu=3 -N 2", 6),  # 3 on each node (measured)
    ("--gpus=3 --cpus-per-gpu=2 -N 2", 6),  # 4 + 2 (measured)
    ("--gpus-per-task=2 --cpus-per-gpu=1 -n 3", 6),  # CPUs/Task=2 (measured)
    ("--cpus-per-gpu=2 -n 1", 1),  # no GPU: sbatch accepts it, it changes nothing (measured)
])
def test_the_cpus_a_job_asks_with_cpus_per_gpu(text: str, cpus: int) -> None:
    assert parse_sbatch(text).request.cpus == cpus


def test_a_cpus_per_task_of_one_is_noted_for_def_cpu_per_gpu() -> None:
    request = parse_sbatch("-c 1 -n 2").request
    assert request.cpus_per_task_given and request.plain and not parse_sbatch("-n 2").request.cpus_per_task_given


@pytest.mark.parametrize(("text", "message"), [
    ("--qos=high", "'--qos=high' is not an sbatch option the format supports"),
    ("-n", "'-n' needs a value"),
    ("-n 0", "--ntasks=0 is not a positive count"),
    ("-n 2 -n 3", "'-n' is given twice"),
    ("--mem=2X", "--mem=2X is not a size"),
    ("--mem=1G --mem-per-cpu=100", "mutually exclusive"),
    ("-N 3 -n 2", "fewer than --nodes=3"),
    ("-t soon", "'soon' is not a Slurm time"),
    ("-n 1; rm -rf /", "';' in the sbatch options"),
    ("-J 'unclosed", "do not parse"),
    ("--gres=gpu:1 --gpus=1", "--gpus with --gres=gpu is not modelled"),
    ("--gpus=1 --gpus-per-task=1", "--gpus with --gpus-per-task is not modelled"),
    ("--gres=gpu:x:y:2", "is not a GRES list"),
    ("--gres=1gpu", "is not a GRES list"),
    ("--gres=gpu:1,gpu:a100:1", "both with and without a type"),
    ("--gres=gpu:a100:1 --gpus-per-node=1", "--gpus-per-node with --gres=gpu is not modelled"),
    ("--gpus=a-100:1", "is not a GPU count"),
    ("--gres=gpu,mps:50", "gres/mps (a share of a GPU) is not modelled"),
    ("--gres=shard:2", "gres/shard (a share of a GPU) is not modelled"),
    ("--gpus=2 --mem-per-gpu=100", "--mem-per-gpu=100 is modelled with GPUs per node"),
    ("--gres=gpu:1 --mem=1G --mem-per-gpu=100", "mutually exclusive"),
    ("--gpus=two", "is not a GPU count"),
    ("-N 3-2", "the maximum is below the minimum"),
    ("-N 1-x", "--nodes=x is not a positive count"),
    ("--array=3-1", "empty range"),
    ("--array=0-3%0", "not a positive task limit"),
    ("--gres=gpu:1 --cpus-per-gpu=0", "--cpus-per-gpu=0 is not a positive count"),
    ("--gpus=1 --cpus-per-gpu=two", "--cpus-per-gpu=two is not a positive count"),
    ("--gpus=1 --cpus-per-gpu=2 -c 2", "--cpus-per-gpu and --cpus-per-task are mutually exclusive"),
])
def test_bad_options_are_named(text: str, message: str) -> None:
    with pytest.raises(InputError, match="field 'sbatch") as caught:
        parse_sbatch(text, "jobs.csv", 7)
    assert message in str(caught.value) and "jobs.csv, line 7" in str(caught.value)


def test_an_array_row_becomes_one_job_per_task(tmp_path: Path) -> None:
    path = tmp_path / "jobs.csv"
    path.write_text("id,submit,duration,sbatch\n7,5,20,--array=0-6:3%2 -n 2\n", encoding="utf-8")
    jobs = list(load_workload(path).jobs)
    assert [job.id for job in jobs] == ["7_0", "7_3", "7_6"]
    assert all(job.extra["array_job"] == "7" and job.nb_res == 2 and job.submit_time == 5 for job in jobs)
    assert parse_sbatch("--array=1,4-5%3").array == (1, 4, 5) and parse_sbatch("--array=1,4-5%3").throttle == 3


def test_the_example_is_recognised_and_read() -> None:
    path = EXAMPLES / "requests.csv"
    assert workload_format(path) == "sbatch-csv"
    jobs = {job.id: job for job in load_workload(path).jobs}
    assert len(jobs) == 11
    first = jobs["1"]
    assert (first.submit_time, first.nb_res, first.walltime, first.queue) == (0, 4, 120, "q")
    assert first.extra["sbatch"] == "-p q -N 2 --ntasks-per-node=1 --cpus-per-task=2 -t 2"
    assert jobs["11"].extra["dependency"] == "afterok:2" and jobs["11"].queue == ""


def test_slurm_replay_submits_exactly_the_options_written() -> None:
    jobs = {job.id: job for job in load_workload(EXAMPLES / "requests.csv").jobs}
    assert sbatch_arguments(jobs["10"], {}) == ["-p", "q", "--mem-per-cpu=600", "-n", "2", "-t", "1"]
    # The dependency names the workload's job 2: Slurm gets the id it gave that job.
    assert sbatch_arguments(jobs["11"], {"2": 57}) == ["-n", "2", "-t", "1", "--dependency=afterok:57"]


@pytest.mark.parametrize(("content", "where"), [
    ("id,submit,sbatch\n1,0,-n 1\n", "line 1: the header has no column duration"),
    ("id,submit,duration,sbatch\n1,0,10\n", "line 2: 3 fields, expected 4"),
    ("id,submit,duration,sbatch\n1,0,10,-n 1\n1,5,10,-n 1\n", "line 3, field 'id'"),
    ("id,submit,duration,sbatch\n1,soon,10,-n 1\n", "line 2, field 'submit'"),
    ("id,submit,duration,sbatch\n1,0,-5,-n 1\n", "line 2, field 'duration'"),
    ("id,submit,duration,sbatch\n1,0,5,--gres=mps:x:y:1\n", "line 2, field 'sbatch'"),
    ("id,submit,duration,sbatch\n", "no job"),
])
def test_bad_files_name_the_line_and_field(tmp_path: Path, content: str, where: str) -> None:
    path = tmp_path / "jobs.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_workload(path, format="sbatch-csv")
    assert str(caught.value).startswith(str(path)) and where in str(caught.value)
