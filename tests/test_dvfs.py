"""Processor speeds and DVFS: a host's computation power states have their own speeds and watts; switching a host
to another one (SetPState, Batsim's SET_RESOURCE_STATE) re-times the jobs running there, in the fast model (their
remaining work at the new speed) and in the simgrid model (SimGrid's pstate), and their energy follows.

The hosts compute at 1 Gf (200 W busy, 100 W idle), 500 Mf (120/80 W) or 250 Mf (80/60 W); power state 3 sleeps.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import clustersim.core.simgrid_execution as simgrid_model
from clustersim.core.decisions import CallMeLater, Decision, SetPState, StartJob, SwitchOff, SwitchOn
from clustersim.core.events import Event, JobSubmitted, RequestedCall
from clustersim.core.execution_choice import execution_model
from clustersim.core.simulation import Delivery
from clustersim.core.state import ClusterView
from clustersim.errors import DecisionError
from clustersim.intervals import IntervalSet
from clustersim.platform.load import load_platform
from clustersim.platform.simgrid import IgnoredPlatformElements
from clustersim.protocols.batsim.adapter import ExternalScheduler
from clustersim.protocols.batsim.options import ProtocolOptions
from clustersim.runner import simulate
from clustersim.workload.job import Job
from clustersim.workload.profiles import Composed, Delay, ParallelHomogeneous
from clustersim.workload.stream import Workload
from conftest import Collector, csv_rows
from test_batsim_adapter import Message, ScriptedScheduler, ev

ROOT = Path(__file__).resolve().parents[1]
HOST = (
    '<host id="h{i}" speed="1Gf,500Mf,250Mf,1f,1f,1f">'
    '<prop id="wattage_per_state" value="100:200,80:120,60:80,10:10,50:50,100:100"/>'
    '<prop id="sleep_pstates" value="3:4:5"/></host>'
)
PLATFORM = (
    "<?xml version='1.0'?>\n"
    '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
    '<platform version="4.1"><zone id="z" routing="Full">{hosts}'
    '<host id="master" speed="1Gf"><prop id="role" value="master"/></host></zone></platform>\n'
)
JOBS = [  # a job per host, all submitted at 0
    Job("A", 0, 1, ParallelHomogeneous(100e9)),
    Job("B", 0, 1, Composed((Delay(10), ParallelHomogeneous(20e9)))),
    Job("C", 0, 1, ParallelHomogeneous(30e9), walltime=50),
]
SWITCHES = {5.0: SetPState((1,), 2), 20.0: SetPState((2,), 2), 40.0: SetPState((0,), 1)}
# Hand-computed. A: 40 Gf done at 1 Gf by t=40, the other 60 Gf at 500 Mf take 120 s. B: the delay is not
# affected (it ends at 10), then 20 Gf at 250 Mf take 80 s. C: 20 Gf done by t=20, 10 Gf at 250 Mf would take
# 40 s, past its walltime (t=50). Energy: each second at its power state's full watts.
EXPECTED = {
    "A": ("COMPLETED_SUCCESSFULLY", 160.0, 40 * 200 + 120 * 120),
    "B": ("COMPLETED_SUCCESSFULLY", 90.0, 5 * 200 + 85 * 80),
    "C": ("COMPLETED_WALLTIME_REACHED", 50.0, 20 * 200 + 30 * 80),
}
# The platform: the jobs' energy, then h1 idles 70 s and h2 110 s at 60 W (250 Mf's idle watts).
PLATFORM_JOULES = sum(energy for _, _, energy in EXPECTED.values()) + 70 * 60 + 110 * 60
PSTATE_CHANGES = ["0,0-2,0", "5,1,-1", "5,1,2", "20,2,-1", "20,2,2", "40,0,-1", "40,0,1"]


class Switcher:
    """Starts job i on host i at its submission, and asks for the power state changes `switches` at their times."""

    def __init__(self, switches: dict[float, Decision]):
        self.switches = switches

    def begin(self, view: ClusterView) -> Iterable[Decision]:
        return [CallMeLater(time) for time in self.switches]

    def decide(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterable[Decision]:
        decisions: list[Decision] = []
        for event in events:
            if isinstance(event, JobSubmitted):
                host = "ABC".index(event.job.id)
                decisions.append(StartJob(event.job.key, IntervalSet.range(host, host + 1)))
            elif isinstance(event, RequestedCall):
                decisions.append(self.switches[now])
        return decisions

    def end(self, view: ClusterView) -> None:
        return None


def write_platform(directory: Path, nb_hosts: int = 3) -> Path:
    path = directory / "dvfs.xml"
    path.write_text(PLATFORM.format(hosts="".join(HOST.format(i=i) for i in range(nb_hosts))))
    return path


def run(model: str, directory: Path, waking: bool = False, batsim: bool = False) -> None:
    """The three jobs and three switches, with energy, into `directory` (a simgrid run needs its own process).

    With `waking`: the WAKING case instead (host 0 sleeps, wakes into 500 Mf, then runs job A). With `batsim`:
    Batsim's delivery, so that the simgrid model runs Batsim's actors and its energy files read SimGrid's energy
    plugin, as `clustersim run -E` does."""
    platform_file = write_platform(directory, 1 if waking else 3)
    platform = load_platform(platform_file)
    workload = Workload.from_jobs([replace(JOBS[0], submit_time=20.0, profile=ParallelHomogeneous(50e9))]
                                  if waking else JOBS)
    execution = execution_model(model, platform, platform_file, workload, energy=batsim)
    decisions = Switcher(WAKING if waking else SWITCHES)
    simulate(platform, workload, decisions, directory / "out", energy=True, execution=execution,
             delivery=Delivery.BATSIM if batsim else Delivery.INSTANT)


# Host 0 goes to sleep at 1 (1 s: 1 flop at 1 f), is woken at 10 into 500 Mf (on at 11), and job A, submitted at
# 20, computes 50 Gf there: 100 s at 120 W.
WAKING: dict[float, Decision] = {1.0: SwitchOff((0,)), 10.0: SwitchOn((0,), 1)}
WAKING_PSTATES = ["0,0,0", "1,0,-2", "2,0,3", "10,0,-1", "11,0,1"]


@pytest.mark.parametrize("model", ["fast", "simgrid"])
def test_a_machine_wakes_into_the_computation_state_asked_for(tmp_path: Path, model: str) -> None:
    if model == "fast":
        run(model, tmp_path, waking=True)
    else:
        run_in_process(tmp_path, "waking=True")
    (job,) = csv_rows(tmp_path / "out" / "jobs.csv")
    assert (float(job["starting_time"]), float(job["finish_time"])) == pytest.approx((20.0, 120.0), abs=1e-6)
    assert float(job["consumed_energy"]) == pytest.approx(100 * 120, rel=1e-9)
    assert (tmp_path / "out" / "pstate_changes.csv").read_text().split()[1:] == WAKING_PSTATES


def run_in_process(directory: Path, *options: str) -> None:
    """`run` with the simgrid model in a process of its own (SimGrid runs one simulation per process)."""
    simgrid_model.ensure_simgrid()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT / "tests")]))
    arguments = ", ".join([f"pathlib.Path({str(directory)!r})", *options])
    done = subprocess.run(
        [sys.executable, "-c", f"import pathlib, test_dvfs; test_dvfs.run('simgrid', {arguments})"],
        capture_output=True, text=True, env=env, timeout=300, check=False, cwd=ROOT / "tests",
    )
    assert done.returncode == 0, done.stderr


def check_outputs(out: Path, tolerance: float) -> None:
    jobs = {row["job_id"]: row for row in csv_rows(out / "jobs.csv")}
    for key, (state, finish, joules) in EXPECTED.items():
        assert jobs[key]["final_state"] == state, key
        assert float(jobs[key]["finish_time"]) == pytest.approx(finish, abs=tolerance), key
        assert float(jobs[key]["consumed_energy"]) == pytest.approx(joules, rel=1e-9, abs=tolerance * 200), key
    (schedule,) = csv_rows(out / "schedule.csv")
    assert float(schedule["consumed_joules"]) == pytest.approx(PLATFORM_JOULES, rel=1e-9, abs=tolerance * 600)
    assert (schedule["nb_machine_switches"], schedule["nb_grouped_switches"]) == ("3", "3")
    assert (out / "pstate_changes.csv").read_text().split()[1:] == PSTATE_CHANGES
    energy_rows = csv_rows(out / "consumed_energy.csv")
    assert float(energy_rows[-1]["energy"]) == pytest.approx(PLATFORM_JOULES, rel=1e-9, abs=tolerance * 600)
    # Batsim writes a "p" row before and after each change: the power drawn then drops as the host slows down.
    at_40 = [row for row in energy_rows if row["time"] == "40" and row["event_type"] == "p"]
    assert [float(row["wattmin"]) for row in at_40] == [100 + 60 + 60, 80 + 60 + 60]


def test_fast_model_re_times_jobs_when_their_hosts_change_speed(tmp_path: Path) -> None:
    run("fast", tmp_path)
    check_outputs(tmp_path / "out", 1e-9)


def test_simgrid_model_re_times_jobs_through_simgrids_pstates(tmp_path: Path) -> None:
    run_in_process(tmp_path)
    check_outputs(tmp_path / "out", 1e-6)


def test_simgrid_model_with_batsims_actors_writes_the_rows_after_a_change_in_its_new_power_state(
        tmp_path: Path) -> None:
    """With Batsim's actors the energy files read SimGrid's energy plugin: Batsim's server sets the hosts' new
    power state before it writes the row after the change, so that row's `wattmin` is the new one."""
    run_in_process(tmp_path, "batsim=True")
    check_batsim_rows(tmp_path / "out")


