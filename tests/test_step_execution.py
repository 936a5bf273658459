"""The step platform model (core/step_execution.py): SimGrid 3.32's solver steps in plain Python, checked on small
cases computed by hand, and its choice for Batsim inputs (the corpus's ties cases are in test_batsim_corpus.py)."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from batsim_reference import CORPUS
from clustersim.core.execution_choice import resolve_model
from clustersim.core.step_execution import (
    Actor,
    Comm,
    Computation,
    Create,
    Engine,
    Exec,
    Execute,
    ExecuteOn,
    Get,
    Host,
    PutAsync,
    SetPstate,
    Simcall,
    Sleep,
    StepExecution,
    Update,
    Wait,
    WaitFor,
    job_steps,
    power_ranges,
)
from clustersim.errors import ClusterSimError
from clustersim.platform.messages import LOOPBACK_BANDWIDTH, message_bandwidth, message_rates
from clustersim.workload.profiles import Composed, Delay, Parallel, ParallelHomogeneous
from clustersim.workload.stream import Workload

Body = Generator[Simcall, Any, None]


class Scripted(Actor):
    """An actor whose body is a generator of simcalls; it writes what it sees in `log`."""

    def __init__(self, body: Body):
        self.body = body

    def resume(self, value: Any) -> Simcall | None:
        try:
            return self.body.send(value)
        except StopIteration:
            return None


def run(*bodies: Body) -> Engine:
    engine = Engine()
    for body in bodies:
        engine.create(Scripted(body))
    engine.run()
    return engine


def test_the_clock_adds_each_step_to_now_without_rounding() -> None:
    log: list[float] = []
    engine = Engine()

    def sleeper() -> Body:
        yield Sleep(0.1)
        yield Sleep(0.2)
        log.append(engine.now)

    engine.create(Scripted(sleeper()))
    engine.run()
    assert log == [0.1 + 0.2] and log[0] != 0.3  # 0.30000000000000004: `now = now + step`


def test_sleeps_ending_in_one_step_wake_in_the_order_they_began() -> None:
    log: list[str] = []

    def sleeper(name: str, seconds: float) -> Body:
        yield Sleep(seconds)
        log.append(name)

    run(sleeper("b", 2.0), sleeper("a", 2.0), sleeper("c", 1.0))
    assert log == ["c", "b", "a"]


def test_a_sleep_whose_rest_is_below_a_nanosecond_ends_in_the_same_step() -> None:
    """SimGrid's `precision/timing` (1e-9 s): a sleep 5e-10 s longer ends with the shorter one, at its time."""
    engine = Engine()
    log: list[tuple[str, float]] = []

    def sleeper(name: str, seconds: float) -> Body:
        yield Sleep(seconds)
        log.append((name, engine.now))

    engine.create(Scripted(sleeper("longer", 1.0 + 5e-10)))
    engine.create(Scripted(sleeper("shorter", 1.0)))
    engine.run()
    assert log == [("longer", 1.0), ("shorter", 1.0)]


def test_a_one_byte_message_takes_one_byte_over_the_bandwidth() -> None:
    engine = Engine()
    log: list[tuple[str, Any, float]] = []

    def receiver() -> Body:
        payload = yield Get()
        log.append(("received", payload, engine.now))

    def sender() -> Body:
        comm = yield PutAsync("hello", 1.0, 125e6)
        assert isinstance(comm, Comm)
        yield Wait(comm)
        log.append(("sent", None, engine.now))

    engine.create(Scripted(receiver()))
    engine.create(Scripted(sender()))
    engine.run()
    assert log == [("received", "hello", 1 / 125e6), ("sent", None, 1 / 125e6)]


