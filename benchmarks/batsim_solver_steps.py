"""SimGrid 3.32's solver steps without SimGrid: the skeleton of Batsim's actors of `batsim_wakeup_order.py`, run on
the step platform model's engine (`clustersim.core.step_execution.Engine`, a few lines of Python that do SimGrid's
arithmetic), checked against the reference corpus's transcripts.

Whether Batsim's server sees a job's end before it calls the scheduler is decided, at exact ties, by SimGrid's
solver steps (docs/batsim-protocol.md, "How Batsim groups the events of one instant", point 5). This script asks
whether that rule can be computed by a simulator that does not run SimGrid: it replays a case with the same actors
as the skeleton (server, job submitter, request-reply actor fed with batsched's recorded replies, one executor per
job, each a generator of calls) on an engine that does only what SimGrid 3.32 does for them under ptask_L07
(`EngineImpl::run` and `solve`,
`HostL07Model::update_actions_state`, `Model::next_occurring_event_full`, `double_update`):

- actors run in sub-rounds at one clock value, in the order they were made ready; the simcalls of a sub-round
  (sleep, `put_async`, `wait`, `get`, actor creation) are handled after it, in that order;
- a step lasts the shortest remaining time among the actions: a sleep's `max_duration`, a message's remains
  (1 byte) over its rate (the route's bandwidth); the clock moves `now = now + step`; every action loses the step,
  a sleep's rest below 1e-9 s (`precision/timing`) and a message's below 1e-14 bytes set to 0; the actions that
  reach 0 end in that step, in the order they began, and wake their actors.

    python benchmarks/batsim_solver_steps.py              # every ties case of ../shared/reference/batsim
    python benchmarks/batsim_solver_steps.py CASE_DIR...
    python benchmarks/batsim_solver_steps.py --cost out/jobs.csv --jobs 10000   # the arithmetic's CPU cost
    python benchmarks/batsim_solver_steps.py --model-cost 10000   # `clustersim run`, fast against step model
    python benchmarks/batsim_solver_steps.py --model-cost 10000 --computing   # the same jobs computing

With `--cost`, the arithmetic's price on a large schedule: the first N jobs of a jobs.csv (e.g. the fast model's
HPC2N run under `easy`), each an executor that sleeps from its start to its finish and sends its end to the server,
started by one actor that sleeps from start to start; it prints the CPU seconds of the engine's run alone.

Covers what the skeleton covers (delay profiles, EXECUTE_JOB and REJECT_JOB) on platforms where every message
lasts as long (the ties family: 1 byte over 125 MBps, `batsim_message_times.py`).
"""

from __future__ import annotations

import argparse
import csv
import itertools
import time
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

from batsim_wakeup_order import CORPUS, _event_key, _natural, case_inputs, report
from clustersim.core.step_execution import Actor, Create, Get, PutAsync, Simcall, Sleep, Wait
from clustersim.core.step_execution import Engine as StepEngine

RATE = 125e6
"""Bytes per second of every route to the master host on the ties platforms (a 1-byte message: 8 ns)."""

Call = tuple[Any, ...]
Generated = Generator[Call, Any, None]


class _Generated(Actor):
    """A skeleton's actor, a generator of calls (`("sleep", seconds)`, `("create", generator)`,
    `("put_async", payload)`, `("wait", comm)`, `("get",)`), as an actor of the package's engine."""

    def __init__(self, body: Generated):
        self._body = body

    def resume(self, value: Any) -> Simcall | None:
        try:
            call = self._body.send(value)
        except StopIteration:  # an actor that returned is gone
            return None
        kind = call[0]
        if kind == "sleep":
            return Sleep(call[1])
        if kind == "create":
            return Create(_Generated(call[1]))
        if kind == "put_async":
            return PutAsync(call[1], 1.0, RATE)
        if kind == "wait":
            return Wait(call[1])
        if kind == "get":
            return Get()
        raise ValueError(kind)


class Engine(StepEngine):
    """The package's engine, fed with the skeleton's generators."""

    def create(self, actor: Actor | Generated) -> None:  # type: ignore[override]
        super().create(actor if isinstance(actor, Actor) else _Generated(actor))


