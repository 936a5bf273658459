"""The reference corpus's `energy` family (Batsim 4.2 with -E, batsched 1.4's energy variants): per job, the
schedule and the energy files, value for value.

batsched's six energy variants run re-written in Python over the protocol (tests/batsched_energy/sleeper.py,
energy_bf.py, inertial_shutdown.py; they decide from the messages they receive). Where clustersim's order of an
instant's events makes them decide otherwise, batsched's recorded replies (tests/batsched_energy/replay.py) show
that clustersim computes Batsim's outputs from batsched's decisions. Cases that differ are marked with the exact reason
(also in docs/energy.md).
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

TIE = (
    "exact tie of message counts (docs/batsim-protocol.md, How Batsim groups the events of one instant, point 5): "
)
"""A message posted at the very message count at which Batsim's server receives another: clustersim sees it there
when it comes from the end of a computation (a computing job, a node's switch), not from the end of a sleep."""

ROW_ORDER: dict[str, str] = {}
"""Cases whose energy files differ even per instant (the rest differ at most in the order of an instant's rows)."""

ROWS_WITHIN_AN_INSTANT = {
    "energy_009_energy_bf_monitoring_inertial": (
        "at t=1344 the request for 2-6 reaches the server at message 3, machine 0's switch ends at 3 and machine "
        "1's at 4 (the two SET_RESOURCE_STATE of one reply at t=1334 reached the server one message apart). "
        "Batsim's row of the request has both machines' new power states (wattmin 988.476) and both still "
        "switching on (9,7,0,0,0): machine 1's actor woke before the server handled a message that, counted in "
        "messages of one length, arrived earlier. clustersim's row has machine 0 on (9,6,0,1,0) and machine 1 "
        "switching (657.488). Batsim's messages (1 byte, ipp.cpp) all take 8 ns on this platform, between the "
        "server and the request-reply actor too (benchmarks/batsim_message_times.py), so the cause is not the "
        "messages' lengths; SimGrid's arithmetic is the likely one, not checked"),
    "energy_010_energy_bf": (
        "at t=436 w0!21 (a delay job) ends at message 3, at which the server receives w0!23's EXECUTE_JOB; "
        "Batsim's start row (s) has epower 2592, so SimGrid's clock moved between w0!21's end row and the start "
        "row: its sleep ended before the server received the decision. clustersim counts both at message 3 (NA, "
        "as Batsim writes at t=703 of energy_018, where a walltime's sleep ends at the very time the server "
        "receives a switching actor's message). The count does not separate them (every Batsim message lasts 8 "
        "ns on this platform): SimGrid's arithmetic does (its clock moved), which the count does not model"),
    "energy_013_energy_bf": (
        "at t=1089 w0!31's end then w0!48's start, as energy_010's at t=436: Batsim's s row is nanoseconds later "
        "(epower 2688.85), clustersim's at the same message (NA)"),
}
"""Python-scheduled cases whose energy files hold an instant's rows in another order or with other values."""

WALLTIME_RACE = (
    "job w0!22 (parallel_homogeneous, 50 s of computation, walltime 50 s) ends COMPLETED_WALLTIME_REACHED in Batsim: "
    "SimGrid's walltime timer fired a few nanoseconds before the computation ended (elsewhere, as in energy_012's "
    "w0!24, the computation wins); clustersim ends it successfully"
)
"""energy_019's job w0!22, whoever decides."""

ENERGY_019 = "energy_019_energy_bf_monitoring_inertial"

IDENTICAL = {"energy_000_energy_bf", "energy_001_energy_bf_idle_sleeper", "energy_002_sleeper",
             "energy_003_energy_bf", "energy_004_energy_bf_idle_sleeper", "energy_005_sleeper",
             "energy_007_energy_bf_dicho", "energy_008_energy_bf_idle_sleeper", "energy_012_sleeper",
             "energy_014_energy_bf_idle_sleeper", "energy_015_sleeper", "energy_016_energy_bf_subpart_sleeper",
             "energy_017_energy_bf_dicho", "energy_018_energy_bf_idle_sleeper"}
"""Cases whose every output (jobs, schedule.csv, the three energy files row by row) is Batsim's."""

DECISIONS_DIFFER = {
    "energy_011_energy_bf_idle_sleeper": TIE + (
        "at t=1230 Batsim sends REQUESTED_CALL alone (as clustersim), then JOB_COMPLETED w0!28 and w0!29 in one "
        "message, answered by starting w0!31 (4 hosts: 17-20) and w0!36 (out_protocol.jsonl.gz). Both are delay5 "
        "jobs started by consecutive decisions of one reply at t=1225, so w0!29's end is posted at the very count "
        "at which w0!28's reaches the server, and an end of a sleep posted then is not seen: clustersim sends "
        "w0!28's end alone, its 3 hosts start w0!32 (17-19), so w0!31 starts at 1245 rather than 1230"),
}
"""Python-scheduled cases where clustersim's grouping or order of an instant's events makes batsched decide
otherwise (Batsim's delivery of one instant's events, docs/batsim-protocol.md)."""

HOSTS_DIFFER = {
    "energy_006_energy_bf_subpart_sleeper": TIE + (
        "at t=355 Batsim sends JOB_COMPLETED w0!18 alone, then w0!19 with w0!28 (out_protocol.jsonl.gz). w0!18 and "
        "w0!19 are ph50 jobs started by consecutive decisions of one reply at t=305, so w0!19's end is posted at "
        "the very count at which w0!18's reaches the server; an end of a computation posted then is seen, so "
        "clustersim sends both ends in one message and batsched starts w0!24 in another reply. At t=405 Batsim "
        "then sends w0!23 and w0!24 together and w0!34 starts on 22-25; clustersim sends w0!23 alone and w0!34 "
        "starts on 24-26 29 (later jobs too take other hosts: the same instants, the same machine states)"),
}
"""Python-scheduled cases where batsched picks other hosts at the same instants (the energy files per instant are
Batsim's)."""

OUTPUTS_DIFFER = {**DECISIONS_DIFFER}
"""Cases whose jobs and energy files differ even per instant."""

DIFFERENT_DECISIONS = {**DECISIONS_DIFFER, **HOSTS_DIFFER}


def _marked(reasons: dict[str, str]) -> list[object]:
    params: list[object] = []
    for case in CASES:
        reason = reasons.get(case.name)
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        params.append(pytest.param(case, id=case.name, marks=marks))
    return params


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every case run once: the folder of its outputs, by case name."""
    done: dict[str, Path] = {}
    for case in CASES:
        out = tmp_path_factory.mktemp(case.name)
        assert run_energy_case(case, out) == [], f"{case.name}: the replay diverged from Batsim's messages"
        done[case.name] = out
    return done


@pytest.mark.parametrize("case", _marked({**OUTPUTS_DIFFER, **HOSTS_DIFFER, ENERGY_019: WALLTIME_RACE}))
def test_jobs_and_schedule_are_batsims(case: Path, outputs: dict[str, Path]) -> None:
    """Per job: start, finish, hosts, final state, consumed_energy (1e-6); schedule.csv column by column."""
    assert compare(case, outputs[case.name]) == []


@pytest.mark.parametrize("case", _marked({**ROW_ORDER, **OUTPUTS_DIFFER}))
def test_energy_files_are_batsims_per_instant(case: Path, outputs: dict[str, Path]) -> None:
    """machine_states.csv, consumed_energy.csv, pstate_changes.csv: the same rows at each instant, the same state
    once each instant is over."""
    assert instant_differences(case, outputs[case.name]) == []


@pytest.mark.parametrize("case", _marked({**ROW_ORDER, **ROWS_WITHIN_AN_INSTANT, **OUTPUTS_DIFFER, **HOSTS_DIFFER}))
def test_energy_files_are_batsims_row_by_row(case: Path, outputs: dict[str, Path]) -> None:
    assert compare_energy_files(case, outputs[case.name]) == []


@pytest.mark.parametrize("case", [
    pytest.param(c, id=c.name, marks=[pytest.mark.xfail(reason=DIFFERENT_DECISIONS[c.name], strict=True)]
                 if c.name in DIFFERENT_DECISIONS else [])
    for c in CASES if case_info(c)["variant"] in VARIANTS
])
def test_the_python_variants_decide_as_batsched(case: Path, tmp_path: Path) -> None:
    """A re-written variant, run over the protocol, makes batsched's decisions (starts, rejections, power-state
    switches) at batsched's instants, in batsched's order. CALL_ME_LATER is left out: batsched asks for one when
    a message leaves it nothing to do, so it follows how Batsim groups an instant's events into messages (e.g.
    energy_017 at t=1962: a requested call and machines done switching off come apart in Batsim, together in
    clustersim), not the variant's decisions."""
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


@pytest.mark.parametrize("case", [
    pytest.param(c, id=c.name, marks=[pytest.mark.xfail(reason=WALLTIME_RACE, strict=True)]
                 if c.name == ENERGY_019 else [])
    for c in CASES if c.name in OUTPUTS_DIFFER or c.name in HOSTS_DIFFER or c.name == ENERGY_019
])
def test_batscheds_recorded_replies_give_batsims_jobs(case: Path, tmp_path: Path) -> None:
    """Where clustersim's delivery of an instant makes batsched decide otherwise, batsched's own replies (each
    given once the events of Batsim's message have all arrived, tests/batsched_energy/replay.py) give Batsim's jobs
    and schedule.csv: what clustersim computes from the decisions is Batsim's, only their order differs."""
    assert run_energy_case(case, tmp_path, replay=True) == [], "the replay diverged from Batsim's messages"
    assert compare(case, tmp_path) == []


def test_the_identical_cases_are_those_without_a_reason() -> None:
    reasons = {**ROW_ORDER, **ROWS_WITHIN_AN_INSTANT, **OUTPUTS_DIFFER, **HOSTS_DIFFER, ENERGY_019: WALLTIME_RACE}
    assert {c.name for c in CASES if c.name not in reasons} == IDENTICAL


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
