"""Schedulers that misbehave: each fault gets a clear error naming the message, its own exit code, and the
outputs written so far stay complete and valid (jobs.csv and schedule.csv hold the jobs that ended).

The scheduler is a tiny Python REP script run as its own process: a plain FCFS until t=2000 (so that jobs have
completed), then the fault under test.
"""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from clustersim.cli import main
from clustersim.records.jobs_csv import COLUMNS
from conftest import csv_rows

EXAMPLES = Path(str(resources.files("clustersim") / "examples"))

SCHEDULER = r'''
import json, os, sys, time
import zmq

endpoint, mode = sys.argv[1], sys.argv[2]
socket = zmq.Context().socket(zmq.REP)
socket.bind(endpoint)
print("listening on", socket.getsockopt_string(zmq.LAST_ENDPOINT), file=sys.stderr, flush=True)
free, queue, running, size = set(), [], {}, 0
while True:
    message = json.loads(socket.recv())
    now, out = message["now"], []
    for event in message["events"]:
        kind, data = event["type"], event["data"]
        if kind == "SIMULATION_BEGINS":
            size = data["nb_compute_resources"]
            free = set(range(size))
        elif kind == "JOB_SUBMITTED":
            queue.append((data["job_id"], data["job"]["res"]))
        elif kind == "JOB_COMPLETED":
            free |= running.pop(data["job_id"])
        elif kind == "SIMULATION_ENDS":
            socket.send(json.dumps({"now": now, "events": []}).encode())
            sys.exit(0)
    if now >= 2000:
        if mode == "crash":
            os._exit(3)
        if mode == "hang":
            time.sleep(60)
        if mode == "malformed":
            socket.send(b"{oops")
            continue
        if mode == "unknown-job":
            out.append({"timestamp": now, "type": "EXECUTE_JOB", "data": {"job_id": "w0!999999", "alloc": "0"}})
        if mode == "past":
            out.append({"timestamp": now - 1, "type": "CALL_ME_LATER", "data": {"timestamp": now + 10}})
        if mode == "busy" and running and queue and queue[0][1] <= size:
            key, res = queue.pop(0)
            busy = min(next(iter(running.values())))
            alloc = [busy] + sorted(set(range(size)) - {busy})[: res - 1]
            out.append({"timestamp": now, "type": "EXECUTE_JOB",
                        "data": {"job_id": key, "alloc": " ".join(map(str, alloc))}})
    while queue and (queue[0][1] > size or queue[0][1] <= len(free)):
        key, res = queue.pop(0)
        if res > size:
            out.append({"timestamp": now, "type": "REJECT_JOB", "data": {"job_id": key}})
            continue
        alloc = sorted(free)[:res]
        free -= set(alloc)
        running[key] = set(alloc)
        out.append({"timestamp": now, "type": "EXECUTE_JOB",
                    "data": {"job_id": key, "alloc": " ".join(map(str, alloc))}})
    socket.send(json.dumps({"now": now, "events": out}).encode())
'''


@pytest.mark.parametrize(
    ("mode", "exit_code", "expected"),
    [
        ("malformed", 6, r"reply #\d+ \(to the message with now=[\d.]+\) is not valid JSON"),
        ("unknown-job", 3, r"job 'w0!999999' is not pending.*came from reply #\d+ .*EXECUTE_JOB"),
        ("busy", 3, r"resources [\d -]+ are not free.*came from reply #\d+ .*EXECUTE_JOB"),
        ("past", 6, r"reply #\d+ .*CALL_ME_LATER.*before the now=[\d.]+ .*a decision cannot change the past"),
        ("crash", 7, r"closed the connection while message #\d+ \(now=[\d.]+\) .*crashed or exited"),
        ("hang", 7, r"did not answer message #\d+ \(now=[\d.]+\) within 1 s"),
    ],
)
def test_a_misbehaving_scheduler_gets_a_clear_error_and_the_outputs_stay_valid(
    mode: str, exit_code: int, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "scheduler.py"
    script.write_text(SCHEDULER)
    scheduler = subprocess.Popen(
        [sys.executable, str(script), "tcp://127.0.0.1:*", mode], stderr=subprocess.PIPE, text=True
    )
    try:
        assert scheduler.stderr is not None
        endpoint = scheduler.stderr.readline().split()[-1]
        code = main([
            "run", "-p", str(EXAMPLES / "platform.yaml"), "-w", str(EXAMPLES / "workload.json"), "-s", endpoint,
            "--timeout", "1" if mode == "hang" else "20", "-o", str(tmp_path / "out"), "-q", "--no-gantt",
        ])
    finally:
        scheduler.kill()
        scheduler.wait()
    error = capsys.readouterr().err
    assert code == exit_code, error
    assert re.search(expected, error), error
    failed_at = float(re.findall(r"now=(\d+(?:\.\d+)?)", error)[0])
    assert failed_at >= 2000

    with open(tmp_path / "out" / "jobs.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert tuple(rows[0]) == COLUMNS
    assert len(rows) > 10, "the jobs that ended before the fault are all there"
    assert all(len(row) == len(COLUMNS) for row in rows)
    assert all(float(row[COLUMNS.index("finish_time")]) <= failed_at for row in rows[1:])
    schedule = csv_rows(tmp_path / "out" / "schedule.csv")[0]
    assert int(schedule["nb_jobs"]) == len(rows) - 1