def test_a_posted_message_waits_for_its_receiver_and_messages_are_received_in_posting_order() -> None:
    engine = Engine()
    log: list[tuple[Any, float]] = []

    def receiver() -> Body:
        yield Sleep(1.0)
        for _ in range(2):
            payload = yield Get()
            log.append((payload, engine.now))

    def sender(payload: str) -> Body:
        comm = yield PutAsync(payload, 1.0, 1e3)
        yield Wait(comm)

    for body in (receiver(), sender("first"), sender("second")):
        engine.create(Scripted(body))
    engine.run()
    assert log == [("first", 1.0 + 1e-3), ("second", 1.0 + 1e-3 + 1e-3)]


def test_a_created_actor_runs_before_its_creator_resumes() -> None:
    log: list[str] = []

    def child() -> Body:
        log.append("child")
        yield Sleep(1.0)

    def parent() -> Body:
        yield Create(Scripted(child()))
        log.append("parent")

    run(parent())
    assert log == ["child", "parent"]


def test_a_killed_actor_never_wakes() -> None:
    engine = Engine()
    log: list[str] = []

    def sleeper() -> Body:
        yield Sleep(5.0)
        log.append("woke")

    victim = Scripted(sleeper())

    def killer() -> Body:
        yield Sleep(1.0)
        engine.kill(victim)
        log.append(f"killed at {engine.now}")

    engine.create(victim)
    engine.create(Scripted(killer()))
    engine.run()
    assert log == ["killed at 1.0"] and engine.now == 1.0


def test_the_model_runs_plain_functions_as_actors() -> None:
    """Batsim's actors call SimGrid's blocking API; the step model's actors are greenlets that call the same."""
    model = StepExecution(125e6)
    sg = model.simgrid
    log: list[tuple[str, float]] = []

    def server() -> None:
        mailbox = sg.Mailbox.by_name("server")
        for _ in range(2):
            log.append((mailbox.get(), model.engine.clock))

    def client(name: str, seconds: float) -> None:
        sg.this_actor.sleep_for(seconds)
        sg.Mailbox.by_name("server").put_async(name, 1).wait()

    def core() -> None:
        sg.Actor.create("server", model.master, server)
        sg.Actor.create("a", model.master, client, "a", 2.0)
        sg.Actor.create("b", model.master, client, "b", 1.0)

    model.drive(core)
    assert log == [("b", 1.0 + 8e-9), ("a", 2.0 + 8e-9)]


def test_the_model_refuses_a_job_that_communicates() -> None:
    from clustersim.core.state import RunningJob
    from clustersim.intervals import IntervalSet
    from clustersim.workload.job import Job
    from clustersim.workload.profiles import ParallelHomogeneous

    job = Job("1", 0.0, 1, ParallelHomogeneous(1e9, 1e6), 10.0)
    with pytest.raises(ClusterSimError, match=r"job 'w0!1'.*communicates or does I/O.*--platform-model simgrid"):
        StepExecution(125e6).start(RunningJob(job, 0.0, IntervalSet.range(0, 1)))


TIES = CORPUS / "ties" / "ties_000_easy_bf"
PROFILES = CORPUS / "profiles" / "profiles_010_ph_conservative_bf"
NETWORK = CORPUS / "network" / "network_016_routes_easy_bf"


def test_message_bandwidth_is_the_clusters_bandwidth_when_every_route_has_it(tmp_path: Path) -> None:
    assert message_bandwidth(TIES / "platform.xml") == 125e6  # 1 byte in 8 ns, as measured in SimGrid
    assert message_bandwidth(PROFILES / "platform.xml") is None  # hosts and explicit routes: message_rates
    latency = tmp_path / "latency.xml"
    latency.write_text((TIES / "platform.xml").read_text().replace('lat="0" bb_bw', 'lat="1us" bb_bw', 1))
    assert message_bandwidth(latency) is None
    narrow = tmp_path / "narrow.xml"
    narrow.write_text((TIES / "platform.xml").read_text().replace('bandwidth="1.25GBps"', 'bandwidth="10MBps"'))
    assert message_bandwidth(narrow) is None