CLUSTER_PLATFORM = (
    "<?xml version='1.0'?>\n"
    '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
    '<platform version="4.1"><zone id="z" routing="Full">'
    '<cluster id="compute" prefix="h" suffix="" radical="0-{last}" speed="1Gf,500Mf,250Mf,1f,1f,1f" bw="125MBps" '
    'lat="0" bb_bw="2.25GBps" bb_lat="0">'
    '<prop id="wattage_per_state" value="100:200,80:120,60:80,10:10,50:50,100:100"/>'
    '<prop id="sleep_pstates" value="3:4:5"/></cluster>'
    '<cluster id="master" prefix="master" suffix="" radical="0-0" speed="1Gf" bw="125MBps" lat="0" bb_bw="2.25GBps" '
    'bb_lat="0"><prop id="role" value="master"/></cluster>'
    '<link id="backbone" bandwidth="1.25GBps" latency="0"/>'
    '<zoneRoute src="compute" dst="master" gw_src="hcompute_router" gw_dst="mastermaster_router">'
    '<link_ctn id="backbone"/></zoneRoute></zone></platform>\n'
)


def test_step_model_with_batsims_actors_re_times_jobs_and_reads_the_plugin_as_the_simgrid_model(
        tmp_path: Path) -> None:
    """The step model (no SimGrid) on the same hosts in `<cluster>`s, whose messages take one known time: the jobs
    re-timed by the power states, the rows after each change in the new power state, as the simgrid model
    writes them (its outputs on this platform are the same bytes)."""
    platform_file = tmp_path / "dvfs.xml"
    platform_file.write_text(CLUSTER_PLATFORM.format(last=2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IgnoredPlatformElements)
        platform = load_platform(platform_file)
    workload = Workload.from_jobs(JOBS)
    workload.local_only = True  # (as the Batsim reader says of these profiles)
    execution = execution_model("step", platform, platform_file, workload, energy=True)
    simulate(platform, workload, Switcher(SWITCHES), tmp_path / "out", energy=True, execution=execution,
             delivery=Delivery.BATSIM)
    check_batsim_rows(tmp_path / "out")
    rows = csv_rows(tmp_path / "out" / "consumed_energy.csv")
    # SimGrid's plugin: host 1 idles during job B's 10 s delay (100 W until 5, then 60 W), not at full power.
    assert float(rows[-1]["energy"]) == pytest.approx(PLATFORM_JOULES - 5 * (200 - 100) - 5 * (80 - 60), rel=1e-9)


def check_batsim_rows(out: Path) -> None:
    jobs = {row["job_id"]: row for row in csv_rows(out / "jobs.csv")}
    for key, (state, finish, joules) in EXPECTED.items():
        assert jobs[key]["final_state"] == state, key
        assert float(jobs[key]["finish_time"]) == pytest.approx(finish, abs=1e-6), key
        # A job's energy is its machines' in SimGrid's plugin, end minus start, as Batsim's: B's host idles during
        # its delay (100 W, then 60 W from t=5), where the fast model charges it full power.
        idle = 5 * (200 - 100) + 5 * (80 - 60) if key == "B" else 0
        assert float(jobs[key]["consumed_energy"]) == pytest.approx(joules - idle, rel=1e-9, abs=1e-3), key
    assert (out / "pstate_changes.csv").read_text().split()[1:] == PSTATE_CHANGES
    rows = [row for row in csv_rows(out / "consumed_energy.csv") if row["event_type"] == "p"]
    assert [(row["time"], float(row["wattmin"]), row["epower"] == "NA") for row in rows] == [
        ("5", 300, False), ("5", 260, True), ("20", 260, False), ("20", 220, True), ("40", 220, False),
        ("40", 200, True)]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 99), st.sampled_from([0, 1, 2])), max_size=4, unique_by=lambda s: s[0]))
