"""Power states over the Batsim protocol: SET_RESOURCE_STATE switches machines, RESOURCE_STATE_CHANGED says when
the transition is over, and the consumed_energy QUERY reads the energy meter.

Hosts as in test_energy.py: 100 W idle, 200 W busy, 10 W asleep (power state "1" by convention for a cluster file's
nodes), switching off takes 5 s at 50 W, switching on 10 s at 100 W.
"""

from __future__ import annotations

from typing import Any

import pytest

from clustersim.errors import DecisionError
from clustersim.protocols.batsim.adapter import ExternalScheduler
from clustersim.protocols.batsim.options import ProtocolOptions
from clustersim.runner import simulate
from clustersim.workload.stream import Workload
from conftest import Collector, delay_job
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
