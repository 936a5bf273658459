"""Job-script traces: a directory of sbatch scripts read into the same jobs as the sbatch-options CSV, and the
options `slurm-replay` submits for them (exactly the scripts' own, names and output paths left out)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clustersim.errors import InputError
from clustersim.slurm.replay import sbatch_arguments
from clustersim.workload.job import Job
from clustersim.workload.job_scripts import read_job_scripts
from clustersim.workload.load import load_workload, workload_format
from clustersim.workload.sbatch import read_sbatch_csv

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def script(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def fields(job: Job) -> tuple[object, ...]:
    return job.id, job.submit_time, job.nb_res, job.profile, job.walltime, job.queue, job.extra


def test_scripts_make_the_jobs_the_same_options_in_a_csv_make(tmp_path: Path) -> None:
    script(tmp_path, "a.sbatch", "#!/bin/bash\n#SBATCH -N 2 --ntasks-per-node=2   # two per node\n"
           "#SBATCH --time=1:00 -J solver -o out-%j.txt\n# clustersim: submit=5 runtime=40 id=1\nsrun ./a\n"
           "#SBATCH -p never  (after the first command: not an option)\n")
    script(tmp_path, "b.sh", "#!/bin/sh\n# clustersim: runtime=30 submit=7.5\n#SBATCH --array=0-2%2\n"
           "#SBATCH --dependency=afterok:1 --gres=gpu:1\nexit 0\n")
    script(tmp_path, "notes.txt", "not a script")
    (tmp_path / "jobs.csv").write_text("id,submit,duration,sbatch\n1,5,40,-N 2 --ntasks-per-node=2 --time=1:00\n"
                                       "b,7.5,30,--array=0-2%2 --dependency=afterok:1 --gres=gpu:1\n", encoding="utf-8")
    from_scripts = list(read_job_scripts(tmp_path).jobs)
    from_csv = list(read_sbatch_csv(tmp_path / "jobs.csv").jobs)
    assert [fields(job) for job in from_scripts] == [fields(job) for job in from_csv]
    assert [job.id for job in from_scripts] == ["1", "b_0", "b_1", "b_2"]
    assert (from_scripts[0].nb_res, from_scripts[0].walltime, from_scripts[0].submit_time) == (4, 60.0, 5.0)
    # slurm-replay submits exactly the script's options (its own -J, -o, -e replace the left-out ones).
    assert sbatch_arguments(from_scripts[0], {}) == ["-N", "2", "--ntasks-per-node=2", "--time=1:00"]
    assert sbatch_arguments(from_scripts[1], {"1": 42}) == ["--array=0-2%2", "--gres=gpu:1",
                                                                "--dependency=afterok:42"]


def test_a_script_carries_cpus_per_gpu_and_slurm_replay_submits_it(tmp_path: Path) -> None:
    path = script(tmp_path, "train.sbatch", "#!/bin/bash\n#SBATCH --gres=gpu:2\n#SBATCH --cpus-per-gpu=3 -n 4\n"
                  "# clustersim: submit=0 runtime=60\n")
    (job,) = load_workload(path).jobs
    assert job.nb_res == 6  # 2 GPUs x 3 CPUs (measured on Slurm 22.05: 6 CPUs for the 4 tasks)
    assert sbatch_arguments(job, {}) == ["--gres=gpu:2", "--cpus-per-gpu=3", "-n", "4"]


def test_a_directory_or_one_script_is_recognised(tmp_path: Path) -> None:
    path = script(tmp_path, "job", "#!/bin/bash\n#SBATCH -n 2\n# clustersim: submit=0 runtime=10\n")
    assert workload_format(tmp_path) == "job-scripts" and workload_format(path) == "job-scripts"
    assert [job.id for job in load_workload(path).jobs] == ["job"]
    examples = list(load_workload(EXAMPLES / "job-scripts").jobs)
    assert len(examples) == 9 and examples[0].id == "01-train"


@pytest.mark.parametrize(("text", "where", "message"), [
    ("#!/bin/sh\n#SBATCH -n 2\n", None, "no '# clustersim: submit=SECONDS runtime=SECONDS' line"),
    ("#SBATCH -n 2\n# clustersim: submit=1\n", 2, "gives no runtime"),
    ("# clustersim: submit=1 runtime=5 at=3\n", 1, "'at=3' is not one of submit=SECONDS"),
    ("# clustersim: submit=soon runtime=5\n", 1, "'soon' is not a number of seconds"),
    ("# clustersim: submit=1 runtime=5\n# clustersim: submit=2 runtime=5\n", 2, "a second '# clustersim:' line"),
    ("#!/bin/sh\n#SBATCH -n 2\n#SBATCH --qos=high\n# clustersim: submit=0 runtime=5\n", 3,
     "'--qos=high' is not an sbatch option the format supports"),
    ("#!/bin/sh\n#SBATCH -n 'two\n# clustersim: submit=0 runtime=5\n", 2, "do not parse"),
    ("#!/bin/sh\n#SBATCH -N 3\n#SBATCH -n 2\n# clustersim: submit=0 runtime=5\n", 2, "fewer than --nodes=3"),
    ("#!/bin/sh\n#SBATCH --gpus=1 -c 2\n#SBATCH --cpus-per-gpu=2\n# clustersim: submit=0 runtime=5\n", 2,
     "--cpus-per-gpu and --cpus-per-task are mutually exclusive"),
])
def test_bad_scripts_name_the_file_and_line(tmp_path: Path, text: str, where: int | None, message: str) -> None:
    path = script(tmp_path, "job.sbatch", text)
    with pytest.raises(InputError) as caught:
        read_job_scripts(tmp_path)
    assert caught.value.source == str(path) and caught.value.line == where
    assert message in str(caught.value)


def test_two_scripts_of_one_id_and_an_empty_directory_are_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"no job script \(\*\.sh, \*\.sbatch, \*\.slurm\)"):
        read_job_scripts(tmp_path)
    script(tmp_path, "a.sh", "# clustersim: submit=0 runtime=5 id=x\n")
    script(tmp_path, "b.sh", "# clustersim: submit=0 runtime=5 id=x\n")
    with pytest.raises(InputError, match=r"job id 'x' is also .*a\.sh's"):
        read_job_scripts(tmp_path)
