"""Power states over the Batsim protocol: SET_RESOURCE_STATE switches machines, RESOURCE_STATE_CHANGED says when
the transition is over, and the consumed_energy QUERY reads the energy meter.

Hosts as in test_energy.py: 100 W idle, 200 W busy, 10 W asleep (power state "1" by convention for a cluster file's
nodes), switching off takes 5 s at 50 W, switching on 10 s at 100 W.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clustersim.core.simulation import Delivery
from clustersim.errors import DecisionError
from clustersim.platform.model import Node, Platform
from clustersim.platform.power_model import PowerModel, SleepState, Transition
from clustersim.protocols.batsim.adapter import ExternalScheduler
from clustersim.protocols.batsim.options import ProtocolOptions
from clustersim.runner import simulate
from clustersim.workload.stream import Workload
from conftest import Collector, compute_job, delay_job
from test_batsim_adapter import Message, ScriptedScheduler, ev
from test_energy import powered_hosts


class Sleeper:
    """Puts host 1 to sleep at t=0; wakes it when a job needing both hosts arrives, and starts the job once on."""

    def __init__(self) -> None:
        self.job: str | None = None

    def __call__(self, message: Message) -> list[Message]:
        now, out = message["now"], []
        for e in message["events"]:
            kind, data = e["type"], e["data"]
            if kind == "SIMULATION_BEGINS":
                out += [ev(0, "SET_RESOURCE_STATE", resources="1", state="1"),
                        ev(0, "QUERY", requests={"consumed_energy": {}})]
            elif kind == "JOB_SUBMITTED":
                self.job = data["job_id"]
                out += [ev(now, "QUERY", requests={"consumed_energy": {}}),
                        ev(now, "SET_RESOURCE_STATE", resources="1", state="0")]
            elif kind == "RESOURCE_STATE_CHANGED" and data["state"] == "0":
                out.append(ev(now, "EXECUTE_JOB", job_id=self.job, alloc="0-1"))
        return out


def test_an_external_scheduler_switches_machines_and_reads_the_energy_meter() -> None:
    scheduler = ScriptedScheduler(Sleeper())
    collector = Collector()
    adapter = ExternalScheduler(scheduler.endpoint, ProtocolOptions(timeout=10))
    try:
        result = simulate(powered_hosts(2), Workload.from_jobs([delay_job(1, 10, 2, 5)]), adapter,
                          extra_sinks=[collector], energy=True)
    finally:
        scheduler.join()
    changes: list[tuple[float, Any]] = [(e["timestamp"], e["data"]) for e in scheduler.events("RESOURCE_STATE_CHANGED")]
    # Host 1 is asleep after its 5 s switch-off; woken at 10, it is on at 20, when the job starts.
    assert changes == [(5, {"resources": "1", "state": "1"}), (20, {"resources": "1", "state": "0"})]
    assert collector.schedule() == {"1": (20, 25, "0-1")}
    # At t=0 nothing is consumed yet; at t=10: host 0 idles 10 s (1000 J), host 1 switches off (250 J) and
    # sleeps 5 s (50 J).
    assert [e["data"]["consumed_energy"] for e in scheduler.events("ANSWER")] == [0, 1300]
    assert result.energy is not None and result.energy.nb_machine_switches == 2


def test_switching_off_a_busy_machine_is_refused_naming_the_message() -> None:
    def answer(message: Message) -> list[Message]:
        if any(e["type"] == "JOB_SUBMITTED" for e in message["events"]):
            return [ev(message["now"], "EXECUTE_JOB", job_id="w0!1", alloc="0"),
                    ev(message["now"], "SET_RESOURCE_STATE", resources="0", state="1")]
        return []

    scheduler = ScriptedScheduler(answer)
    adapter = ExternalScheduler(scheduler.endpoint, ProtocolOptions(timeout=10))
    try:
        with pytest.raises(DecisionError, match=r"node 0 is computing.*SET_RESOURCE_STATE"):
            try:
                simulate(powered_hosts(1), Workload.from_jobs([delay_job(1, 0, 1, 5)]), adapter, energy=True)
            except DecisionError as error:
                raise adapter.explain(error) from None
    finally:
        scheduler.join()


class SwitchOnWithAJobEnd:
    """Puts host 1 to sleep at t=0. At t=2 starts job 1 (14 s of computation) on host 0 as the third decision of its
    reply (jobs 3 and 4 rejected first); at t=6 wakes host 1 (10 s) as the first decision of job 2's reply. Both
    end at t=16 at the same message: job 1's executor and host 1's switching actor wake together."""

    def __call__(self, message: Message) -> list[Message]:
        now, out = message["now"], []
        for e in message["events"]:
            kind, data = e["type"], e["data"]
            if kind == "SIMULATION_BEGINS":
                out.append(ev(0, "SET_RESOURCE_STATE", resources="1", state="1"))
            elif kind == "JOB_SUBMITTED" and data["job_id"] == "w0!1":
                out += [ev(now, "REJECT_JOB", job_id="w0!3"), ev(now, "REJECT_JOB", job_id="w0!4"),
                        ev(now, "EXECUTE_JOB", job_id="w0!1", alloc="0")]
            elif kind == "JOB_SUBMITTED" and data["job_id"] == "w0!2":
                out += [ev(now, "SET_RESOURCE_STATE", resources="1", state="0"), ev(now, "REJECT_JOB", job_id="w0!2")]
        return out


def test_an_executor_writes_its_rows_between_the_two_turns_of_a_switch_ending_with_it(tmp_path: Path) -> None:
    """Hand-computed, Batsim's delivery. Hosts: 100 W idle, 200 W busy, 10 W asleep, switching off 5 s at 50 W, on
    10 s at 150 W.

    At t=16 job 1 ends and host 1's switch-on ends, at the same message. SimGrid runs the actors woken at one time
    turn by turn, a simcall ending a turn: the switching actor sets host 1's power state in its first turn and its
    state in the second (pstate.cpp), the executor writes its machine_states.csv row in its first turn and its
    consumed_energy.csv row after reading the energy (simcalls, jobs_execution.cpp). So the end row counts host 1
    still switching on (0,1,0,1,0) and its wattmin has host 1's new power state: 100 + 100 = 200 W (not 100 + 150).
    Energy by then: 150 W for 2 s (host 0 idle, host 1 switching off), 250 W for 3 s (job 1 computing), 210 W for
    1 s (host 1 asleep), 350 W for 10 s (host 1 switching on): 300 + 750 + 210 + 3500 = 4760 J; the mean power since
    the row at t=6 is 350 W. The server's row when host 1's message reaches it, one message later: host 1 idle
    (0,0,0,2,0), 200 W over that message."""
    power = PowerModel(100.0, 200.0, (SleepState(10.0, Transition(5.0, 250.0), Transition(10.0, 1500.0)),))
    platform = Platform([Node(i, f"host{i}", power=power) for i in range(2)])
    jobs = [compute_job(1, 2, 1, 14), delay_job(2, 6, 1, 1), delay_job(3, 2, 1, 1), delay_job(4, 2, 1, 1)]
    scheduler = ScriptedScheduler(SwitchOnWithAJobEnd())
    adapter = ExternalScheduler(scheduler.endpoint, ProtocolOptions(timeout=10))
    try:
        simulate(platform, Workload.from_jobs(jobs), adapter, tmp_path, energy=True, delivery=Delivery.BATSIM)
    finally:
        scheduler.join()
    energy_rows = (tmp_path / "consumed_energy.csv").read_text().splitlines()
    state_rows = (tmp_path / "machine_states.csv").read_text().splitlines()
    assert [row for row in energy_rows if row.startswith("16,")] == ["16,4760,e,200,350", "16,4760,p,200,200"]
    assert [row for row in state_rows if row.startswith("16,")] == ["16,0,1,0,1,0", "16,0,0,0,2,0"]
