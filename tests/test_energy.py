"""Energy accounting against hand-computed integrals, power states, and every power policy.

Hosts draw 100 W idle and 200 W at full load; asleep 10 W; switching off takes 5 s and 250 J (50 W), switching
on takes 10 s and 1000 J (100 W). Each expected figure below is the integral worked out by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clustersim.core import energy_meter
from clustersim.core.decisions import SwitchOff, SwitchOn
from clustersim.core.interface import DecisionProcess
from clustersim.errors import DecisionError, InputError, UnknownNameError
from clustersim.platform.model import Node, Platform, Unit
from clustersim.platform.power_model import PowerModel, SleepState, Transition, from_batsim_properties
from clustersim.platform.simgrid import read_simgrid_platform
from clustersim.policies.power.powered import PoweredProcess
from clustersim.policies.power.switch_policies import create_power_off, create_power_on
from clustersim.policies.registry import create_policy
from clustersim.runner import RunResult, simulate
from clustersim.workload.job import Job
from clustersim.workload.stream import Workload
from conftest import compute_job, csv_rows, delay_job

POWER = PowerModel(100.0, 200.0, (SleepState(10.0, Transition(5.0, 250.0), Transition(10.0, 1000.0)),))


def powered_hosts(count: int) -> Platform:
    return Platform([Node(i, f"host{i}", power=POWER) for i in range(count)])


def run(
    jobs: list[Job], platform: Platform, out: Path, power_off: str | None = None, power_on: str = "on-demand",
    policy: str = "fcfs",
) -> RunResult:
    process: DecisionProcess = create_policy(policy)
    if power_off is not None:
        process = PoweredProcess(process, create_power_off(power_off), create_power_on(power_on))
    return simulate(platform, Workload.from_jobs(jobs), process, out, energy=True)


def test_energy_of_a_busy_and_an_idle_host_is_the_integral_of_their_power(tmp_path: Path) -> None:
    result = run([compute_job(1, 0, 1, 10)], powered_hosts(2), tmp_path)
    assert result.energy is not None
    # host0 computes 10 s at 200 W, host1 idles 10 s at 100 W. As Batsim, the state times count the periods
    # that ended: host0's computing period; the idle periods are still open when the run ends.
    assert result.energy.consumed_joules == 3000
    assert (result.energy.time_computing, result.energy.time_idle) == (10, 0)
    job = csv_rows(tmp_path / "jobs.csv")[0]
    assert job["consumed_energy"] == "2000"
    schedule = csv_rows(tmp_path / "schedule.csv")[0]
    assert (schedule["consumed_joules"], schedule["time_computing"], schedule["time_idle"]) == (
        "3000.000000", "10.000000", "0.000000",
    )


def test_power_is_linear_in_the_load_of_a_multicore_node(tmp_path: Path) -> None:
    platform = Platform([Node(0, "n0", cores=4, power=PowerModel(100.0, 200.0))], Unit.CORE)
    result = run([compute_job(1, 0, 2, 10)], platform, tmp_path)
    assert result.energy is not None
    # Half the cores busy: 100 + (200 - 100) * 2/4 = 150 W for 10 s; the job is charged 2 cores * 200/4 W.
    assert result.energy.consumed_joules == 1500
    assert csv_rows(tmp_path / "jobs.csv")[0]["consumed_energy"] == "1000"


def test_always_off_switches_idle_hosts_off_and_counts_transitions(tmp_path: Path) -> None:
    result = run([compute_job(1, 0, 1, 10)], powered_hosts(2), tmp_path, power_off="always")
    e = result.energy
    assert e is not None
    # Up to the last job end (t=10): host0 2000 J; host1 switches off 0-5 (250 J) then sleeps 5-10 (50 J).
    assert e.consumed_joules == 2300
    # Over the whole run (host0 switches off 10-15): machine-seconds of the periods that ended (both hosts are
    # still asleep at the end, so no sleeping period counts, as in Batsim).
    assert (e.time_computing, e.time_idle, e.time_switching_off, e.time_sleeping, e.time_switching_on) == (
        10, 0, 10, 0, 0,
    )
    assert (e.nb_machine_switches, e.nb_grouped_switches) == (2, 2)


def test_on_demand_wakes_sleeping_hosts_for_a_job_that_needs_them(tmp_path: Path) -> None:
    jobs = [compute_job(1, 0, 1, 10), compute_job(2, 20, 2, 10)]
    result = run(jobs, powered_hosts(2), tmp_path, power_off="always")
    e = result.energy
    assert e is not None
    by_id = {row["job_id"]: row for row in csv_rows(tmp_path / "jobs.csv")}
    # Both hosts sleep when J2 arrives at 20; they take 10 s to wake, so J2 starts at 30.
    j2 = by_id["2"]
    assert (j2["starting_time"], j2["waiting_time"], j2["consumed_energy"]) == ("30", "10", "4000")
    # host0: 2000 + 250 + 50 + 1000 + 2000; host1: 250 + 150 + 1000 + 2000 (up to the last job end, t=40).
    assert e.consumed_joules == 8700
    assert (e.time_computing, e.time_switching_off, e.time_sleeping, e.time_switching_on, e.time_idle) == (
        30, 20, 20, 20, 0,
    )
    assert (e.nb_machine_switches, e.nb_grouped_switches) == (6, 4)
    states = [list(row.values()) for row in csv_rows(tmp_path / "machine_states.csv")]
    # time, sleeping, switching on, switching off, idle, computing; as Batsim, one row per change (a job start or
    # end, a switch decision, a group of machines done switching), so an instant may have several rows.
    assert states == [
        ["0", "0", "0", "0", "1", "1"],
        ["0", "0", "0", "1", "0", "1"],
        ["5", "1", "0", "0", "0", "1"],
        ["10", "1", "0", "0", "1", "0"],
        ["10", "1", "0", "1", "0", "0"],
        ["15", "2", "0", "0", "0", "0"],
        ["20", "0", "2", "0", "0", "0"],
        ["30", "0", "0", "0", "2", "0"],
        ["30", "0", "0", "0", "0", "2"],
        ["40", "0", "0", "0", "2", "0"],
        ["40", "0", "0", "2", "0", "0"],
        ["45", "2", "0", "0", "0", "0"],
    ]
    energy_rows = csv_rows(tmp_path / "consumed_energy.csv")
    assert [r["event_type"] for r in energy_rows[:2]] == ["s", "p"]
    assert energy_rows[-1]["time"] == "45" and float(energy_rows[-1]["energy"]) == 8700 + 2 * 250


def test_idle_timeout_switches_a_host_off_after_its_timeout(tmp_path: Path) -> None:
    jobs = [compute_job(1, 0, 1, 10), compute_job(2, 100, 1, 10)]
    result = run(jobs, powered_hosts(1), tmp_path, power_off="idle-timeout:30")
    e = result.energy
    assert e is not None
    # Idle 10-40, switches off 40-45, sleeps 45-100, wakes 100-110 (J2 waits 10 s), computes 110-120, idle
    # again until 150, switching off 150-155.
    by_id = {row["job_id"]: row for row in csv_rows(tmp_path / "jobs.csv")}
    assert by_id["2"]["starting_time"] == "110"
    assert (e.time_idle, e.time_switching_off, e.time_sleeping, e.time_switching_on, e.time_computing) == (
        60, 10, 55, 10, 20,
    )
    assert e.consumed_joules == 2000 + 3000 + 250 + 550 + 1000 + 2000


@pytest.mark.parametrize("policy", ["never", "random:0"])
def test_policies_that_never_switch_keep_the_baseline(policy: str, tmp_path: Path) -> None:
    result = run([compute_job(1, 0, 1, 10)], powered_hosts(2), tmp_path, power_off=policy)
    assert result.energy is not None and result.energy.nb_machine_switches == 0
    assert result.energy.consumed_joules == 3000


def test_random_with_probability_one_is_always(tmp_path: Path) -> None:
    result = run([compute_job(1, 0, 1, 10)], powered_hosts(2), tmp_path, power_off="random:1")
    assert result.energy is not None and result.energy.consumed_joules == 2300


def test_security_margin_keeps_a_share_of_units_on_and_free(tmp_path: Path) -> None:
    # 4 hosts, margin 0.5: 2 units stay on and free; J1 uses one, so one of the three idle hosts sleeps.
    result = run([compute_job(1, 0, 1, 10)], powered_hosts(4), tmp_path, power_off="security-margin:0.5")
    assert result.energy is not None
    # Row 0: J1 starts; row 1: the switch-off decision (Batsim writes a row per change, even at one instant).
    assert csv_rows(tmp_path / "machine_states.csv")[1] == {
        "time": "0", "nb_sleeping": "0", "nb_switching_on": "0", "nb_switching_off": "1", "nb_idle": "2",
        "nb_computing": "1",
    }


def test_load_threshold_switches_off_until_the_load_reaches_the_threshold(tmp_path: Path) -> None:
    # 4 hosts, 1 busy: load 1/4 < 0.5 -> switch off idle hosts until 1 busy / 2 on = 0.5.
    run([compute_job(1, 0, 1, 10)], powered_hosts(4), tmp_path, power_off="load-threshold:0.5")
    assert csv_rows(tmp_path / "machine_states.csv")[1]["nb_switching_off"] == "2"


@pytest.mark.parametrize("policy", ["exponential:0.95", "gamma:0.95"])
def test_predictive_policies_keep_capacity_for_predicted_arrivals(policy: str, tmp_path: Path) -> None:
    # A job of 1 host every 5 s: the wake-up horizon (15 s) predicts several arrivals, so idle hosts stay on.
    jobs = [compute_job(i, 5 * i, 1, 2) for i in range(1, 30)]
    result = run(jobs, powered_hosts(8), tmp_path, power_off=policy)
    assert result.energy is not None
    always = run(jobs, powered_hosts(8), tmp_path / "always", power_off="always")
    assert always.energy is not None
    assert result.energy.nb_machine_switches < always.energy.nb_machine_switches
    assert result.metrics.mean("waiting") <= always.metrics.mean("waiting")


def test_margin_power_on_keeps_free_capacity_that_power_off_cannot_take(tmp_path: Path) -> None:
    # Always off, but keep 50% of 2 hosts free or waking: while J1 runs, the idle host stays on; once J1 ends,
    # one of the two idle hosts may sleep. (Without the reserve, the two policies would undo each other forever.)
    run([compute_job(1, 0, 1, 10)], powered_hosts(2), tmp_path, power_off="always", power_on="margin:0.5")
    states = [list(row.values()) for row in csv_rows(tmp_path / "machine_states.csv")]
    assert states == [
        ["0", "0", "0", "0", "1", "1"],
        ["10", "0", "0", "0", "2", "0"],
        ["10", "0", "0", "1", "1", "0"],
        ["15", "1", "0", "0", "1", "0"],
    ]


def test_the_power_off_guard_never_takes_capacity_the_queue_waits_for(tmp_path: Path) -> None:
    # J2 needs both hosts while J1 runs on one: the idle host must stay on, so J2 starts when J1 ends.
    run([compute_job(1, 0, 1, 10), compute_job(2, 0, 2, 5)], powered_hosts(2), tmp_path, power_off="always")
    by_id = {row["job_id"]: row for row in csv_rows(tmp_path / "jobs.csv")}
    assert by_id["2"]["starting_time"] == "10"


def test_a_host_switching_off_is_woken_once_asleep(tmp_path: Path) -> None:
    # J2 arrives while host1 switches off (0-5): it can only be woken once asleep (5-15), so J2 starts at 15.
    run([compute_job(1, 0, 1, 10), compute_job(2, 1, 2, 5)], powered_hosts(2), tmp_path, power_off="always")
    by_id = {row["job_id"]: row for row in csv_rows(tmp_path / "jobs.csv")}
    assert by_id["2"]["starting_time"] == "15"


def test_switching_a_busy_node_off_is_refused(tmp_path: Path) -> None:
    class SwitchBusy:
        def begin(self, view: object) -> None:
            return None

        def decide(self, now, events, view):  # type: ignore[no-untyped-def]
            yield from create_policy("fcfs").decide(now, events, view)
            yield SwitchOff((0,))

        def end(self, view: object) -> None:
            return None

    with pytest.raises(DecisionError, match="node 0 is computing; only idle nodes can switch off"):
        simulate(powered_hosts(1), Workload.from_jobs([compute_job(1, 0, 1, 10)]), SwitchBusy(), tmp_path, energy=True)


def test_switching_on_a_node_that_is_on_is_refused(tmp_path: Path) -> None:
    class WakeAwake:
        def begin(self, view: object) -> None:
            return None

        def decide(self, now, events, view):  # type: ignore[no-untyped-def]
            yield SwitchOn((0,))

        def end(self, view: object) -> None:
            return None

    with pytest.raises(DecisionError, match="only sleeping nodes can switch on"):
        simulate(powered_hosts(1), Workload.from_jobs([compute_job(1, 0, 1, 10)]), WakeAwake(), tmp_path, energy=True)


def test_energy_needs_a_power_model_on_every_node(tmp_path: Path) -> None:
    platform = Platform([Node(0, "a", power=POWER), Node(1, "b")])
    with pytest.raises(InputError, match="node 'b' has no power model"):
        simulate(platform, Workload.from_jobs([compute_job(1, 0, 1, 1)]), create_policy("fcfs"), tmp_path, energy=True)


def test_unknown_power_policy_lists_the_valid_ones() -> None:
    with pytest.raises(UnknownNameError, match="idle-timeout"):
        create_power_off("sometimes")


def test_batsim_energy_properties_give_the_power_model(tmp_path: Path) -> None:
    xml = tmp_path / "energy.xml"
    xml.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
        '<platform version="4.1"><zone id="AS0" routing="Full">\n'
        '<host id="h0" speed="100.0Mf, 1e-9Mf, 0.5f, 0.05f" pstate="0">\n'
        '  <prop id="wattage_per_state" value="95.0:190.738, 9.75:9.75, 200.996721311:200.996721311, '
        '425.98820008:425.98820008"/>\n'
        '  <prop id="wattage_off" value="9.75"/>\n  <prop id="sleep_pstates" value="1:2:3"/>\n</host>\n'
        '<host id="master" speed="100Mf"><prop id="role" value="master"/></host>\n'
        "</zone></platform>\n"
    )
    platform = read_simgrid_platform(xml)
    power = platform.nodes[0].power
    assert power is not None and power.sleep is not None
    assert (power.idle_watts, power.full_watts, power.sleep.watts) == (95.0, 190.738, 9.75)
    # Transitions compute 1 flop at 0.5 and 0.05 flop/s: 2 s and 20 s at their power state's watts.
    assert power.sleep.switch_off == Transition(2.0, 2 * 200.996721311)
    assert power.sleep.switch_on == Transition(20.0, 20 * 425.98820008)


def test_malformed_wattage_names_the_host_and_property() -> None:
    with pytest.raises(InputError, match="host 'h0', property 'wattage_per_state'"):
        from_batsim_properties({"wattage_per_state": "95:abc"}, [1.0], 1.0, "p.xml", "h0")


POWER_CLUSTER = """
nodes:
  - count: 2
    power:
      idle: 100
      full: 200
      sleep: {watts: 10, switch_off: {seconds: 5, joules: 250}, switch_on: {seconds: 10, joules: 1000}}