def test_batsim_delay_workloads_on_such_platforms_default_to_the_step_model() -> None:
    delays = Workload("w0", iter(()), delays_only=True)
    assert resolve_model(None, TIES / "platform.xml", delays, batsim_actors=True) == "step"
    assert resolve_model(None, TIES / "platform.xml", delays, batsim_actors=False) == "fast"  # energy, events...
    assert resolve_model(None, PROFILES / "platform.xml", delays, batsim_actors=True) == "step"  # explicit routes
    assert resolve_model(None, NETWORK / "platform.xml", delays, batsim_actors=True) == "fast"  # latencies
    assert resolve_model(None, None, delays, batsim_actors=True) == "fast"
    swf = Workload("w0", iter(()))  # SWF readers do not hold every job: never known to be delays only
    assert resolve_model(None, TIES / "platform.xml", swf, batsim_actors=True) == "fast"
    assert resolve_model(None, TIES / "platform.xml", swf, batsim_actors=True, energy=True) == "fast"


def test_batsim_energy_runs_of_delays_and_computations_default_to_the_step_model() -> None:
    """With -E too: the step model emulates SimGrid's energy plugin."""
    computing = Workload("w0", iter(()), local_only=True)
    assert resolve_model(None, TIES / "platform.xml", computing, batsim_actors=True, energy=True) == "step"
    assert resolve_model(None, TIES / "platform.xml", computing, batsim_actors=False, energy=True) == "fast"
    communicating = Workload("w0", iter(()), communicates=True)
    assert resolve_model(None, TIES / "platform.xml", communicating, batsim_actors=True, energy=True) == "simgrid"


def test_the_step_model_is_refused_where_batsims_actors_do_not_run() -> None:
    from clustersim.errors import InputError

    delays = Workload("w0", iter(()), delays_only=True)
    with pytest.raises(InputError, match="Batsim's delivery, no built-in power policy"):
        resolve_model("step", TIES / "platform.xml", delays, batsim_actors=False)
    assert resolve_model("step", TIES / "platform.xml", delays, batsim_actors=True) == "step"


# -- SimGrid's energy plugin (host_energy.cpp) and executions, on the step engine ---------------------------------

def _energy_engine() -> Engine:
    engine = Engine()
    engine.energy = True
    return engine


def _host(on: Actor | None = None) -> Host:
    """A host of 1 Gflop/s (power state 0: 100 W idle, 200 W full) and a virtual power state of 0.2 flop/s at 300 W."""
    return Host(None, 0, "h", [1e9, 0.2], power_ranges("100:200, 300:300"), 0)


class OnHost(Scripted):
    def __init__(self, body: Body, host: Host):
        super().__init__(body)
        self.host = host


def test_power_ranges_are_idle_epsilon_and_slope_as_the_plugin_reads_them() -> None:
    assert power_ranges("80.0:200.0, 10:10") == [(80.0, 80.0, 120.0), (10.0, 10.0, 0.0)]
    assert power_ranges("95:120:200") == [(95.0, 120.0, 80.0)]


def test_a_computation_runs_at_the_host_speed_over_its_flops_and_draws_full_power() -> None:
    """5 Gflop on 1 Gflop/s: rate 0.2 of a work of 1, 5 s; its end brings the host's energy up to date with the
    load it still counts: 200 W for 5 s."""
    host = _host()
    log: list[tuple[float, object]] = []
    engine = _energy_engine()

    def executor() -> Body:
        action = yield ExecuteOn([host], [5e9])
        assert type(action) is Exec
        timed_out = yield WaitFor(action, -1.0)
        log.append((engine.now, timed_out))

    engine.create(Scripted(executor()))
    engine.run()
    assert log == [(5.0, False)]
    assert (host.last_updated, host.total_energy) == (5.0, 1000.0)


def test_a_wait_for_a_computation_times_out_at_the_walltime_and_leaves_it_running() -> None:
    host = _host()
    log: list[tuple[float, object]] = []
    engine = _energy_engine()

    def executor() -> Body:
        action = yield ExecuteOn([host], [5e9])
        timed_out = yield WaitFor(action, 2.0)
        log.append((engine.now, timed_out, action.done))

    engine.create(Scripted(executor()))
    engine.run()
    assert log[0] == (2.0, True, False)