def test_a_job_does_all_its_work_whatever_the_speed_changes(tmp_path_factory: pytest.TempPathFactory,
                                                            changes: list[tuple[int, int]]) -> None:
    """The fast model keeps the work: the seconds spent in each power state, times its speed, add up to the
    job's flops."""
    directory = tmp_path_factory.mktemp("dvfs")
    platform = load_platform(write_platform(directory, 1))
    collector = Collector()
    switches: dict[float, Decision] = {float(time): SetPState((0,), pstate) for time, pstate in changes}
    simulate(platform, Workload.from_jobs([Job("A", 0, 1, ParallelHomogeneous(100e9))]), Switcher(switches),
             extra_sinks=[collector], energy=True)
    end = collector.outcomes["A"].finish
    assert end is not None
    speeds = {0: 1e9, 1: 5e8, 2: 2.5e8}
    work, time, speed = 0.0, 0.0, 1e9
    for at, pstate in sorted(changes):
        if at >= end:
            break
        work += (at - time) * speed
        time, speed = float(at), speeds[pstate]
    work += (end - time) * speed
    assert work == pytest.approx(100e9, rel=1e-12)


@pytest.mark.parametrize(("decision", "message"), [
    (SetPState((0,), 3), r"node 0 \('h0'\) has no computation power state 3 \(its computation power states: 0, 1, 2\)"),
    (SetPState((0, 0), 1), "a node is listed twice"),
    (SetPState((7,), 1), "there is no node 7"),
])
def test_bad_power_state_changes_are_refused(tmp_path: Path, decision: Decision, message: str) -> None:
    platform = load_platform(write_platform(tmp_path, 1))
    with pytest.raises(DecisionError, match=message):
        simulate(platform, Workload.from_jobs([]), Switcher({1.0: decision}), energy=True)


