"""The reference corpus's `energy` family (Batsim 4.2 with -E, batsched 1.4's energy variants): per job, the
schedule and the energy files, value for value, with the default platform model (the step model: Batsim's actors
on SimGrid's solver steps and SimGrid's energy plugin, computed in Python; docs/energy.md).

batsched's six energy variants run re-written in Python over the protocol (tests/batsched_energy/sleeper.py,
energy_bf.py, inertial_shutdown.py; they decide from the messages they receive). Every case gives Batsim's values.
batsched's recorded replies (tests/batsched_energy/replay.py) give Batsim's jobs too, on the cases the fast model
gets wrong.
"""
from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest

from batsched_energy.cases import (
    VARIANTS,
    compare_energy_files,
    instant_differences,
    run_energy_case,
)
from batsched_energy.energy_bf import EnergySchedule
from batsched_energy.inertial_shutdown import MonitoringInertial
from batsim_reference import case_info, cases, compare, run_case
from clustersim.intervals import IntervalSet
from test_batsim_adapter import ScriptedScheduler

CASES = cases("energy")

REPLAYED = ("energy_006_energy_bf_subpart_sleeper", "energy_011_energy_bf_idle_sleeper",
            "energy_019_energy_bf_monitoring_inertial")
"""Cases whose outputs the fast model gets wrong (docs/energy.md): batsched's recorded replies too give Batsim's
jobs there."""


def _params() -> list[object]:
    return [pytest.param(case, id=case.name) for case in CASES]


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every case run once with the default platform model (the step model: Batsim's actors on SimGrid's solver
    steps, SimGrid's energy plugin emulated): the folder of its outputs, by case name."""
    done: dict[str, Path] = {}
    for case in CASES:
        out = tmp_path_factory.mktemp(case.name)
        assert run_energy_case(case, out) == [], f"{case.name}: the replay diverged from Batsim's messages"
        done[case.name] = out
    return done


@pytest.mark.parametrize("case", _params())
def test_jobs_and_schedule_are_batsims(case: Path, outputs: dict[str, Path]) -> None:
    """Per job: start, finish, hosts, final state, consumed_energy (1e-6); schedule.csv column by column."""
    assert compare(case, outputs[case.name]) == []


@pytest.mark.parametrize("case", _params())
def test_energy_files_are_batsims_per_instant(case: Path, outputs: dict[str, Path]) -> None:
    """machine_states.csv, consumed_energy.csv, pstate_changes.csv: the same rows at each instant, the same state
    once each instant is over."""
    assert instant_differences(case, outputs[case.name]) == []


@pytest.mark.parametrize("case", _params())
def test_energy_files_are_batsims_row_by_row(case: Path, outputs: dict[str, Path]) -> None:
    assert compare_energy_files(case, outputs[case.name]) == []


@pytest.mark.parametrize("case", [c for c in CASES if case_info(c)["variant"] in VARIANTS], ids=lambda c: c.name)
def test_the_python_variants_decide_as_batsched(case: Path, tmp_path: Path) -> None:
    """A re-written variant, run over the protocol, makes batsched's decisions (starts, rejections, power-state
    switches) at batsched's instants, in batsched's order. CALL_ME_LATER is left out: batsched asks for one when
    a message leaves it nothing to do, so it follows how Batsim groups an instant's events into messages, not the
    variant's decisions."""
    with gzip.open(case / "out_protocol.jsonl.gz", "rt") as f:
        transcript = [json.loads(line) for line in f]
    expected = [d for m in transcript if m["dir"] == "sched->batsim" for d in _decisions(m["msg"])]
    options = json.loads((case / "options.json").read_text())
    scheduler = VARIANTS[str(case_info(case)["variant"])](options)
    replies: list[dict[str, object]] = []

    def answer(message: dict[str, object]) -> tuple[float, list[dict[str, object]]]:
        reply = scheduler.answer(message)
        replies.append(reply)
        return reply["now"], reply["events"]

    served = ScriptedScheduler(answer)
    try:
        run_case(case, tmp_path, external=served.endpoint)
    finally:
        served.join()
    assert [d for m in replies for d in _decisions(m)] == expected


@pytest.mark.parametrize("case", [c for c in CASES if c.name in REPLAYED], ids=lambda c: c.name)
def test_batscheds_recorded_replies_give_batsims_jobs(case: Path, tmp_path: Path) -> None:
    """batsched's own replies (each given once the events of Batsim's message have all arrived,
    tests/batsched_energy/replay.py) give Batsim's jobs and schedule.csv."""
    assert run_energy_case(case, tmp_path, replay=True) == [], "the replay diverged from Batsim's messages"
    assert compare(case, tmp_path) == []


def _decisions(message: dict[str, object]) -> list[tuple[float, str, str]]:
    """A reply's decisions: (instant to the millisecond, type, data)."""
    events = message["events"]
    assert isinstance(events, list)
    return [(round(float(e["timestamp"]), 3), e["type"], json.dumps(e["data"], sort_keys=True)) for e in events
            if e["type"] != "CALL_ME_LATER"]


def test_energy_bf_wakes_a_machine_for_a_job_and_puts_it_back_to_sleep() -> None:
    """Hand-computed, 2 machines, switching off 5 s, on 10 s (plus batsched's 5 s rjms_delay in its plan).

    At 0 both machines are idle with nothing planned: both switch off. A 1-machine job (walltime 10) arrives at 6
    while both sleep: the lowest one wakes at once (its switch-on planned until 21). Awake at 16, the job starts
    there; it ends at 26 and, with nothing queued, the machine switches off at once."""
    options = {"pstate_compute": 0, "pstate_sleep": 1, "power_compute": 200, "power_idle": 100, "power_sleep": 10,
               "time_switch_on": 10, "time_switch_off": 5, "energy_switch_on": 1500, "energy_switch_off": 500,
               "ensured_sleep_time_lower_bound": 0, "ensured_sleep_time_upper_bound": 0}
    scheduler = VARIANTS["energy_bf"](options)

    def send(now: float, *events: tuple[str, dict[str, object]]) -> list[tuple[str, dict[str, object]]]:
        message = {"now": now, "events": [{"timestamp": now, "type": t, "data": d} for t, d in events]}
        return [(e["type"], e["data"]) for e in scheduler.answer(message)["events"]]

    job = {"job_id": "w0!1", "job": {"id": "w0!1", "subtime": 6, "res": 1, "walltime": 10, "profile": "delay"}}
    assert send(0, ("SIMULATION_BEGINS", {"nb_resources": 2})) == [
        ("SET_RESOURCE_STATE", {"resources": "0-1", "state": "1"})]
    assert send(5, ("RESOURCE_STATE_CHANGED", {"resources": "0-1", "state": "1"})) == []
    assert send(6, ("JOB_SUBMITTED", job)) == [("SET_RESOURCE_STATE", {"resources": "0", "state": "0"})]
    assert send(16, ("RESOURCE_STATE_CHANGED", {"resources": "0", "state": "0"})) == [
        ("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0"})]
    assert send(26, ("JOB_COMPLETED", {"job_id": "w0!1", "job_state": "COMPLETED_SUCCESSFULLY"})) == [
        ("SET_RESOURCE_STATE", {"resources": "0", "state": "1"})]