def test_the_plugin_charges_the_interval_at_the_power_state_saved_at_its_start_and_the_load_at_its_end() -> None:
    """`update` uses the power state saved at the previous update and the load at the time of the update; a power
    state set at the clock value of the last update only saves the new one (`start == finish`)."""
    host = _host()
    engine = _energy_engine()

    def switcher() -> Body:
        yield Sleep(10.0)  # idle 10 s at 100 W: counted when the power state changes
        yield SetPstate(host, 1)
        yield Update(host)  # already up to date: no simcall effect
        yield Sleep(5.0)
        yield Update(host)  # 5 s in the virtual state: 300 W

    engine.create(Scripted(switcher()))
    engine.run()
    assert (host.total_energy, host.saved_pstate) == (100.0 * 10 + 300.0 * 5, 1)


def test_a_one_flop_execution_in_a_virtual_power_state_lasts_one_over_its_speed() -> None:
    """Batsim's switching actor: 1 flop at 0.2 flop/s is its 5 s transition."""
    host = _host()
    log: list[float] = []
    engine = _energy_engine()

    def switcher() -> Body:
        yield SetPstate(host, 1)
        action = yield ExecuteOn([host], [1.0])
        yield WaitFor(action, -1.0)
        log.append(engine.now)

    engine.create(OnHost(switcher(), host))
    engine.run()
    assert log == [5.0] and host.total_energy == 1500.0


def test_an_energy_read_of_a_host_out_of_date_is_a_simcall_after_which_the_reader_sees_a_new_power_state() -> None:
    """Batsim's rows read `sg_host_get_consumed_energy`, a simcall when the host's energy is older than the clock: the
    reader's turn ends there, and an actor woken at the same clock value sets its machine's power state (a simcall
    handled after the read's) before the reader writes its row, which then has the new power state's wattmin and the
    energy at the old one."""
    host = _host()
    log: list[tuple[str, float, int]] = []
    engine = _energy_engine()

    def reader() -> Body:
        yield Sleep(1.0)
        if host.last_updated < engine.now:
            yield Update(host)
        log.append(("read", host.total_energy, host.pstate_now))

    def switcher() -> Body:
        yield Sleep(1.0)
        yield SetPstate(host, 1)
        log.append(("set", host.total_energy, host.pstate_now))

    engine.create(Scripted(reader()))
    engine.create(Scripted(switcher()))
    engine.run()
    assert log == [("read", 100.0, 1), ("set", 100.0, 1)]


def test_an_energy_query_is_answered_from_the_plugins_energies_as_batsim_answers_it() -> None:
    """The corpus's energy platform (32 hosts, 80 W idle, 200 W computing at 1 Gflop/s): a 5 Gflop job submitted at
    t=1 runs on host 0 from t=1 to 6 (plus the messages' nanoseconds). The QUERY sent on its completion is answered
    with the machines' energies as SimGrid's plugin keeps them: 32 x 80 W x 6 s + 120 W x 5 s."""
    import warnings

    from clustersim.core.simulation import Delivery
    from clustersim.platform.load import load_platform
    from clustersim.protocols.batsim.adapter import ExternalScheduler
    from clustersim.protocols.batsim.options import ProtocolOptions
    from clustersim.runner import simulate
    from clustersim.workload.job import Job
    from clustersim.workload.profiles import ParallelHomogeneous
    from test_batsim_adapter import Message, ScriptedScheduler, ev

    platform_file = CORPUS / "energy" / "energy_000_energy_bf" / "platform.xml"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        platform = load_platform(platform_file)
    bandwidth = message_bandwidth(platform_file)
    assert bandwidth is not None

    def answer(message: Message) -> list[Message]:
        out: list[Message] = []
        for e in message["events"]:
            if e["type"] == "JOB_SUBMITTED":
                out.append(ev(message["now"], "EXECUTE_JOB", job_id=e["data"]["job_id"], alloc="0"))
            elif e["type"] == "JOB_COMPLETED":
                out.append(ev(message["now"], "QUERY", requests={"consumed_energy": {}}))
        return out

    scheduler = ScriptedScheduler(answer)
    adapter = ExternalScheduler(scheduler.endpoint, ProtocolOptions(timeout=10))
    job = Job("1", 1.0, 1, ParallelHomogeneous(5e9), walltime=100.0)
    try:
        simulate(platform, Workload.from_jobs([job]), adapter, energy=True, delivery=Delivery.BATSIM,
                 execution=StepExecution(bandwidth, platform, energy=True))
    finally:
        scheduler.join()
    (answered,) = [e["data"]["consumed_energy"] for e in scheduler.events("ANSWER")]
    assert answered == pytest.approx(32 * 80 * 6 + 120 * 5, rel=1e-8)