"""
WORKLOAD = (
    '{"nb_res": 2, "jobs": [{"id": 1, "subtime": 0, "res": 1, "walltime": 10, "profile": "d10"},'
    ' {"id": 2, "subtime": 20, "res": 2, "walltime": 10, "profile": "d10"}],'
    ' "profiles": {"d10": {"type": "delay", "delay": 10}}}'
)


def test_machine_states_chart_draws_every_state_over_the_run(tmp_path: Path) -> None:
    from clustersim.plots.machine_states import plot_machine_states

    run([compute_job(1, 0, 1, 10), compute_job(2, 20, 2, 10)], powered_hosts(2), tmp_path, power_off="always")
    chart = plot_machine_states(tmp_path / "machine_states.csv", tmp_path / "states.png")
    assert (chart.nb_rows, chart.nb_series, chart.time_range, chart.max_machines) == (12, 5, (0.0, 45.0), 2)
    assert (tmp_path / "states.png").read_bytes()[:4] == b"\x89PNG"


def test_cli_runs_with_a_power_policy_and_compares_policies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from clustersim.cli import main

    (tmp_path / "cluster.yaml").write_text(POWER_CLUSTER)
    (tmp_path / "w.json").write_text(WORKLOAD)
    common = ["-w", str(tmp_path / "w.json"), "-p", str(tmp_path / "cluster.yaml"), "--policy", "fcfs"]
    assert main(["run", *common, "--power-off", "always", "-o", str(tmp_path / "run"), "-q", "--no-gantt"]) == 0
    schedule = csv_rows(tmp_path / "run" / "schedule.csv")[0]
    # The workload's jobs are delays: their hosts draw idle power (J1 1000 J and J2 2000 J less than computing).
    assert (schedule["consumed_joules"], schedule["nb_machine_switches"]) == ("5700.000000", "6")
    out = tmp_path / "compare"
    assert main(["power-compare", *common, "--power-off", "always", "idle-timeout:30", "-o", str(out)]) == 0
    table = capsys.readouterr().out
    assert table.splitlines()[1].startswith("never") and "always" in table
    comparison = csv_rows(out / "comparison.csv")
    assert [r["power_off"] for r in comparison] == ["never", "always", "idle-timeout:30"]
    assert comparison[0]["energy_saved"] == "0" and float(comparison[1]["energy_saved"]) > 0
    assert comparison[1]["waiting_time_change"] == "5"  # J2 waits 10 s for both hosts to wake: mean of 0 and 10
    assert (out / "always" / "machine_states.png").exists() and (out / "idle-timeout_30" / "jobs.csv").exists()


def test_a_delay_job_leaves_its_host_idle_and_the_energy_files_have_batsims_rows(tmp_path: Path) -> None:
    # A delay job waits: its host draws idle power (Batsim: SimGrid sees no computation). Always-off puts host1 to
    # sleep at 0 (5 s switch) and host0 once J1 ends at 10.
    result = run([delay_job(1, 0, 1, 10)], powered_hosts(2), tmp_path, power_off="always")
    assert result.energy is not None
    # 0-5: host0 100 W + host1 switching 50 W; 5-10: 100 + 10 (asleep). Up to the last job end: 750 + 550.
    assert result.energy.consumed_joules == 1300
    assert csv_rows(tmp_path / "jobs.csv")[0]["consumed_energy"] == "1000"  # 10 s at idle, not 2000 at full power
    rows = (tmp_path / "consumed_energy.csv").read_text().splitlines()
    # time,energy,event_type,wattmin,epower: a row per job start (s) and end (e), per switch decision and per group
    # of machines done switching (p); epower is the mean power since the previous row, or at the same instant the
    # power until then; wattmin is every machine's idle, sleep or transition power (after a transition's end).
    assert rows == [
        "time,energy,event_type,wattmin,epower",
        "0,0,s,200,200",
        "0,0,p,200,200",
        "5,750,p,110,150",
        "10,1300,e,110,110",
        "10,1300,p,110,110",
        "15,1600,p,20,60",
    ]
    # Batsim's pstate_changes.csv: every machine's first power state, then -2 (switching to sleep) and the sleep
    # state once there (1 for a cluster file's nodes).
    assert (tmp_path / "pstate_changes.csv").read_text().splitlines() == [
        "time,machine_id,new_pstate", "0,0-1,0", "0,1,-2", "5,1,1", "10,0,-2", "15,0,1",
    ]
    states = (tmp_path / "machine_states.csv").read_text().splitlines()
    assert states[1:] == ["0,0,0,0,1,1", "0,0,0,1,0,1", "5,1,0,0,0,1", "10,1,0,0,1,0", "10,1,0,1,0,0", "15,2,0,0,0,0"]


@pytest.mark.parametrize("rows_per_write", [1, 3])
def test_trace_rows_written_in_batches_are_the_rows_written_one_batch_at_the_end(
    rows_per_write: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The meter keeps the rows of machine_states.csv and consumed_energy.csv as flat lists of values and formats
    # them in batches: batches of 1 and 3 rows (every boundary) give the text of one batch for the whole run.
    jobs = [delay_job(i, i // 3 * 7, 1 + i % 3, 5 + i % 11) for i in range(60)]
    run(jobs, powered_hosts(4), tmp_path / "one", power_off="idle-timeout:3")
    monkeypatch.setattr(energy_meter, "ROWS_PER_WRITE", rows_per_write)
    run(jobs, powered_hosts(4), tmp_path / "batches", power_off="idle-timeout:3")
    for name in ("machine_states.csv", "consumed_energy.csv"):
        text = (tmp_path / "one" / name).read_text()
        assert text.count("\n") > 100, name
        assert (tmp_path / "batches" / name).read_text() == text, name


def _percent_g(value: float) -> str:
    return "%g" % value  # noqa: UP031 (the conversion whose text the rows keep)


_G_EDGES = [1.0, 999_999.0, 1e6, 1_000_005.0, 1_000_015.0, 1_000_025.0, 9_999_994.0, 9_999_995.0, 9_999_996.0,
            99_999_950.0, 123_456_500.0, 123_457_500.0, 2.0**53 - 1, 2.0**53, 1e15, 1e16, 1e17, 9.999994e17,
            9.999995e17, 1e18, 4e18, 0.0, -0.0, 0.5, 1.5, -3.0, 12.25, 1e-300, float("inf"), float("nan")]


@pytest.mark.parametrize("value", _G_EDGES)
def test_trace_numbers_of_edge_values_are_batsims_percent_g(value: float) -> None:
    # Exactly what "%g" writes: the bounds of the shortcut for whole numbers, and around them the rounding ties of
    # whole numbers (half to even), the step to the next power of ten, fractions, zero, negatives, huge values.
    assert energy_meter._g(value) == _percent_g(value)


@given(st.integers(1, 2**53 - 1) | st.integers(1, 10**8)
       | st.builds(lambda d, e: d * 10**e + 5 * 10**e // 10, st.integers(100_000, 999_999), st.integers(1, 12)))
def test_trace_numbers_of_whole_values_are_batsims_percent_g(whole: int) -> None:
    # Times, joules and watts are mostly whole: written from the int's digits, below 1,000,000 as they are, above
    # rounded as "%g" rounds them, ties included (the last strategy makes a tie below each six-digit prefix).
    assert energy_meter._g(float(whole)) == _percent_g(float(whole))


@given(st.floats(allow_nan=False) | st.floats(0.0, 1e16))
def test_trace_numbers_of_any_value_are_batsims_percent_g(value: float) -> None:
    assert energy_meter._g(value) == _percent_g(value)


@given(st.integers(1, 10**18 - 1) | st.builds(lambda d, e: d * 10**e + 5 * 10**e // 10, st.integers(100_000, 999_999),
                                               st.integers(1, 12)),
       st.floats(0.0, 1.0))
def test_every_number_a_trace_text_stands_for_is_written_with_that_text(whole: int, where: float) -> None:
    # A row's number keeps its text while the next numbers are in the range `_g_span` gives: both ends, the number
    # itself and any number between them (whole or not) must be what "%g" writes with that text.
    value = float(whole)
    text, low, high = energy_meter._g_span(value)
    assert text == _percent_g(value) and low <= value <= high
    for inside in (low, high, low + (high - low) * where):
        assert _percent_g(inside) == text, inside


@pytest.mark.parametrize("value", _G_EDGES)
def test_an_edge_value_stands_for_a_range_written_with_its_text(value: float) -> None:
    text, low, high = energy_meter._g_span(value)
    assert text == _percent_g(value)
    if low == low:  # (nan stands for nothing)
        assert low <= value <= high and _percent_g(low) == _percent_g(high) == text