def test_energy_bf_idle_sleeper_sleeps_idle_machines_and_wakes_them_for_a_job() -> None:
    """Hand-computed, 2 machines, monitoring every 10 s, asleep after 10 s idle, switching off 2 s, on 5 s.

    A 1-machine job runs on machine 0 from 1 to 6; its submission asks for the first monitoring call (at 11). At 11
    machine 1 has been idle since 0 (11 s) and machine 0 since 6 (5 s): only 1 is switched off. A 2-machine job
    arrives at 15 while 1 sleeps: it fits no plan, so 1 is woken at once (its switch-on planned until 25 with
    batsched's 5 s rjms_delay), and the job starts on 0-1 when 1 is awake, at 20."""
    options = {"pstate_compute": 0, "pstate_sleep": 1, "power_compute": 200, "power_idle": 100, "power_sleep": 10,
               "time_switch_on": 5, "time_switch_off": 2, "energy_switch_on": 1500, "energy_switch_off": 500,
               "ensured_sleep_time_lower_bound": 0, "ensured_sleep_time_upper_bound": 0, "monitoring_period": 10,
               "idle_time_to_sedate": 10, "sedate_idle_on_classical_events": False}
    scheduler = VARIANTS["energy_bf_idle_sleeper"](options)

    def send(now: float, *events: tuple[str, dict[str, object]]) -> list[tuple[str, dict[str, object]]]:
        message = {"now": now, "events": [{"timestamp": now, "type": t, "data": d} for t, d in events]}
        return [(e["type"], e["data"]) for e in scheduler.answer(message)["events"]]

    def job(key: str, res: int, walltime: float) -> dict[str, object]:
        return {"job_id": key, "job": {"id": key, "res": res, "walltime": walltime, "profile": "delay"}}

    assert send(0, ("SIMULATION_BEGINS", {"nb_resources": 2})) == []
    assert send(1, ("JOB_SUBMITTED", job("w0!1", 1, 5))) == [
        ("CALL_ME_LATER", {"timestamp": 11}), ("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0"})]
    assert send(6, ("JOB_COMPLETED", {"job_id": "w0!1", "job_state": "COMPLETED_SUCCESSFULLY"})) == []
    assert send(11, ("REQUESTED_CALL", {})) == [
        ("SET_RESOURCE_STATE", {"resources": "1", "state": "1"}), ("CALL_ME_LATER", {"timestamp": 21})]
    assert send(13, ("RESOURCE_STATE_CHANGED", {"resources": "1", "state": "1"})) == []
    assert send(15, ("JOB_SUBMITTED", job("w0!2", 2, 10))) == [
        ("SET_RESOURCE_STATE", {"resources": "1", "state": "0"})]
    assert send(20, ("RESOURCE_STATE_CHANGED", {"resources": "1", "state": "0"})) == [
        ("EXECUTE_JOB", {"job_id": "w0!2", "alloc": "0-1"})]


def test_the_liquid_load_horizon_pours_the_queue_into_the_free_machines() -> None:
    """Hand-computed: 4 machines, 2 busy until t=10; a queued 2-machine job of walltime 15 (20 s with batsched's
    rjms_delay) is 40 machine-seconds. From t=0 the 2 free machines take 20 by t=10, the 4 then take the other 20 in
    5 s: the horizon is 15 s. With every machine asleep for ever it never fills: batsched's plan horizon, 1e19."""
    options = {"pstate_compute": 0, "pstate_sleep": 1, "power_compute": 200, "power_idle": 100, "power_sleep": 10,
               "time_switch_on": 5, "time_switch_off": 2, "energy_switch_on": 1500, "energy_switch_off": 500,
               "monitoring_period": 10}
    scheduler = MonitoringInertial(options)
    scheduler.walltimes["w0!2"] = 20
    plan = EnergySchedule(0, IntervalSet.range(0, 4))
    assert plan.add("w0!1", 2, 10) is not None
    assert scheduler.liquid_load_horizon(plan, [("w0!2", 2)], 0) == 15
    asleep = EnergySchedule(0, IntervalSet.range(0, 4))
    asleep.put("fakejob_psleep_all", 0, math.inf, 0b1111)
    assert scheduler.liquid_load_horizon(asleep, [("w0!2", 2)], 0) == 1e19