def replay(case: Path) -> dict[str, Any]:
    """The skeleton's actors (batsim_wakeup_order.replay) on `Engine`."""
    inputs = case_inputs(case)
    if inputs is None:
        return {"case": case.name, "covered": False}
    sent, replies, profiles, jobs = inputs
    engine = Engine()
    state: dict[str, Any] = {
        "queue": [], "ready": False, "buffer": [], "round": 0, "diff": None, "submitters_done": False,
        "running": 0, "submitted": 0, "completed": 0, "end_sent": False, "ended": {}, "received": {},
    }

    def put(kind: str, data: Any) -> Generator[Call, Any, None]:
        comm = yield ("put_async", (kind, data))
        state["queue"].append(engine.now)
        yield ("wait", comm)

    def server() -> Generated:
        yield from call_scheduler()
        while True:
            kind, data = yield ("get",)
            state["queue"].pop(0)
            if kind == "SUBMITTED":
                state["buffer"] += [("JOB_SUBMITTED", job_id) for job_id in data]
                state["submitted"] += len(data)
            elif kind == "BYE":
                state["submitters_done"] = True
                state["buffer"].append(("NOTIFY", "no_more_static_job_to_submit"))
            elif kind == "COMPLETED":
                state["received"][data] = engine.now
                state["buffer"].append(("JOB_COMPLETED", data))
                state["running"] -= 1
                state["completed"] += 1
            elif kind == "EXECUTE_JOB":
                state["running"] += 1
                yield ("create", executor(data["job_id"]))
            elif kind == "REJECT_JOB":
                state["completed"] += 1
            elif kind == "READY":
                state["ready"] = True
            elif kind == "END_ACK":
                engine.stopped = True
                return
            if state["ready"] and not state["queue"]:
                finished = state["submitters_done"] and not state["running"]
                if not state["buffer"] and finished and state["completed"] == state["submitted"]:
                    if state["end_sent"]:
                        continue
                    state["buffer"].append(("SIMULATION_ENDS", None))
                    state["end_sent"] = True
                if state["buffer"]:
                    yield from call_scheduler()

    def call_scheduler() -> Generator[Call, Any, None]:
        events, state["buffer"], state["ready"] = state["buffer"], [], False
        yield ("create", request_reply(events))

    def request_reply(events: list[tuple[str, str | None]]) -> Generated:
        index = state["round"]
        state["round"] += 1
        expected = [_event_key(event) for event in sent[index]["events"]] if index < len(sent) else None
        mine = [("SIMULATION_BEGINS", None)] if index == 0 else events
        if mine != expected:
            state["diff"] = {"message": index, "now": sent[index]["now"] if expected else None,
                             "skeleton": mine, "batsim": expected}
            engine.stopped = True
            return
        reply = replies[index]
        for event in reply["events"]:
            if event["timestamp"] > engine.now:
                yield ("sleep", event["timestamp"] - engine.now)
            yield from put(event["type"], event["data"])
        if mine[-1][0] == "SIMULATION_ENDS":
            yield from put("END_ACK", None)
            return
        if reply["now"] > engine.now:
            yield ("sleep", reply["now"] - engine.now)
        yield from put("READY", None)

    def executor(job_id: str) -> Generated:
        job = jobs[job_id]
        delay, walltime = profiles[job["profile"]]["delay"], job.get("walltime", -1)
        yield ("sleep", delay if walltime < 0 or delay < walltime else walltime)
        state["ended"][job_id] = engine.now
        yield from put("COMPLETED", job_id)

    def submitter() -> Generated:
        yield from put("HELLO", None)
        current, batch = engine.now, []
        for job_id in sorted(jobs, key=lambda key: (jobs[key]["subtime"], key)):
            if jobs[job_id]["subtime"] > current:
                if batch:
                    yield from put("SUBMITTED", batch)
                    batch = []
                yield ("sleep", jobs[job_id]["subtime"] - current)
                current = engine.now
            batch.append(job_id)
        if batch:
            yield from put("SUBMITTED", batch)
        yield from put("BYE", None)

    engine.create(server())
    engine.create(submitter())
    engine.run()
    return {"case": case.name, "covered": True, "diff": state["diff"], "messages": len(sent)}


def cost(jobs_csv: Path, limit: int) -> tuple[float, int]:
    """CPU seconds of `Engine` replaying the first `limit` jobs of `jobs_csv` as sleeps and 1-byte messages."""
    with open(jobs_csv, newline="") as f:
        rows = list(itertools.islice(csv.DictReader(f), limit))
    jobs = sorted((float(row["starting_time"]), float(row["finish_time"]) - float(row["starting_time"]))
                  for row in rows)
    engine = Engine()
    received = 0

    def server() -> Generated:
        nonlocal received
        while received < len(jobs):
            yield ("get",)
            received += 1
        engine.stopped = True

    def executor(seconds: float) -> Generated:
        yield ("sleep", max(seconds, 1e-5))
        comm = yield ("put_async", "ended")
        yield ("wait", comm)

    def starter() -> Generated:
        for start, seconds in jobs:
            if start > engine.now:
                yield ("sleep", start - engine.now)
            yield ("create", executor(seconds))

    engine.create(server())
    engine.create(starter())
    began = time.process_time()
    engine.run()
    return time.process_time() - began, len(jobs)


TRACE = CORPUS.parents[1] / "traces" / "HPC2N-2002-2.2-cln.swf.gz"
PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<zone id="AS0" routing="Full">
    <cluster id="compute" prefix="host" suffix="" radical="0-{last}"
        speed="1Gf" bw="125MBps" lat="0" bb_bw="2.25GBps" bb_lat="0"/>
    <cluster id="master" prefix="master_host" suffix="" radical="0-0"
        speed="1Gf" bw="125MBps" lat="0" bb_bw="2.25GBps" bb_lat="0">
        <prop id="role" value="master"/>
    </cluster>
    <link id="backbone" bandwidth="1.25GBps" latency="0"/>
    <zoneRoute src="compute" dst="master" gw_src="hostcompute_router" gw_dst="master_hostmaster_router">
        <link_ctn id="backbone"/>
    </zoneRoute>
