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
import math
import os
import subprocess
import sys
from fractions import Fraction
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


SOLVER_STEP_PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="master" speed="1Gf"/><host id="sender" speed="1Gf"/><host id="sleeper" speed="1Gf"/>
    <link id="l0" bandwidth="125MBps" latency="0"/><link id="l1" bandwidth="125MBps" latency="0"/>
    <route src="sender" dst="master"><link_ctn id="l0"/></route>
    <route src="sleeper" dst="master"><link_ctn id="l1"/></route>
  </zone>
</platform>
"""
SOLVER_STEP_RUN = """
import json, sys
from clustersim.core.batsim_actors import ServerMailbox
from clustersim.core.simgrid_execution import load_simgrid
sg = load_simgrid()
platform, start, sleep = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
engine = sg.Engine(["solver-step", "--cfg=host/model:ptask_L07", "--log=root.thres:critical"])
engine.load_platform(platform)
mailbox, seen = ServerMailbox(sg, "server"), {}
def server():
    assert mailbox.get() == ("message",)
    seen.update(received=sg.Engine.clock, end_seen=not mailbox.empty())
    assert mailbox.get() == ("end",)
def sender():
    sg.this_actor.sleep_for(start)
    mailbox.post(("message",)).wait()
def sleeper():
    sg.this_actor.sleep_for(sleep)
    seen.update(slept=sg.Engine.clock)
    mailbox.post(("end",)).wait()
for name, body in (("server", server), ("sender", sender), ("sleeper", sleeper)):
    sg.Actor.create(name, engine.host_by_name(name if name != "server" else "master"), body)
engine.run()
print(json.dumps(seen))
"""
MESSAGE = 1 / 125e6
"""1 byte over a 125 MBps link without latency (the corpus's `ties` platforms): 8 ns."""


@pytest.mark.parametrize(("start", "end_seen"), [(1.0, True), (42.0, False)])
def test_the_server_sees_what_simgrid_posted_in_an_earlier_solver_step_at_the_same_clock(
        start: float, end_seen: bool, tmp_path: Path) -> None:
    """A message leaves at `start` and takes MESSAGE; a sleep of `start` + MESSAGE (as a float) ends at the same
    clock value. Which one SimGrid 3.32 ends first is decided by hand: after the step to `start`, the sleep's rest
    is `sleep - start` (exact), and the solver's next step is the shorter of that rest and the message.

    - start 1.0: the rest (7.99999999579e-9 s) is shorter: the sleep ends in a step of its own, at the clock value
      `sleep`; the message's step that follows (4.2e-18 s) is below half the clock's unit at 1.0 (1.1e-16 s), so
      the clock keeps that value. The sleeper's message is posted before the server wakes: Batsim's server sees it
      (as at t=42 of the corpus's ties_030_conservative_bf, where the late step is 2.4e-16 s).
    - start 42.0: the rest (8.00000066e-9 s) is longer: the message ends first, and the sleep's rest (6.6e-16 s)
      is below SimGrid's timing precision (1e-9 s), so it ends in the same step: the server wakes in the same
      scheduling round as the sleeper and does not see its message.
    """
    simgrid_model.ensure_simgrid()
    sleep = start + MESSAGE
    rest = Fraction(sleep) - Fraction(start)
    assert (rest < Fraction(MESSAGE)) is end_seen  # the sleep's own step comes first
    if end_seen:
        assert (Fraction(MESSAGE) - rest) * 2 < Fraction(math.ulp(sleep))  # the message's step keeps the clock
    else:
        assert rest - Fraction(MESSAGE) < Fraction(1, 10**9)  # the sleep ends in the message's step
    (tmp_path / "platform.xml").write_text(SOLVER_STEP_PLATFORM)
    done = subprocess.run([sys.executable, "-c", SOLVER_STEP_RUN, str(tmp_path / "platform.xml"), repr(start),
                           repr(sleep)], capture_output=True, text=True, timeout=120, check=False,
                          env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {"slept": sleep, "received": sleep, "end_seen": end_seen}