def test_message_rates_follow_each_hosts_route_to_the_master(tmp_path: Path) -> None:
    """Hosts with explicit routes (the profiles platforms): 1 byte over 10 Gbps links in 0.8 ns from a compute
    host, in 0.1 ns on the master host (SimGrid's loopback), as measured in SimGrid 3.32."""
    rates = message_rates(PROFILES / "platform.xml")
    assert rates is not None and rates.master == LOOPBACK_BANDWIDTH == 1e10
    assert rates.hosts == {f"node{i}": 1.25e9 for i in range(1, 9)} and rates.of("node3") == 1.25e9
    cluster = message_rates(TIES / "platform.xml")
    assert cluster is not None and cluster.master == cluster.of("any host") == 125e6
    text = (PROFILES / "platform.xml").read_text()
    narrow = tmp_path / "narrow.xml"
    narrow.write_text(text.replace('<link id="l_master_host0" bandwidth="10Gbps"',
                                   '<link id="l_master_host0" bandwidth="1Gbps"'))
    assert message_rates(narrow) == (1e10, {f"node{i}": 1.25e8 for i in range(1, 9)}, None)
    for name, changed in {
        "latency": text.replace('<link id="l_node3" bandwidth="10Gbps" latency="0"/>',
                                '<link id="l_node3" bandwidth="10Gbps" latency="1us"/>'),
        "no route": text.replace('<route src="node6" dst="master_host0">', '<route src="node6" dst="node6">'),
        "no master": text.replace('value="master"', 'value="compute"'),
    }.items():
        (tmp_path / f"{name}.xml").write_text(changed)
        assert message_rates(tmp_path / f"{name}.xml") is None, name
    assert message_rates(NETWORK / "platform.xml") is None


def test_a_parallel_task_goes_at_the_pace_of_its_slowest_host() -> None:
    """SimGrid's ptask_L07 action: one unit of work at the smallest speed / flops of its hosts."""
    assert job_steps(Parallel((5e9, 9e9)), [1e9, 3e9]) == [Computation(0.2)]  # 5 s on the first, 3 s on the second
    assert job_steps(Parallel((0.0, 9e9)), [1e9, 3e9]) == [Computation(3e9 / 9e9)]  # a host without work
    assert job_steps(ParallelHomogeneous(6e9), [3e9, 2e9]) == [Computation(2e9 / 6e9)]
    assert job_steps(Composed((Delay(3), ParallelHomogeneous(1e9)), 2), [1e9]) == [3.0, Computation(1.0)] * 2
    with pytest.raises(ClusterSimError, match="as many hosts as tasks"):
        job_steps(Parallel((5e9,)), [1e9, 3e9])
    with pytest.raises(ClusterSimError, match="without computation"):
        job_steps(ParallelHomogeneous(0.0), [1e9])


