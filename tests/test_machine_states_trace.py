"""machine_states.csv without energy (core/machine_states.py): Batsim 4.2 writes it on every run, a row at each job
start and end, an instant's rows in the order its actors write them. Hand-computed with Batsim's message counts
(docs/batsim-protocol.md, How Batsim groups the events of one instant)."""

from __future__ import annotations

from pathlib import Path

from clustersim.core.simulation import Delivery
from clustersim.policies.registry import create_policy
from clustersim.runner import simulate
from clustersim.workload.stream import Workload
from conftest import delay_job, hosts


def test_an_end_row_comes_when_the_executor_ends_not_when_the_scheduler_hears_it(tmp_path: Path) -> None:
    """2 hosts, fcfs. At t=0 jobs 1 and 2 start (their decisions reach the server at messages 4 and 5); job 3
    waits. At t=10 job 1's end is posted at message 4 and received at 5; job 2's, posted at 5, is not seen then
    (an exact tie of a sleep), so fcfs hears job 1's end alone and starts job 3, whose decision reaches the server
    at 7, after job 2's end (6). Batsim's executor of job 2 wrote its row at 5: before job 3's start, although
    the core applied that start before it ended job 2."""
    jobs = [delay_job(1, 0, 1, 10, 100), delay_job(2, 0, 1, 10, 100), delay_job(3, 0, 1, 1, 100)]
    simulate(hosts(2), Workload.from_jobs(jobs), create_policy("fcfs"), tmp_path, delivery=Delivery.BATSIM,
             machine_states=True)
    assert (tmp_path / "machine_states.csv").read_text().splitlines() == [
        "time,nb_sleeping,nb_switching_on,nb_switching_off,nb_idle,nb_computing",
        "0,0,0,0,1,1", "0,0,0,0,0,2",
        "10,0,0,0,1,1", "10,0,0,0,2,0", "10,0,0,0,1,1",
        "11,0,0,0,2,0",
    ]


def test_no_machine_states_file_unless_asked(tmp_path: Path) -> None:
    simulate(hosts(2), Workload.from_jobs([delay_job(1, 0, 1, 10)]), create_policy("fcfs"), tmp_path)
    assert not (tmp_path / "machine_states.csv").exists()
