"""How Batsim 4.2 groups the job ends of one instant: a skeleton of its actors in SimGrid 3.32, checked against
the reference corpus's transcripts (docs/batsim-protocol.md, "SimGrid's wake-up order").

Batsim's server (server.cpp) receives one inter-actor message at a time from its mailbox and calls the scheduler
only when the scheduler is ready *and* the mailbox is empty (`mailbox_empty("server")`). Every inter-actor message
is a blocking SimGrid `put` of 1 byte (ipp.cpp), so it takes simulated time: 8 ns over the 125 MBps links of the
corpus's `ties` platforms. A job's executor actor (jobs_execution.cpp) sleeps for its delay (or walltime) and then
puts JOB_COMPLETED; the request-reply actor (network.cpp) puts the scheduler's decisions one after the other, then
SCHED_READY; the job submitter (job_submitter.cpp) puts each instant's submissions. So each job starts a few
messages after its decision instant, ends the same few nanoseconds after its end instant, and whether the
server sees a second end before calling the scheduler depends on those nanoseconds.

This script replays a case with those actors on the case's own platform, in SimGrid's ptask_L07 model (as Batsim
runs it), feeding the request-reply actor the scheduler's recorded replies, and compares each message the skeleton
builds with the one Batsim sent. `mailbox_empty` reads the kernel's queue directly, and SimGrid posts a put after
the scheduling round in which the actor called it: a put is counted once `put_async` has returned, so one issued
in the round in which the server wakes is not seen, and one posted in an earlier solver step is, even at the same
clock value (a step can be shorter than the clock's resolution). With `--slots`, a put is counted when it was
posted at an earlier time in whole messages (8 ns): the rule a simulator without SimGrid can apply.

    python benchmarks/batsim_wakeup_order.py              # every ties case of ../shared/reference/batsim
    python benchmarks/batsim_wakeup_order.py --slots CASE_DIR...

At a first difference where Batsim's message has job ends that the skeleton's lacks, it prints SimGrid's clock
(bit for bit) when the skeleton's server received its last end and when each missing job's sleep ended
(docs/batsim-protocol.md, "How Batsim groups the events of one instant").

Covers delay profiles and EXECUTE_JOB / REJECT_JOB decisions (the ties family without `killer`); other cases
are reported as not covered. Each case runs in its own process (SimGrid has one engine per process).
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "reference" / "batsim"
SLOT = 8e-9
"""One 1-byte message between a host and the master over the ties platforms' 125 MBps links, in seconds."""


def _natural(name: str) -> list[Any]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _transcript(case: Path) -> list[dict[str, Any]]:
    with gzip.open(case / "out_protocol.jsonl.gz", "rt") as lines:
        return [json.loads(line) for line in lines]


def _event_key(event: dict[str, Any]) -> tuple[str, str | None]:
    data = event["data"]
    if event["type"] in ("JOB_SUBMITTED", "JOB_COMPLETED"):
        return event["type"], data["job_id"]
    if event["type"] == "NOTIFY":
        return "NOTIFY", data["type"]
    return event["type"], None


def case_inputs(case: Path) -> tuple[list[Any], list[Any], dict[str, Any], dict[str, Any]] | None:
    """A case's messages to batsched and its replies, its profiles and its jobs by id; None when the skeleton does
    not cover it (a profile other than delay, a decision other than EXECUTE_JOB or REJECT_JOB)."""
    lines = _transcript(case)
    sent = [line["msg"] for line in lines if line["dir"] == "batsim->sched"]
    replies = [line["msg"] for line in lines if line["dir"] == "sched->batsim"]
    workload = json.loads((case / "workload.json").read_text())
    profiles: dict[str, Any] = workload["profiles"]
    if any(profile["type"] != "delay" for profile in profiles.values()):
        return None
    if not {event["type"] for reply in replies for event in reply["events"]} <= {"EXECUTE_JOB", "REJECT_JOB"}:
        return None
    return sent, replies, profiles, {f"w0!{job['id']}": job for job in workload["jobs"]}