def test_a_computations_rest_is_in_work_units() -> None:
    """A computation of 5 s at 0.2 units/s, cut into steps by sleeps of 0.7 s: SimGrid 3.32 ends it at
    4.999999999999999 (its rest after each step is 1 - 0.2 * 0.7..., the last step that rest over 0.2)."""
    engine = Engine()
    log: list[tuple[str, float]] = []

    def job() -> Body:
        computation = yield Execute(0.2)
        timed_out = yield WaitFor(computation, 100.0)
        log.append(("timed out" if timed_out else "done", engine.now))

    def sleeper() -> Body:
        for _ in range(3):
            yield Sleep(0.7)
        log.append(("slept", engine.now))

    engine.create(Scripted(job()))
    engine.create(Scripted(sleeper()))
    engine.run()
    assert log == [("slept", 2.0999999999999996), ("done", 4.999999999999999)]


def test_a_wait_for_a_computation_times_out_and_the_computation_goes_on_until_its_actor_is_over() -> None:
    engine = Engine()
    log: list[tuple[str, float]] = []

    def job() -> Body:
        computation = yield Execute(0.2)
        timed_out = yield WaitFor(computation, 2.5)
        log.append(("timed out" if timed_out else "done", engine.now))
        yield Sleep(1.0)  # the computation still runs: its end (t=5) is no step, the actor is over at 3.5

    def sleeper() -> Body:
        yield Sleep(6.0)
        log.append(("slept", engine.now))

    engine.create(Scripted(job()))
    engine.create(Scripted(sleeper()))
    engine.run()
    assert log == [("timed out", 2.5), ("slept", 6.0)]


def test_a_computation_that_ends_with_its_timeout_is_done() -> None:
    """Both end in one step; the computation began first, so SimGrid answers the wait with its end (measured in
    SimGrid 3.32: a 5 s computation waited for 5 s is done)."""
    engine = Engine()
    log: list[bool] = []

    def job() -> Body:
        computation = yield Execute(0.2)
        log.append((yield WaitFor(computation, 5.0)))

    engine.create(Scripted(job()))
    engine.run()
    assert log == [False] and engine.now == 5.0


PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<zone id="AS0" routing="Full">
    <host id="node2" speed="3Gf"/>
    <host id="node1" speed="1Gf"/>
    <host id="master" speed="1Gf"><prop id="role" value="master"/></host>
    <link id="l1" bandwidth="10Gbps" latency="0"/>
    <link id="l2" bandwidth="10Gbps" latency="0"/>
    <link id="lm" bandwidth="10Gbps" latency="0"/>
    <route src="node1" dst="node2"><link_ctn id="l1"/><link_ctn id="l2"/></route>
    <route src="node1" dst="master"><link_ctn id="l1"/><link_ctn id="lm"/></route>
    <route src="node2" dst="master"><link_ctn id="l2"/><link_ctn id="lm"/></route>
