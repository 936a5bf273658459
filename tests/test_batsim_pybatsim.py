"""A scheduler written with pybatsim 3.2.1, unmodified and launched the pybatsim way, drives clustersim.

pybatsim is installed by this test itself (into pytest's cache directory, not into the environment), with
`--no-deps` since it pins an old pyzmq: its pure-Python dependencies are named explicitly and pyzmq is
clustersim's own.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

import pytest

from clustersim.cli import main
from conftest import csv_rows

EXAMPLES = Path(str(resources.files("clustersim") / "examples"))
PYBATSIM = ["pybatsim==3.2.1", "procset==1.0", "docopt==0.6.2", "sortedcontainers>=2.3"]

FCFS = '''
from batsim.batsim import BatsimScheduler
from procset import ProcSet


class FcfsSched(BatsimScheduler):
    """First come, first served on the lowest free hosts; jobs larger than the platform are rejected."""

    def onSimulationBegins(self):
        self.free = ProcSet((0, self.bs.nb_compute_resources - 1))
        self.queue = []

    def onJobSubmission(self, job):
        if job.requested_resources > self.bs.nb_compute_resources:
            self.bs.reject_jobs([job])
        else:
            self.queue.append(job)

    def onJobCompletion(self, job):
        self.free |= job.allocation

    def onNoMoreEvents(self):
        while self.queue and self.queue[0].requested_resources <= len(self.free):
            job = self.queue.pop(0)
            job.allocation = ProcSet(*list(self.free)[: job.requested_resources])
            self.free -= job.allocation
            self.bs.execute_jobs([job])
            self.bs.set_job_metadata(job.id, "pybatsim")
'''

KILLER = '''
import json
from batsim.batsim import BatsimScheduler
from procset import ProcSet


class KillerSched(BatsimScheduler):
    """Starts each job at once on its own hosts, asks for a call at t=50, and kills what still runs then."""

    def onSimulationBegins(self):
        self.next = 0
        self.running = []
        self.seen = {"killed": [], "completed": [], "calls": 0}
        self.bs.wake_me_up_at(50)

    def onJobSubmission(self, job):
        job.allocation = ProcSet((self.next, self.next + job.requested_resources - 1))
        self.next += job.requested_resources
        self.bs.execute_jobs([job])
        self.running.append(job)

    def onJobCompletion(self, job):
        self.seen["completed"].append([job.id, job.job_state.name])
        self.running.remove(job)

    def onRequestedCall(self):
        self.seen["calls"] += 1
        self.bs.kill_jobs(list(self.running))

    def onJobsKilled(self, jobs):
        self.seen["killed"] += [[job.id, job.progress["progress"]] for job in jobs]

    def onSimulationEnds(self):
        with open(self.options["log"], "w") as log:
            json.dump(self.seen, log)
'''


@pytest.fixture(scope="session")
def pybatsim_path(pytestconfig: pytest.Config) -> Path:
    """A directory holding pybatsim 3.2.1 and its pure-Python dependencies, installed on first use."""
    target = pytestconfig.cache.mkdir("pybatsim-3.2.1")
    if not (target / "batsim" / "batsim.py").exists():
        installed = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), *PYBATSIM],
            capture_output=True, text=True, check=False,
        )
        assert installed.returncode == 0, f"could not install pybatsim: {installed.stdout}{installed.stderr}"
    return target


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def pybatsim(path: Path, scheduler: Path, *options: str) -> Iterator[str]:
    """Launch `scheduler` with pybatsim's own launcher (it binds the REP socket); yield the endpoint."""
    port = _free_port()
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(path), os.environ.get("PYTHONPATH", "")])}
    process = subprocess.Popen(
        [sys.executable, "-m", "batsim.cmds.launcher", str(scheduler), "-s", f"tcp://127.0.0.1:{port}",
         "-v", "warning", *options],
        env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        yield f"tcp://127.0.0.1:{port}"
        output = process.communicate(timeout=30)[0]
        assert process.returncode == 0, output
    finally:
        process.kill()
        process.wait()


def test_a_pybatsim_fcfs_gives_clustersims_fcfs_schedule(pybatsim_path: Path, tmp_path: Path) -> None:
    scheduler = tmp_path / "fcfsSched.py"
    scheduler.write_text(FCFS)
    common = ["run", "-p", str(EXAMPLES / "platform.yaml"), "-w", str(EXAMPLES / "workload.json"), "-q", "--no-gantt"]
    with pybatsim(pybatsim_path, scheduler) as endpoint:
        assert main([*common, "-s", endpoint, "-o", str(tmp_path / "pybatsim")]) == 0
    assert main([*common, "--policy", "fcfs", "-o", str(tmp_path / "fcfs")]) == 0

    theirs = csv_rows(tmp_path / "pybatsim" / "jobs.csv")
    ours = csv_rows(tmp_path / "fcfs" / "jobs.csv")
    assert len(theirs) == 201
    assert {r["metadata"] for r in theirs if r["final_state"] != "REJECTED"} == {"pybatsim"}
    for row in theirs + ours:
        del row["metadata"]
    assert theirs == ours


def test_pybatsim_sees_requested_calls_kills_and_their_progress(pybatsim_path: Path, tmp_path: Path) -> None:
    import json

    scheduler = tmp_path / "killerSched.py"
    scheduler.write_text(KILLER)
    workload = tmp_path / "workload.json"
    workload.write_text(json.dumps({
        "nb_res": 4,
        "jobs": [
            {"id": 1, "subtime": 0, "res": 1, "walltime": 500, "profile": "short"},
            {"id": 2, "subtime": 0, "res": 2, "walltime": 500, "profile": "long"},
        ],
        "profiles": {"short": {"type": "delay", "delay": 20}, "long": {"type": "delay", "delay": 200}},
    }))
    log = tmp_path / "seen.json"
    with pybatsim(pybatsim_path, scheduler, "-o", json.dumps({"log": str(log)})) as endpoint:
        code = main(["run", "-w", str(workload), "-s", endpoint, "-o", str(tmp_path / "out"), "-q", "--no-gantt"])
    assert code == 0
    seen = json.loads(log.read_text())
    assert seen["calls"] == 1
    assert seen["completed"] == [["w0!1", "COMPLETED_SUCCESSFULLY"], ["w0!2", "COMPLETED_KILLED"]]
    assert seen["killed"] == [["w0!2", 0.25]]
    rows = {r["job_id"]: r for r in csv_rows(tmp_path / "out" / "jobs.csv")}
    assert (rows["2"]["final_state"], rows["2"]["finish_time"], rows["2"]["allocated_resources"]) == (
        "COMPLETED_KILLED", "50", "1-2"
    )