def replay(case: Path, slots: bool) -> dict[str, Any]:
    """Run the skeleton on one case; say where its first message differs from Batsim's, if anywhere."""
    from clustersim.core.simgrid_execution import ensure_simgrid, load_simgrid

    inputs = case_inputs(case)
    if inputs is None:
        return {"case": case.name, "covered": False}
    sent, replies, profiles, jobs = inputs
    ensure_simgrid()
    sg: Any = load_simgrid()
    engine = sg.Engine(["skeleton", "--cfg=host/model:ptask_L07", "--log=root.thres:critical"])
    engine.load_platform(str(case / "platform.xml"))
    hosts = {host.name: host for host in engine.all_hosts}
    master = next(host for name, host in hosts.items() if name.startswith("master"))
    compute = [hosts[name] for name in sorted((n for n in hosts if hosts[n] is not master), key=_natural)]
    mailbox = sg.Mailbox.by_name("server")
    state: dict[str, Any] = {
        "queue": [], "ready": False, "buffer": [], "round": 0, "diff": None, "done": False,
        "submitters_done": False, "running": 0, "submitted": 0, "completed": 0, "end_sent": False,
        "ended": {}, "received": {},
    }

    def clock() -> float:
        return float(sg.Engine.clock)

    def stamp(time: float) -> tuple[float, int] | float:
        return (round(time, 4), round((time - round(time, 4)) / SLOT)) if slots else time

    def put(kind: str, data: Any) -> None:
        """A blocking 1-byte put to the server (`put_async`, then `wait`); the queue holds the puts that SimGrid
        has posted (`put_async` returned) and the server has not received, with the time they were posted."""
        comm = mailbox.put_async((kind, data), 1)
        state["queue"].append(clock())
        comm.wait()

    def mailbox_empty() -> bool:
        if not slots:
            return not state["queue"]
        now = stamp(clock())
        return not any(stamp(posted) < now for posted in state["queue"])

    def server() -> None:
        call_scheduler()
        while not state["done"]:
            kind, data = mailbox.get()
            state["queue"].pop(0)
            if kind == "SUBMITTED":
                state["buffer"] += [("JOB_SUBMITTED", job_id) for job_id in data]
                state["submitted"] += len(data)
            elif kind == "BYE":
                state["submitters_done"] = True
                state["buffer"].append(("NOTIFY", "no_more_static_job_to_submit"))
            elif kind == "COMPLETED":
                state["received"][data] = clock()
                state["buffer"].append(("JOB_COMPLETED", data))
                state["running"] -= 1
                state["completed"] += 1
            elif kind == "EXECUTE_JOB":
                state["running"] += 1
                first = min(int(part.split("-")[0]) for part in data["alloc"].split())
                sg.Actor.create("job", compute[first], executor, data["job_id"])
            elif kind == "REJECT_JOB":
                state["completed"] += 1
            elif kind == "READY":
                state["ready"] = True
            elif kind == "END_ACK":
                break
            if state["ready"] and mailbox_empty():
                finished = state["submitters_done"] and not state["running"]
                if not state["buffer"] and finished and state["completed"] == state["submitted"]:
                    if state["end_sent"]:
                        continue
                    state["buffer"].append(("SIMULATION_ENDS", None))
                    state["end_sent"] = True
                if state["buffer"]:
                    call_scheduler()

    def call_scheduler() -> None:
        events, state["buffer"], state["ready"] = state["buffer"], [], False
        sg.Actor.create("request-reply", master, request_reply, events)

    def request_reply(events: list[tuple[str, str | None]]) -> None:
        index = state["round"]
        state["round"] += 1
        expected = [_event_key(event) for event in sent[index]["events"]] if index < len(sent) else None
        mine = [("SIMULATION_BEGINS", None)] if index == 0 else events
        if mine != expected:
            state["diff"] = {"message": index, "now": sent[index]["now"] if expected else None,
                             "skeleton": mine, "batsim": expected, "clocks": _clocks(mine, expected or [], state)}
            state["done"] = True
            return
        reply = replies[index]
        for event in reply["events"]:
            if event["timestamp"] > clock():
                sg.this_actor.sleep_for(event["timestamp"] - clock())
            put(event["type"], event["data"])
        if mine[-1][0] == "SIMULATION_ENDS":
            put("END_ACK", None)
            return
        if reply["now"] > clock():
            sg.this_actor.sleep_for(reply["now"] - clock())
        put("READY", None)

    def executor(job_id: str) -> None:
        job = jobs[job_id]
        delay, walltime = profiles[job["profile"]]["delay"], job.get("walltime", -1)
        sg.this_actor.sleep_for(delay if walltime < 0 or delay < walltime else walltime)
        state["ended"][job_id] = clock()
        put("COMPLETED", job_id)

    def submitter() -> None:
        put("HELLO", None)
        current, batch = clock(), []
        for job_id in sorted(jobs, key=lambda key: (jobs[key]["subtime"], key)):
            if jobs[job_id]["subtime"] > current:
                if batch:
                    put("SUBMITTED", batch)
                    batch = []
                sg.this_actor.sleep_for(jobs[job_id]["subtime"] - current)
                current = clock()
            batch.append(job_id)
        if batch:
            put("SUBMITTED", batch)
        put("BYE", None)

    sg.Actor.create("server", master, server)
    sg.Actor.create("submitter", master, submitter)
    engine.run()
    return {"case": case.name, "covered": True, "diff": state["diff"], "messages": len(sent)}