def test_a_sleeping_node_does_not_change_computation_state(tmp_path: Path) -> None:
    platform = load_platform(write_platform(tmp_path, 1))
    switches: dict[float, Decision] = {1.0: SwitchOff((0,)), 5.0: SetPState((0,), 1)}
    with pytest.raises(DecisionError, match="node 0 is sleeping; only nodes that are on"):
        simulate(platform, Workload.from_jobs([]), Switcher(switches), energy=True)


def test_set_resource_state_to_a_computation_state_is_acknowledged_at_once(tmp_path: Path) -> None:
    """Over the Batsim protocol: the job runs at the new speed, and RESOURCE_STATE_CHANGED comes at once."""

    def answer(message: Message) -> list[Message]:
        now, out = message["now"], []
        for e in message["events"]:
            if e["type"] == "JOB_SUBMITTED":
                out += [ev(now, "EXECUTE_JOB", job_id=e["data"]["job_id"], alloc="0"),
                        ev(now, "CALL_ME_LATER", timestamp=40)]
            elif e["type"] == "REQUESTED_CALL":
                out.append(ev(now, "SET_RESOURCE_STATE", resources="0", state="1"))
        return out

    scheduler = ScriptedScheduler(answer)
    collector = Collector()
    adapter = ExternalScheduler(scheduler.endpoint, ProtocolOptions(timeout=10))
    try:
        simulate(load_platform(write_platform(tmp_path, 1)), Workload.from_jobs([JOBS[0]]), adapter,
                 extra_sinks=[collector], energy=True)
    finally:
        scheduler.join()
    assert [(e["timestamp"], e["data"]) for e in scheduler.events("RESOURCE_STATE_CHANGED")] == [
        (40, {"resources": "0", "state": "1"})
    ]
    outcome = collector.outcomes["A"]
    assert (outcome.finish, outcome.consumed_energy) == (160.0, 40 * 200 + 120 * 120)
