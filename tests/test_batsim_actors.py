"""Batsim's control messages as SimGrid communications (core/batsim_actors.py), on a hand-computed case, and the
times Batsim's messages carry.

Platform: two hosts and the master; h0 reaches the master over a 1 ms link, h1 over a 2 ms link (both 1 GB/s:
1 byte takes 1 ns more); the master talks to itself over SimGrid's loopback (10 GB/s, no latency: 0.1 ns a
message). Three `delay` 10 s jobs submitted at 0: jobs 1 and 2 on one host each, job 3 on both.

- 0.1 ns: the submitter's hello; 0.2 ns: the ready signal of the SIMULATION_BEGINS reply; 0.3 ns: the
  submissions (posted after the hello), and fcfs starts jobs 1 and 2; 0.4 ns: the submitter's goodbye (posted
  at 0.3 ns, before the reply's messages); 0.5 and 0.6 ns: the two EXECUTE_JOB messages, so jobs 1 and 2 start
  then (on h0 and h1), and end 10 s later.
- Job 1's JOB_COMPLETED travels 1 ms + 1 ns from h0: received at 10.0010000015. Job 2's (its sleep ends with
  job 1's: SimGrid finishes an action whose remaining time is below its 1 ns precision), posted then, waits
  for the server and then travels 2 ms + 1 ns: received at 10.0030000025. The scheduler is
  called once, with both ends (job 2's message was posted before job 1's was received), and starts job 3, whose
  EXECUTE_JOB reaches the server 0.1 ns later: job 3 starts at 10.0030000026 and ends 10 s later.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import clustersim.core.simgrid_execution as simgrid_model
from clustersim.core.batsim_actors import protocol_time

ROOT = Path(__file__).resolve().parents[1]

PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="h0" speed="1Gf"/><host id="h1" speed="1Gf"/>
    <host id="master" speed="1Gf"><prop id="role" value="master"/></host>
    <link id="l0" bandwidth="1GBps" latency="1ms"/>
    <link id="l1" bandwidth="1GBps" latency="2ms"/>
    <route src="h0" dst="master"><link_ctn id="l0"/></route>
    <route src="h1" dst="master"><link_ctn id="l1"/></route>
  </zone>
</platform>
"""
WORKLOAD = {
    "nb_res": 2,
    "profiles": {"d10": {"type": "delay", "delay": 10}},
    "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "d10"}, {"id": 2, "subtime": 0, "res": 1, "profile": "d10"},
             {"id": 3, "subtime": 0, "res": 2, "profile": "d10"}],
}
EXPECTED = {  # job: (host, starting_time, finish_time)
    "1": ("0", 5e-10, 10.0000000005),
    "2": ("1", 6e-10, 10.0000000005),  # SimGrid ends it with job 1: 0.1 ns left is below its precision (1 ns)
    "3": ("0-1", 10.0030000026, 20.0030000026),
}


def test_batsims_messages_give_the_hand_computed_times(tmp_path: Path) -> None:
    simgrid_model.ensure_simgrid()
    (tmp_path / "platform.xml").write_text(PLATFORM)
    (tmp_path / "workload.json").write_text(json.dumps(WORKLOAD))
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    done = subprocess.run(
        [sys.executable, "-m", "clustersim.cli", "run", "-p", str(tmp_path / "platform.xml"), "-w",
         str(tmp_path / "workload.json"), "--policy", "fcfs", "--platform-model", "simgrid", "-o",
         str(tmp_path / "out"), "-q", "--no-gantt"],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr
    with open(tmp_path / "out" / "jobs.csv", newline="") as f:
        rows = {row["job_id"]: row for row in csv.DictReader(f)}
    assert rows.keys() == EXPECTED.keys()
    for job, (hosts, start, finish) in EXPECTED.items():
        assert rows[job]["allocated_resources"] == hosts, job
        assert float(rows[job]["starting_time"]) == pytest.approx(start, abs=1e-12), job
        assert float(rows[job]["finish_time"]) == pytest.approx(finish, abs=1e-12), job


@pytest.mark.parametrize(("simgrid", "message"), [
    (5.0004000036, 5.0004),  # the corpus's network_019: SimGrid's clock, the `now` Batsim sent
    (560.0000005039984, 560.000001),  # ties_029_fcfs: rounded to the microsecond...
    (595.0000004959985, 595.0),  # ...not cut
    (12.000000064, 12.0),
    (4e-10, 0.0),
    (25.0, 25.0),
])
def test_messages_carry_times_rounded_to_the_microsecond(simgrid: float, message: float) -> None:
    assert protocol_time(simgrid) == message