def _clocks(mine: list[Any], batsim: list[Any], state: dict[str, Any]) -> str:
    """At a first difference where Batsim's message has job ends the skeleton's lacks: SimGrid's clock (repr, bit
    for bit) when the skeleton's server received its message's last end, and when each missing job's sleep ended."""
    received = [job for kind, job in mine if kind == "JOB_COMPLETED"]
    mine_keys = {tuple(key) for key in mine}
    late = [job for kind, job in batsim if kind == "JOB_COMPLETED" and (kind, job) not in mine_keys]
    if not received or not late:
        return ""
    ends = ", ".join(f"{job} ended at {state['ended'].get(job)!r}" for job in late)
    return f"server received {received[-1]}'s end at {state['received'][received[-1]]!r}; {ends}"


def simultaneous_ends(case: Path, diff: dict[str, Any] | None) -> tuple[int, int]:
    """Instants with two or more job ends that the skeleton reproduced before its first difference, and whether
    that difference falls on such an instant (0 or 1)."""
    cut = diff["message"] if diff else 10**9
    ends: dict[float, list[int]] = collections.defaultdict(list)
    for index, message in enumerate(m["msg"] for m in _transcript(case) if m["dir"] == "batsim->sched"):
        for event in message["events"]:
            if event["type"] == "JOB_COMPLETED":
                ends[message["now"]].append(index)
    multi = [indices for indices in ends.values() if len(indices) >= 2]
    return sum(max(i) < cut for i in multi), sum(min(i) <= cut <= max(i) for i in multi)



def report(cases: Iterable[Path], result_of: Callable[[Path], dict[str, Any]], label: str) -> None:
    """Print, per case, whether every message was grouped as Batsim did (or the first that was not, as `label`
    grouped it), then the counts: the summary this script and batsim_solver_steps.py share."""
    identical = covered = reproduced = diverged = 0
    for case in cases:
        result = result_of(case)
        if not result["covered"]:
            print(f"{case.name}: not covered (profiles other than delay, or decisions other than starts/rejects)")
            continue
        covered += 1
        diff = result["diff"]
        good, bad = simultaneous_ends(case, diff)
        reproduced, diverged = reproduced + good, diverged + bad
        if diff is None:
            identical += 1
            print(f"{case.name}: every message grouped as Batsim did ({result['messages']})")
        else:
            clocks = diff.get("clocks")
            print(f"{case.name}: message {diff['message']} (now={diff['now']}) differs: {label} "
                  f"{diff['skeleton']}, Batsim {diff['batsim']}" + (f"; {clocks}" if clocks else ""))
    print(f"{identical}/{covered} cases grouped as Batsim in every message; instants with several job ends "
          f"reproduced before a first difference: {reproduced}/{reproduced + diverged}")

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", type=Path, help="case folders (default: the corpus's ties family)")
    parser.add_argument("--slots", action="store_true", help="compare times in whole 8 ns messages")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # a child process: one case, JSON
    args = parser.parse_args()
    if args.one:
        print(json.dumps(replay(args.cases[0], args.slots)))
        return
    cases = args.cases or sorted((CORPUS / "ties").iterdir())
    def result_of(case: Path) -> dict[str, Any]:
        command = [sys.executable, __file__, "--one", str(case)] + (["--slots"] if args.slots else [])
        output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
        result: dict[str, Any] = json.loads(output.strip().splitlines()[-1])
        return result

    report(cases, result_of, "skeleton")


if __name__ == "__main__":
    main()