</zone>
</platform>
"""
"""The ties family's platform, with as many compute hosts as the trace's header says."""


def model_cost(limit: int, policy: str, runs: int, computing: bool = False) -> None:
    """CPU seconds of `clustersim run` with the fast and the step model (alternated, each in its own process) on
    the first `limit` HPC2N jobs as a Batsim workload of delays on a platform of the ties family's kind
    (`computing`: as `parallel_homogeneous` jobs of their run time x 1 Gflop on each host, the same times on the
    platform's 1 Gf hosts)."""
    import json
    import os
    import resource
    import subprocess
    import sys
    import tempfile
    from itertools import islice

    from clustersim.workload.swf import read_swf

    workload = read_swf(TRACE)
    jobs = list(islice(workload.jobs, limit))
    hosts = int(workload.header.get("MaxProcs") or workload.header.get("MaxNodes") or 0)
    folder = Path(tempfile.mkdtemp(prefix="step_cost_"))
    (folder / "platform.xml").write_text(PLATFORM.format(last=hosts - 1))
    document = {
        "nb_res": hosts,
        "jobs": [{"id": job.id, "subtime": job.submit_time, "res": job.nb_res, "profile": f"d{job.profile.seconds!r}",
                  "walltime": -1 if job.walltime is None else job.walltime} for job in jobs],
        "profiles": {f"d{job.profile.seconds!r}": {"type": "delay", "delay": job.profile.seconds} for job in jobs},
    }
    if computing:
        document["profiles"] = {name: {"type": "parallel_homogeneous", "cpu": profile["delay"] * 1e9, "com": 0}
                                for name, profile in document["profiles"].items()}
    (folder / "workload.json").write_text(json.dumps(document))
    paths = [str(Path(path).resolve()) for path in os.environ.get("PYTHONPATH", "").split(os.pathsep) if path]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths))  # the children run in `folder`
    times: dict[str, list[float]] = {"fast": [], "step": []}
    outputs: dict[str, Path] = {}
    for _ in range(runs):
        for model in times:
            out = folder / model
            code = ("from clustersim.cli import main; raise SystemExit(main(['run', '-p', 'platform.xml', '-w', "
                    f"'workload.json', '--policy', {policy!r}, '--platform-model', {model!r}, '-o', {str(out)!r}, "
                    "'--force', '-q', '--no-gantt']))")
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([sys.executable, "-c", code], check=True, cwd=folder, env=env)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            times[model].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            outputs[model] = out
    for model, seconds in times.items():
        print(f"{model}: {len(jobs)} {'computing' if computing else 'delay'} jobs under {policy}, min "
              f"{min(seconds):.2f} CPU s of {runs} runs "
              f"({', '.join(f'{t:.2f}' for t in seconds)})")
    import csv as csv_module

    def starts(model: str) -> dict[str, float]:
        with open(outputs[model] / "jobs.csv", newline="") as f:
            return {row["job_id"]: float(row["starting_time"] or "nan") for row in csv_module.DictReader(f)}

    fast, step = starts("fast"), starts("step")
    moved = sum(1 for key in fast if abs(fast[key] - step.get(key, float("nan"))) > 1e-3)
    print(f"starting times that differ by more than 1 ms between the models: {moved} of {len(fast)}")


def main(run: Callable[[Path], dict[str, Any]] = replay) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", type=Path, help="case folders (default: the corpus's ties family)")
    parser.add_argument("--cost", type=Path, help="a jobs.csv: time the arithmetic on its jobs instead")
    parser.add_argument("--jobs", type=int, default=10_000, help="with --cost: how many of its first jobs")
    parser.add_argument("--model-cost", type=int, metavar="JOBS",
                        help="time `clustersim run` with the fast and the step model on the first JOBS HPC2N jobs")
    parser.add_argument("--policy", default="easy", help="with --model-cost: the policy (default easy)")
    parser.add_argument("--runs", type=int, default=3, help="with --model-cost: runs of each model (default 3)")
    parser.add_argument("--computing", action="store_true",
                        help="with --model-cost: the jobs compute (parallel_homogeneous) instead of sleeping")
    args = parser.parse_args()
    if args.model_cost is not None:
        model_cost(args.model_cost, args.policy, args.runs, args.computing)
        return
    if args.cost is not None:
        seconds, count = cost(args.cost, args.jobs)
        print(f"{count} jobs: {seconds:.2f} CPU seconds of step arithmetic")
        return
    cases = args.cases or sorted((CORPUS / "ties").iterdir(), key=lambda path: _natural(path.name))
    report(cases, run, "steps")


if __name__ == "__main__":
    main()
