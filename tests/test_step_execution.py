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
    Create,
    Engine,
    Get,
    PutAsync,
    Simcall,
    Sleep,
    StepExecution,
    Wait,
)
from clustersim.errors import ClusterSimError
from clustersim.platform.messages import message_bandwidth
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
    with pytest.raises(ClusterSimError, match="job 'w0!1'.*communicates or does I/O.*--platform-model simgrid"):
        StepExecution(125e6).start(RunningJob(job, 0.0, IntervalSet.range(0, 1)))


TIES = CORPUS / "ties" / "ties_000_easy_bf"
PROFILES = CORPUS / "profiles" / "profiles_010_ph_conservative_bf"
NETWORK = CORPUS / "network" / "network_016_routes_easy_bf"


def test_message_bandwidth_is_the_clusters_bandwidth_when_every_route_has_it(tmp_path: Path) -> None:
    assert message_bandwidth(TIES / "platform.xml") == 125e6  # 1 byte in 8 ns, as measured in SimGrid
    assert message_bandwidth(PROFILES / "platform.xml") is None  # hosts and explicit routes: not read
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


def test_the_step_model_is_refused_where_batsims_actors_do_not_run() -> None:
    from clustersim.errors import InputError

    delays = Workload("w0", iter(()), delays_only=True)
    with pytest.raises(InputError, match="Batsim's delivery, no energy and no external events"):
        resolve_model("step", TIES / "platform.xml", delays, batsim_actors=False)
    assert resolve_model("step", TIES / "platform.xml", delays, batsim_actors=True) == "step"
