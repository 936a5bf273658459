"""Reading Slurm's job records, the replay's jobs.csv round trip, and the comparison of two schedules."""

from __future__ import annotations

from pathlib import Path

import pytest

from clustersim.cli import main
from clustersim.core.events import FinalState
from clustersim.core.outcome import JobOutcome
from clustersim.intervals import IntervalSet
from clustersim.records.jobs_csv import JobsCsvWriter
from clustersim.slurm.compare import deviation, read_schedule, report
from clustersim.slurm.replay import parse_scontrol, workload_from_replay
from clustersim.workload.job import Job
from clustersim.workload.profiles import Delay

SCONTROL = (
    "JobId=12 JobName=7 UserId=root(0) JobState=COMPLETED Reason=None Partition=main "
    "SubmitTime=2026-11-21T16:30:28 EligibleTime=2026-11-21T16:30:29 StartTime=2026-11-21T16:30:30 "
    "EndTime=2026-11-21T16:31:32 NodeList=n[1-2] NumCPUs=6   Nodes=n1 CPU_IDs=1-3 Mem=0 GRES= "
    "Nodes=n2 CPU_IDs=0,2-3 Mem=0 GRES= MinCPUsNode=1\n"
    "JobId=13 JobName=8 JobState=PENDING Partition=main SubmitTime=2026-11-21T16:30:28 "
    "EligibleTime=2026-11-21T16:30:28 StartTime=Unknown EndTime=Unknown NodeList=(null)\n"
)


def test_scontrol_records_give_times_and_cpu_ids_per_node() -> None:
    done, pending = parse_scontrol(SCONTROL)
    assert (done.job_id, done.name, done.state, done.partition) == (12, "7", "COMPLETED", "main")
    assert done.end - done.start == 62 and done.start - done.submit == 2 and done.eligible - done.submit == 1
    assert done.cpus == {"n1": [1, 2, 3], "n2": [0, 2, 3]}
    assert pending.start is None and pending.cpus == {}


def _write(path: Path, rows: list[tuple[str, float, float, float, str]]) -> Path:
    writer = JobsCsvWriter(path)
    for job_id, submit, start, finish, units in rows:
        job = Job(job_id, submit, len(IntervalSet.parse(units)), Delay(finish - start), walltime=600, queue="main")
        writer.record(JobOutcome(job, FinalState.COMPLETED_SUCCESSFULLY, start, finish, IntervalSet.parse(units),
                                 "slurm_id=1;partition=main;eligible=0;trace_submit=0"))
    writer.close()
    return path


REAL = [("1", 0, 0, 100, "0-3"), ("2", 0, 100, 150, "0-1"), ("3", 10, 100, 130, "2-3"), ("4", 20, 130, 160, "2")]
SIM = [("1", 0, 0.5, 100.5, "0-3"), ("2", 0, 101, 151, "0-1"), ("3", 10, 100.5, 130.5, "2-3"),
       ("4", 20, 131, 161, "2")]


def test_the_replayed_jobs_come_back_with_observed_submit_and_run_times(tmp_path: Path) -> None:
    workload = workload_from_replay(_write(tmp_path / "jobs.csv", REAL))
    jobs = {job.id: job for job in workload.jobs}
    assert (jobs["3"].submit_time, jobs["3"].profile, jobs["3"].nb_res, jobs["3"].queue) == (
        10, Delay(30.0), 2, "main")


def test_start_differences_flips_and_metrics(tmp_path: Path) -> None:
    real = read_schedule(_write(tmp_path / "real.csv", REAL))
    sim = read_schedule(_write(tmp_path / "sim.csv", SIM))
    dev = deviation(real, sim, nb_resources=4)
    assert dev.start_differences == (0.5, 1.0, 0.5, 1.0)
    # 2 and 3 start together in the real run (not an ordered pair); in the simulation 3 comes first: no flip.
    assert (dev.order_flips, dev.ordered_pairs) == (0, 5)
    assert dev.within(0.5) == 0.5 and dev.max_abs == 1.0
    assert dev.reference.makespan == 160 and dev.other.makespan == 161
    assert dev.reference.mean_wait == pytest.approx((0 + 100 + 90 + 110) / 4)
    assert dev.reference.utilisation == pytest.approx((400 + 100 + 60 + 30) / (4 * 160))
    swapped = deviation(real, read_schedule(_write(tmp_path / "swap.csv", [
        ("1", 0, 0, 100, "0-3"), ("2", 0, 140, 190, "0-1"), ("3", 10, 100, 130, "2-3"),
        ("4", 20, 130, 160, "2")])), nb_resources=4)
    assert swapped.order_flips == 1  # 2 now starts after 4
    assert "start-order flips" in report({"simulated vs real": dev})


def test_the_compare_command_prints_the_table_and_writes_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    real, sim = _write(tmp_path / "real.csv", REAL), _write(tmp_path / "sim.csv", SIM)
    code = main(["compare", str(real), str(sim), "--baseline", str(real), "--json", str(tmp_path / "c.json"),
                 "--plot", str(tmp_path / "c.png")])
    assert code == 0
    out = capsys.readouterr().out
    assert "| starts within 1 s | 100% | 100% |" in out
    assert (tmp_path / "c.json").exists() and (tmp_path / "c.png").stat().st_size > 0