</zone>
</platform>
"""
WORKLOAD = {
    "nb_res": 2,
    "jobs": [{"id": 1, "subtime": 0, "res": 2, "profile": "par", "walltime": 100},
             {"id": 2, "subtime": 1, "res": 1, "profile": "ph", "walltime": 2.5},
             {"id": 3, "subtime": 1, "res": 1, "profile": "ph", "walltime": 100}],
    "profiles": {"par": {"type": "parallel", "cpu": [5e9, 9e9], "com": [0, 0, 0, 0]},
                 "ph": {"type": "parallel_homogeneous", "cpu": 5e9, "com": 0}},
}


def test_jobs_compute_on_hosts_of_different_speeds_and_stop_at_their_walltime(tmp_path: Path) -> None:
    """`clustersim run` on a Batsim workload that computes, on hosts with explicit routes (node1 1 Gf is resource 0,
    node2 3 Gf resource 1), takes the step model by default. Job 1 computes 5 Gf on node1 and 9 Gf on node2: 5 s.
    Jobs 2 and 3 compute 5 Gf each, started at job 1's end: job 3 on node2 in 5/3 s, job 2 on node1 would take
    5 s and is stopped by its 2.5 s walltime. The nanoseconds are Batsim's messages (0.1 ns on the master, 0.8
    ns from a compute host): every value is the one `--platform-model simgrid` (SimGrid 3.32) gives."""
    import csv
    import json

    from clustersim.cli import main

    (tmp_path / "platform.xml").write_text(PLATFORM)
    (tmp_path / "workload.json").write_text(json.dumps(WORKLOAD))
    code = main(["run", "-p", str(tmp_path / "platform.xml"), "-w", str(tmp_path / "workload.json"),
                 "-e", str(tmp_path / "out"), "--host-order", "name", "-q", "--no-gantt", "--policy", "fcfs"])
    assert code == 0
    with open(tmp_path / "out_jobs.csv", newline="") as f:
        rows = {row["job_id"]: row for row in csv.DictReader(f)}
    columns = ("final_state", "allocated_resources", "starting_time", "execution_time", "finish_time")
    assert {key: tuple(row[column] for column in columns) for key, row in rows.items()} == {
        "1": ("COMPLETED_SUCCESSFULLY", "0-1", "4e-10", "5", "5.0000000004"),
        "2": ("COMPLETED_WALLTIME_REACHED", "0", "5.0000000013", "2.5", "7.5000000013"),
        "3": ("COMPLETED_SUCCESSFULLY", "1", "5.0000000014", "1.666666666666667", "6.666666668066667"),
    }


def test_an_actor_computes_on_its_host_at_its_speed_and_messages_go_at_its_routes_rate() -> None:
    """`this_actor.execute(flops)` as SimGrid's (Batsim's switching actors compute 1 flop): flops over the host's
    speed; a message from a node goes at that node's route's rate, one from the master at the master's."""
    from clustersim.platform.messages import MessageRates
    from clustersim.platform.model import Node, Platform

    platform = Platform([Node(0, "slow", speed=1e9), Node(1, "fast", speed=4e9)])
    model = StepExecution(MessageRates(1e10, {"slow": 1.25e9, "fast": 2.5e9}, None), platform)
    sg = model.simgrid
    log: list[tuple[str, float]] = []

    def server() -> None:
        for _ in range(3):
            log.append((sg.Mailbox.by_name("server").get(), model.engine.clock))

    def node(name: str, host: int) -> None:
        sg.this_actor.execute(2e9)
        log.append((f"{name} computed", model.engine.clock))
        sg.Mailbox.by_name("server").put_async(name, 1).wait()

    def core() -> None:
        sg.Actor.create("server", model.master, server)
        sg.Actor.create("slow", model.host_of(0), node, "slow", 0)
        sg.Actor.create("fast", model.host_of(1), node, "fast", 1)
        sg.Mailbox.by_name("server").put_async("master", 1).wait()

    model.drive(core)
    assert log == [("master", 1e-10), ("fast computed", 0.5), ("fast", 0.5 + 4e-10), ("slow computed", 2.0),
                   ("slow", 2.0 + 8e-10)]


def test_a_workload_that_communicates_goes_to_simgrid_and_the_step_model_refuses_it() -> None:
    import warnings

    from clustersim.core.execution_choice import execution_model
    from clustersim.errors import InputError
    from clustersim.platform.load import load_platform

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the platform reader's note on the links it does not read
        platform = load_platform(PROFILES / "platform.xml", host_order="name")
    computing = Workload("w0", iter(()), local_only=True)
    communicating = Workload("w0", iter(()), communicates=True)
    assert resolve_model(None, PROFILES / "platform.xml", computing, batsim_actors=True) == "step"
    assert resolve_model(None, PROFILES / "platform.xml", communicating, batsim_actors=True) == "simgrid"
    assert isinstance(execution_model("step", platform, PROFILES / "platform.xml", computing), StepExecution)
    with pytest.raises(InputError, match="use --platform-model simgrid for communication and I/O"):
        execution_model("step", platform, PROFILES / "platform.xml", communicating)
    with pytest.raises(InputError, match="messages to the master host take known times"):
        execution_model("step", platform, NETWORK / "platform.xml", computing)
